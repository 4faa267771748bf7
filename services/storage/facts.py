"""Owner of the `fact` table: one structured fact (key, value, scope, confidence, how it
was extracted) per memory. The rules that read and review facts are
`services.knowledge.facts`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore

# memory_id, key, value, scope, confidence, extracted_by, valid_from, valid_to: the
# validity window is the memory's.
FactRow = tuple[str, str, str, str, float, str, str | None, str | None]

_COLUMNS = (
    "f.memory_id, f.key, f.value, f.scope, f.confidence, f.extracted_by, "
    "coalesce(m.valid_from, m.created_at), m.valid_to"
)


def upsert_fact(
    store: MemoryStore,
    memory_id: str,
    key: str,
    value: str,
    scope: str,
    confidence: float,
    extracted_by: str,
) -> None:
    """Store or replace the fact of `memory_id` (in the caller's transaction, if any)."""
    store.database.execute_sql(
        "INSERT INTO fact (memory_id, key, value, scope, confidence, extracted_by) "
        "VALUES (?,?,?,?,?,?) ON CONFLICT (memory_id) DO UPDATE SET key = excluded.key, "
        "value = excluded.value, scope = excluded.scope, confidence = excluded.confidence, "
        "extracted_by = excluded.extracted_by",
        [memory_id, key, value, scope, confidence, extracted_by],
    )


def delete_fact(store: MemoryStore, memory_id: str) -> bool:
    """Remove the fact of `memory_id`; False when it had none."""
    with store.writing():
        cursor = store.database.execute_sql("DELETE FROM fact WHERE memory_id = ?", [memory_id])
    return bool(cursor.rowcount)


def fact_rows(
    store: MemoryStore,
    key: str | None = None,
    scope: str | None = None,
    project: str | None = None,
) -> list[FactRow]:
    """Stored facts with their memory's validity window, oldest first; only those of
    `key`, `scope` and `project` when given."""
    sql = f"SELECT {_COLUMNS} FROM fact f JOIN memory m ON m.id = f.memory_id WHERE 1 = 1"
    params: list[Any] = []
    if key is not None:
        sql += " AND f.key = ?"
        params.append(key)
    if scope is not None:
        sql += " AND f.scope = ?"
        params.append(scope)
    if project is not None:
        sql += " AND m.project = ?"
        params.append(project)
    rows = store.database.execute_sql(
        sql + " ORDER BY coalesce(m.valid_from, m.created_at), f.memory_id", params
    ).fetchall()
    return [tuple(row) for row in rows]


def memories_with_facts(store: MemoryStore) -> set[str]:
    """The ids of the memories that have a fact."""
    return {str(r[0]) for r in store.database.execute_sql("SELECT memory_id FROM fact").fetchall()}
