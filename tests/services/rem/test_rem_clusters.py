"""Cluster summaries keep every planted fact, whatever the LLM writes; accepting one
stores a consolidated memory linked to its sources; episodes get levels by age."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from app.composition import Engram
from services.rem.actions import answer
from services.rem.ops import clusters
from services.rem.ops.clusters import (
    cluster_findings,
    episode_levels,
    key_facts,
    missing_facts,
    write_summary,
)
from services.rem.results import EpisodeLevels
from services.storage.findings import FindingStore
from tests.fakes import ScriptedLLM
from tests.services.builders import make_memory

PLANTED = [
    make_memory(
        "We decided to cap refunds at 500 EUR per day in `issue_refund`.",
        id="c1",
        type="decision",
        title="Cap refunds at 500 EUR a day",
        project="shop",
    ),
    make_memory("`issue_refund` retries 3 times before giving up.", id="c2", project="shop"),
    make_memory("Refund emails go out through `send_refund_mail`.", id="c3", project="shop"),
]


def test_a_vague_llm_summary_still_keeps_every_fact() -> None:
    vague = json.dumps({"title": "Refunds", "summary": "These notes are about refunds."})
    title, content, how = write_summary(PLANTED, ScriptedLLM([vague]))
    assert how == "llm" and title == "Refunds"
    assert missing_facts(f"{title} {content}", PLANTED) == []
    assert "Cap refunds at 500 EUR a day" in content and "`send_refund_mail`" in content
    assert "3" in content and "c1, c2, c3" in content


def test_prose_about_something_else_is_not_stored() -> None:
    """SmolLM2 once answered a cluster about state handling with a text about
    smartphones; a summary that is not about its sources falls back to the derived one."""
    off_topic = json.dumps(
        {
            "title": "A New Perspective on Smartphones",
            "summary": "A platform that combines the best of both worlds with a focus on "
            "the future of technology and creativity.",
        }
    )
    looping = json.dumps(
        {
            "title": "Refunds",
            "summary": "Refunds are capped and refunds are capped and refunds are capped "
            "and refunds are capped and refunds are capped.",
        }
    )
    for answer_text in (off_topic, looping):
        title, content, how = write_summary(PLANTED, ScriptedLLM([answer_text]))
        assert how == "derived" and "Smartphones" not in title
        assert "platform" not in content and missing_facts(content, PLANTED) == []


def test_without_an_llm_the_summary_is_derived_and_complete() -> None:
    title, content, how = write_summary(PLANTED, None)
    assert how == "derived" and title == "Summary of 3 related memories"
    assert missing_facts(f"{title} {content}", PLANTED) == []


def test_a_broken_llm_does_not_stop_the_summary() -> None:
    from services.llm.base import LLMUnavailable

    _, content, how = write_summary(PLANTED, ScriptedLLM([LLMUnavailable("no model")]))
    assert how == "derived" and missing_facts(content, PLANTED) == []


def test_key_facts_are_decisions_names_and_numbers() -> None:
    facts = key_facts(PLANTED)
    assert facts[0] == "Cap refunds at 500 EUR a day"
    assert {"`issue_refund`", "`send_refund_mail`", "3", "500"} <= set(facts)


def test_accepting_stores_a_linked_consolidated_memory(engram: Engram) -> None:
    service = engram.service
    for memory in PLANTED:
        service.store.add(memory)
    (finding,) = cluster_findings([PLANTED], None)
    findings = FindingStore(service.store)
    findings.save([finding])
    assert answer(service, findings, finding, "create")
    summaries = [m for m in service.store.iter_all() if "consolidated" in m.tags]
    (summary,) = summaries
    assert summary.project == "shop" and "Cap refunds at 500 EUR a day" in summary.content
    links = service.store.database.execute_sql(
        "SELECT target FROM memory_link WHERE source = ? AND kind = 'consolidates'", [summary.id]
    ).fetchall()
    assert sorted(r[0] for r in links) == ["c1", "c2", "c3"]
    assert service.store.get("c1").superseded_by is None  # sources stay as they are


def test_episodes_get_levels_by_age(engram: Engram) -> None:
    store = engram.store
    now = datetime(2026, 10, 1, tzinfo=UTC)
    for memory_id, days in (("fresh", 2), ("week", 10), ("month", 40)):
        store.add(
            make_memory(
                "The deploy failed at 14:00. We rolled back. Root cause: a missing env var.",
                id=memory_id,
                type="episode",
                created_at=(now - timedelta(days=days)).isoformat(),
            )
        )
    assert episode_levels(store, now) == EpisodeLevels(summary=2, compressed=1)
    assert store.get("fresh").summary is None
    assert store.get("week").summary and store.get("week").compressed is None
    assert store.get("month").summary and store.get("month").compressed
    assert episode_levels(store, now) == EpisodeLevels(summary=0, compressed=0)


@pytest.mark.usefixtures("generous_model_time")
def test_model_time_per_run_is_capped_whatever_the_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a busy machine SmolLM2 is several times slower; a run stops asking the model
    when its time is used up and derives the remaining summaries (facts kept)."""
    monkeypatch.setattr(clusters, "LLM_SECONDS", 2.5)
    good = json.dumps(
        {
            "title": "Refund rules",
            "summary": "Refunds are capped at 500 EUR a day; issue_refund retries and "
            "send_refund_mail sends the refund emails.",
        }
    )
    llm = ScriptedLLM(default=good, delay_s=1.0)
    groups = [PLANTED, PLANTED[:2] + PLANTED[2:], list(reversed(PLANTED))]
    findings = cluster_findings(groups, llm)
    assert len(llm.prompts) == 1  # 1.5 s left after the first: too little for another
    written = [f.detail["written_by"] for f in findings]
    assert written.count("llm") == 1 and written.count("derived") == 2
    for finding in findings:
        assert missing_facts(finding.detail["content"], PLANTED) == []


