"""Owner of the `rem_run` table: each consolidation operation's runs — when it started,
how long it took, how many findings it stored, how it ended (done, failed, cancelled)
and what it changed (`result`, JSON). The schedules read when each last ran."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore


@dataclass(frozen=True)
class RemRun:
    op: str
    started_at: str
    seconds: float
    findings: int
    status: str  # done, failed, cancelled
    note: str | None = None  # the error of a run that did not finish
    result: dict[str, Any] = field(default_factory=dict)  # what it changed


def record_run(store: MemoryStore, run: RemRun) -> None:
    """Store one run, in its own transaction."""
    with store.writing():
        store.database.execute_sql(
            "INSERT INTO rem_run (op, started_at, seconds, findings, status, note, "
            "result) VALUES (?,?,?,?,?,?,?)",
            [
                run.op,
                run.started_at,
                run.seconds,
                run.findings,
                run.status,
                run.note,
                json.dumps(run.result, default=str),
            ],
        )


def latest_runs(store: MemoryStore) -> list[RemRun]:
    """The latest run of each operation that ran (`note` not read)."""
    rows = store.database.execute_sql(
        "SELECT op, max(started_at), seconds, findings, status, result FROM rem_run GROUP BY op"
    ).fetchall()
    return [
        RemRun(str(op), at, seconds, count, status, None, json.loads(result) if result else {})
        for op, at, seconds, count, status, result in rows
    ]


def last_done(store: MemoryStore) -> dict[str, str]:
    """When each operation's latest completed run started."""
    rows = store.database.execute_sql(
        "SELECT op, max(started_at) FROM rem_run WHERE status = 'done' GROUP BY op"
    ).fetchall()
    return {str(op): str(at) for op, at in rows if at}
