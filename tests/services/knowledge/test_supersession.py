"""What holds now where memories are read: pair features, the fitted scorer, declared
supersession and search ranking the replacement above what it replaced."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.composition import Engram
from services.errors import NotFoundError, UserInputError
from services.filters import MemoryFilter
from services.knowledge import contradictions, supersession
from services.knowledge.conflict_scorer import (
    DUPLICATE_CLAIM,
    both_events,
    duplicate_claims,
    duplicate_probability,
    is_conflict,
    probability,
)
from services.knowledge.pair_features import FEATURES, features, read_pair_text, release
from services.memory import Memory
from services.storage import contradictions as table
from services.types import MemoryType
from tests.services.builders import make_memory

FLOOR_OLD = dict(
    title="python floor = 3.8",
    content='We support 3.8 and up. `requires-python = ">=3.8"` in pyproject.toml.',
    created_at="2024-01-16T10:00:00+00:00",
    type="constraint",
    project="httpx",
)
FLOOR_NEW = dict(
    title="3.8 dropped",
    content="3.8 is dropped. `requires-python` is `>=3.9` now; CI runs 3.9-3.13.",
    created_at="2025-06-30T10:00:00+00:00",
    type="constraint",
    project="httpx",
)
FLOOR_NEWER = dict(
    FLOOR_NEW,
    title="3.9 dropped",
    content="3.9 is dropped as well: `requires-python` is `>=3.10`.",
    created_at="2026-02-10T10:00:00+00:00",
)
UNRELATED = dict(
    title="release tags",
    content="Tags have no v prefix; scripts/publish compares the ref with __version__.",
    created_at="2025-07-01T10:00:00+00:00",
    type="workflow",
    project="httpx",
)


def test_change_wording_and_the_old_value_are_read_from_the_later_note() -> None:
    old, new = read_pair_text(make_memory(**FLOOR_OLD)), read_pair_text(make_memory(**FLOOR_NEW))
    found = features(new, old, cosine=0.6)  # order does not matter: dates decide
    assert found["change_later"] >= 1
    assert found["change_earlier"] == 0
    assert found["old_value_named"] >= 1
    assert found["versions_differ"] == 1.0
    assert found["near_copy"] == 0.0


def test_a_copy_is_a_near_copy_not_a_change() -> None:
    one = read_pair_text(make_memory(**FLOOR_OLD))
    two = read_pair_text(make_memory(**FLOOR_OLD))
    found = features(one, two, cosine=1.0)
    assert found["near_copy"] == 1.0
    assert found["old_value_named"] == 0.0


def test_the_scorer_ranks_a_supersession_above_an_unrelated_pair() -> None:
    old, new = read_pair_text(make_memory(**FLOOR_OLD)), read_pair_text(make_memory(**FLOOR_NEW))
    other = read_pair_text(make_memory(**UNRELATED))
    replacing = probability(features(old, new, cosine=0.6))
    unrelated = probability(features(old, other, cosine=0.2))
    assert 0.0 < unrelated < replacing < 1.0


@settings(max_examples=60, deadline=None)
@given(
    st.text(min_size=1, max_size=300),
    st.text(min_size=1, max_size=300),
    st.floats(-1.0, 1.0),
)
def test_features_are_finite_for_any_text(first: str, second: str, cosine: float) -> None:
    a = read_pair_text(make_memory(first if first.strip() else "x", title="a"))
    b = read_pair_text(make_memory(second if second.strip() else "y", title="b"))
    found = features(a, b, cosine)
    assert set(found) == set(FEATURES)
    assert all(math.isfinite(v) for v in found.values())
    assert 0.0 <= probability(found) <= 1.0


def test_declared_supersession_applies_at_once_and_keeps_history(engram: Engram) -> None:
    old = engram.service.add(FLOOR_OLD)
    new = engram.service.add(FLOOR_NEW)
    (replaced,) = supersession.declare(engram.store, new.id, [old.id])
    assert replaced.superseded_by == new.id
    assert replaced.valid_to == new.created_at
    assert engram.store.get(new.id).supersedes == old.id
    standard = engram.service.search("python floor", MemoryFilter(project="httpx"))
    assert old.id not in [r.memory.id for r in standard.results]


def test_a_replacement_takes_over_the_files_the_replaced_note_pointed_at(engram: Engram) -> None:
    """The context for a file finds memories by their file_refs: a replacement written
    without them had left the file to unrelated notes."""
    old = engram.service.add(
        {"content": "Use `timezone.utc` for aware datetimes.", "project": "dj",
         "file_refs": ["django/utils/timezone.py", "docs/tz.txt"]}
    )  # fmt: skip
    new = engram.service.add(
        {"content": "`timezone.utc` is gone in 5.0: use `datetime.timezone.utc`.",
         "project": "dj", "file_refs": ["docs/tz.txt"]}
    )  # fmt: skip
    supersession.declare(engram.store, new.id, [old.id])
    assert engram.store.get(new.id).file_refs == ["docs/tz.txt", "django/utils/timezone.py"]
    assert engram.store.get(old.id).file_refs == ["django/utils/timezone.py", "docs/tz.txt"]


def test_declaring_the_replaced_note_right_after_all_reverses_the_replacement(
    engram: Engram,
) -> None:
    """Both had stopped holding, each replaced by the other, and search found neither."""
    old = engram.service.add(FLOOR_OLD)
    new = engram.service.add(FLOOR_NEW)
    supersession.declare(engram.store, new.id, [old.id])
    (replaced,) = supersession.declare(engram.store, old.id, [new.id])
    assert replaced.id == new.id and replaced.superseded_by == old.id
    held = engram.store.get(old.id)
    assert (held.superseded_by, held.valid_to, held.supersedes) == (None, None, new.id)
    assert engram.store.get(new.id).supersedes is None
    standard = engram.service.search("python floor", MemoryFilter(project="httpx"))
    assert [r.memory.id for r in standard.results] == [old.id]


def test_a_replaced_memory_can_hold_again_beside_its_replacement(engram: Engram) -> None:
    """A replacement confirmed by mistake is undone: both hold, both are found, and the
    pair's conflict is settled as both valid so the cycle does not propose it again."""
    old = engram.service.add(FLOOR_OLD)
    new = engram.service.add(FLOOR_NEW)
    a, b = contradictions.ordered(old, new)
    with engram.store.writing():
        table.record_flag(engram.store, a.id, b.id, "supersedes", new.id, "2025-07-01", "{}")
    supersession.declare(engram.store, new.id, [old.id])
    held, replacer = supersession.reinstate(engram.store, old.id)
    assert replacer == new.id
    assert (held.superseded_by, held.valid_to) == (None, None)
    assert engram.store.get(new.id).supersedes is None
    record = contradictions.for_pair(engram.store, old.id, new.id)
    assert record is not None and record.resolution == "both_valid"
    standard = engram.service.search("python floor", MemoryFilter(project="httpx"))
    assert {old.id, new.id} <= {r.memory.id for r in standard.results}
    with pytest.raises(UserInputError):
        supersession.reinstate(engram.store, old.id)  # it holds: nothing to undo
    with pytest.raises(NotFoundError):
        supersession.reinstate(engram.store, "no-such-id")


