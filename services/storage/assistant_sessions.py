"""Owner of `assistant_session` (each assistant session a hook has seen: its assistant,
project, folder, transcript, how far capture has read it and when it was given its
context block) and `session_injection`
(the ledger: which memories a session was already given, by which event), so a hook
never gives a session the same memory twice. The rules are `services.assistants`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore


@dataclass(frozen=True)
class SessionRow:
    session_id: str
    assistant: str
    project: str | None
    cwd: str | None
    transcript_path: str | None
    transcript_offset: int
    context_at: str | None  # when the session was given its context block (None: not yet)
    started_at: str
    updated_at: str


def touch_session(
    store: MemoryStore,
    session_id: str,
    assistant: str,
    at: str,
    project: str | None = None,
    cwd: str | None = None,
    transcript_path: str | None = None,
) -> None:
    """Record that `session_id` is active now: a new row, or the known one with its
    time updated and any newly known project, folder or transcript filled in (its
    start time and transcript offset are kept)."""
    with store.writing():
        store.database.execute_sql(
            "INSERT INTO assistant_session (session_id, assistant, project, cwd, "
            "transcript_path, transcript_offset, started_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
            "assistant = excluded.assistant, "
            "project = coalesce(excluded.project, project), "
            "cwd = coalesce(excluded.cwd, cwd), "
            "transcript_path = coalesce(excluded.transcript_path, transcript_path), "
            "updated_at = excluded.updated_at",
            [session_id, assistant, project, cwd, transcript_path, at, at],
        )


def session_row(store: MemoryStore, session_id: str) -> SessionRow | None:
    row = store.database.execute_sql(
        "SELECT session_id, assistant, project, cwd, transcript_path, transcript_offset, "
        "context_at, started_at, updated_at FROM assistant_session WHERE session_id = ?",
        [session_id],
    ).fetchone()
    if row is None:
        return None
    text = [None if value is None else str(value) for value in row]
    return SessionRow(
        str(row[0]),
        str(row[1]),
        text[2],
        text[3],
        text[4],
        int(row[5]),
        text[6],
        str(row[7]),
        str(row[8]),
    )


def injected_ids(store: MemoryStore, session_id: str) -> set[str]:
    """The memories `session_id` was given since it started (or was last reset)."""
    rows = store.database.execute_sql(
        "SELECT memory_id FROM session_injection WHERE session_id = ?", [session_id]
    ).fetchall()
    return {str(row[0]) for row in rows}


def record_injected(
    store: MemoryStore, session_id: str, memory_ids: Iterable[str], event: str, at: str
) -> None:
    """Add these memories to the session's ledger in one write (one already there
    keeps the event that first gave it)."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return
    with store.writing():
        store.database.connection().executemany(
            "INSERT OR IGNORE INTO session_injection (session_id, memory_id, event, "
            "injected_at) VALUES (?, ?, ?, ?)",
            [(session_id, memory_id, event, at) for memory_id in ids],
        )


def mark_context_given(store: MemoryStore, session_id: str, at: str) -> None:
    """Record that the session was given its context block now."""
    with store.writing():
        store.database.execute_sql(
            "UPDATE assistant_session SET context_at = ?, updated_at = ? WHERE session_id = ?",
            [at, at, session_id],
        )


def reset_injections(store: MemoryStore, session_id: str) -> int:
    """Empty the session's ledger and forget its context block (its context was
    cleared or compacted, so what it was given is gone); returns how many memories
    the ledger held."""
    with store.writing():
        cursor = store.database.execute_sql(
            "DELETE FROM session_injection WHERE session_id = ?", [session_id]
        )
        store.database.execute_sql(
            "UPDATE assistant_session SET context_at = NULL WHERE session_id = ?", [session_id]
        )
    return int(cursor.rowcount)


def transcript_offset(store: MemoryStore, session_id: str) -> int:
    """How far the session's transcript was read (0 for an unknown session)."""
    row = store.database.execute_sql(
        "SELECT transcript_offset FROM assistant_session WHERE session_id = ?", [session_id]
    ).fetchone()
    return 0 if row is None else int(row[0])


def set_transcript_offset(store: MemoryStore, session_id: str, offset: int, at: str) -> None:
    """Remember how far the session's transcript was read (a known session only)."""
    if offset < 0:
        raise ValueError(f"a transcript offset cannot be negative: {offset}")
    with store.writing():
        store.database.execute_sql(
            "UPDATE assistant_session SET transcript_offset = ?, updated_at = ? "
            "WHERE session_id = ?",
            [offset, at, session_id],
        )


def prune_sessions(store: MemoryStore, active_before: str) -> int:
    """Forget the sessions not active since `active_before` (an ISO time) and their
    ledgers; returns how many sessions were forgotten."""
    with store.writing():
        store.database.execute_sql(
            "DELETE FROM session_injection WHERE session_id IN (SELECT session_id FROM "
            "assistant_session WHERE updated_at < ?)",
            [active_before],
        )
        cursor = store.database.execute_sql(
            "DELETE FROM assistant_session WHERE updated_at < ?", [active_before]
        )
    return int(cursor.rowcount)
