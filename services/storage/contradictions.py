"""Owner of the `contradiction_candidate` (pairs waiting to be judged) and
`contradiction` (flagged pairs, open or resolved) tables. `services.knowledge.
contradictions` decides what goes in; this module is the only one that writes SQL for
them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore

COLUMNS = "id, a, b, kind, holder, detected_at, evidence, resolved_at, resolution, note"


def _execute(store: MemoryStore, sql: str, params: Sequence[Any] = ()) -> Any:
    return store.database.execute_sql(sql, list(params))


def remove_about(store: MemoryStore, memory_id: str) -> None:
    """Delete the queued and flagged pairs that name `memory_id` (its memory is being
    deleted), inside the caller's transaction (`MemoryStore.delete`): a conflict with a
    memory that is gone cannot be resolved, and "may be outdated — see X" must never
    name nothing."""
    for table in ("contradiction_candidate", "contradiction"):
        _execute(store, f"DELETE FROM {table} WHERE a = ? OR b = ?", [memory_id, memory_id])


def remove_open_about(store: MemoryStore, memory_id: str) -> int:
    """Delete the unresolved flagged pairs that name `memory_id` (its text was just
    edited, so what they say of it may no longer be so; the pairs are judged again as it
    is embedded), inside the caller's transaction. Resolved pairs, the user's answers,
    stay. Returns how many went."""
    cursor = _execute(
        store,
        "DELETE FROM contradiction WHERE (a = ? OR b = ?) AND resolved_at IS NULL",
        [memory_id, memory_id],
    )
    return int(cursor.rowcount or 0)


# --- candidates ---------------------------------------------------------------------------


def candidate_payload(store: MemoryStore, a: str, b: str) -> str | None:
    """The stored cues JSON of a queued pair ("{}" when it has none); None when the
    pair is not queued."""
    row = _execute(
        store, "SELECT cues FROM contradiction_candidate WHERE a = ? AND b = ?", [a, b]
    ).fetchone()
    return None if row is None else str(row[0] or "{}")


def insert_candidate(
    store: MemoryStore, a: str, b: str, payload: str, similarity: float | None, now: str
) -> None:
    _execute(
        store,
        "INSERT INTO contradiction_candidate (a, b, cues, similarity, queued_at) "
        "VALUES (?,?,?,?,?)",
        [a, b, payload, similarity, now],
    )


def requeue_candidate(
    store: MemoryStore, a: str, b: str, payload: str, similarity: float | None, now: str
) -> None:
    _execute(
        store,
        "UPDATE contradiction_candidate SET cues = ?, similarity = coalesce(?, similarity), "
        "queued_at = ?, judged_at = NULL WHERE a = ? AND b = ?",
        [payload, similarity, now, a, b],
    )


def waiting_candidates(store: MemoryStore, limit: int | None = None) -> list[tuple[str, str]]:
    sql = (
        "SELECT a, b FROM contradiction_candidate WHERE judged_at IS NULL ORDER BY queued_at, a, b"
    )
    rows = _execute(store, sql + (" LIMIT ?" if limit else ""), [limit] if limit else [])
    return [(str(a), str(b)) for a, b in rows.fetchall()]


def candidate_counts(store: MemoryStore) -> tuple[int, int]:
    """(all candidates, those waiting)."""
    row = _execute(
        store, "SELECT count(*), sum(judged_at IS NULL) FROM contradiction_candidate"
    ).fetchone()
    return int(row[0] or 0), int(row[1] or 0)


def mark_judged(store: MemoryStore, a: str, b: str, now: str, cues: str | None = None) -> None:
    if cues is None:
        _execute(
            store,
            "UPDATE contradiction_candidate SET judged_at = ? WHERE a = ? AND b = ?",
            [now, a, b],
        )
    else:
        _execute(
            store,
            "UPDATE contradiction_candidate SET judged_at = ?, cues = ? WHERE a = ? AND b = ?",
            [now, cues, a, b],
        )


def fact_rows(store: MemoryStore) -> list[tuple[str, str, str, str]]:
    """(memory id, key, scope, value) of every `fact` row (read-only here; `fact` is
    owned by services.storage.facts)."""
    rows = _execute(store, "SELECT memory_id, key, scope, value FROM fact").fetchall()
    return [(str(m), str(k), str(s), str(v)) for m, k, s, v in rows]


# --- contradictions -----------------------------------------------------------------------


def record_flag(
    store: MemoryStore, a: str, b: str, kind: str, holder: str | None, now: str, evidence: str
) -> None:
    """Insert a flagged pair, or refresh its evidence while it is still open. A pair
    resolved when its texts read otherwise (the evidence's `hash` of both texts differs)
    is open again, the old answer named in its note: a new user had settled two "line
    length 88" notes as both valid, then edited one to say 100, and the pair stayed
    settled."""
    existing = _execute(
        store,
        "SELECT id, resolved_at, resolution, evidence FROM contradiction WHERE a = ? AND b = ?",
        [a, b],
    ).fetchone()
    if existing is None:
        _execute(
            store,
            "INSERT INTO contradiction (a, b, kind, holder, detected_at, evidence) "
            "VALUES (?,?,?,?,?,?)",
            [a, b, kind, holder, now, evidence],
        )
    elif existing[1] is None:
        _execute(
            store,
            "UPDATE contradiction SET kind = ?, holder = ?, evidence = ? WHERE id = ?",
            [kind, holder, evidence, existing[0]],
        )
    elif _texts_changed(existing[3], evidence):
        note = f"reopened: the texts changed after it was resolved ({existing[2]}, {existing[1]})"
        _execute(
            store,
            "UPDATE contradiction SET kind = ?, holder = ?, evidence = ?, detected_at = ?, "
            "resolved_at = NULL, resolution = NULL, note = ? WHERE id = ?",
            [kind, holder, evidence, now, note, existing[0]],
        )


def restore_row(store: MemoryStore, row: Sequence[Any]) -> bool:
    """Write a conflict record read from an export (`COLUMNS` but the id) where this
    store has none for the pair, or has it open and the record settles it. A pair this
    store has settled keeps its own answer. Returns whether anything was written."""
    a, b, kind, holder, detected_at, evidence, resolved_at, resolution, note = row
    existing = row_for_pair(store, a, b)
    if existing is None:
        _execute(
            store,
            f"INSERT INTO contradiction ({COLUMNS.removeprefix('id, ')}) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            [a, b, kind, holder, detected_at, evidence, resolved_at, resolution, note],
        )
        return True
    if existing[7] is None and resolved_at is not None:
        _execute(
            store,
            "UPDATE contradiction SET kind = ?, holder = ?, evidence = ?, resolved_at = ?, "
            "resolution = ?, note = ? WHERE id = ?",
            [kind, holder, evidence, resolved_at, resolution, note, existing[0]],
        )
        return True
    return False


def _texts_changed(resolved_evidence: str | None, evidence: str) -> bool:
    """Whether both evidences hash the pair's texts and the hashes differ."""
    try:
        before, after = decode_evidence(resolved_evidence), decode_evidence(evidence)
    except ValueError:
        return False
    old, new = before.get("hash"), after.get("hash")
    return isinstance(old, str) and isinstance(new, str) and old != new


def row_by_id(store: MemoryStore, contradiction_id: int) -> Sequence[Any] | None:
    row: Sequence[Any] | None = _execute(
        store, f"SELECT {COLUMNS} FROM contradiction WHERE id = ?", [contradiction_id]
    ).fetchone()
    return row


def row_for_pair(store: MemoryStore, a: str, b: str) -> Sequence[Any] | None:
    row: Sequence[Any] | None = _execute(
        store,
        f"SELECT {COLUMNS} FROM contradiction WHERE (a = ? AND b = ?) OR (a = ? AND b = ?)",
        [a, b, b, a],
    ).fetchone()
    return row


def rows(store: MemoryStore, include_resolved: bool = False) -> list[Sequence[Any]]:
    """Every contradiction row, newest first; open ones only unless `include_resolved`."""
    sql = f"SELECT {COLUMNS} FROM contradiction"
    if not include_resolved:
        sql += " WHERE resolved_at IS NULL"
    return list(_execute(store, sql + " ORDER BY id DESC").fetchall())


def open_rows_about(store: MemoryStore, memory_ids: Iterable[str]) -> list[Sequence[Any]]:
    """Open contradictions that involve any of `memory_ids`, newest first."""
    ids = sorted(set(memory_ids))
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return list(
        _execute(
            store,
            f"SELECT {COLUMNS} FROM contradiction WHERE resolved_at IS NULL "
            f"AND (a IN ({marks}) OR b IN ({marks})) ORDER BY id DESC",
            [*ids, *ids],
        ).fetchall()
    )


def disputed_ids(store: MemoryStore, memory_ids: Iterable[str]) -> set[str]:
    """Those of `memory_ids` an open conflict disputes: the side it does not name as
    holding, or both sides where it names none."""
    disputed: set[str] = set()
    asked = set(memory_ids)
    for row in open_rows_about(store, asked):
        a, b, holder = row[1], row[2], row[4]
        disputed.update(m for m in (a, b) if m in asked and m != holder)
    return disputed


def mark_resolved(
    store: MemoryStore, contradiction_id: int, now: str, resolution: str, note: str | None
) -> None:
    _execute(
        store,
        "UPDATE contradiction SET resolved_at = ?, resolution = ?, note = ? WHERE id = ?",
        [now, resolution, note, contradiction_id],
    )


def decode_evidence(raw: str | None) -> dict[str, Any]:
    value = json.loads(raw or "{}")
    return value if isinstance(value, dict) else {}
