"""Knowledge extraction: what the memories keep saying without anyone having written it
down. Three kinds of suggestion, each a finding the user answers; none is ever applied
on its own (`--auto` leaves them alone):

- theme: a code name (identifier, table, endpoint, path or command in backticks) that
  comes up in memories of 3+ work sessions of a project, which no convention, pattern,
  lesson or consolidated summary of that project mentions yet. The finding drafts a
  pattern memory that lists what its sources say and keeps every key fact of theirs
  (decision titles, code names, numbers; `services.rem.ops.clusters.key_facts`). Those seen
  in the most sessions come first, and at most 10 theme findings of a project wait at a
  time: the next ones come up as these are answered, not all at once.
- todo: a current memory that is a todo (tagged `todo`, or saying TODO / FIXME, "To do:",
  "Follow up on…", "needs a follow-up"; words inside code are ignored) and was written
  5+ work sessions ago. Recommended: skip. The cycle cannot know whether the work was
  done: archiving would hide a task that may still be open, and "keep" would silence
  the reminder for good, so the recommended answer changes nothing and the finding waits
  for the user, like the staleness "stale" review. Oldest first, 10 waiting per project
  at most. A todo of a saved project context (`services.knowledge.project_context`) that has
  stayed on its todo list through the snapshots of 5+ work sessions is one too: it has
  no memory (memory_ids is empty; its finding id hashes the project and the todo), and
  its options are keep, drop (remove it from the project context, with a new snapshot)
  and skip (recommended).
- lesson: a current decision that later pitfalls or fixes of its project are about (2+
  share a code name or an exact file with it), or that was cited or used 3+ times, and
  that no lesson links to or quotes yet. The finding drafts a lesson that keeps the
  decision's title and the key facts of the pitfalls and fixes. Those with the most
  pitfalls and fixes sharing a code name come first, 10 waiting per project at most.

Work sessions are those of the schedule (`services.rem.schedule.work_sessions`: activity
separated by 30+ idle minutes). A suggestion is made once: its finding id hashes its
memories, and a theme, todo or decision that already has an extraction finding (pending
or answered) is not proposed again even when more memories have joined it since.
A draft's memory ids are its earliest 12 sources, so they stay the same as the theme
grows. Accepting a draft stores it (tags `extracted`, and `consolidated` so that cluster
summaries leave it out) linked to its sources with the `related` link kind
(`services.rem.option_actions`).

One module per kind — `themes`, `lessons`, `todos` — with `drafts` (the drafted memory)
and `common` (memories as entries of their work sessions, what earlier runs proposed);
this module runs them.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from datetime import UTC, datetime

from services.memory import Memory, parse_time
from services.rem.ops.duplicates import code_names
from services.rem.ops.extraction.common import MAX_PER_PROJECT, OP, Entry, Known
from services.rem.ops.extraction.lessons import LESSON_OPTIONS, lesson_findings
from services.rem.ops.extraction.themes import THEME_OPTIONS, theme_findings, theme_worthy
from services.rem.ops.extraction.todos import (
    CONTEXT_TODO_OPTIONS,
    TODO_OPTIONS,
    context_todo_findings,
    text_todo_marker,
    todo_findings,
    todo_marker,
)
from services.rem.schedule import work_sessions
from services.storage.findings import Finding
from services.storage.links import linked_to_lessons
from services.storage.memories import MemoryStore
from services.storage.usage import usage_events
from services.types import MemoryType, Tier

__all__ = [
    "CONTEXT_TODO_OPTIONS",
    "LESSON_OPTIONS",
    "MAX_PER_PROJECT",
    "OP",
    "THEME_OPTIONS",
    "TODO_OPTIONS",
    "extraction_findings",
    "text_todo_marker",
    "theme_worthy",
    "todo_marker",
]


def extraction_findings(
    store: MemoryStore,
    now: datetime | None = None,
    gap_minutes: float = 30.0,
    project: str | None = None,
) -> list[Finding]:
    """Theme, todo and lesson suggestions as of `now` (by project, then kind; of
    `project` only, when given)."""
    now = now or datetime.now(UTC)
    starts = work_sessions(store, gap_minutes, until=now)
    entries: list[Entry] = []
    all_lessons: list[Memory] = []
    for memory in store.iter_all(project=project):
        at = parse_time(memory.created_at)
        if at > now:
            continue
        if memory.type is MemoryType.LESSON:
            all_lessons.append(memory)  # archived or not: it was written
        if memory.superseded or memory.tier is Tier.ARCHIVED:
            continue
        session = max(0, bisect.bisect_right(starts, at) - 1)
        entries.append(Entry(memory, at, session, frozenset(code_names(memory))))
    entries.sort(key=lambda e: (e.at, e.memory.id))
    known = Known.load(store)
    findings: list[Finding] = []
    by_project: dict[str | None, list[Entry]] = defaultdict(list)
    for entry in entries:
        by_project[entry.memory.project].append(entry)
    uses = _uses(store, now)
    linked = linked_to_lessons(store)
    for name in sorted(by_project, key=lambda p: p or ""):
        members = by_project[name]
        findings.extend(theme_findings(name, members, starts, known))
        lessons = [m for m in all_lessons if m.project == name]
        findings.extend(lesson_findings(name, members, lessons, linked, uses, known))
        findings.extend(todo_findings(name, members, len(starts), known))
    todos = context_todo_findings(store, starts, now, known, findings)
    findings.extend(t for t in todos if project is None or t.detail.get("project") == project)
    return findings


def _uses(store: MemoryStore, now: datetime) -> Counter[str]:
    """Citations and uses of each memory up to `now` (usage_event)."""
    rows = usage_events(store, only=["cited", "used"])
    return Counter(memory_id for memory_id, _, at in rows if parse_time(at) <= now)