def test_a_memory_a_merge_folded_in_holds_again_out_of_the_archive(engram: Engram) -> None:
    kept = engram.service.add(FLOOR_NEW)
    folded = engram.service.add(FLOOR_OLD)
    with engram.store.writing():  # what the duplicates merge does
        engram.store.update(folded.id, {"superseded_by": kept.id, "tier": "archived"})
    held, replacer = supersession.reinstate(engram.store, folded.id)
    assert replacer == kept.id and held.tier.value == "warm" and held.superseded_by is None
    standard = engram.service.search("python floor", MemoryFilter(project="httpx"))
    assert folded.id in {r.memory.id for r in standard.results}


def test_declaring_never_acts_on_a_guess(engram: Engram) -> None:
    old = engram.service.add(FLOOR_OLD)
    new = engram.service.add(FLOOR_NEW)
    elsewhere = engram.service.add({**UNRELATED, "project": "pydantic"})
    with pytest.raises(NotFoundError):
        supersession.declare(engram.store, new.id, [old.id, "no-such-id"])
    with pytest.raises(UserInputError):
        supersession.declare(engram.store, new.id, [new.id])
    with pytest.raises(UserInputError):
        supersession.declare(engram.store, new.id, [elsewhere.id])
    assert engram.store.get(old.id).superseded_by is None


