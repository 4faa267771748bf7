"""Contradictions: candidates queued on write and by the REM scan, verdicts (cues first,
a scripted model only breaking ties), the contradiction table, findings and their
answers, `resolve`, supersession hidden in reflexive/standard retrieval and found in
deep/exhaustive, and tier-1 warnings in assembled context."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from app.composition import Engram
from services.activity.prediction import Candidate, Prediction
from services.activity.signals import ActivityKind
from services.context.assembly import ContextAssembler
from services.errors import UserInputError
from services.filters import MemoryFilter
from services.knowledge import contradictions
from services.knowledge.contradictions import Judge, parse_verdict, reading_of
from services.llm.base import LLMUnavailable, TimeBudget
from services.rem.actions import answer
from services.rem.cycle import RemContext, run_operations
from services.storage import contradictions as table
from services.storage.findings import FindingStore, Status
from services.types import RetrievalMode
from tests.fakes import ScriptedLLM
from tests.services.builders import make_memory

OLD = "`settle_batch` times out after 5 seconds."
NEW = "We changed the timeout of `settle_batch` from 5s to 30s."
CONFLICT = "`settle_batch` waits up to 60 seconds before timing out."


@pytest.fixture(autouse=True)
def judged_by_the_operation(engram: Engram) -> None:
    """These tests judge through the REM operation and the write-time queue; the pass
    that judges a memory once it has its vector is tested on its own below."""
    engram.indexer.on_indexed = None


def verdict_json(verdict: str, holds: str = "B") -> str:
    return json.dumps({"verdict": verdict, "holds": holds, "reason": "test"})


def add(context: RemContext, memory_id: str, content: str, day: int, **fields: object) -> None:
    context.service.add(
        {
            "id": memory_id,
            "content": content,
            "project": "p",
            "created_at": f"2026-03-{day:02d}T10:00:00+00:00",
            **fields,
        }
    )


def rows(context: RemContext, sql: str) -> list[tuple[object, ...]]:
    return list(context.service.store.database.execute_sql(sql).fetchall())


# --- the model's answer -----------------------------------------------------------------------


def test_parse_verdict_accepts_only_a_usable_answer() -> None:
    assert parse_verdict({"verdict": "supersedes", "holds": "b", "reason": " moved  to X "}) == {
        "verdict": "supersedes",
        "holds": "B",
        "reason": "moved to X",
    }
    assert parse_verdict({"verdict": "compatible", "holds": "A", "reason": ""})["holds"] == "both"  # type: ignore[index]
    assert parse_verdict({"verdict": "contradiction", "holds": "both", "reason": ""}) is None
    assert parse_verdict({"verdict": "maybe", "holds": "A", "reason": ""}) is None
    assert parse_verdict(None) is None and parse_verdict("contradiction") is None


def pair(first: str, second: str) -> tuple[object, object, tuple[object, object]]:
    a = make_memory(first, id="x1", project="p", created_at="2026-03-01T10:00:00+00:00")
    b = make_memory(second, id="x2", project="p", created_at="2026-03-09T10:00:00+00:00")
    return a, b, (reading_of(a), reading_of(b))


TIE = (
    "We deploy the billing service on Fridays after the freeze.",
    "We never deploy the billing service on Fridays after the freeze.",
)


def test_the_model_breaks_a_tie_with_the_holder_the_cues_see() -> None:
    a, b, readings = pair(*TIE)
    llm = ScriptedLLM([verdict_json("contradiction", "B")])
    verdict = Judge(llm).judge(a, b, readings)  # type: ignore[arg-type]
    assert verdict.flagged and verdict.holder == "x2" and not verdict.by_cues
    assert verdict.llm is not None and verdict.llm["counted"]
    assert "x1" in llm.prompts[0] or "billing" in llm.prompts[0]  # both contents are in it
    assert "never deploy" in llm.prompts[0] and "2026-03-01" in llm.prompts[0]


def test_a_rote_answer_naming_the_other_holder_tips_nothing() -> None:
    a, b, readings = pair(*TIE)
    verdict = Judge(ScriptedLLM([verdict_json("contradiction", "A")])).judge(a, b, readings)  # type: ignore[arg-type]
    assert not verdict.flagged and verdict.llm is not None and not verdict.llm["counted"]


def test_compatible_from_the_model_keeps_a_tie_unflagged() -> None:
    a, b, readings = pair(*TIE)
    verdict = Judge(ScriptedLLM([verdict_json("compatible", "both")])).judge(a, b, readings)  # type: ignore[arg-type]
    assert not verdict.flagged and verdict.score < verdict.cue_score


def test_strong_cues_decide_without_asking_the_model() -> None:
    a, b, readings = pair(OLD, NEW)
    llm = ScriptedLLM([verdict_json("compatible", "both")])
    verdict = Judge(llm).judge(a, b, readings)  # type: ignore[arg-type]
    assert verdict.kind == "supersedes" and verdict.holder == "x2" and verdict.by_cues
    assert llm.prompts == []  # the model could not change the outcome: not asked
    x, y, readings = pair("Lunch is at noon.", "The office has plants.")
    weak = Judge(llm).judge(x, y, readings)  # type: ignore[arg-type]
    assert weak.kind == "compatible" and llm.prompts == []


def test_a_bad_answer_is_asked_again_then_no_verdict() -> None:
    a, b, readings = pair(*TIE)
    llm = ScriptedLLM(["not json", '{"verdict": "perhaps"}'])
    verdict = Judge(llm).judge(a, b, readings)  # type: ignore[arg-type]
    assert len(llm.prompts) == 2 and verdict.llm is None and not verdict.flagged


def test_an_unavailable_model_is_not_asked_again() -> None:
    a, b, readings = pair(*TIE)
    llm = ScriptedLLM(default=LLMUnavailable("no model"))
    judge = Judge(llm)
    judge.judge(a, b, readings)  # type: ignore[arg-type]
    judge.judge(a, b, readings)  # type: ignore[arg-type]
    assert len(llm.prompts) == 1 and judge.llm is None and judge.llm_note == "no model"


def test_the_time_budget_bounds_model_calls() -> None:
    a, b, readings = pair(*TIE)
    llm = ScriptedLLM(default=verdict_json("contradiction", "B"))
    judge = Judge(llm, TimeBudget(0.0))
    assert not judge.judge(a, b, readings).flagged  # type: ignore[arg-type]
    assert llm.prompts == []


# --- queue, operation, findings ----------------------------------------------------------------


def test_a_write_queues_candidates_without_judging(context: RemContext) -> None:
    add(context, "old", OLD, 1)
    add(context, "other", "The invoice exporter writes CSV files.", 2)
    add(context, "new", NEW, 9)
    queued = rows(context, "SELECT a, b, judged_at FROM contradiction_candidate")
    assert ("old", "new", None) in queued  # the earlier memory first, not judged yet
    assert rows(context, "SELECT count(*) FROM contradiction") == [(0,)]
    context.service.edit("other", {"content": "`settle_batch` waits 60 seconds."})
    assert ("old", "other", None) in rows(
        context, "SELECT a, b, judged_at FROM contradiction_candidate"
    )


def test_the_operation_records_contradictions_and_proposes_them(context: RemContext) -> None:
    add(context, "old", OLD, 1)
    add(context, "new", NEW, 9)
    add(context, "conflict", CONFLICT, 12)
    add(context, "note", "When `settle_batch` times out it raises a retryable error.", 10)
    (report,) = run_operations(context, ["contradictions"])
    assert report.error is None
    found = {(r.a, r.b): r for r in contradictions.listing(context.service.store)}
    assert set(found) == {("old", "new"), ("old", "conflict"), ("new", "conflict")}
    assert found[("old", "new")].kind == "supersedes" and found[("old", "new")].holder == "new"
    assert found[("old", "conflict")].kind == "contradiction"
    kinds = {f.kind for f in report.findings}
    assert kinds == {"supersedes", "contradiction"}
    finding = next(f for f in report.findings if f.memory_ids == ["old", "new"])
    assert [o.name for o in finding.options] == ["a_wins", "b_wins", "both_valid", "skip"]
    assert finding.recommended == "b_wins"
    assert report.changes["judged"] >= 3 and report.changes["asked_llm"] == 0
    # Judged pairs are not judged again; no second finding for the same pair.
    (again,) = run_operations(context, ["contradictions"])
    assert again.findings == [] and again.changes["judged"] == 0
    assert all(
        r[0] is not None for r in rows(context, "SELECT judged_at FROM contradiction_candidate")
    )


def test_a_dry_run_writes_nothing(context: RemContext) -> None:
    add(context, "old", OLD, 1)
    add(context, "new", NEW, 9)
    (report,) = run_operations(context, ["contradictions"], dry_run=True)
    assert [f.memory_ids for f in report.findings] == [["old", "new"]]
    assert rows(context, "SELECT count(*) FROM contradiction") == [(0,)]
    assert rows(context, "SELECT count(*) FROM finding") == [(0,)]
    assert rows(
        context, "SELECT count(*) FROM contradiction_candidate WHERE judged_at IS NOT NULL"
    ) == [(0,)]


def test_a_dry_run_shows_a_pair_already_open_once(context: RemContext) -> None:
    """The dry run judges the scanned pairs again; one already recorded is still one
    finding (a new user's dry run listed 3 of 8 twice, as 11)."""
    add(context, "old", OLD, 1)
    add(context, "new", NEW, 9)
    (real,) = run_operations(context, ["contradictions"])
    (dry,) = run_operations(context, ["contradictions"], dry_run=True)
    assert [f.id for f in dry.findings] == [f.id for f in real.findings]
    assert dry.changes["supersedes"] == dry.changes["contradictions"] == 0


def test_imported_memories_are_covered_by_the_scan(context: RemContext) -> None:
    memories = [
        make_memory(OLD, id="i1", project="p", created_at="2026-03-01T10:00:00+00:00"),
        make_memory(CONFLICT, id="i2", project="p", created_at="2026-03-05T10:00:00+00:00"),
    ]
    context.service.import_memories(memories)
    assert rows(context, "SELECT count(*) FROM contradiction_candidate") == [(0,)]
    run_operations(context, ["contradictions"])
    assert [(r.a, r.b) for r in contradictions.listing(context.service.store)] == [("i1", "i2")]


def test_a_memory_is_judged_against_its_neighbours_once_it_has_its_vector(
    engram: Engram,
) -> None:
    """Before any cycle: the imported notes are judged as the operation would judge
    them (cues and scorers, no model), so search already ranks by what holds now."""
    engram.indexer.on_indexed = engram.judge_embedded
    memories = [
        make_memory(OLD, id="i1", project="p", created_at="2026-03-01T10:00:00+00:00"),
        make_memory(NEW, id="i2", project="p", created_at="2026-03-09T10:00:00+00:00"),
        make_memory(CONFLICT, id="i3", project="p", created_at="2026-03-12T10:00:00+00:00"),
        make_memory("Invoices are exported as CSV.", id="i4", project="p"),
    ]
    engram.service.import_memories(memories)
    engram.indexer.process_pending()
    found = {(r.a, r.b): r for r in contradictions.listing(engram.store)}
    assert found[("i1", "i2")].kind == "supersedes" and found[("i1", "i2")].holder == "i2"
    assert found[("i1", "i3")].kind == "contradiction"
    assert not any("i4" in pair for pair in found)
    near_i3 = contradictions.scan(
        engram.store, engram.vectors, engram.embedder.model_id, "p", touching={"i3"}
    )
    assert ("i1", "i3") in near_i3.pairs and all("i3" in pair for pair in near_i3.pairs)
    # Judged now, so the idle cycle does not judge the same pairs again.
    context = RemContext(engram.service, engram.vectors, engram.embedder.model_id)
    (report,) = run_operations(context, ["contradictions"])
    assert report.changes["judged"] == 0


def test_a_pair_a_model_could_tip_waits_for_the_cycle(engram: Engram) -> None:
    """Judged without a model, a pair whose cues sit within the model's weight of the bar
    stays queued, unjudged, for a run that can ask one."""
    add_to = RemContext(engram.service, engram.vectors, engram.embedder.model_id)
    add(add_to, "old", OLD, 1)
    add(add_to, "new", NEW, 9)
    close_call = contradictions.FLAG_AT + contradictions.LLM_WEIGHT / 2

    class CloseCall(Judge):
        def judge(self, a: Any, b: Any, *args: Any, **kwargs: Any) -> contradictions.Verdict:
            verdict = super().judge(a, b, *args, **kwargs)
            return replace(verdict, cue_score=close_call, score=close_call, scorer=None)

    store = engram.store
    waiting = [("old", "new")]
    left = contradictions.judge_pending(store, CloseCall(None), pairs=waiting, leave_for_model=True)
    assert left == [] and ("old", "new") in contradictions.pending(store)
    judged = contradictions.judge_pending(store, CloseCall(None), pairs=waiting)
    assert [v.flagged for v in judged] == [True] and contradictions.pending(store) == []


def test_embedding_adds_scorer_guesses_only_up_to_the_review_cap(
    engram: Engram, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import embedded in batches must not flood the review with the scorer's guesses
    (template twins): a project gets MAX_SCORED_FLAGS of them waiting at most."""
    cap = contradictions.MAX_SCORED_FLAGS
    ids = [f"n{i}" for i in range(cap + 1)]
    engram.service.import_memories(
        [make_memory(f"Note {i} about `f{i}`.", id=i_, project="p") for i, i_ in enumerate(ids)],
        embed=False,
    )
    guess = json.dumps({"scorer": 0.95, "cue_score": 0.0})
    with engram.store.writing():
        for first, second in itertools.pairwise(ids):
            table.record_flag(
                engram.store, first, second, "contradiction", None, "2026-03-01", guess
            )
    seen: list[int] = []
    real_scan = contradictions.scan

    def scan(*args: Any, scored_cap: int, **kwargs: Any) -> Any:
        seen.append(scored_cap)
        return real_scan(*args, scored_cap=scored_cap, **kwargs)

    monkeypatch.setattr(contradictions, "scan", scan)
    new = [engram.store.get(ids[0])]
    contradictions.judge_new(engram.store, engram.vectors, engram.embedder.model_id, new)
    (record,) = [r for r in contradictions.listing(engram.store) if r.a == ids[0]]
    contradictions.resolve(engram.store, record.id, "both_valid")
    contradictions.judge_new(engram.store, engram.vectors, engram.embedder.model_id, new)
    assert seen == [0, 1]  # full, then room for one after one was answered


def search_ids(context: RemContext, mode: RetrievalMode) -> set[str]:
    response = context.service.search("settle_batch timeout seconds", MemoryFilter(mode=mode), 20)
    return {r.memory.id for r in response.results}


def test_accepting_a_finding_supersedes_and_keeps_history(context: RemContext) -> None:
    add(context, "old", OLD, 1)
    add(context, "new", NEW, 9)
    (report,) = run_operations(context, ["contradictions"])
    findings = FindingStore(context.service.store)
    (finding,) = report.findings
    assert answer(context.service, findings, finding, "b_wins")
    store = context.service.store
    old, new = store.get("old"), store.get("new")
    assert old.superseded_by == "new" and old.valid_to == new.created_at
    assert new.supersedes == "old" and new.superseded_by is None
    (record,) = contradictions.listing(store, include_resolved=True)
    assert record.resolution == "b_wins" and record.resolved_at and record.note
    assert contradictions.listing(store) == []
    assert findings.get(finding.id).status is Status.APPLIED
    # Hidden from reflexive and standard retrieval, found in deep and exhaustive.
    assert "old" not in search_ids(context, RetrievalMode.REFLEXIVE)
    assert search_ids(context, RetrievalMode.STANDARD) == {"new"}
    assert {"old", "new"} <= search_ids(context, RetrievalMode.DEEP)
    assert {"old", "new"} <= search_ids(context, RetrievalMode.EXHAUSTIVE)
    assert "old" not in {m.id for m in store.query(MemoryFilter())}
    assert "old" in {m.id for m in store.query(MemoryFilter(mode=RetrievalMode.DEEP))}
    # Still in deep mode once the staleness review has archived it.
    store.update("old", {"tier": "archived"})
    assert {"old", "new"} <= search_ids(context, RetrievalMode.DEEP)
    assert search_ids(context, RetrievalMode.STANDARD) == {"new"}
    # A superseded memory is not judged again and its open pairs are not proposed.
    add(context, "later", CONFLICT, 20)
    (again,) = run_operations(context, ["contradictions"])
    assert all("old" not in f.memory_ids for f in again.findings)


def test_hot_memories_stay_hidden_in_reflexive_mode_once_superseded(context: RemContext) -> None:
    add(context, "old", OLD, 1, tier="hot")
    add(context, "new", NEW, 9, tier="hot")
    run_operations(context, ["contradictions"])
    (record,) = contradictions.listing(context.service.store)
    contradictions.resolve(context.service.store, record.id, "b_wins")
    assert search_ids(context, RetrievalMode.REFLEXIVE) == {"new"}


def test_resolve_from_the_cli_side_answers_the_finding(context: RemContext) -> None:
    add(context, "old", OLD, 1)
    add(context, "new", NEW, 9)
    (report,) = run_operations(context, ["contradictions"])
    store = context.service.store
    (record,) = contradictions.listing(store)
    assert contradictions.resolve(store, record.id, "a_wins", "the change was rolled back")
    assert store.get("new").superseded_by == "old"
    assert store.get("new").valid_to is not None
    assert FindingStore(store).get(report.findings[0].id).answer == "a_wins"
    with pytest.raises(UserInputError, match="already resolved"):
        contradictions.resolve(store, record.id, "b_wins")


def test_both_valid_and_merged_resolutions(context: RemContext) -> None:
    add(context, "old", OLD, 1)
    add(context, "new", NEW, 9)
    add(context, "conflict", CONFLICT, 12)
    run_operations(context, ["contradictions"])
    store = context.service.store
    records = {(r.a, r.b): r for r in contradictions.listing(store)}
    assert not contradictions.resolve(
        store, records[("old", "new")].id, "both_valid", "scopes differ"
    )
    assert store.get("old").superseded_by is None
    add(context, "merged", "`settle_batch` times out after 30 s in prod, 60 s in batch jobs.", 15)
    with pytest.raises(UserInputError, match="--into goes with"):
        contradictions.resolve(store, records[("new", "conflict")].id, "a_wins", into="merged")
    with pytest.raises(UserInputError, match="merged needs --into"):
        contradictions.resolve(store, records[("new", "conflict")].id, "merged")
    assert not contradictions.get(store, records[("new", "conflict")].id).resolved
    store.update("merged", {"project": "elsewhere"})
    with pytest.raises(UserInputError, match="same project"):
        contradictions.resolve(store, records[("new", "conflict")].id, "merged", into="merged")
    store.update("merged", {"project": store.get("new").project})
    add(context, "stale", "`settle_batch` times out after 45 s.", 14)
    store.update("stale", {"superseded_by": "old"})
    with pytest.raises(UserInputError, match="no longer holds"):
        contradictions.resolve(store, records[("new", "conflict")].id, "merged", into="stale")
    assert not contradictions.get(store, records[("new", "conflict")].id).resolved
    assert contradictions.resolve(store, records[("new", "conflict")].id, "merged", into="merged")
    assert (
        store.get("new").superseded_by == "merged"
        and store.get("conflict").superseded_by == "merged"
    )
    with pytest.raises(UserInputError, match="unknown resolution"):
        contradictions.resolve(store, records[("old", "conflict")].id, "coin_flip")


@pytest.mark.usefixtures("generous_model_time")
def test_auto_applies_only_what_the_cues_decided(context: RemContext) -> None:
    add(context, "old", OLD, 1)
    add(context, "new", NEW, 9)
    add(context, "fri", TIE[0], 2)
    add(context, "never", TIE[1], 8)
    context.llm = ScriptedLLM(default=verdict_json("contradiction", "B"))
    (report,) = run_operations(context, ["contradictions"], auto=True)
    recommended = {tuple(f.memory_ids): f.recommended for f in report.findings}
    assert recommended == {("old", "new"): "b_wins", ("fri", "never"): "skip"}
    assert report.applied == 1
    store = context.service.store
    assert store.get("old").superseded_by == "new" and store.get("fri").superseded_by is None


# --- context tier 1 ------------------------------------------------------------------------------


def test_unresolved_contradictions_are_tier_1_warnings_within_budget(context: RemContext) -> None:
    add(context, "old", OLD, 1)
    add(context, "new", CONFLICT, 9)
    run_operations(context, ["contradictions"])
    store = context.service.store
    lines = contradictions.alerts(store, "p", ["old"])
    assert len(lines) == 1 and lines[0].startswith("⚠ old says") and "unresolved" in lines[0]
    assert contradictions.alerts(store, None, []) == []  # no project, no memory: none
    assert contradictions.alerts(store, "other", []) == []
    # Two other notes of the project that disagree say nothing about this context.
    add(context, "unrelated", "Invoices are exported as CSV.", 10)
    assert contradictions.alerts(store, "p", ["unrelated"]) == []
    memory = store.get("new")
    prediction = Prediction(
        "p", datetime(2026, 3, 10, tzinfo=UTC), ActivityKind.GENERAL,
        [Candidate(memory, 1.0, [])], [], [], [],
    )  # fmt: skip
    assembler = ContextAssembler(
        800, alerts=lambda p: contradictions.alerts(store, p.project, ["new"])
    )
    assembled = assembler.assemble(prediction)
    critical = assembled.tiers[0]
    assert "⚠ old says" in critical.text and assembled.ids(1) == ["new"]
    assert assembled.tokens <= 800
    small = ContextAssembler(120, alerts=lambda p: lines * 20).assemble(prediction)
    assert small.tokens <= 120
    (record,) = contradictions.listing(store)
    contradictions.resolve(store, record.id, "both_valid")
    assert "⚠" not in assembler.assemble(prediction).markdown


def test_a_supersession_the_scorer_finds_is_held_by_the_later_note() -> None:
    # The earlier note quotes more code, which would make it the likelier side of a
    # plain disagreement; but a supersession is the later note replacing it.
    where = dict(type="workflow", project="flask", title="how a release gets published")
    old = make_memory(
        "Release checklist: bump `__version__` in `src/flask/__init__.py`, tag `2.3.0`, "
        "then `python -m build` and upload with `twine`.\n```\ntwine upload dist/*\n```",
        created_at="2024-01-10T10:00:00+00:00",
        **where,
    )
    new = make_memory(
        "Releases for 3.1 are published by the publish workflow from a tag; trusted "
        "publishing, no tokens.",
        created_at="2025-06-10T10:00:00+00:00",
        **where,
    )
    verdict = Judge(None).judge(old, new, (reading_of(old), reading_of(new)), similarity=0.8)
    assert verdict.kind == "supersedes"
    assert verdict.holder == new.id


def test_a_pair_resolved_before_its_texts_changed_is_open_again(engram: Engram) -> None:
    """Settled as both valid, then one note edited to say another value: a new flag of
    the pair reopens it (naming the old answer); one on the same texts does not."""
    store = engram.store
    for memory_id in ("a", "b"):
        engram.service.add({"id": memory_id, "content": f"note {memory_id}", "project": "p"})
    with store.writing():
        table.record_flag(store, "a", "b", "contradiction", None, "t1", '{"hash": "h1"}')
    (record,) = contradictions.listing(store)
    contradictions.resolve(store, record.id, "both_valid", "same thing said twice")
    with store.writing():
        table.record_flag(store, "a", "b", "contradiction", None, "t2", '{"hash": "h1"}')
        table.record_flag(store, "a", "b", "contradiction", "b", "t2", "{}")  # no hash: kept
    assert contradictions.get(store, record.id).resolution == "both_valid"
    with store.writing():
        table.record_flag(store, "a", "b", "supersedes", "b", "t3", '{"hash": "h2"}')
    reopened = contradictions.get(store, record.id)
    assert not reopened.resolved and (reopened.kind, reopened.holder) == ("supersedes", "b")
    assert reopened.note is not None and "both_valid" in reopened.note
    assert [r.id for r in contradictions.listing(store)] == [record.id]


def test_a_pair_settled_elsewhere_leaves_no_finding_pending(context: RemContext) -> None:
    """A replacement declared with `--supersedes` (or undone with `--holds-again`) had
    resolved the pair but left its review finding pending, and answering it failed."""
    from services.knowledge import supersession

    add(context, "old", OLD, 1)
    add(context, "new", NEW, 9)
    run_operations(context, ["contradictions"])
    store = context.service.store
    findings = FindingStore(store)
    assert [f.detail.get("contradiction") for f in findings.pending("contradictions")]
    supersession.declare(store, "new", ["old"])
    assert findings.pending("contradictions") == []
    (record,) = contradictions.listing(store, include_resolved=True)
    assert record.resolved and store.get("old").superseded_by == "new"
