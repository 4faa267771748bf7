"""Owner of the usage tables: `usage_event` (what was retrieved, cited, ignored, used)
and `signal_affinity` (which memories users cited after an activity signal). Reads and
writes of both go through here; the counters each event bumps on its memory are the
memory store's (`MemoryStore.record_usage`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from services.storage.database import UsageEventRow
from services.types import UsageEvent

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore


def log_events(
    memory_ids: Sequence[str], event: UsageEvent, session_id: str | None, at: str
) -> None:
    """One `usage_event` row per memory (inside the caller's transaction)."""
    UsageEventRow.insert_many(
        [
            {"memory_id": m, "event": event.value, "session_id": session_id, "at": at}
            for m in memory_ids
        ]
    ).execute()


def workflows_used_at(
    store: MemoryStore, hours: Sequence[str], project: str | None, limit: int
) -> list[str]:
    """Current workflows retrieved, cited or used (not ignored) at any of `hours` ("07",
    UTC), most often first; of `project` when given."""
    marks = ", ".join("?" for _ in hours)
    sql = (
        "SELECT u.memory_id, count(*) AS uses FROM usage_event u JOIN memory m "
        "ON m.id = u.memory_id WHERE m.type = 'workflow' AND m.superseded_by IS NULL "
        f"AND u.event != 'ignored' AND substr(u.at, 12, 2) IN ({marks})"
    )
    params: list[Any] = list(hours)
    if project is not None:
        sql += " AND m.project = ?"
        params.append(project)
    sql += " GROUP BY u.memory_id ORDER BY uses DESC LIMIT ?"
    rows = store.database.execute_sql(sql, [*params, limit]).fetchall()
    return [str(row[0]) for row in rows]


def affinities(store: MemoryStore, signals: Sequence[str], limit: int) -> dict[str, float]:
    """Memory id → the summed weight learned for these signals, heaviest first."""
    if not signals:
        return {}
    marks = ", ".join("?" for _ in signals)
    rows = store.database.execute_sql(
        f"SELECT memory_id, sum(weight) AS w FROM signal_affinity WHERE signal IN ({marks}) "
        "GROUP BY memory_id ORDER BY w DESC LIMIT ?",
        [*signals, limit],
    ).fetchall()
    return {str(memory_id): float(weight) for memory_id, weight in rows}


def add_affinity(
    store: MemoryStore, signals: Sequence[str], memory_ids: Sequence[str], weight: float, at: str
) -> None:
    """Add `weight` to every (signal, memory) pair, in one transaction."""
    with store.writing():
        store.database.connection().executemany(
            "INSERT INTO signal_affinity (signal, memory_id, weight, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (signal, memory_id) DO UPDATE SET "
            "weight = weight + excluded.weight, updated_at = excluded.updated_at",
            [(s, m, weight, at) for s in signals for m in memory_ids],
        )


# -- reads for consolidation (`services.rem`) ----------------------------------------------


def usage_events(
    store: MemoryStore, only: Sequence[str] = (), excluding: Sequence[str] = ()
) -> list[tuple[str, str, str]]:
    """(memory_id, event, at) of the logged usage events: those of the `only` kinds
    (every kind when empty), but not the `excluding` ones."""
    where: list[str] = []
    params: list[Any] = []
    if only:
        where.append(f"event IN ({', '.join('?' for _ in only)})")
        params.extend(only)
    if excluding:
        where.append(f"event NOT IN ({', '.join('?' for _ in excluding)})")
        params.extend(excluding)
    sql = "SELECT memory_id, event, at FROM usage_event"
    if where:
        sql += " WHERE " + " AND ".join(where)
    rows = store.database.execute_sql(sql, params).fetchall()
    return [(str(memory_id), str(event), str(at)) for memory_id, event, at in rows]


def activity_times(store: MemoryStore) -> list[str]:
    """When something happened, unordered: each memory's creation and each usage event
    (the work sessions of the consolidation schedules are made of these)."""
    rows = store.database.execute_sql(
        "SELECT created_at FROM memory UNION ALL SELECT at FROM usage_event"
    ).fetchall()
    return [str(row[0]) for row in rows]