def test_search_ranks_the_holder_of_an_open_conflict_first(engram: Engram) -> None:
    old = engram.service.add(FLOOR_OLD)
    new = engram.service.add(FLOOR_NEW)
    a, b = contradictions.ordered(old, new)
    with engram.store.writing():
        table.record_flag(engram.store, a.id, b.id, "supersedes", new.id, "2025-07-01", "{}")
    response = engram.service.search("python floor 3.8", MemoryFilter(project="httpx"))
    ranked = [r.memory.id for r in response.results]
    assert ranked.index(new.id) < ranked.index(old.id)
    marked = {r.memory.id: r.outdated_by for r in response.results}
    assert marked[old.id] == new.id
    assert marked[new.id] is None


def _replaced_by_the_second(
    engram: Engram, first: dict[str, str], second: dict[str, str], evidence: dict[str, float]
) -> tuple[Memory, Memory]:
    """Both memories stored, and an open conflict (this test's own, with `evidence`)
    saying the second replaced the first."""
    engram.indexer.on_indexed = None
    old = engram.service.add(first)
    new = engram.service.add(second)
    a, b = contradictions.ordered(old, new)
    with engram.store.writing():
        table.record_flag(
            engram.store, a.id, b.id, "supersedes", new.id, "2026-11-01", json.dumps(evidence)
        )
    return old, new


SLOW_TESTS = dict(
    title="Style rule for refunds.py",
    content="Mark the slow tests for `patch_locked_refund` so `pytest -q` stays fast.",
    created_at="2026-06-19T10:00:00+00:00",
    type="convention",
    project="ledgerly",
)
TIMESTAMPS = dict(
    title="Design choice in refunds.py",
    content="We store refund timestamps in UTC, starting with `refund_window_open`.",
    created_at="2026-10-09T10:00:00+00:00",
    type="decision",
    project="ledgerly",
)


@pytest.mark.parametrize(
    ("evidence", "pulled_in"),
    [
        ({"scorer": 0.93, "cue_score": 0.0, "score": 0.93}, False),  # the scorer's guess
        ({"scorer": 0.93, "cue_score": 0.9, "score": 0.93}, True),  # the wording says so
        ({}, True),  # recorded by a person or an older judge
    ],
)
def test_a_guessed_replacement_is_not_pulled_in_for_code_it_does_not_name(
    engram: Engram, evidence: dict[str, float], pulled_in: bool
) -> None:
    """A query naming code that only the old note names: a replacement that the wording
    names is brought in above it; one that only the fitted scorer guessed is not (it
    would answer another question), and the old note is marked "may be outdated"."""
    old, new = _replaced_by_the_second(engram, SLOW_TESTS, TIMESTAMPS, evidence)
    response = engram.service.search(
        "patch_locked_refund", MemoryFilter(project="ledgerly"), limit=1
    )
    ranked = [r.memory.id for r in response.results]
    assert ranked == ([new.id] if pulled_in else [old.id])  # the first `limit` of them
    if not pulled_in:
        assert response.results[0].outdated_by == new.id
    else:  # brought in: it shows no score of the search's, not the old note's (it had)
        brought = response.results[0].breakdown
        assert brought.sources == ("replacement",) and brought.matched_identifiers == ()
        assert brought.dense == brought.lexical == brought.identifier == 0.0
    both = engram.service.search("refunds", MemoryFilter(project="ledgerly"), limit=2)
    assert [r.memory.id for r in both.results] == [new.id, old.id]  # found: current first
    # A question naming no code: the guess is brought in (on notes people write, the
    # replacement is often worded so that the question misses it).
    worded = engram.service.search(
        "keep the slow tests out of the default run", MemoryFilter(project="ledgerly"), limit=1
    )
    assert [r.memory.id for r in worded.results] == [new.id]


