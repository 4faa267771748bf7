"""Schedules: work sessions, and when each strategy says an operation is due."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.errors import UserInputError
from services.rem.registry import default_schedules
from services.rem.schedule import (
    Schedule,
    due_operations,
    fibonacci_marks,
    is_due,
    log_step,
    parse_schedule,
    work_sessions,
)
from services.storage.memories import MemoryStore
from tests.services.builders import make_memory

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SCHEDULES = default_schedules()


def sessions(count: int) -> list[datetime]:
    return [T0 + timedelta(hours=2 * n) for n in range(count)]


def test_work_sessions_are_split_by_idle_gaps(store: MemoryStore) -> None:
    for minutes in (0, 10, 25, 70, 80, 200):  # gaps ≥ 30 min start a new session
        store.add(make_memory("x", created_at=(T0 + timedelta(minutes=minutes)).isoformat()))
    starts = work_sessions(store, 30, until=T0 + timedelta(days=1))
    assert starts == [T0, T0 + timedelta(minutes=70), T0 + timedelta(minutes=200)]


def test_linear_strategy_counts_sessions_since_the_last_run() -> None:
    schedule = Schedule("linear", every=5)
    history = sessions(12)
    now = history[-1] + timedelta(minutes=5)
    assert is_due("s", schedule, history, None, now).reason == "never ran"
    last = history[8] - timedelta(minutes=1)  # ran just before session 9: 4 sessions since
    assert not is_due("s", schedule, history, last, now).due
    last = history[6] - timedelta(minutes=1)
    assert is_due("s", schedule, history, last, now).due


def test_fibonacci_and_logarithmic_marks() -> None:
    assert fibonacci_marks(40)[:6] == [5, 8, 13, 21, 34, 55]
    schedule = Schedule("fibonacci")
    history = sessions(8)
    now = history[-1] + timedelta(minutes=1)
    at_seven = history[6] + timedelta(minutes=1)  # ran after session 7; session 8 is a mark
    assert is_due("c", schedule, history, at_seven, now).due
    assert not is_due("c", schedule, history[:7], at_seven, now).due
    assert [log_step(n, 10, 2) for n in (1, 3, 4, 9, 10, 31, 32, 100)] == [1, 1, 2, 2, 3, 3, 4, 5]


def test_the_time_interval_makes_anything_due() -> None:
    schedule = Schedule("linear", every=50, interval_hours=24)
    history = sessions(3)
    last = history[-1]
    assert not is_due("d", schedule, history, last, last + timedelta(hours=23)).due
    assert is_due("d", schedule, history, last, last + timedelta(hours=25)).due


def test_due_operations_reads_the_run_table(store: MemoryStore) -> None:
    store.add(make_memory("x", created_at=T0.isoformat()))
    now = T0 + timedelta(hours=1)
    dues = {d.op: d for d in due_operations(store, ["staleness"], now, schedules=SCHEDULES)}
    assert dues["staleness"].due and dues["staleness"].reason == "never ran"
    store.database.execute_sql(
        "INSERT INTO rem_run (op, started_at, seconds, findings, status) VALUES (?,?,?,?,?)",
        ["staleness", (T0 + timedelta(minutes=30)).isoformat(), 0.1, 0, "done"],
    )
    assert not due_operations(store, ["staleness"], now, schedules=SCHEDULES)[0].due


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("linear 5", Schedule("linear", every=5)),
        ("Linear 10 48h", Schedule("linear", every=10, interval_hours=48)),
        ("fibonacci", Schedule("fibonacci")),
        ("logarithmic 10 2", Schedule("logarithmic", base=10, scale=2)),
        ("interval 12h", Schedule("interval", interval_hours=12)),
    ],
)
def test_schedules_are_read_from_text(text: str, expected: Schedule) -> None:
    assert parse_schedule(text) == expected


@pytest.mark.parametrize(
    "text", ["", "weekly", "linear", "linear 0", "linear 2.5", "fibonacci 3", "interval -1h",
             "logarithmic 1 2", "logarithmic 10", "linear five", "interval nanh", "linear 5 0h"],
)  # fmt: skip
def test_bad_schedules_say_how_to_write_one(text: str) -> None:
    with pytest.raises(UserInputError):
        parse_schedule(text)


@given(st.text(max_size=40))
def test_any_text_is_a_schedule_or_a_clear_error(text: str) -> None:
    try:
        schedule = parse_schedule(text)
    except UserInputError as error:
        assert str(error)
    else:
        assert parse_schedule(schedule.spec()) == schedule  # the spec reads back


@given(
    st.sampled_from(["linear", "fibonacci", "logarithmic", "interval"]),
    st.integers(1, 500),
    st.floats(1.01, 100),
    st.floats(0.01, 50),
    st.floats(0.1, 10_000),
)
def test_every_schedule_survives_its_spec(
    kind: str, every: int, base: float, scale: float, hours: float
) -> None:
    schedule = Schedule(kind, every=every if kind == "linear" else 0, interval_hours=hours,
                        base=base if kind == "logarithmic" else 10.0,
                        scale=scale if kind == "logarithmic" else 2.0)  # fmt: skip
    again = parse_schedule(schedule.spec())
    assert again.kind == kind and again.every == schedule.every
    assert again.interval_hours == pytest.approx(hours, rel=1e-5)
