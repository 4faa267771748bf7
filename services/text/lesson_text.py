"""Lesson text: rendering a lesson's parts (trigger, action, rationale) into the text of
its memory, reading them back out of an older lesson memory, and the idempotent
backfill that gives every lesson memory its structured `lesson` row and version records.

Kept free of the store and the service (stdlib and `sqlite3` only) so that migration
0008 can run it on the bare connection.

Reading an older lesson (`parse_lesson`):

- `[vN] …` notes (anywhere in the text, usually at the end of the rationale) are cut
  out first; each note is an earlier version of the lesson (see below).
- "Why:", "Because:", "Rationale:" or "Reason:" starts the rationale.
- "When X, Y" / "When X: Y" / "If X, Y" / "If X: Y" gives trigger X and action Y;
  otherwise the title (without a "Lesson:" / "Lesson learned:" prefix) is the trigger
  and the rest of the text the action.

A `[vN] text` note is read with the same rules: "When X: Y" gives an earlier trigger
and action, other text is the earlier action under the current trigger. Notes are put
in order of N (then of appearance) and numbered 1…k, whatever their N: the lesson is
then at version k + 1.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass

MAX_TITLE_CHARS = 100

_NOTE = re.compile(r"\[v(\d{1,6})\]", re.IGNORECASE)
_WHY = re.compile(r"(?:^|(?<=[\s.;,]))(?:why|because|rationale|reason)\s*:\s*", re.IGNORECASE)
_WHEN = re.compile(
    r"^\s*(when|if)\s+(.+?)\s*(?:,|:|\s-\s|\bthen\b)\s*(.+)$", re.IGNORECASE | re.DOTALL
)
_LESSON_PREFIX = re.compile(r"^\s*lessons?(?:\s+learn(?:ed|t))?\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class LessonParts:
    trigger: str
    action: str
    rationale: str = ""


@dataclass(frozen=True)
class VersionNote:
    label: int  # the N of "[vN]" as written
    text: str


def _clean(text: str) -> str:
    return " ".join(text.split())


def _sentence(text: str) -> str:
    """`text` ending with a full stop (unless it already ends a sentence)."""
    text = _clean(text)
    return text if not text or text[-1] in ".!?…" else text + "."


def render(parts: LessonParts) -> tuple[str, str]:
    """The memory title and content of a lesson: "When <trigger>: <action>. Why:
    <rationale>" (a trigger already starting with when/if is not prefixed again)."""
    trigger = _clean(parts.trigger).rstrip(".:,")
    if not re.match(r"(?i)(when|if)\b", trigger):
        trigger = f"When {trigger}"
    trigger = trigger[0].upper() + trigger[1:]
    action = _sentence(parts.action)
    content = f"{trigger}: {action}"
    if parts.rationale.strip():
        content += f" Why: {_sentence(parts.rationale)}"
    title = f"{trigger}: {_clean(parts.action)}".rstrip(".")
    if len(title) > MAX_TITLE_CHARS:
        cut = title[: MAX_TITLE_CHARS - 1]
        if " " in cut[40:]:
            cut = cut[: cut.rfind(" ")]
        title = cut.rstrip(" ,;:") + "…"
    return title, content


def split_notes(text: str) -> tuple[str, list[VersionNote]]:
    """`text` without its `[vN] …` notes, and the notes in order (by N, then as
    written). A note runs to the next note or the end of the text."""
    matches = list(_NOTE.finditer(text))
    if not matches:
        return text.strip(), []
    notes: list[VersionNote] = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        notes.append(VersionNote(int(match.group(1)), _clean(text[match.end() : end])))
    rest = text[: matches[0].start()]
    notes.sort(key=lambda n: n.label)  # stable: equal labels keep their order
    return rest.strip(), notes


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


def parse_lesson(title: str, content: str) -> tuple[LessonParts, list[VersionNote]]:
    """The parts of an older lesson memory and its `[vN]` notes (module docstring)."""
    body, notes = split_notes(content)
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
    return LessonParts(trigger, action, rationale), notes


def note_parts(note: VersionNote, current: LessonParts) -> LessonParts:
    """The earlier version a note describes."""
    found = _trigger_action(note.text)
    if found is not None:
        return LessonParts(found[0], found[1], "")
    return LessonParts(current.trigger, note.text or current.action, "")


# -- backfill ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BackfillReport:
    lessons: int  # lesson memories given a lesson row now
    versions: int  # version records written now

    def to_dict(self) -> dict[str, int]:
        return {"lessons": self.lessons, "versions": self.versions}


def backfill(connection: sqlite3.Connection, memory_ids: list[str] | None = None) -> BackfillReport:
    """Give every lesson memory without a `lesson` row one (parsed from its text, with
    an earlier version record per `[vN]` note), and every lesson row a record of its
    current version if it has none. The memories themselves are not changed.

    Idempotent: a second run finds nothing to do. Runs inside the caller's transaction
    (migration 0008, or `store.writing()`). `memory_ids` limits it to those memories."""
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
            versions += _record(
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
        versions += _record(
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


def _record(
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