def test_the_reviewer_reads_the_proposed_summary() -> None:
    (finding,) = cluster_findings([PLANTED], None)
    title, content = finding.proposal() or ("", "")
    assert title == "Summary of 3 related memories" and "`send_refund_mail`" in content
    assert finding.kind == "cluster_summary"


def test_a_cluster_whose_notes_disagree_is_not_recommended() -> None:
    """A summary of three timeout notes giving 30 s, 5 s and 15 s would state them all
    as holding: the finding says how they disagree and leaves the choice to the user."""
    timeouts = [
        make_memory("SQLAlchemy pool_timeout is 30 seconds by default.", id="t1", project="o",
                    created_at="2026-01-01T10:00:00+00:00"),
        make_memory("create_engine uses pool_timeout=5 seconds in app/db.py.", id="t2",
                    project="o", created_at="2026-02-01T10:00:00+00:00"),
        make_memory("We raised the pool timeout to 15 seconds for exports.", id="t3",
                    project="o", created_at="2026-03-01T10:00:00+00:00"),
    ]  # fmt: skip
    (finding,) = cluster_findings([timeouts], None)
    assert finding.recommended == "skip"
    assert "they disagree: timeout: 30 s vs 5 s" in finding.summary
    assert finding.detail["disagree"] == "timeout: 30 s vs 5 s"
    (agreeing,) = cluster_findings([PLANTED], None)
    assert agreeing.recommended == "create" and agreeing.detail["disagree"] is None


def test_a_cluster_with_an_open_replacement_among_its_notes_is_not_recommended(
    engram: Engram,
) -> None:
    """A new user's cluster summary stated the black 23.1.0 pin beside its 24.1.0
    replacement, still an open proposal, and was recommended."""
    from services.storage import contradictions

    for memory in PLANTED:
        engram.store.add(memory)
    contradictions.record_flag(engram.store, "c1", "c3", "supersedes", "c3", "2026-05-01", "{}")
    disputes = clusters.open_disputes(engram.store, [PLANTED])
    assert disputes == {0: "c3 may replace c1"}
    (finding,) = cluster_findings([PLANTED], None, disputes=disputes)
    assert finding.recommended == "skip"
    assert "they disagree: c3 may replace c1; settle that first" in finding.summary
    assert clusters.open_disputes(engram.store, [PLANTED[:2]]) == {}  # c3 is elsewhere