KEY_ERROR = dict(
    title="Fix: TypeError reading scopedBoardKey",
    content="`TypeError: Cannot read properties of undefined (reading 'scopedBoardKey')` "
    "means the pin DTO omits `scopedBoardKey` for old records; default it first.",
    created_at="2026-02-07T10:00:00+00:00",
    type="fix",
    project="pinboard",
)
CODE_ERROR = dict(
    title="Fix: TypeError reading scopedBoardCode",
    content="Resolved `TypeError: Cannot read properties of undefined (reading "
    "'scopedBoardCode')` in `collectProratedBoard`: default it before rendering.",
    created_at="2026-05-18T10:00:00+00:00",
    type="fix",
    project="pinboard",
)


@pytest.mark.parametrize(
    ("evidence", "moved"),
    [
        ({"scorer": 0.99, "cue_score": 0.0, "score": 0.99}, False),  # the scorer's guess
        ({}, True),  # recorded by a person or on the wording
    ],
)
def test_a_guessed_replacement_quoting_another_error_stays_below_the_exact_one(
    engram: Engram, evidence: dict[str, float], moved: bool
) -> None:
    """A pasted error: the note quoting it answers it; a guess that a note about
    another error replaced it does not move that note above it."""
    old, new = _replaced_by_the_second(engram, KEY_ERROR, CODE_ERROR, evidence)
    pasted = "TypeError: Cannot read properties of undefined (reading 'scopedBoardKey')"
    response = engram.service.search(pasted, MemoryFilter(project="pinboard"))
    ranked = [r.memory.id for r in response.results]
    assert ranked[:2] == ([new.id, old.id] if moved else [old.id, new.id])
    assert {r.memory.id: r.outdated_by for r in response.results}[old.id] == new.id


def test_the_surest_of_several_open_conflicts_names_the_replacement(engram: Engram) -> None:
    old = engram.service.add(FLOOR_OLD)
    loose = engram.service.add({**UNRELATED, "created_at": "2025-06-29T10:00:00+00:00"})
    new = engram.service.add(FLOOR_NEW)
    with engram.store.writing():
        for holder, score in ((new, 0.99), (loose, 0.93)):  # the looser one is found last
            a, b = contradictions.ordered(old, holder)
            evidence = json.dumps({"score": score})
            table.record_flag(
                engram.store, a.id, b.id, "supersedes", holder.id, "2025-07-02", evidence
            )
    assert supersession.replaced_by(engram.store, [old.id])[old.id] == new.id
    response = engram.service.search("python floor 3.8", MemoryFilter(project="httpx"))
    ranked = [r.memory.id for r in response.results]
    assert ranked.index(new.id) < ranked.index(old.id)
    assert {r.memory.id: r.outdated_by for r in response.results}[old.id] == new.id


@pytest.mark.parametrize(("guess", "named"), [(0.86, "read"), (0.97, "guessed")])
def test_a_guess_below_the_scorers_bar_never_outranks_a_reading(
    engram: Engram, guess: float, named: str
) -> None:
    """Two holders of one old note: the cues read one (a raised floor, score 0.80), the
    fitted scorer alone guessed the other. A guess flagged below the scorer's own bar
    counts below the reading whatever its score; one past the bar is compared by score."""
    old = engram.service.add(FLOOR_OLD)
    guessed = engram.service.add({**UNRELATED, "created_at": "2025-06-29T10:00:00+00:00"})
    read = engram.service.add(FLOOR_NEW)
    with engram.store.writing():
        for holder, evidence in (
            (read, {"score": 0.8, "cue_score": 0.8, "scorer": None}),
            (guessed, {"score": guess, "cue_score": 0.0, "scorer": guess}),
        ):
            a, b = contradictions.ordered(old, holder)
            table.record_flag(
                engram.store, a.id, b.id, "supersedes", holder.id, "2025-07-02",
                json.dumps(evidence),
            )  # fmt: skip
    expected = {"read": read.id, "guessed": guessed.id}[named]
    assert supersession.replaced_by(engram.store, [old.id])[old.id] == expected


