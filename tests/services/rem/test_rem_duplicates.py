"""REM duplicates: detection rules, findings, answering (merge is atomic and never
deletes), and not proposing the same thing twice."""

from __future__ import annotations

import numpy as np
import pytest

from services.rem.actions import answer
from services.rem.cycle import RemContext, run_operations
from services.rem.ops import duplicates
from services.rem.ops.duplicates import numbers, same_fact, similar_pairs
from services.storage.findings import FindingStore, Status
from services.types import Tier, UsageEvent
from tests.services.builders import make_memory


def test_the_checks_tell_paraphrases_from_look_alikes() -> None:
    a = make_memory("`SplitField` rejects payloads larger than 2 MB.", type="constraint")
    same = make_memory("Payloads over 2 MB are refused by `SplitField`.", type="constraint")
    changed = make_memory("`SplitField` accepts up to 1 MB now instead of 2 MB.", type="constraint")
    other_type = make_memory("Fixed: `SplitField` rejects payloads larger than 2 MB.", type="fix")
    other_name = make_memory("`JoinField` rejects payloads larger than 2 MB.", type="constraint")
    assert same_fact(a, same)
    assert not same_fact(a, changed)
    assert not same_fact(a, other_type)
    assert not same_fact(a, other_name)


def test_numbers_ignore_names_and_articles() -> None:
    memory = make_memory("Read UTF-8 one by one; retry three times, wait 30 s, v2 API.")
    assert numbers(memory) == {"3", "30s"}


def test_similar_pairs_uses_cosine() -> None:
    memories = [make_memory(f"m{n}", id=f"m{n}") for n in range(3)]
    vectors = {
        "m0": np.array([1.0, 0.0]),
        "m1": np.array([0.95, 0.31]),  # cos ≈ 0.95 with m0
        "m2": np.array([0.0, 1.0]),
    }
    pairs = list(similar_pairs(memories, vectors, 0.9))
    assert [(a, b) for a, b, _ in pairs] == [("m0", "m1")]


