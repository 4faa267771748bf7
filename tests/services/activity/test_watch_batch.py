"""A burst of file-system events summarized: latest branch per repository, the file the
user is on, and storms of many files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.activity.watch_batch import Burst, RawEvent, RawKind, summarize

ROOT = Path("/home/dev/code")
LEDGERLY = ROOT / "ledgerly"
SHIPIT = ROOT / "shipit"


def file_event(kind: RawKind, name: str, at: float) -> RawEvent:
    return RawEvent(kind, LEDGERLY / name, ROOT, at)


def head(repo: Path, at: float) -> RawEvent:
    return RawEvent(RawKind.HEAD, repo, ROOT, at)


def test_no_events() -> None:
    assert summarize([], storm_threshold=20) == Burst()


def test_one_saved_file() -> None:
    saved = file_event(RawKind.SAVED, "refunds.py", 1.0)
    burst = summarize([saved], storm_threshold=20)
    assert burst.file == saved
    assert burst.heads == []
    assert burst.storm_files == 0


def test_the_latest_file_event_is_the_one_predicted() -> None:
    events = [
        file_event(RawKind.SAVED, "refunds.py", 1.0),
        file_event(RawKind.OPENED, "ledger.py", 2.0),
        file_event(RawKind.CREATED, "tax.py", 3.0),
        file_event(RawKind.OPENED, "accounts.py", 4.0),
    ]
    assert summarize(events, storm_threshold=20).file == events[-1]


def test_a_file_touched_again_becomes_the_latest() -> None:
    events = [
        file_event(RawKind.OPENED, "refunds.py", 1.0),
        file_event(RawKind.OPENED, "ledger.py", 2.0),
        file_event(RawKind.OPENED, "refunds.py", 3.0),
    ]
    assert summarize(events, storm_threshold=20).file == events[-1]


def test_a_save_followed_by_an_open_of_the_same_file_stays_a_save() -> None:
    events = [
        file_event(RawKind.SAVED, "refunds.py", 1.0),
        file_event(RawKind.OPENED, "refunds.py", 1.2),
    ]
    burst = summarize(events, storm_threshold=20)
    assert burst.file == RawEvent(RawKind.SAVED, LEDGERLY / "refunds.py", ROOT, 1.2)


def test_a_save_survives_several_later_opens() -> None:
    events = [
        file_event(RawKind.SAVED, "refunds.py", 1.0),
        file_event(RawKind.OPENED, "refunds.py", 1.1),
        file_event(RawKind.OPENED, "refunds.py", 1.2),
    ]
    burst = summarize(events, storm_threshold=20)
    assert burst.file is not None and burst.file.kind is RawKind.SAVED


def test_an_open_followed_by_a_save_is_a_save() -> None:
    events = [
        file_event(RawKind.OPENED, "refunds.py", 1.0),
        file_event(RawKind.SAVED, "refunds.py", 1.5),
    ]
    assert summarize(events, storm_threshold=20).file == events[-1]


def test_a_save_of_another_file_does_not_turn_an_open_into_a_save() -> None:
    events = [
        file_event(RawKind.SAVED, "ledger.py", 1.0),
        file_event(RawKind.OPENED, "refunds.py", 1.5),
    ]
    burst = summarize(events, storm_threshold=20)
    assert burst.file == events[-1]
    assert burst.file is not None and burst.file.kind is RawKind.OPENED


def test_a_created_file_then_opened_is_an_open() -> None:
    events = [
        file_event(RawKind.CREATED, "tax.py", 1.0),
        file_event(RawKind.OPENED, "tax.py", 1.5),
    ]
    assert summarize(events, storm_threshold=20).file == events[-1]


def test_the_latest_head_per_repository_is_kept_in_order() -> None:
    events = [
        head(LEDGERLY, 1.0),
        head(SHIPIT, 2.0),
        head(LEDGERLY, 3.0),  # ledgerly moved again after shipit
        head(SHIPIT, 2.5),
        head(LEDGERLY, 4.0),
    ]
    burst = summarize(events, storm_threshold=20)
    assert burst.heads == [events[3], events[4]]
    assert burst.file is None
    assert burst.storm_files == 0


def test_heads_do_not_count_as_files() -> None:
    events = [head(ROOT / f"repo{i}", float(i)) for i in range(10)]
    events.append(file_event(RawKind.SAVED, "refunds.py", 11.0))
    burst = summarize(events, storm_threshold=3)
    assert len(burst.heads) == 10
    assert burst.file == events[-1]
    assert burst.storm_files == 0


def test_up_to_the_threshold_is_not_a_storm() -> None:
    events = [file_event(RawKind.SAVED, f"f{i}.py", float(i)) for i in range(5)]
    events.append(file_event(RawKind.SAVED, "f0.py", 9.0))  # the same file again
    burst = summarize(events, storm_threshold=5)
    assert burst.storm_files == 0
    assert burst.file == events[-1]


def test_more_distinct_files_than_the_threshold_is_a_storm() -> None:
    events = [file_event(RawKind.CREATED, f"f{i}.py", float(i)) for i in range(6)]
    events.append(head(LEDGERLY, 7.0))  # a checkout touching many files
    burst = summarize(events, storm_threshold=5)
    assert burst.file is None
    assert burst.storm_files == 6
    assert burst.heads == [events[-1]]


@given(
    st.lists(
        st.tuples(st.sampled_from(list(RawKind)), st.integers(0, 8)),
        max_size=40,
    ),
    st.integers(0, 10),
)
def test_summaries_of_any_burst(kinds: list[tuple[RawKind, int]], threshold: int) -> None:
    events = [
        RawEvent(kind, (SHIPIT if kind is RawKind.HEAD else LEDGERLY) / f"n{n}", ROOT, float(i))
        for i, (kind, n) in enumerate(kinds)
    ]
    burst = summarize(events, threshold)
    heads = [e for e in events if e.kind is RawKind.HEAD]
    files = [e for e in events if e.kind is not RawKind.HEAD]
    assert {h.path for h in burst.heads} == {h.path for h in heads}
    latest = {h.path: h for h in heads}  # events come in time order: the last one wins
    assert burst.heads == sorted(latest.values(), key=lambda h: h.at)
    distinct = len({e.path for e in files})
    if distinct > threshold:
        assert (burst.file, burst.storm_files) == (None, distinct)
    elif files:
        assert burst.storm_files == 0
        assert burst.file is not None
        assert (burst.file.path, burst.file.at) == (files[-1].path, files[-1].at)
    else:
        assert burst.file is None


@pytest.mark.parametrize("threshold", [0, 1])
def test_tiny_thresholds(threshold: int) -> None:
    one = [file_event(RawKind.SAVED, "refunds.py", 1.0)]
    burst = summarize(one, threshold)
    assert burst.storm_files == (1 if threshold == 0 else 0)
    assert (burst.file is None) == (threshold == 0)
