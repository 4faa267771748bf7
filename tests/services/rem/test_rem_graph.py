"""REM links and communities: related links from rare shared names (and vectors),
supersedes links, links that go when they stop holding or their memory is deleted;
Louvain communities that keep their ids, the new/merged/split report, orphans, and
summaries that keep their facts and change no memory."""

from __future__ import annotations

import json

import pytest

from services.rem.cycle import RemContext, run_operations
from services.rem.ops.graph import (
    MAX_LLM_COMMUNITY_SUMMARIES,
    compare,
    detect_communities,
    refresh_links,
)
from services.rem.results import CommunityReport
from services.storage.communities import stored_communities
from tests.fakes import ScriptedLLM


def add(context: RemContext, memory_id: str, content: str, **fields: object) -> None:
    context.service.add({"id": memory_id, "content": content, "project": "p", **fields})


def links(context: RemContext, kind: str | None = None) -> set[tuple[str, str, str]]:
    rows = context.service.store.database.execute_sql(
        "SELECT source, target, kind FROM memory_link"
    ).fetchall()
    return {(str(a), str(b), str(k)) for a, b, k in rows if kind is None or k == kind}


def two_groups(context: RemContext) -> None:
    """Four memories about `issue_refund`, four about `render_chart`, one alone."""
    for n in range(4):
        add(context, f"r{n}", f"Note {n} on refunds: `issue_refund` step {n} of the flow.")
        add(context, f"c{n}", f"Chart note {n}: `render_chart` draws series {n}.")
    add(context, "alone", "The office plant needs water on Mondays.")


def test_rare_shared_names_and_supersession_become_links(context: RemContext) -> None:
    two_groups(context)
    add(context, "new", "Refunds over 500 EUR need approval.", supersedes="r0")
    counts = refresh_links(context.service.store, context.vectors, context.model_id)
    related = links(context, "related")
    assert ("r0", "r1", "related") in related and ("c2", "c3", "related") in related
    assert not any("alone" in (s, t) for s, t, _ in related)
    assert not any(s[0] != t[0] for s, t, _ in related if {s[0], t[0]} <= {"r", "c"})
    assert ("new", "r0", "supersedes") in links(context, "supersedes")
    assert counts.related == len(related) and counts.supersedes == 1

    again = refresh_links(context.service.store, context.vectors, context.model_id)
    assert again.related_added == 0 and again.related_removed == 0


def test_links_go_when_they_stop_holding_or_their_memory_is_deleted(
    context: RemContext,
) -> None:
    two_groups(context)
    refresh_links(context.service.store, context.vectors, context.model_id)
    context.service.edit("r3", {"content": "Nothing about refunds any more."})
    counts = refresh_links(context.service.store, context.vectors, context.model_id)
    assert counts.related_removed >= 1
    assert not any("r3" in (s, t) for s, t, _ in links(context))
    context.service.delete("r0")
    assert not any("r0" in (s, t) for s, t, _ in links(context))


def test_compare_reports_new_merged_and_split() -> None:
    previous = {"c-a": {"1", "2", "3", "4"}, "c-b": {"5", "6", "7", "8"}, "c-s": set("abcdef")}
    found = [
        {"1", "2", "3", "4", "5", "6", "7", "8"},  # a and b merged
        {"a", "b", "c"},  # s split in two
        {"d", "e", "f", "g"},
        {"x", "y", "z"},  # new
    ]
    communities, changes = compare(previous, found, "p")
    by_members = {frozenset(c.members): c for c in communities}
    merged = by_members[frozenset("12345678")]
    assert merged.id in ("c-a", "c-b")  # a merge continues the better match
    assert changes["merged"] == [{"community": merged.id, "from": ["c-a", "c-b"]}]
    (split,) = changes["split"]
    assert split["community"] == "c-s" and len(split["into"]) == 2
    new_id = by_members[frozenset("xyz")].id
    assert changes["new"] == [new_id] and new_id.startswith("c-")
    assert "c-a" in changes["gone"] or "c-b" in changes["gone"]


def test_communities_are_stored_keep_their_ids_and_change_no_memory(
    context: RemContext,
) -> None:
    two_groups(context)
    store = context.service.store
    before = {m.id: m for m in store.iter_all()}
    refresh_links(store, context.vectors, context.model_id)
    report = detect_communities(store)
    stored = stored_communities(store)
    assert report.communities == 2 == len(stored)
    assert {frozenset(c["members"]) for c in stored} == {
        frozenset(f"r{n}" for n in range(4)),
        frozenset(f"c{n}" for n in range(4)),
    }
    assert report.orphans == 1 and report.orphan_ids == ["alone"]
    assert len(report.new) == 2
    refunds = next(c for c in stored if "r0" in c["members"])
    assert "issue_refund" in refunds["label"] and "`issue_refund`" in refunds["summary"]
    assert {m.id: m for m in store.iter_all()} == before  # text about members only

    again = detect_communities(store)
    assert again.new == [] and again.gone == []
    assert {c["id"] for c in stored_communities(store)} == {c["id"] for c in stored}


@pytest.mark.usefixtures("generous_model_time")
def test_off_topic_model_prose_is_not_a_community_summary(context: RemContext) -> None:
    two_groups(context)
    for n in range(3):
        add(context, f"q{n}", f"Queue note {n}: `enqueue_job` retries {n + 2} times.")
    store = context.service.store
    refresh_links(store, context.vectors, context.model_id)
    smartphones = json.dumps(
        {"title": "Smartphones", "summary": "A new perspective on the world of smartphones."}
    )
    llm = ScriptedLLM(default=smartphones)
    report = detect_communities(store, llm=llm)
    assert report.llm_summaries == 0 and report.communities == 3
    assert 0 < len(llm.prompts) <= MAX_LLM_COMMUNITY_SUMMARIES  # rejected answers count
    assert not any("smartphones" in c["summary"].lower() for c in stored_communities(store))


def test_the_cycle_runs_links_before_communities_and_records_the_result(
    context: RemContext,
) -> None:
    two_groups(context)
    reports = run_operations(context, ["links", "communities"])
    assert [r.error for r in reports] == [None, None]
    assert isinstance(reports[1].outcome, CommunityReport)
    assert reports[1].outcome.communities == 2 == reports[1].changes["communities"]
    rows = context.service.store.database.execute_sql(
        "SELECT op, result FROM rem_run ORDER BY id"
    ).fetchall()
    assert [op for op, _ in rows] == ["links", "communities"]
    assert json.loads(rows[1][1])["orphans"] == 1

    dry = run_operations(context, ["communities"], dry_run=True)
    assert dry[0].outcome is None and dry[0].changes == {}  # a dry run changes nothing
