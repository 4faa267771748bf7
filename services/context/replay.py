"""Replaying a recorded activity log: every event becomes a signal, evaluated as of its
own time, and the memories placed in tiers 1–2 of the assembled context are compared
with the event's `needed` ids when the log has them.

A log line is `{"t", "project", "event", "path" | "branch" | "error", ["needed"],
["signals"]}` (the format of the benchmark's activity.jsonl). The replay never reads
`needed` or `signals` to predict; without them it reports no hit rate.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.activity.prediction import PredictiveEngine
from services.activity.signals import Signal, SignalKind
from services.activity.watch_rules import UnreadableFile, read_source
from services.context.assembly import ContextAssembler
from services.errors import Problem, ValidationFailed
from services.memory import parse_time
from services.text.source_symbols import SourceSymbols, parse_source


@dataclass(frozen=True)
class ReplayEvent:
    signal: Signal
    needed: tuple[str, ...] | None


def parse_event(data: Any, where: str) -> tuple[ReplayEvent | None, list[Problem]]:
    """Validate one log line (already decoded JSON)."""
    problems: list[Problem] = []
    if not isinstance(data, dict):
        return None, [Problem(where, f"expected a JSON object, got {type(data).__name__}")]
    try:
        kind = SignalKind(str(data.get("event")))
    except ValueError:
        choices = ", ".join(k.value for k in SignalKind)
        problems.append(Problem(where, f"unknown event {data.get('event')!r} (one of {choices})"))
        kind = None
    raw_time = data.get("t")
    at = None
    try:
        if not isinstance(raw_time, str):
            raise ValueError
        at = parse_time(raw_time)
    except ValueError:
        problems.append(Problem(where, f"'t' is not an ISO-8601 time: {raw_time!r}"))
    project = data.get("project")
    if project is not None and not isinstance(project, str):
        problems.append(Problem(where, "'project' must be a string"))
    field_of = {
        SignalKind.FILE_OPENED: "path",
        SignalKind.FILE_SAVED: "path",
        SignalKind.BRANCH_CHECKOUT: "branch",
        SignalKind.ERROR_SEEN: "error",
    }
    value = None
    if kind is not None:
        name = field_of[kind]
        value = data.get(name)
        if not isinstance(value, str) or not value.strip():
            problems.append(Problem(where, f"a {kind.value} event needs a non-empty '{name}'"))
    needed = data.get("needed")
    if needed is not None and (
        not isinstance(needed, list) or not all(isinstance(i, str) for i in needed)
    ):
        problems.append(Problem(where, "'needed' must be a list of memory ids"))
    if problems or kind is None or at is None or value is None:
        return None, problems
    path = value.replace("\\", "/").lstrip("/") if field_of[kind] == "path" else None
    signal = Signal(
        kind=kind,
        at=at,
        project=project,
        path=path,
        branch=value if kind is SignalKind.BRANCH_CHECKOUT else None,
        error=value if kind is SignalKind.ERROR_SEEN else None,
    )
    return ReplayEvent(signal, tuple(needed) if needed is not None else None), []


def read_events(lines: Iterable[str], name: str) -> list[ReplayEvent]:
    """All events of a log, or ValidationFailed listing every bad line."""
    events: list[ReplayEvent] = []
    problems: list[Problem] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(Problem(where, f"not JSON ({error.msg})"))
            continue
        except ValueError as error:  # e.g. a number of more than 4300 digits
            problems.append(Problem(where, f"not JSON ({str(error).split(':')[0]})"))
            continue
        except RecursionError:
            problems.append(Problem(where, "not JSON (nested too deeply)"))
            continue
        event, found = parse_event(data, where)
        problems.extend(found)
        if event is not None:
            events.append(event)
    if problems:
        raise ValidationFailed(f"{name}: the activity log has invalid lines", problems)
    return events


def symbols_for(path: Path) -> SourceSymbols | None:
    try:
        return parse_source(path.name, read_source(path))
    except UnreadableFile:
        return None


@dataclass
class ReplayReport:
    events: list[dict[str, Any]] = field(default_factory=list)
    hits: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    precision: list[float] = field(default_factory=list)
    predict_ms: list[float] = field(default_factory=list)
    assemble_ms: list[float] = field(default_factory=list)
    missing_files: int = 0

    def to_dict(self) -> dict[str, Any]:
        all_hits = [h for values in self.hits.values() for h in values]
        result: dict[str, Any] = {
            "hit_rate": _mean(all_hits),
            "by_event": {kind: _mean(values) for kind, values in sorted(self.hits.items())},
            "precision": _mean(self.precision),
            "p50_ms": _percentile(self.predict_ms, 0.5),
            "p95_ms": _percentile(self.predict_ms, 0.95),
            "assemble_p95_ms": _percentile(self.assemble_ms, 0.95),
            "event_count": len(self.events),
            "missing_files": self.missing_files,
            "events": self.events,
        }
        return result


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))
    return round(ordered[index], 2)


def replay(
    events: list[ReplayEvent],
    engine: PredictiveEngine,
    assembler: ContextAssembler,
    source_root: Path | None,
) -> Iterator[tuple[ReplayEvent, dict[str, Any]]]:
    """Run each event through the engine and the assembler, in order."""
    for event in events:
        signal = event.signal
        started = time.perf_counter()
        if signal.path is not None and source_root is not None:
            file = source_root / (signal.project or "") / signal.path
            signal = Signal(
                signal.kind, signal.at, signal.project, signal.path, symbols=symbols_for(file)
            )
        prediction = engine.observe(signal)
        predict_ms = (time.perf_counter() - started) * 1000.0
        started = time.perf_counter()
        context = assembler.assemble(prediction)
        assemble_ms = (time.perf_counter() - started) * 1000.0
        yield (
            event,
            {
                "t": signal.at.isoformat(),
                "event": signal.kind.value,
                "tier1": context.ids(1),
                "tier2": context.ids(2),
                "predict_ms": round(predict_ms, 2),
                "assemble_ms": round(assemble_ms, 2),
                "parsed": signal.symbols is not None,
            },
        )


def evaluate(
    events: list[ReplayEvent],
    engine: PredictiveEngine,
    assembler: ContextAssembler,
    source_root: Path | None,
) -> ReplayReport:
    report = ReplayReport()
    for event, row in replay(events, engine, assembler, source_root):
        report.predict_ms.append(row.pop("predict_ms"))
        report.assemble_ms.append(row.pop("assemble_ms"))
        if event.signal.path is not None and not row.pop("parsed"):
            report.missing_files += 1
        else:
            row.pop("parsed", None)
        if event.needed is not None:
            placed = set(row["tier1"]) | set(row["tier2"])
            if event.needed:
                hit = sum(1 for i in event.needed if i in placed) / len(event.needed)
                report.hits[event.signal.kind.value].append(hit)
                row["hit"] = round(hit, 4)
            if placed:
                report.precision.append(
                    sum(1 for i in placed if i in set(event.needed)) / len(placed)
                )
        report.events.append(row)
    return report
