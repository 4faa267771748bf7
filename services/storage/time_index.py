"""The `memory_time` table: the resolved dates of each memory's relative expressions
("yesterday" → 2026-06-05), written by `MemoryStore` in the same transaction as the
memory itself (add, import, edit) and removed with it; `backfill` fills it once for
databases written before it existed (`engram recall` and `engram reindex` run it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from services.storage.database import batches
from services.text.dates import RULES_VERSION, TimeRef, phrase_kind, times_for

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore

BACKFILL_META_KEY = "memory_time.backfilled"
_INSERT = (
    "INSERT OR REPLACE INTO memory_time "
    "(memory_id, start, phrase, resolved, resolved_end, granularity) VALUES (?, ?, ?, ?, ?, ?)"
)


def time_rows(memory_id: str, refs: Iterable[TimeRef]) -> list[tuple[Any, ...]]:
    return [
        (
            memory_id,
            ref.start,
            ref.phrase,
            ref.resolved.isoformat(),
            None if ref.resolved_end is None else ref.resolved_end.isoformat(),
            ref.granularity,
        )
        for ref in refs
    ]


def index_times(
    connection: sqlite3.Connection, memory_id: str, content: str, created_at: str
) -> int:
    """Replace the memory's rows with the resolutions of its content (in the caller's
    transaction); returns how many were written."""
    connection.execute("DELETE FROM memory_time WHERE memory_id = ?", (memory_id,))
    rows = time_rows(memory_id, times_for(content, created_at))
    if rows:
        connection.executemany(_INSERT, rows)
    return len(rows)


def unindex_times(connection: sqlite3.Connection, memory_id: str) -> None:
    connection.execute("DELETE FROM memory_time WHERE memory_id = ?", (memory_id,))


def load_times(
    connection: sqlite3.Connection, memory_ids: Sequence[str]
) -> dict[str, list[TimeRef]]:
    """The stored resolutions of these memories, by id, in text order. The kind and the
    `inferred` mark are not stored; they are read again from the phrase."""
    found: dict[str, list[TimeRef]] = {}
    ids = list(dict.fromkeys(memory_ids))
    for batch in batches(ids):
        marks = ", ".join("?" for _ in batch)
        rows = connection.execute(
            "SELECT memory_id, start, phrase, resolved, resolved_end, granularity "
            f"FROM memory_time WHERE memory_id IN ({marks}) ORDER BY memory_id, start",
            batch,
        ).fetchall()
        for memory_id, start, phrase, resolved, resolved_end, granularity in rows:
            kind = phrase_kind(str(phrase))
            found.setdefault(str(memory_id), []).append(
                TimeRef(
                    int(start),
                    str(phrase),
                    date.fromisoformat(str(resolved)),
                    None if resolved_end is None else date.fromisoformat(str(resolved_end)),
                    str(granularity),
                    kind,
                    inferred=kind == "on <weekday>",
                )
            )
    return found


def dated_among(connection: sqlite3.Connection, memory_ids: Sequence[str]) -> set[str]:
    """Those of `memory_ids` whose text holds a dated phrase ("two days ago", "last
    Friday", "yesterday")."""
    found: set[str] = set()
    for batch in batches(list(dict.fromkeys(memory_ids))):
        marks = ", ".join("?" for _ in batch)
        rows = connection.execute(
            f"SELECT DISTINCT memory_id FROM memory_time WHERE memory_id IN ({marks})", batch
        ).fetchall()
        found.update(str(row[0]) for row in rows)
    return found


def ids_with_times(connection: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in connection.execute("SELECT DISTINCT memory_id FROM memory_time")}


def backfill(store: MemoryStore, force: bool = False) -> int:
    """Resolve the memories that have no rows yet, once per database and version of the
    date rules (a meta value says which; every write since keeps the table current).
    When the rules changed since (new phrases), every memory is resolved again.
    Idempotent, one transaction; returns the rows written."""
    done = store.meta_get(BACKFILL_META_KEY)
    if not force and done == RULES_VERSION:
        return 0
    with store.writing():
        connection = store.database.connection()
        if done is not None and done != RULES_VERSION:
            connection.execute("DELETE FROM memory_time")
        have = ids_with_times(connection)
        pending: list[tuple[Any, ...]] = []
        for memory_id, content, created_at in connection.execute(
            "SELECT id, content, created_at FROM memory"
        ):
            if str(memory_id) not in have:
                pending.extend(time_rows(str(memory_id), times_for(str(content), str(created_at))))
        if pending:
            connection.executemany(_INSERT, pending)
        connection.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            (BACKFILL_META_KEY, RULES_VERSION),
        )
    return len(pending)
