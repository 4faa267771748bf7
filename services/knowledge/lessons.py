"""Lessons with versions: a lesson is a memory of type `lesson` (searchable and embedded
like any other) whose structured parts — trigger, action, rationale — live in the
`lesson` table keyed by the memory id, with the lesson's version.

The memory's title and content are derived from the parts ("When <trigger>: <action>.
Why: <rationale>", `services.text.lesson_text.render`) and kept in step by `refine`, through
`MemoryService.edit`, so the keyword index and the vectors follow.

`lesson_version` holds a record of every version a lesson has had, the current one
included: `reason` says why that version came to be ("added", the refinement reason, or
how the backfill made it) and `session_id` in which session. `refine` first snapshots
the current state into the record of the current version (so the record is exactly what
is being replaced, even if the memory's tags were edited since), then writes the new
version, its record and the memory's new text, all in one transaction.

Preference pairs (`preference_pairs`), for fine-tuning a model on how lessons were
corrected: one JSON object per pair of consecutive versions of a lesson, the earlier
version rejected and the later chosen:

    {"prompt": "<trigger of the later version>",
     "chosen": "<later action>[\\nWhy: <later rationale>]",
     "rejected": "<earlier action>[\\nWhy: <earlier rationale>]",
     "lesson_id": "...", "project": "...", "from_version": 1, "to_version": 2,
     "reason": "<why the later version was made>", "session_id": "..."}

`prompt`/`chosen`/`rejected` is the layout DPO trainers read (TRL's
`DPOTrainer` among them). A pair whose two responses are the same (only the trigger or
the tags changed) says nothing about which answer is better and is left out.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from services.errors import NotFoundError, UserInputError
from services.memories.service import MemoryService
from services.memory import Memory, now_iso
from services.storage import lessons as storage
from services.storage.lessons import BackfillReport
from services.storage.memories import MemoryStore
from services.text.lesson_text import LessonParts, render
from services.types import MemoryType, Source

MAX_TRIGGER_CHARS = 500
MAX_ACTION_CHARS = 5_000
MAX_RATIONALE_CHARS = 10_000
MAX_REASON_CHARS = 2_000
_FIELDS = ("trigger", "action", "rationale", "tags")


@dataclass(frozen=True)
class Lesson:
    memory_id: str
    trigger: str
    action: str
    rationale: str
    version: int
    tags: list[str]
    project: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LessonVersion:
    memory_id: str
    version: int
    trigger: str
    action: str
    rationale: str
    tags: list[str]
    reason: str | None
    session_id: str | None
    saved_at: str
    current: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def response(self) -> str:
        """What the lesson says to do, as a fine-tuning response."""
        if self.rationale:
            return f"{self.action}\nWhy: {self.rationale}"
        return self.action


def _text(value: Any, what: str, limit: int, required: bool) -> str:
    if not isinstance(value, str):
        raise UserInputError(f"the {what} must be text")
    text = " ".join(value.split())
    if required and not text:
        raise UserInputError(f"the {what} is empty")
    if len(text) > limit:
        raise UserInputError(f"the {what} is longer than {limit} characters")
    return text


def _tags(value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise UserInputError("tags must be a list of text")
    if not all(isinstance(tag, str) for tag in value):
        raise UserInputError("tags must be a list of text")
    return list(dict.fromkeys(tag.strip() for tag in value if tag.strip()))


def _parts(trigger: Any, action: Any, rationale: Any) -> LessonParts:
    return LessonParts(
        _text(trigger, "trigger", MAX_TRIGGER_CHARS, True),
        _text(action, "action", MAX_ACTION_CHARS, True),
        _text(rationale, "rationale", MAX_RATIONALE_CHARS, False),
    )


def _redacted(service: MemoryService, parts: LessonParts, found: Counter[str]) -> LessonParts:
    """The parts with their secrets redacted: they are stored apart from the memory."""
    gate = service.incoming
    return LessonParts(
        gate.text(parts.trigger, found),
        gate.text(parts.action, found),
        gate.text(parts.rationale, found),
    )


def add_lesson(
    service: MemoryService,
    trigger: str,
    action: str,
    rationale: str = "",
    tags: Sequence[str] = (),
    project: str | None = None,
    session_id: str | None = None,
    embed: bool = True,
    redacted: Counter[str] | None = None,
) -> Lesson:
    """Store a new lesson: its memory, its `lesson` row and the record of version 1, in
    one transaction; vectors follow when `embed` (else they wait, queued). Secrets in
    the parts are redacted (counted into `redacted`)."""
    parts = _redacted(
        service, _parts(trigger, action, rationale), Counter() if redacted is None else redacted
    )
    tag_list = _tags(tags)
    title, content = render(parts)
    store = service.store
    with store.writing():
        memory = service.add(
            {
                "type": MemoryType.LESSON.value,
                "title": title,
                "content": content,
                "tags": tag_list,
                "project": project,
                "session_id": session_id,
                "source": Source.EXPLICIT.value,
            },
            embed=False,
        )
        storage.insert_lesson(store, memory.id, parts)
        storage.record_version(store, memory.id, 1, parts, memory.tags, "added", session_id)
    if embed:
        service.indexer.index([memory])
    return _lesson(memory, parts, 1)


def _lesson(memory: Memory, parts: LessonParts, version: int) -> Lesson:
    return Lesson(
        memory.id,
        parts.trigger,
        parts.action,
        parts.rationale,
        version,
        memory.tags,
        memory.project,
    )


def _lesson_memory(store: MemoryStore, memory_id: str) -> Memory:
    memory = store.get(memory_id)
    if memory.type is not MemoryType.LESSON:
        raise UserInputError(f"{memory_id} is a {memory.type.value}, not a lesson")
    return memory


def check_plain_edit(store: MemoryStore, memory_id: str, changes: dict[str, Any]) -> None:
    """Refuse a plain edit of a versioned lesson's text: it would bypass the versions
    (`refine` keeps the earlier one). Tags, tier and the rest may change freely."""
    if not {"title", "content", "type"} & set(changes):
        return
    memory = store.get(memory_id)
    if memory.type is MemoryType.LESSON and storage.lesson_row(store, memory_id) is not None:
        raise UserInputError(
            f"{memory_id} is a versioned lesson; change its text with `engram lesson refine "
            f"{memory_id} --action … --reason …` so the earlier version is kept"
        )


def get_lesson(store: MemoryStore, memory_id: str) -> Lesson:
    memory = _lesson_memory(store, memory_id)
    found = storage.lesson_row(store, memory_id)
    if found is None:
        raise NotFoundError(
            f"lesson {memory_id} has no structured parts yet: run `engram lesson backfill`"
        )
    return _lesson(memory, *found)


def refine(
    service: MemoryService,
    memory_id: str,
    changes: dict[str, Any],
    reason: str,
    session_id: str | None = None,
    embed: bool = True,
    redacted: Counter[str] | None = None,
) -> Lesson:
    """Make a new version of a lesson. `changes` holds any of trigger, action, rationale
    and tags; `reason` says why. The current state is snapshotted first, then the lesson
    row, the new version's record and the memory's text change — one transaction. A
    lesson memory without a `lesson` row (imported since the last backfill) is backfilled
    first."""
    unknown = sorted(set(changes) - set(_FIELDS))
    if unknown:
        raise UserInputError(
            f"a lesson has no {', '.join(unknown)} (choose from: trigger, action, rationale, tags)"
        )
    counted = Counter[str]() if redacted is None else redacted
    why = service.incoming.text(_text(reason, "reason", MAX_REASON_CHARS, True), counted)
    store = service.store
    before = _lesson_memory(store, memory_id)
    with store.writing():
        found = storage.lesson_row(store, memory_id)
        if found is None:
            storage.backfill_store(store, [memory_id])
            found = storage.lesson_row(store, memory_id)
            assert found is not None
        current, version = found
        memory = store.get(memory_id)
        parts = _redacted(
            service,
            _parts(
                changes.get("trigger", current.trigger),
                changes.get("action", current.action),
                changes.get("rationale", current.rationale),
            ),
            counted,
        )
        tags = _tags(changes["tags"]) if "tags" in changes else memory.tags
        if parts == current and tags == memory.tags:
            raise UserInputError(f"the refinement changes nothing in lesson {memory_id}")
        # 1. the current state, as it is now, into the record of the current version
        saved_at = memory.created_at if version == 1 else now_iso()
        storage.snapshot_version(store, memory_id, version, current, memory.tags, saved_at)
        # 2. the new version
        storage.set_current(store, memory_id, parts, version + 1)
        storage.record_version(store, memory_id, version + 1, parts, tags, why, session_id)
        title, content = render(parts)
        updated = service.edit(
            memory_id, {"title": title, "content": content, "tags": tags}, embed=False
        )
    if embed:
        service.indexer.remove(before)
        service.indexer.index([updated])
    return _lesson(updated, parts, version + 1)


def versions(store: MemoryStore, memory_id: str) -> list[LessonVersion]:
    """Every version of a lesson, oldest first; the last is the current one."""
    lesson = get_lesson(store, memory_id)
    found = [
        LessonVersion(
            memory_id,
            r.version,
            r.trigger,
            r.action,
            r.rationale,
            r.tags,
            r.reason,
            r.session_id,
            r.saved_at,
            r.version == lesson.version,
        )
        for r in storage.version_records(store, memory_id, lesson.version)
    ]
    if not found or found[-1].version != lesson.version:  # its record went missing
        found.append(
            LessonVersion(
                memory_id,
                lesson.version,
                lesson.trigger,
                lesson.action,
                lesson.rationale,
                lesson.tags,
                None,
                None,
                "",
                True,
            )
        )
    return found


def lesson_ids(store: MemoryStore, project: str | None = None) -> list[str]:
    """Lessons with structured parts, by id (of one project if given)."""
    return storage.lesson_ids(store, project)


def preference_pairs(store: MemoryStore, project: str | None = None) -> list[dict[str, Any]]:
    """Consecutive versions of every lesson as preference pairs (module docstring), by
    lesson id then version."""
    pairs: list[dict[str, Any]] = []
    for memory_id in lesson_ids(store, project):
        history = versions(store, memory_id)
        lesson_project = store.get(memory_id).project
        for earlier, later in itertools.pairwise(history):
            if earlier.response() == later.response():
                continue
            pairs.append(
                {
                    "prompt": later.trigger,
                    "chosen": later.response(),
                    "rejected": earlier.response(),
                    "lesson_id": memory_id,
                    "project": lesson_project,
                    "from_version": earlier.version,
                    "to_version": later.version,
                    "reason": later.reason,
                    "session_id": later.session_id,
                }
            )
    return pairs


def backfill_lessons(store: MemoryStore) -> BackfillReport:
    """`services.storage.lessons.backfill` in one transaction of the store."""
    with store.writing():
        return storage.backfill_store(store)
