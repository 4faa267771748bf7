"""Lesson text: rendering a lesson's parts (trigger, action, rationale) into the text of
its memory, and reading them back out of an older lesson memory — pure functions. The
backfill that stores what they read is `services.storage.lessons.backfill`.

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

import re
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