@pytest.mark.parametrize(("later_score", "chained"), [(0.99, True), (0.93, False)])
def test_a_later_co_holder_makes_history_only_when_it_is_as_sure(
    engram: Engram, later_score: float, chained: bool
) -> None:
    """The floor raised twice (two sure replacements of one old note) makes the first
    raise history; a looser look-alike flagged later against the same old note (a CI
    toolchain note beside the MSRV bump) does not."""
    engram.indexer.on_indexed = None  # the conflicts are this test's own, not judged ones
    old = engram.service.add(FLOOR_OLD)
    first = engram.service.add(FLOOR_NEW)
    later = engram.service.add(FLOOR_NEWER)
    with engram.store.writing():
        for holder, score in ((first, 0.99), (later, later_score)):
            a, b = contradictions.ordered(old, holder)
            evidence = json.dumps({"score": score})
            table.record_flag(
                engram.store, a.id, b.id, "supersedes", holder.id, "2026-02-11", evidence
            )
    found = supersession.replaced_by(engram.store, [old.id, first.id])
    if chained:
        assert found == {old.id: later.id, first.id: later.id}
    else:
        assert found == {old.id: first.id}


def test_two_episodes_conflict_only_when_the_later_says_it_changed_the_earlier() -> None:
    rollout = dict(
        type="episode",
        project="express",
        title="security release",
        content="5.2.0 is out with the CVE fix; rolling every service to 5.2.0 today.",
        created_at="2025-12-01T10:00:00+00:00",
    )
    reverted = dict(
        rollout,
        title="5.2.1",
        content="5.2.1 restores the old parser; target 5.2.1 and skip 5.2.0 entirely.",
        created_at="2025-12-02T10:00:00+00:00",
    )
    other_day = dict(rollout, title="deploy", content="Deployed 5.2.1 to staging at noon.")
    first = read_pair_text(make_memory(**rollout))
    assert both_events(first, read_pair_text(make_memory(**other_day)))
    assert not both_events(first, read_pair_text(make_memory(**reverted)))
    assert not both_events(read_pair_text(make_memory(**reverted)), first)  # dates decide


def test_a_shared_title_names_a_topic_and_is_no_sign_of_a_duplicate() -> None:
    # Across four hand-written sets, 62 labelled conflicts share their title against 8
    # paraphrases: people keep a topic's title when they write what changed.
    topic = dict(type="workflow", project="gin", title="tagging a release")
    old = make_memory(
        **topic,
        content="Push the version bump first, wait for green CI, then push the signed tag.",
        created_at="2024-01-06T10:00:00+00:00",
    )
    new = make_memory(
        **topic,
        content="`git push --follow-tags` sends the commit and its tag together; no waiting.",
        created_at="2025-10-14T10:00:00+00:00",
    )
    retitled = make_memory(**{**new.to_dict(), "title": "pushing tags"})
    same = features(read_pair_text(old), read_pair_text(new), cosine=0.7)
    other = features(read_pair_text(old), read_pair_text(retitled), cosine=0.7)
    assert same["title_overlap"] == 1.0 > other["title_overlap"]
    assert duplicate_probability(same) < DUPLICATE_CLAIM  # the title alone claims nothing
    assert probability(same) > probability(other)  # the conflict scorer still reads it
    copy = features(read_pair_text(old), read_pair_text(old), cosine=1.0)
    assert duplicate_probability(copy) > 0.99  # an exact copy is still one


