"""The REM registry declares each operation once, and everything that lists operations
reads it: the cycle's order, dry runs, --auto, the schedules and their settings, the
answer dispatch; the typed results of operations that apply their own changes turn into
the recorded JSON and back."""

from __future__ import annotations

from typing import Any

import pytest

from app.settings import SCHEMA
from services.errors import UserInputError
from services.rem.actions import answer
from services.rem.context import RemContext
from services.rem.cycle import describe_changes, run_operations
from services.rem.registry import OPERATIONS, default_schedules, find_operation, names
from services.rem.results import (
    CommunityReport,
    ContradictionCounts,
    EpisodeLevels,
    LinkCounts,
    TierMoves,
)
from services.storage.findings import Finding, FindingStore, Option, Status
from services.storage.rem_runs import latest_runs


def test_each_operation_is_declared_once_in_the_order_of_a_cycle() -> None:
    assert names() == [
        "retention",
        "staleness",
        "duplicates",
        "facts",
        "contradictions",
        "links",
        "clusters",
        "communities",
        "episodes",
        "extraction",
    ]
    assert [find_operation(name) for name in names()] == list(OPERATIONS)
    assert find_operation("nap") is None


def test_what_each_operation_declares() -> None:
    applies_itself = {op.name for op in OPERATIONS if op.applies_itself}
    assert applies_itself == {"retention", "links", "communities", "episodes"}
    assert {op.name for op in OPERATIONS if op.suggestion} == {"extraction"}
    for op in OPERATIONS:
        # An operation that proposes nothing has no answers to apply, and one that
        # changes things itself says what it changed.
        assert (op.apply is None) == op.applies_itself, op.name
        if op.applies_itself:
            assert op.changes is not None, op.name
        assert op.description and "\n" not in op.description


def test_schedules_and_their_settings_come_from_the_registry() -> None:
    by_key = {setting.key: setting for setting in SCHEMA}
    schedules = default_schedules()
    assert list(schedules) == names()
    for op in OPERATIONS:
        setting = by_key[f"rem.schedule.{op.name}"]
        assert setting.default == op.schedule.spec() == schedules[op.name].spec()
        assert setting.description.startswith(f"When {op.description} runs: ")
    assert by_key["rem.schedule.duplicates"].default == "linear 10 24h"
    assert by_key["rem.schedule.communities"].default == "fibonacci 24h"
    declared = {key for key in by_key if key.startswith("rem.schedule.")}
    assert declared == {f"rem.schedule.{name}" for name in names()}


@pytest.mark.parametrize(
    "changes",
    [
        TierMoves({"cold": 3, "hot": 1}),
        EpisodeLevels(summary=2, compressed=1),
        LinkCounts(related=6, related_added=3, related_removed=1, supersedes=1),
        CommunityReport(
            communities=2,
            new=["c-1"],
            merged=[{"community": "c-2", "from": ["c-3", "c-4"]}],
            split=[{"community": "c-5", "into": ["c-1", "c-2"]}],
            gone=["c-5"],
            orphans=1,
            orphan_ids=["m1"],
            small=1,
            llm_summaries=0,
        ),
        ContradictionCounts(queued=3, judged=3, contradictions=1, asked_llm=1, llm_note="slow"),
        ContradictionCounts(queued=3, judged=3),
    ],
    ids=lambda c: type(c).__name__,
)
def test_typed_results_round_trip_through_their_recorded_json(changes: Any) -> None:
    data = changes.to_dict()
    assert type(changes).from_dict(data) == changes
    assert changes.describe()


def test_the_recorded_json_keeps_its_shape() -> None:
    """`engram rem run --json` and `rem_run.result` print these keys, in this order."""
    assert list(LinkCounts().to_dict()) == [
        "related",
        "related_added",
        "related_removed",
        "supersedes",
    ]
    assert list(CommunityReport().to_dict()) == [
        "communities",
        "new",
        "merged",
        "split",
        "gone",
        "orphans",
        "orphan_ids",
        "small",
        "llm_summaries",
    ]
    assert EpisodeLevels(2, 1).to_dict() == {"summary": 2, "compressed": 1}
    assert TierMoves({"cold": 3}).to_dict() == {"cold": 3}
    assert "llm_note" not in ContradictionCounts().to_dict()


def test_changes_are_described_from_what_was_recorded() -> None:
    report = CommunityReport(communities=1, new=["c-1"], orphans=2).to_dict()
    assert describe_changes("communities", report) == (
        "1 communities: 1 new, 0 merged, 0 split, 0 gone; 2 orphans"
    )
    assert describe_changes("retention", {"cold": 3}) == "cold 3"
    assert describe_changes("episodes", {"summary": 2, "compressed": 0}) == (
        "summary 2, compressed 0"
    )
    assert describe_changes("gone-op", {"a": 1, "b": [1]}) == "a 1"  # no longer declared


def test_a_dry_run_skips_operations_that_apply_themselves(context: RemContext) -> None:
    context.service.add({"id": "e", "type": "episode", "content": "Deploy failed.",
                         "created_at": "2020-01-01T00:00:00+00:00"})  # fmt: skip
    reports = run_operations(context, ["episodes", "retention"], dry_run=True)
    assert [(r.outcome, r.changes) for r in reports] == [(None, {}), (None, {})]
    assert context.service.store.get("e").summary is None
    (report,) = run_operations(context, ["episodes"])
    assert report.outcome == EpisodeLevels(summary=1, compressed=1)
    assert report.to_dict()["changes"] == {"summary": 1, "compressed": 1}


def test_unknown_operations_are_refused_before_anything_runs(context: RemContext) -> None:
    with pytest.raises(UserInputError, match=r"unknown operation.*nap.*choose from: retention"):
        run_operations(context, ["duplicates", "nap"])
    assert latest_runs(context.service.store) == []


def test_an_answer_goes_to_the_action_its_operation_declares(context: RemContext) -> None:
    service = context.service
    service.add({"id": "m", "content": "Old note."})
    findings = FindingStore(service.store)
    options = [Option("archive", "Archive", "a"), Option("keep", "Keep", "k")]
    stale, unknown = (
        Finding(op, "stale", f"{op} finding", ["m"], options, "archive")
        for op in ("staleness", "nap")
    )
    findings.save([stale, unknown])
    with pytest.raises(UserInputError, match="no action for option 'archive' of a nap finding"):
        answer(service, findings, unknown, "archive")
    assert findings.get(unknown.id).status is Status.PENDING
    assert answer(service, findings, unknown, "keep") is False  # recorded, nothing to do
    assert answer(service, findings, stale, "archive") is True
    assert service.store.get("m").tier.value == "archived"
    assert findings.get(stale.id).status is Status.APPLIED


def test_contradiction_counts_say_they_are_this_runs() -> None:
    """A run listing six open findings had printed "contradictions 0, supersedes 0"."""
    counts = ContradictionCounts(queued=3, judged=2, supersedes=1, llm_note="no model set")
    assert counts.describe() == (
        "this run: 3 queued, 2 judged, 0 new contradictions, 1 new supersessions, "
        "model asked 0 (no model set)"
    )
