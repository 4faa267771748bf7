"""Owner of the `project_context` table (each project's current notes, active files,
todos, decisions and catalogue) and of `context_history` (a snapshot of every save, the
catalogue as a hash and a delta). Values are stored as the domain gives them (lists and
catalogues already JSON); the rules are `services.knowledge.project_context`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore

# notes, active_files, todos, decisions (JSON lists), catalogue (JSON), updated_at
ContextRow = tuple[str, str, str, str, str, str]
# id, project, saved_at, catalogue_sha256, catalogue_delta (JSON), notes, active_files,
# todos, decisions (JSON lists)
HistoryRow = tuple[int, str, str, str, str, str, str, str, str]


def context_row(store: MemoryStore, project: str) -> ContextRow | None:
    """The saved context of `project`, or None if it was never saved."""
    row = store.database.execute_sql(
        "SELECT notes, active_files, todos, decisions, catalogue, updated_at "
        "FROM project_context WHERE project = ?",
        [project],
    ).fetchone()
    return None if row is None else tuple(row)


def save_context(
    store: MemoryStore,
    project: str,
    notes: str,
    lists: list[str],
    catalogue: str,
    updated_at: str,
) -> None:
    """Store the context of `project` (lists: active files, todos, decisions as JSON)."""
    store.database.execute_sql(
        "INSERT INTO project_context (project, notes, active_files, todos, decisions, "
        "catalogue, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project) DO "
        "UPDATE SET notes = excluded.notes, active_files = excluded.active_files, "
        "todos = excluded.todos, decisions = excluded.decisions, "
        "catalogue = excluded.catalogue, updated_at = excluded.updated_at",
        [project, notes, *lists, catalogue, updated_at],
    )


def add_snapshot(
    store: MemoryStore,
    project: str,
    saved_at: str,
    catalogue_sha256: str,
    catalogue_delta: str,
    notes: str,
    lists: list[str],
) -> int:
    """Append a snapshot to the history of `project`; returns its id."""
    cursor = store.database.execute_sql(
        "INSERT INTO context_history (project, saved_at, catalogue_sha256, "
        "catalogue_delta, notes, active_files, todos, decisions) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [project, saved_at, catalogue_sha256, catalogue_delta, notes, *lists],
    )
    return int(cursor.lastrowid)


def history_rows(store: MemoryStore, project: str, limit: int | None = None) -> list[HistoryRow]:
    """The snapshots of `project`, newest first (the last `limit` of them if given)."""
    sql = (
        "SELECT id, project, saved_at, catalogue_sha256, catalogue_delta, notes, "
        "active_files, todos, decisions FROM context_history WHERE project = ? "
        "ORDER BY id DESC"
    )
    params: list[Any] = [project]
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [tuple(row) for row in store.database.execute_sql(sql, params).fetchall()]


def projects(store: MemoryStore) -> list[str]:
    """Projects with a saved context."""
    rows = store.database.execute_sql(
        "SELECT project FROM project_context ORDER BY project"
    ).fetchall()
    return [str(r[0]) for r in rows]