def test_a_lower_bar_never_takes_a_pair_the_duplicate_scorer_claims() -> None:
    # Which scorer decides is read against each scorer's own fitted bar; a caller that
    # flags from a lower score (write time) must not tip a restatement into a change.
    where = dict(type="dependency", project="axum")
    old = make_memory(
        "TypedHeader lives in axum-extra (`axum_extra::TypedHeader`, feature "
        "`typed-header`). axum itself hasn't had a `headers` feature since 0.7.",
        title="TypedHeader location",
        created_at="2024-04-08T10:00:00+00:00",
        **where,
    )
    new = make_memory(
        "TypedHeader import path: `axum_extra::TypedHeader`, needs the `typed-header` "
        "feature on axum-extra; it's not in axum anymore.",
        title="TypedHeader import",
        created_at="2026-08-03T10:00:00+00:00",
        **where,
    )
    pair = read_pair_text(old), read_pair_text(new)
    found = features(*pair, cosine=0.87)
    assert duplicate_claims(found)
    for bar in (0.3, 0.6, 0.8):
        assert not is_conflict(found, pair, threshold=bar)[0]


@pytest.mark.parametrize(
    ("written", "read"), [("1.9.0", "1.9"), ("1.9", "1.9"), ("2.0", "2.0"), ("1.0.0", "1.0")]
)
def test_trailing_zero_parts_name_the_same_release(written: str, read: str) -> None:
    assert release(written) == read
    one = read_pair_text(make_memory(f"Default help output changed in v{written}."))
    two = read_pair_text(make_memory(f"Binaries shrank after the {read} bump."))
    assert features(one, two, cosine=0.7)["versions_differ"] == 0.0


def _open_replacement(engram: Engram, old: Memory, holder: Memory) -> None:
    with engram.store.writing():
        a, b = contradictions.ordered(old, holder)
        evidence = json.dumps({"score": 0.99})
        table.record_flag(engram.store, a.id, b.id, "supersedes", holder.id, "2026-03-01", evidence)


def test_a_replacement_confirmed_later_is_followed_to_what_holds_now(engram: Engram) -> None:
    """An open proposal says the 3.9 note replaces the 3.8 one; the user has since said
    a 3.10 note replaces the 3.9 one. The 3.8 note is outdated by the 3.10 note, and the
    replaced 3.9 note never joins a standard search."""
    engram.indexer.on_indexed = None
    old = engram.service.add(FLOOR_OLD)
    middle = engram.service.add(FLOOR_NEW)
    newest = engram.service.add(FLOOR_NEWER)
    _open_replacement(engram, old, middle)
    supersession.declare(engram.store, newest.id, [middle.id])
    assert supersession.replaced_by(engram.store, [old.id]) == {old.id: newest.id}
    response = engram.service.search("python floor 3.8", MemoryFilter(project="httpx"))
    ranked = [r.memory.id for r in response.results]
    assert middle.id not in ranked
    assert ranked.index(newest.id) < ranked.index(old.id)
    assert {r.memory.id: r.outdated_by for r in response.results}[old.id] == newest.id
    # the replacement says what it ranks above, its own score lower or not
    assert {r.memory.id: r.replaces for r in response.results}[newest.id] == (old.id,)


def test_a_chain_of_open_replacements_ranks_the_newest_first(engram: Engram) -> None:
    """3.8 → 3.9 and 3.9 → 3.10, both open: the 3.9 note, placed above the 3.8 note as
    its replacement, had never met its own replacement (a new user's import left the
    30 s timeout first and unmarked while a 45 s note replaced it)."""
    engram.indexer.on_indexed = None
    old = engram.service.add(FLOOR_OLD)
    middle = engram.service.add(FLOOR_NEW)
    newest = engram.service.add(FLOOR_NEWER)
    read = {"score": 0.99, "cues": {"kinds": ["different_value"]}}
    with engram.store.writing():
        for earlier, later in ((old, middle), (middle, newest)):
            table.record_flag(
                engram.store, earlier.id, later.id, "supersedes", later.id, "t", json.dumps(read)
            )
    response = engram.service.search("python floor", MemoryFilter(project="httpx"))
    ranked = [r.memory.id for r in response.results]
    assert ranked[0] == newest.id
    outdated = {r.memory.id: r.outdated_by for r in response.results}
    assert outdated[old.id] == newest.id and outdated[middle.id] == newest.id


