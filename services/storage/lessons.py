"""Owner of the `lesson` table (a lesson memory's structured parts — trigger, action,
rationale — and its current version) and of `lesson_version` (the record of every
version a lesson has had). The rules of lessons and their versions are
`services.knowledge.lessons`; the text of a lesson is `services.text.lesson_text`.

`backfill` gives every lesson memory without a `lesson` row one, parsed from its text
(`engram lesson backfill`, and a lesson refined before it was backfilled). Migration
0008 ran the same on upgrade with a frozen copy of the parser
(`services.storage.lesson_backfill_0008`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from services.memory import now_iso
from services.text.lesson_text import LessonParts, note_parts, parse_lesson

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore


@dataclass(frozen=True)
class VersionRecord:
    """A row of `lesson_version`."""

    version: int
    trigger: str
    action: str
    rationale: str
    tags: list[str]
    reason: str | None
    session_id: str | None
    saved_at: str


def insert_lesson(store: MemoryStore, memory_id: str, parts: LessonParts) -> None:
    """The `lesson` row of a new lesson, at version 1 (in the caller's transaction)."""
    store.database.execute_sql(
        "INSERT INTO lesson (memory_id, trigger_text, action, rationale, version) "
        "VALUES (?, ?, ?, ?, 1)",
        [memory_id, parts.trigger, parts.action, parts.rationale],
    )


def lesson_row(store: MemoryStore, memory_id: str) -> tuple[LessonParts, int] | None:
    """The parts and current version of a lesson, or None if it has no `lesson` row."""
    row = store.database.execute_sql(
        "SELECT trigger_text, action, rationale, version FROM lesson WHERE memory_id = ?",
        [memory_id],
    ).fetchone()
    if row is None:
        return None
    return LessonParts(str(row[0]), str(row[1]), str(row[2])), int(row[3])


def set_current(store: MemoryStore, memory_id: str, parts: LessonParts, version: int) -> None:
    """Make `parts` the lesson's current version `version`."""
    store.database.execute_sql(
        "UPDATE lesson SET trigger_text = ?, action = ?, rationale = ?, version = ? "
        "WHERE memory_id = ?",
        [parts.trigger, parts.action, parts.rationale, version, memory_id],
    )


def record_version(
    store: MemoryStore,
    memory_id: str,
    version: int,
    parts: LessonParts,
    tags: Sequence[str],
    reason: str | None,
    session_id: str | None,
) -> None:
    """The record of a new version, saved now."""
    store.database.execute_sql(
        "INSERT INTO lesson_version (memory_id, version, trigger_text, action, rationale, "
        "tags, reason, session_id, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            memory_id,
            version,
            parts.trigger,
            parts.action,
            parts.rationale,
            json.dumps(list(tags), ensure_ascii=False),
            reason,
            session_id,
            now_iso(),
        ],
    )


def snapshot_version(
    store: MemoryStore,
    memory_id: str,
    version: int,
    parts: LessonParts,
    tags: Sequence[str],
    saved_at: str,
) -> None:
    """Write `parts` and `tags` into the record of `version`: a new record (without reason
    or session) if it has none, else its parts and tags replaced."""
    store.database.execute_sql(
        "INSERT INTO lesson_version (memory_id, version, trigger_text, action, rationale, "
        "tags, reason, session_id, saved_at) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?) "
        "ON CONFLICT (memory_id, version) DO UPDATE SET trigger_text = "
        "excluded.trigger_text, action = excluded.action, rationale = excluded.rationale, "
        "tags = excluded.tags",
        [
            memory_id,
            version,
            parts.trigger,
            parts.action,
            parts.rationale,
            json.dumps(list(tags), ensure_ascii=False),
            saved_at,
        ],
    )


def version_records(store: MemoryStore, memory_id: str, up_to: int) -> list[VersionRecord]:
    """The records of a lesson's versions 1…`up_to` that exist, oldest first."""
    rows = store.database.execute_sql(
        "SELECT version, trigger_text, action, rationale, tags, reason, session_id, saved_at "
        "FROM lesson_version WHERE memory_id = ? AND version <= ? ORDER BY version",
        [memory_id, up_to],
    ).fetchall()
    return [
        VersionRecord(
            int(r[0]), str(r[1]), str(r[2]), str(r[3]), json.loads(r[4]), r[5], r[6], str(r[7])
        )
        for r in rows
    ]


