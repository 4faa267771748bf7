"""Owner of the usage tables: `usage_event` (what was retrieved, cited, ignored, used)
and `signal_affinity` (which memories users cited after an activity signal). Reads and
writes of both go through here; the counters each event bumps on its memory are the
memory store's (`MemoryStore.record_usage`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore


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
