"""Migration 0008, frozen: the lesson backfill as it shipped, with a private copy of the
lesson parser it used. Every lesson memory without a `lesson` row gets one, parsed from
its text (each `[vN]` note an earlier version record), and every lesson row a record of
its current version.

Never edit this module and never import live code into it: a database upgraded later
must end exactly as one upgraded the day 0008 shipped. The live parser is
`services.text.lesson_text`, the live backfill (`engram lesson backfill`)
`services.storage.lessons.backfill`; changes go there (and into a new migration if
stored rows must change).
"""

from __future__ import annotations

import json
import re
import sqlite3

_NOTE = re.compile(r"\[v(\d{1,6})\]", re.IGNORECASE)
_WHY = re.compile(r"(?:^|(?<=[\s.;,]))(?:why|because|rationale|reason)\s*:\s*", re.IGNORECASE)
_WHEN = re.compile(
    r"^\s*(when|if)\s+(.+?)\s*(?:,|:|\s-\s|\bthen\b)\s*(.+)$", re.IGNORECASE | re.DOTALL
)
_LESSON_PREFIX = re.compile(r"^\s*lessons?(?:\s+learn(?:ed|t))?\s*:\s*", re.IGNORECASE)

_Parts = tuple[str, str, str]  # trigger, action, rationale
_Note = tuple[int, str]  # the N of "[vN]", the note's text


def _clean(text: str) -> str:
    return " ".join(text.split())


def _split_notes(text: str) -> tuple[str, list[_Note]]:
    matches = list(_NOTE.finditer(text))
    if not matches:
        return text.strip(), []
    notes: list[_Note] = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        notes.append((int(match.group(1)), _clean(text[match.end() : end])))
    notes.sort(key=lambda n: n[0])  # stable: equal labels keep their order
    return text[: matches[0].start()].strip(), notes


def _trigger_action(text: str) -> tuple[str, str] | None:
    match = _WHEN.match(text)
    if match is None:
        return None
    trigger = _clean(f"{match.group(1)} {match.group(2)}")
    trigger = trigger[0].upper() + trigger[1:]
    action = _clean(match.group(3))
    if not action or not match.group(2).strip():
        return None
    return trigger, action


def _parse_lesson(title: str, content: str) -> tuple[_Parts, list[_Note]]:
    body, notes = _split_notes(content)
    why = _WHY.search(body)
    main, rationale = (body[: why.start()], body[why.end() :]) if why else (body, "")
    main, rationale = _clean(main), _clean(rationale).strip()
    found = _trigger_action(main)
    if found is not None:
        trigger, action = found
    else:
        trigger = _clean(_LESSON_PREFIX.sub("", title)).rstrip(".")
        action = main
        if trigger and action.startswith(trigger) and action[len(trigger) :].strip(" .:;,"):
            action = action[len(trigger) :].strip(" .:;,")  # the title is its first sentence
        trigger = trigger or action or _clean(title)
        action = action or trigger
    return (trigger, action, rationale), notes


def _note_parts(text: str, current: _Parts) -> _Parts:
    found = _trigger_action(text)
    if found is not None:
        return found[0], found[1], ""
    return current[0], text or current[1], ""


def _record(
    connection: sqlite3.Connection,
    memory_id: str,
    version: int,
    parts: _Parts,
    tags: str,
    reason: str,
    session_id: str | None,
    saved_at: str,
) -> None:
    connection.execute(
        "INSERT OR IGNORE INTO lesson_version (memory_id, version, trigger_text, action, "
        "rationale, tags, reason, session_id, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            memory_id,
            version,
            *parts,
            tags if isinstance(tags, str) else json.dumps(tags),
            reason,
            session_id,
            saved_at,
        ],
    )


def backfill_lessons(connection: sqlite3.Connection) -> None:
    """The backfill of migration 0008 (module docstring), in the caller's transaction."""
    rows = connection.execute(
        "SELECT m.id, m.title, m.content, m.tags, m.created_at FROM memory m "
        "WHERE m.type = 'lesson' AND NOT EXISTS (SELECT 1 FROM lesson l WHERE "
        "l.memory_id = m.id) ORDER BY m.id"
    ).fetchall()
    for memory_id, title, content, tags, created_at in rows:
        parts, notes = _parse_lesson(str(title), str(content))
        connection.execute(
            "INSERT INTO lesson (memory_id, trigger_text, action, rationale, version) "
            "VALUES (?, ?, ?, ?, ?)",
            [memory_id, *parts, len(notes) + 1],
        )
        for number, (label, text) in enumerate(notes, 1):
            reason = f"backfilled from the [v{label}] note"
            earlier = _note_parts(text, parts)
            _record(connection, memory_id, number, earlier, tags, reason, None, created_at)
    current = connection.execute(
        "SELECT l.memory_id, l.trigger_text, l.action, l.rationale, l.version, m.tags, "
        "m.session_id, m.created_at FROM lesson l JOIN memory m ON m.id = l.memory_id "
        "WHERE NOT EXISTS (SELECT 1 FROM lesson_version v WHERE v.memory_id = l.memory_id "
        "AND v.version = l.version) ORDER BY l.memory_id"
    ).fetchall()
    for memory_id, trigger, action, rationale, version, tags, session_id, created_at in current:
        reason = "backfilled from the lesson" if version == 1 else "backfilled (current version)"
        parts = (trigger, action, rationale)
        _record(connection, memory_id, int(version), parts, tags, reason, session_id, created_at)