def lesson_ids(store: MemoryStore, project: str | None = None) -> list[str]:
    """Lessons with a `lesson` row, by id (of one project if given)."""
    sql = "SELECT l.memory_id FROM lesson l JOIN memory m ON m.id = l.memory_id"
    params: list[Any] = []
    if project is not None:
        sql += " WHERE m.project = ?"
        params.append(project)
    rows = store.database.execute_sql(sql + " ORDER BY l.memory_id", params).fetchall()
    return [str(r[0]) for r in rows]


# -- backfill ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BackfillReport:
    lessons: int  # lesson memories given a lesson row now
    versions: int  # version records written now

    def to_dict(self) -> dict[str, int]:
        return {"lessons": self.lessons, "versions": self.versions}


def backfill(connection: sqlite3.Connection, memory_ids: list[str] | None = None) -> BackfillReport:
    """Give every lesson memory without a `lesson` row one (parsed from its text, with
    an earlier version record per `[vN]` note, `services.text.lesson_text`), and every
    lesson row a record of its current version if it has none. The memories themselves
    are not changed.

    Idempotent: a second run finds nothing to do. Runs inside the caller's transaction
    (`store.writing()`). `memory_ids` limits it to those memories."""
    where = ""
    params: list[str] = []
    if memory_ids is not None:
        if not memory_ids:
            return BackfillReport(0, 0)
        where = f" AND m.id IN ({', '.join('?' for _ in memory_ids)})"
        params = list(memory_ids)
    rows = connection.execute(
        "SELECT m.id, m.title, m.content, m.tags, m.created_at FROM memory m "
        "WHERE m.type = 'lesson' AND NOT EXISTS (SELECT 1 FROM lesson l WHERE "
        f"l.memory_id = m.id){where} ORDER BY m.id",
        params,
    ).fetchall()
    lessons = versions = 0
    for memory_id, title, content, tags, created_at in rows:
        parts, notes = parse_lesson(str(title), str(content))
        version = len(notes) + 1
        connection.execute(
            "INSERT INTO lesson (memory_id, trigger_text, action, rationale, version) "
            "VALUES (?, ?, ?, ?, ?)",
            [memory_id, parts.trigger, parts.action, parts.rationale, version],
        )
        lessons += 1
        for number, note in enumerate(notes, 1):
            earlier = note_parts(note, parts)
            versions += _backfill_record(
                connection,
                memory_id,
                number,
                earlier,
                tags,
                f"backfilled from the [v{note.label}] note",
                None,
                created_at,
            )
    # Every lesson row has a record of its current version (the one just made, or one
    # whose record went missing).
    current = connection.execute(
        "SELECT l.memory_id, l.trigger_text, l.action, l.rationale, l.version, m.tags, "
        "m.session_id, m.created_at FROM lesson l JOIN memory m ON m.id = l.memory_id "
        "WHERE NOT EXISTS (SELECT 1 FROM lesson_version v WHERE v.memory_id = l.memory_id "
        f"AND v.version = l.version){where} ORDER BY l.memory_id",
        params,
    ).fetchall()
    for memory_id, trigger, action, rationale, version, tags, session_id, created_at in current:
        reason = "backfilled from the lesson" if version == 1 else "backfilled (current version)"
        versions += _backfill_record(
            connection,
            memory_id,
            int(version),
            LessonParts(trigger, action, rationale),
            tags,
            reason,
            session_id,
            created_at,
        )
    return BackfillReport(lessons, versions)


def _backfill_record(
    connection: sqlite3.Connection,
    memory_id: str,
    version: int,
    parts: LessonParts,
    tags: str,
    reason: str,
    session_id: str | None,
    saved_at: str,
) -> int:
    cursor = connection.execute(
        "INSERT OR IGNORE INTO lesson_version (memory_id, version, trigger_text, action, "
        "rationale, tags, reason, session_id, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            memory_id,
            version,
            parts.trigger,
            parts.action,
            parts.rationale,
            tags if isinstance(tags, str) else json.dumps(tags),
            reason,
            session_id,
            saved_at,
        ],
    )
    return int(cursor.rowcount)


def backfill_store(store: MemoryStore, memory_ids: list[str] | None = None) -> BackfillReport:
    """`backfill` on the store's connection (inside the caller's transaction, if any)."""
    return backfill(store.database.connection(), memory_ids)
