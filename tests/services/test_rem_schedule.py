"""Schedules: work sessions, and when each strategy says an operation is due."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.rem.schedule import (
    Schedule,
    due_operations,
    fibonacci_marks,
    is_due,
    log_step,
    work_sessions,
)
from services.store import MemoryStore
from tests.services.builders import make_memory

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


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
    dues = {d.op: d for d in due_operations(store, ["staleness"], now)}
    assert dues["staleness"].due and dues["staleness"].reason == "never ran"
    store.database.execute_sql(
        "INSERT INTO rem_run (op, started_at, seconds, findings, status) VALUES (?,?,?,?,?)",
        ["staleness", (T0 + timedelta(minutes=30)).isoformat(), 0.1, 0, "done"],
    )
    assert not due_operations(store, ["staleness"], now)[0].due
