"""When each consolidation operation is due.

Work is counted in work sessions: stretches of activity (memories written, memories
retrieved, cited or used) separated by at least 30 idle minutes. Each operation has a
session strategy — linear (every N sessions), fibonacci (at session 5, 8, 13, 21, 34…),
logarithmic (frequent early, sparse later) — and a time interval (default 24 h) after
which it is due anyway. What ran when lives in the `rem_run` table
(`services.storage.rem_runs`); each operation's default schedule is declared with it in
`services.rem.registry`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from services.memory import parse_time
from services.storage.rem_runs import last_done
from services.storage.usage import activity_times

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore


@dataclass(frozen=True)
class Schedule:
    kind: str  # linear, fibonacci, logarithmic, interval
    every: int = 0  # linear: sessions between runs
    base: float = 10.0  # logarithmic
    scale: float = 2.0  # logarithmic
    interval_hours: float = 24.0

    def spec(self) -> str:
        """The text `parse_schedule` reads back: "linear 5 24h", "fibonacci 24h"…"""
        hours = f"{self.interval_hours:g}h"
        if self.kind == "linear":
            return f"linear {self.every} {hours}"
        if self.kind == "logarithmic":
            return f"logarithmic {self.base:g} {self.scale:g} {hours}"
        return f"{self.kind} {hours}"

    def describe(self) -> str:
        if self.kind == "linear":
            return f"every {self.every} work sessions or {self.interval_hours:g} h"
        if self.kind == "fibonacci":
            return f"at work sessions 5, 8, 13, 21, 34… or every {self.interval_hours:g} h"
        if self.kind == "logarithmic":
            return (
                f"logarithmic (base {self.base:g}, scale {self.scale:g}) in work sessions "
                f"or every {self.interval_hours:g} h"
            )
        return f"every {self.interval_hours:g} h"


_ARGUMENTS = {"linear": 1, "fibonacci": 0, "logarithmic": 2, "interval": 0}


def parse_schedule(text: str) -> Schedule:
    """Read a schedule: a strategy, its numbers, then optionally the interval in hours —
    "linear 5", "fibonacci", "logarithmic 10 2", "interval 12h", "linear 10 48h"."""
    from services.errors import UserInputError

    words = text.lower().split()
    usage = (
        f"{text!r} is not a schedule (write e.g. 'linear 5', 'fibonacci', "
        "'logarithmic 10 2' or 'interval 24h'; a last 'NNh' sets the interval)"
    )
    if not words or words[0] not in _ARGUMENTS:
        raise UserInputError(usage)
    kind, rest = words[0], words[1:]
    hours = 24.0
    try:
        if rest and rest[-1].endswith("h"):
            hours = float(rest.pop()[:-1])
        numbers = [float(word) for word in rest]
    except ValueError:
        raise UserInputError(usage) from None
    if len(numbers) != _ARGUMENTS[kind] or not math.isfinite(hours) or hours <= 0:
        raise UserInputError(usage)
    if not all(math.isfinite(n) for n in numbers):
        raise UserInputError(usage)
    if kind == "linear":
        if numbers[0] < 1 or not numbers[0].is_integer():
            raise UserInputError(f"{text!r}: linear needs a whole number of sessions ≥ 1")
        return Schedule("linear", every=int(numbers[0]), interval_hours=hours)
    if kind == "logarithmic":
        base, scale = numbers
        if base <= 1 or scale <= 0:
            raise UserInputError(f"{text!r}: logarithmic needs a base > 1 and a scale > 0")
        return Schedule("logarithmic", base=base, scale=scale, interval_hours=hours)
    return Schedule(kind, interval_hours=hours)


def fibonacci_marks(limit: int) -> list[int]:
    marks = [5, 8]
    while marks[-1] <= limit:
        marks.append(marks[-1] + marks[-2])
    return marks


def log_step(sessions: int, base: float, scale: float) -> int:
    """The logarithmic strategy's step at `sessions`: it grows by one at 1, then ever
    more sparsely (base 10, scale 2: sessions 1, 4, 10, 32, 100…)."""
    if sessions < 1:
        return 0
    return 1 + math.floor(scale * math.log(sessions, base))


def work_sessions(
    store: MemoryStore, gap_minutes: float = 30.0, until: datetime | None = None
) -> list[datetime]:
    """Start times of the work sessions, oldest first."""
    until = until or datetime.now(UTC)
    times = sorted(t for t in (parse_time(at) for at in activity_times(store)) if t <= until)
    starts: list[datetime] = []
    gap = timedelta(minutes=gap_minutes)
    previous: datetime | None = None
    for moment in times:
        if previous is None or moment - previous >= gap:
            starts.append(moment)
        previous = moment
    return starts


@dataclass(frozen=True)
class Due:
    op: str
    due: bool
    reason: str
    sessions_total: int
    sessions_since: int
    last_run: str | None


def is_due(
    op: str,
    schedule: Schedule,
    sessions: list[datetime],
    last_run: datetime | None,
    now: datetime,
) -> Due:
    total = len(sessions)
    since = total if last_run is None else sum(1 for s in sessions if s > last_run)
    at_last = total - since
    stamp = last_run.isoformat() if last_run else None
    if last_run is None:
        return Due(op, True, "never ran", total, since, stamp)
    hours = (now - last_run).total_seconds() / 3600
    if hours >= schedule.interval_hours:
        return Due(op, True, f"{hours:.0f} h since the last run", total, since, stamp)
    if schedule.kind == "linear" and since >= schedule.every:
        return Due(op, True, f"{since} work sessions since the last run", total, since, stamp)
    if schedule.kind == "fibonacci":
        passed = [m for m in fibonacci_marks(total) if at_last < m <= total]
        if passed:
            return Due(op, True, f"reached work session {passed[-1]}", total, since, stamp)
    if schedule.kind == "logarithmic" and log_step(total, schedule.base, schedule.scale) > (
        log_step(at_last, schedule.base, schedule.scale)
    ):
        return Due(op, True, f"logarithmic step at work session {total}", total, since, stamp)
    return Due(op, False, f"not yet ({schedule.describe()})", total, since, stamp)


def due_operations(
    store: MemoryStore,
    ops: list[str],
    now: datetime | None = None,
    gap_minutes: float = 30.0,
    *,
    schedules: Mapping[str, Schedule],
) -> list[Due]:
    """Whether each of `ops` is due by its schedule (an operation without one: every
    24 h), and why."""
    now = now or datetime.now(UTC)
    sessions = work_sessions(store, gap_minutes, now)
    last = {op: parse_time(at) for op, at in last_done(store).items()}
    return [
        is_due(op, schedules.get(op, Schedule("interval")), sessions, last.get(op), now)
        for op in ops
    ]
