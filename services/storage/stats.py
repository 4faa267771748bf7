"""Read-only counts for `engram stats`: the memories grouped by a column, and one row
count per consolidation and what-holds-now table. Owns no table and writes nothing;
each table's owner is the module that writes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import peewee as pw

from services.storage.database import MemoryRow

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore

GROUPABLE = ("project", "type", "tier")

_KNOWLEDGE_COUNTS = {
    "findings_waiting": "SELECT count(*) FROM finding WHERE status = 'pending'",
    "contradictions_open": "SELECT count(*) FROM contradiction WHERE resolved_at IS NULL",
    "superseded": "SELECT count(*) FROM memory WHERE superseded_by IS NOT NULL",
    "facts": "SELECT count(*) FROM fact",
    "lessons_versioned": "SELECT count(*) FROM lesson",
    "dated_phrases": "SELECT count(*) FROM memory_time",
    "communities": "SELECT count(*) FROM community",
    "links": "SELECT count(*) FROM memory_link",
}


def memories_by(column: str) -> dict[str, int]:
    """How many memories have each value of `column` (one of GROUPABLE); a missing
    value counts under "None"."""
    if column not in GROUPABLE:
        raise ValueError(f"memories are not grouped by {column!r}")
    field = getattr(MemoryRow, column)
    query: Any = MemoryRow.select(field, pw.fn.COUNT(MemoryRow.id)).group_by(field).tuples()
    return {str(value): int(count) for value, count in query}


def knowledge_counts(store: MemoryStore) -> dict[str, int]:
    """What consolidation and the what-holds-now tables hold, one count each."""
    return {
        key: int(store.database.execute_sql(sql).fetchone()[0])
        for key, sql in _KNOWLEDGE_COUNTS.items()
    }