def test_a_chain_is_followed_only_through_steps_the_cues_read() -> None:
    from services.knowledge.supersession import _through_open

    found = {"a": "b", "b": "c"}
    assert _through_open(found, {("b", "c")}) == {"a": "c", "b": "c"}
    assert _through_open(found, set()) == found  # a scorer's guess is not followed
    assert _through_open({"a": "b", "b": "a"}, {("a", "b"), ("b", "a")}) == {"a": "b", "b": "a"}


def test_a_replacement_the_filter_excludes_is_not_brought_into_the_results(
    engram: Engram,
) -> None:
    """A search of memories written before a date, or of another type, marks the old
    note but does not bring in a replacement its own filter excludes."""
    engram.indexer.on_indexed = None
    old = engram.service.add(FLOOR_OLD)
    new = engram.service.add({**FLOOR_NEW, "type": "decision"})
    _open_replacement(engram, old, new)
    for flt in (
        MemoryFilter(project="httpx", created_before=datetime(2025, 1, 1, tzinfo=UTC)),
        MemoryFilter(project="httpx", types=(MemoryType.CONSTRAINT,)),
    ):
        response = engram.service.search("python floor 3.8", flt)
        assert [r.memory.id for r in response.results] == [old.id]
        assert response.results[0].outdated_by == new.id
    response = engram.service.search("python floor 3.8", MemoryFilter(project="httpx"))
    assert [r.memory.id for r in response.results][:2] == [new.id, old.id]


def test_deleting_a_replacement_takes_its_conflicts_and_the_old_note_holds_again(
    engram: Engram,
) -> None:
    """An open proposal and a confirmed replacement both name the deleted memory; after
    the delete neither says the old notes are outdated by something that is gone."""
    engram.indexer.on_indexed = None
    old = engram.service.add(FLOOR_OLD)
    declared = engram.service.add({**FLOOR_OLD, "title": "floor again", "content": "3.8+."})
    new = engram.service.add(FLOOR_NEW)
    _open_replacement(engram, old, new)
    supersession.declare(engram.store, new.id, [declared.id])
    assert engram.store.get(declared.id).superseded_by == new.id
    done = engram.service.delete(new.id)
    assert done.memory.id == new.id and done.held_again == (declared.id,)
    assert supersession.replaced_by(engram.store, [old.id, declared.id]) == {}
    assert table.open_rows_about(engram.store, [old.id]) == []
    again = engram.store.get(declared.id)
    assert again.superseded_by is None and again.valid_to is None
    ranked = engram.service.search("python floor", MemoryFilter(project="httpx")).results
    assert declared.id in [r.memory.id for r in ranked]


def test_editing_a_note_drops_what_open_conflicts_said_of_its_old_text(engram: Engram) -> None:
    """A note edited to agree was still marked "may be outdated" by the conflict about
    its old text; the user's answers stay."""
    old = engram.service.add(FLOOR_OLD)
    new = engram.service.add(FLOOR_NEW)
    other = engram.service.add({**FLOOR_OLD, "content": "Python 3.8 wheels are built too."})
    a, b = contradictions.ordered(old, new)
    with engram.store.writing():
        table.record_flag(engram.store, a.id, b.id, "supersedes", new.id, "2025-07-01", "{}")
        table.record_flag(engram.store, old.id, other.id, "contradiction", None, "2025-07-01", "{}")
    decided = contradictions.for_pair(engram.store, old.id, other.id)
    assert decided is not None
    with engram.store.writing():
        table.mark_resolved(engram.store, decided.id, "2025-07-02", "both_valid", "user")
    agreeing = {"content": '3.9 and up: `requires-python = ">=3.9"`.'}
    engram.service.edit(old.id, agreeing, embed=False)
    assert contradictions.for_pair(engram.store, old.id, new.id) is None
    assert contradictions.for_pair(engram.store, old.id, other.id) is not None  # answered
    # a change of tags says nothing new: the conflicts stay
    engram.service.edit(new.id, {"tags": ["python"]}, embed=False)
    with engram.store.writing():
        table.record_flag(engram.store, a.id, b.id, "supersedes", new.id, "2025-07-03", "{}")
    engram.service.edit(new.id, {"tags": ["python", "floor"]}, embed=False)
    assert contradictions.for_pair(engram.store, old.id, new.id) is not None
