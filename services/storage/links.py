"""Owner of the `memory_link` table: directed, typed edges between memories (related,
supersedes, consolidates). Consolidation writes them (`services.rem.ops.graph` recomputes
the related ones, an accepted merge or draft adds consolidates / related links) and reads
them back here, and `MemoryStore.delete` removes a deleted memory's links through
`remove_links_of`; nothing else runs SQL on the table."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from services.memory import now_iso
from services.storage.database import batches

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore

Link = tuple[str, str, str]  # (source, target, kind)
_BATCH = 200


def add_link(store: MemoryStore, source: str, target: str, kind: str) -> None:
    """One link, unless it exists (inside the caller's transaction, if any)."""
    store.database.execute_sql(
        "INSERT OR IGNORE INTO memory_link (source, target, kind, created_at) VALUES (?,?,?,?)",
        [source, target, kind, now_iso()],
    )


def add_links(store: MemoryStore, rows: Sequence[tuple[str, str, str, str]]) -> None:
    """Links given as (source, target, kind, created_at), those that exist left alone;
    in batches of 200 (inside the caller's transaction, if any)."""
    for batch in batches(rows, _BATCH):
        marks = ", ".join("(?,?,?,?)" for _ in batch)
        store.database.execute_sql(
            f"INSERT OR IGNORE INTO memory_link (source, target, kind, created_at) VALUES {marks}",
            [value for row in batch for value in row],
        )


def related_pairs(store: MemoryStore) -> set[tuple[str, str]]:
    """(source, target) of every `related` link."""
    rows = store.database.execute_sql(
        "SELECT source, target FROM memory_link WHERE kind = 'related'"
    ).fetchall()
    return {(str(source), str(target)) for source, target in rows}


def remove_related(store: MemoryStore, pairs: Iterable[tuple[str, str]]) -> None:
    """Delete these `related` links (inside the caller's transaction, if any)."""
    for source, target in pairs:
        store.database.execute_sql(
            "DELETE FROM memory_link WHERE source = ? AND target = ? AND kind = 'related'",
            [source, target],
        )


def remove_links_of(store: MemoryStore, memory_id: str) -> None:
    """Delete every link from or to `memory_id` (its memory is being deleted), inside
    the caller's transaction (`MemoryStore.delete`)."""
    store.database.execute_sql(
        "DELETE FROM memory_link WHERE source = ? OR target = ?", [memory_id, memory_id]
    )


def all_links(store: MemoryStore) -> list[Link]:
    """Every link, ordered by source and target."""
    rows = store.database.execute_sql(
        "SELECT source, target, kind FROM memory_link ORDER BY source, target"
    ).fetchall()
    return [(str(source), str(target), str(kind)) for source, target, kind in rows]


def linked_to_lessons(store: MemoryStore) -> set[str]:
    """Memories a lesson links to, or that link to a lesson (any link kind)."""
    rows = store.database.execute_sql(
        "SELECT l.target FROM memory_link l JOIN memory m ON m.id = l.source "
        "WHERE m.type = 'lesson' "
        "UNION SELECT l.source FROM memory_link l JOIN memory m ON m.id = l.target "
        "WHERE m.type = 'lesson'"
    ).fetchall()
    return {str(r[0]) for r in rows}