def test_mutual_nearest_neighbours_are_proposed_from_a_lower_probability(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a and b are each other's nearest note; c's nearest is b, but b's nearest is a.
    memories = [make_memory(f"note {n}", id=n) for n in "abcd"]
    vectors = {
        "a": np.array([1.0, 0.0, 0.0]),
        "b": np.array([0.98, 0.2, 0.0]),
        "c": np.array([0.6, 0.8, 0.0]),
        "d": np.array([0.0, 0.0, 1.0]),
    }
    between = (duplicates.MUTUAL_DUPLICATE_THRESHOLD + duplicates.DUPLICATE_THRESHOLD) / 2
    monkeypatch.setattr(duplicates, "RESTATEMENT_THRESHOLD", 2.0)  # the other scorer: off
    monkeypatch.setattr(duplicates, "duplicate_probability", lambda pair: between)
    monkeypatch.setattr(duplicates, "is_conflict", lambda pair, texts, **how: (False, 0.0))
    assert [(p.a, p.b) for p in duplicates.scored_pairs(memories, vectors)] == [("a", "b")]
    below = duplicates.MUTUAL_DUPLICATE_THRESHOLD - 0.01
    monkeypatch.setattr(duplicates, "duplicate_probability", lambda pair: below)
    assert duplicates.scored_pairs(memories, vectors) == []
    monkeypatch.setattr(duplicates, "duplicate_probability", lambda pair: 1.0)
    assert {(p.a, p.b) for p in duplicates.scored_pairs(memories, vectors)} >= {
        ("a", "b"),
        ("b", "c"),
    }


def test_two_notes_giving_the_same_counted_values_are_proposed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """real-dev's pool defaults, told once as `max_connections=100` and once as "at most
    100 connections": neither scorer claimed the pair."""
    from services.knowledge.pair_features import read_pair_text

    first = make_memory(
        "Pool defaults: max_connections=100, max_keepalive_connections=20, keepalive_expiry="
        "5.0 seconds. Override with limits= on the client.",
        id="a",
    )
    second = make_memory(
        "If you don't pass limits= you get at most 100 connections, 20 of them kept alive, "
        "idle keep-alive connections dropped after 5 s.",
        id="b",
    )
    twins = (read_pair_text(first), read_pair_text(second))
    assert duplicates.same_values({"cosine": 0.7}, twins)
    assert not duplicates.same_values({"cosine": 0.3}, twins)  # not alike enough
    assert not duplicates.same_values({"cosine": 0.7, "quantity_clash": 1.0}, twins)
    other = make_memory("At most 100 connections; a pool is per client.", id="c")
    assert not duplicates.same_values({"cosine": 0.7}, (twins[0], read_pair_text(other)))
    monkeypatch.setattr(duplicates, "RESTATEMENT_THRESHOLD", 2.0)  # the scorers: off
    monkeypatch.setattr(duplicates, "duplicate_probability", lambda pair: 0.0)
    vectors = {"a": np.array([1.0, 0.0]), "b": np.array([0.8, 0.6])}
    assert [(p.a, p.b) for p in duplicates.scored_pairs([first, second], vectors)] == [("a", "b")]


def test_a_proposed_pair_worded_oppositely_says_so() -> None:
    fails = make_memory(
        "Careful: `cmd.SetArgs(nil)` does NOT help — nil means os.Args.", id="fails"
    )
    works = make_memory("In command tests `cmd.SetArgs(nil)` is enough.", id="works")
    same = make_memory("In tests, `cmd.SetArgs(nil)` keeps go test flags out.", id="same")
    assert duplicates.worded_oppositely([fails, works]) == ["cmd.SetArgs(nil)"]
    assert duplicates.worded_oppositely([works, same]) == []
    pair = duplicates.DuplicatePair("fails", "works", 0.8, False, scored=True)
    (finding,) = duplicates.duplicate_findings([pair], {"fails": fails, "works": works})
    assert "opposite things" in finding.summary and "`cmd.SetArgs(nil)`" in finding.summary
    assert finding.detail["worded_oppositely"] == ["cmd.SetArgs(nil)"]
    assert finding.recommended == "skip"
    agreeing = duplicates.DuplicatePair("same", "works", 0.8, False, scored=True)
    (plain,) = duplicates.duplicate_findings([agreeing], {"same": same, "works": works})
    assert "opposite" not in plain.summary and "worded_oppositely" not in plain.detail


def add(context: RemContext, memory_id: str, content: str, **fields: object) -> None:
    context.service.add({"id": memory_id, "content": content, "project": "p", **fields})


def test_exact_duplicates_are_found_and_merged_without_deleting(context: RemContext) -> None:
    add(context, "a", "Deploys happen on Tuesdays.", tags=["deploy"])
    add(context, "b", "Deploys happen on Tuesdays.", tags=["release"], file_refs=["ops/**"])
    add(context, "c", "Deploys happen on Tuesdays.")
    add(context, "other", "Releases are tagged vX.Y.Z.")
    context.service.store.record_usage(["b"], UsageEvent.CITED)
    (report,) = run_operations(context, ["duplicates"])
    (finding,) = report.findings
    assert finding.kind == "exact_duplicate" and finding.memory_ids == ["a", "b", "c"]
    assert finding.recommended == "merge" and finding.detail["keep"] == "b"  # the cited one

    findings = FindingStore(context.service.store)
    assert answer(context.service, findings, finding, "merge")
    store = context.service.store
    kept = store.get("b")
    assert set(kept.tags) == {"deploy", "release"} and kept.file_refs == ["ops/**"]
    for merged in ("a", "c"):
        memory = store.get(merged)  # still there: archived, superseded by the keeper
        assert memory.tier is Tier.ARCHIVED and memory.superseded_by == "b"
    assert findings.get(finding.id).status is Status.APPLIED
    links = store.database.execute_sql("SELECT source, target, kind FROM memory_link").fetchall()
    assert sorted(links) == [("b", "a", "consolidates"), ("b", "c", "consolidates")]
    # Nothing more to propose: the merged ones are archived, the finding is answered.
    (again,) = run_operations(context, ["duplicates"])
    assert again.findings == []


def test_keep_both_is_remembered_and_skip_leaves_it_open(context: RemContext) -> None:
    add(context, "a", "Use UTC in the database.")
    add(context, "b", "Use UTC in the database.")
    findings = FindingStore(context.service.store)
    (report,) = run_operations(context, ["duplicates"])
    (finding,) = report.findings
    assert not answer(context.service, findings, finding, "skip")
    assert findings.get(finding.id).status is Status.PENDING
    assert not answer(context.service, findings, finding, "keep_both")
    assert findings.get(finding.id).status is Status.DISMISSED
    (again,) = run_operations(context, ["duplicates"])
    assert again.findings == []  # not proposed again
    assert context.service.store.get("a").tier is Tier.WARM


def test_a_failing_merge_changes_nothing(
    context: RemContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    add(context, "a", "Cache for 60 s.")
    add(context, "b", "Cache for 60 s.")
    findings = FindingStore(context.service.store)
    (finding,) = run_operations(context, ["duplicates"])[0].findings

    def broken(*_args: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr("services.rem.option_actions.add_link", broken)
    with pytest.raises(RuntimeError):
        answer(context.service, findings, finding, "merge")
    store = context.service.store
    assert store.get("a").tier is Tier.WARM and store.get("a").superseded_by is None
    assert store.get("b").superseded_by is None
    assert findings.get(finding.id).status is Status.PENDING


def test_dry_run_stores_nothing_and_auto_applies(context: RemContext) -> None:
    add(context, "a", "Retry three times.")
    add(context, "b", "Retry three times.")
    (dry,) = run_operations(context, ["duplicates"], dry_run=True)
    assert len(dry.findings) == 1
    assert FindingStore(context.service.store).pending() == []
    (auto,) = run_operations(context, ["duplicates"], auto=True)
    assert auto.applied == 1
    superseded = [m for m in ("a", "b") if context.service.store.get(m).superseded_by]
    assert len(superseded) == 1


def test_auto_dismisses_a_finding_whose_memories_changed_and_answers_the_rest(
    context: RemContext,
) -> None:
    """A pending finding of an earlier run names a memory replaced since: `auto` dismisses
    it and still answers the new one, instead of failing the operation."""
    from services.knowledge.supersession import declare

    add(context, "a", "Retry three times.")
    add(context, "b", "Retry three times.")
    (dry,) = run_operations(context, ["duplicates"], dry_run=True)
    store = FindingStore(context.service.store)
    store.save(dry.findings)  # as an interrupted earlier run would have left it
    add(context, "c", "Retries: three, then give up.")
    declare(context.service.store, "c", ["a"])
    add(context, "d", "Cache for ten minutes.")
    add(context, "e", "Cache for ten minutes.")
    (auto,) = run_operations(context, ["duplicates"], auto=True)
    assert auto.error is None
    assert auto.out_of_date == 1 and auto.applied == 1
    assert [m for m in ("d", "e") if context.service.store.get(m).superseded_by]


def test_unknown_operation_is_a_clear_error(context: RemContext) -> None:
    from services.errors import UserInputError

    with pytest.raises(UserInputError, match="choose from: retention, staleness, duplicates"):
        run_operations(context, ["dreaming"])


def test_a_similar_pair_the_conflict_scorer_flags_is_not_proposed(
    context: RemContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However alike, a pair read as a change or a contradiction is left to the
    contradictions operation: merging it would keep one side and archive the other."""
    add(context, "a", "Run test-serve and test-build locally before pushing.", type="workflow")
    add(context, "b", "No need to run test-build locally before pushing.", type="workflow")
    monkeypatch.setattr(
        duplicates, "similar_pairs", lambda memories, found, bar: [("a", "b", 0.95)]
    )
    monkeypatch.setattr(duplicates, "same_fact", lambda a, b: True)
    monkeypatch.setattr(duplicates, "scored_pairs", lambda memories, found, reader: [])
    monkeypatch.setattr(duplicates, "is_conflict", lambda pair, texts, **how: (True, 0.99))
    (report,) = run_operations(context, ["duplicates"])
    assert report.findings == []
    monkeypatch.setattr(duplicates, "is_conflict", lambda pair, texts, **how: (False, 0.1))
    (report,) = run_operations(context, ["duplicates"])
    assert [f.memory_ids for f in report.findings] == [["a", "b"]]


def test_a_pair_the_contradictions_operation_judged_is_not_proposed_as_a_duplicate(
    context: RemContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review would otherwise offer to merge what it already says replaces. A
    replacement recorded when a memory was written (without review) does not count,
    nor does a flag of the fitted scorer alone (a guess, as a duplicate proposal is)."""
    from services.knowledge.current_truth import SOURCE
    from services.storage import contradictions as table

    for memory_id in "abcdefgh":
        add(context, memory_id, f"Note {memory_id} about the yaml library.", type="dependency")
    similar = [("a", "b", 0.95), ("c", "d", 0.95), ("e", "f", 0.95), ("g", "h", 0.95)]
    monkeypatch.setattr(duplicates, "similar_pairs", lambda memories, found, bar: similar)
    monkeypatch.setattr(duplicates, "same_fact", lambda a, b: True)
    monkeypatch.setattr(duplicates, "scored_pairs", lambda memories, found, reader: [])
    monkeypatch.setattr(duplicates, "is_conflict", lambda pair, texts, **how: (False, 0.1))
    store = context.service.store
    now = "2026-01-01T00:00:00Z"
    with store.writing():
        table.record_flag(store, "a", "b", "supersedes", "b", now, '{"judged": 1}')
        table.record_flag(store, "c", "d", "supersedes", "d", now, f'{{"judged": "{SOURCE}"}}')
        guess = '{"scorer": 0.97, "cue_score": 0.0}'
        table.record_flag(store, "g", "h", "contradiction", "h", now, guess)
    (report,) = run_operations(context, ["duplicates"])
    assert sorted(f.memory_ids for f in report.findings) == [["c", "d"], ["e", "f"], ["g", "h"]]


def test_a_group_never_joins_two_notes_that_state_one_number_differently() -> None:
    floor = dict(type="constraint", project="prettier", created_at="2025-01-01T00:00:00+00:00")
    notes = {
        m.id: m
        for m in (
            make_memory("Root package.json engines is `>=18` for the dev build.", id="a", **floor),
            make_memory("Working on prettier itself needs a recent Node.", id="b", **floor),
            make_memory(
                "package.json engines: `>=22`; Node 20 can't run the tests.", id="c", **floor
            ),
        )
    }
    pairs = [
        duplicates.DuplicatePair("a", "b", 0.9, False, scored=True),
        duplicates.DuplicatePair("b", "c", 0.8, False, scored=True),
    ]
    assert duplicates.groups(pairs) == [["a", "b", "c"]]  # chained through the middle note
    apart = duplicates.stated_differently(notes)
    assert apart("a", "c") and not apart("a", "b")
    assert duplicates.groups(pairs, apart) == [["a", "b"]]  # the surer pair joins first
    findings = duplicates.duplicate_findings(pairs, notes)
    assert [f.memory_ids for f in findings] == [["a", "b"]]


def test_a_group_holds_only_notes_that_are_pairs_or_near_in_meaning() -> None:
    """Single links chain: a ~ b and b ~ c do not make a ~ c when the two are far apart."""
    notes = {m.id: m for m in (make_memory(f"note {n}", id=n, project="p") for n in "abc")}
    pairs = [
        duplicates.DuplicatePair("a", "b", 0.9, False, scored=True),
        duplicates.DuplicatePair("b", "c", 0.8, False, scored=True),
    ]
    far = {"a": np.array([1.0, 0.0]), "b": np.array([0.8, 0.6]), "c": np.array([0.0, 1.0])}
    apart = duplicates.apart_in_groups(pairs, notes, far)
    assert apart("a", "c") and not apart("a", "b") and not apart("c", "b")
    assert [f.memory_ids for f in duplicates.duplicate_findings(pairs, notes, far)] == [["a", "b"]]
    near = {**far, "c": np.array([0.95, 0.31])}  # a and c: cosine 0.95
    assert [f.memory_ids for f in duplicates.duplicate_findings(pairs, notes, near)] == [
        ["a", "b", "c"]
    ]


def test_a_merge_keeps_the_note_that_names_more_files_when_use_ties() -> None:
    named = make_memory(
        "--timeout defaults to 30 seconds (Timeout in gunicorn/config.py).",
        id="named", created_at="2026-06-05T10:00:00+00:00",
    )  # fmt: skip
    plain = make_memory(
        "--timeout is 30 seconds out of the box.", id="plain",
        created_at="2026-12-07T10:00:00+00:00",
    )  # fmt: skip
    assert duplicates.keeper([plain, named]).id == "named"
    old = make_memory("--timeout is 30 s.", id="old", created_at="2026-01-01T10:00:00+00:00")
    assert duplicates.keeper([plain, old]).id == "plain"  # nothing named: the newest
