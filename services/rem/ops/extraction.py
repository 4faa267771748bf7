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
(`services.rem.actions`).
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from services.context.assembly import derived_summary
from services.memory import MAX_TITLE_CHARS, Memory, parse_time
from services.rem.ops.clusters import missing_facts
from services.rem.ops.duplicates import code_names
from services.rem.schedule import work_sessions
from services.storage.findings import Finding, Option
from services.storage.memories import MemoryStore
from services.text.words import sha256_hex, without_code
from services.types import MemoryType, Tier

OP = "extraction"
MIN_THEME_SESSIONS = 3
MIN_TODO_SESSIONS = 5
MIN_LESSON_EVIDENCE = 2  # later pitfalls/fixes about the decision
MIN_LESSON_USES = 3  # or cited/used this often
MAX_PER_PROJECT = 10  # pending findings of a kind per project (new ones wait for room)
MAX_SOURCES = 12  # memories a draft is made from (the earliest: stable between runs)
MAX_LISTED = 8  # sources quoted line by line in a draft
COVERING_TYPES = frozenset({MemoryType.CONVENTION, MemoryType.PATTERN, MemoryType.LESSON})
EVIDENCE_TYPES = frozenset({MemoryType.PITFALL, MemoryType.FIX})
DRAFT_TAGS = ["extracted", "consolidated"]
DRAFT_CONFIDENCE = 0.6
TODO_TAGS = frozenset({"todo", "to-do", "fixme"})

# A theme is a name, not a sentence: error lines and long commands are left out, and so
# are bare numbers and names of anything's members (`.get()`).
MIN_THEME_CHARS = 3
MAX_THEME_CHARS = 60
MAX_THEME_WORDS = 4

# Code is left out before looking for todo markers: "`TODO(name): ...`" in a convention
# about how to write TODOs is not a task.
# Upper case TODO / FIXME anywhere, as words ("TODOs" is about todos, "TODO.md" a file);
# "to do:", "todo:", "fixme:" or "follow-up:" opening a line (after a bullet or not) or a
# sentence ("what to do:" is not one); "Follow up on/with …" as an instruction; and a
# follow-up someone needs, should, must or has to do.
_START = r"(?:^[ \t]*(?:[-*•][ \t]+)?|(?<=[.!?;])\s+|(?<=[(\[])\s*)"
_TODO = re.compile(
    r"(?<![\w./-])(?:TODO|FIXME)\b(?![.\-/]\w)"
    rf"|{_START}(?i:to[- ]?do|fixme|follow[- ]?up)\s*:"
    rf"|{_START}(?i:follow[- ]?up\s+(?:on|with)\b)"
    r"|(?i:\b(?:needs?|should|must|ha(?:ve|s)\s+to|remember\s+to|still\s+to)\s+"
    r"(?:to\s+|a\s+)?follow[- ]?up\b)",
    re.MULTILINE,
)
_ANY_MARKER = re.compile(r"todo|fixme|to[- ]do|follow[- ]?up", re.IGNORECASE)  # fast first look


def todo_marker(memory: Memory) -> str | None:
    """Why `memory` is a todo (its tag or the marker in its text), or None."""
    for tag in memory.tags:
        if tag.lower() in TODO_TAGS:
            return f"tag {tag}"
    return text_todo_marker(f"{memory.title}\n{memory.content}")


def text_todo_marker(text: str) -> str | None:
    """The todo marker in `text` outside code, or None."""
    if not _ANY_MARKER.search(text):
        return None
    plain = without_code(text)
    match = _TODO.search(plain)
    return " ".join(match.group(0).strip(" \t\n-*•").split()) if match else None


def theme_worthy(name: str) -> bool:
    """Code names that can be a theme: with a letter, 3–60 characters, at most 4 words,
    starting with a letter, digit, `_`, `/`, `@` or `$`."""
    return (
        MIN_THEME_CHARS <= len(name) <= MAX_THEME_CHARS
        and (name[0].isalnum() or name[0] in "_/@$")
        and any(c.isalpha() for c in name)
        and len(name.split()) <= MAX_THEME_WORDS
    )


THEME_OPTIONS = [
    Option(
        "create",
        "Add the pattern",
        "store the drafted pattern as a new memory linked to the memories it came from; "
        "they stay as they are",
    ),
    Option("dismiss", "Not a theme", "do not propose this theme again"),
    Option("skip", "Skip", "decide later; the finding stays open"),
]
LESSON_OPTIONS = [
    Option(
        "create",
        "Add the lesson",
        "store the drafted lesson as a new memory linked to the decision and the pitfalls "
        "and fixes it came from; they stay as they are",
    ),
    Option("dismiss", "No lesson here", "do not propose a lesson for this decision again"),
    Option("skip", "Skip", "decide later; the finding stays open"),
]
TODO_OPTIONS = [
    Option("keep", "Still to do", "it is still pending; do not ask about it again"),
    Option(
        "archive",
        "Done or dropped",
        "archive it (never deleted; searchable with --mode exhaustive)",
    ),
    Option("skip", "Skip", "decide later; the finding stays open"),
]


@dataclass(frozen=True)
class _Entry:
    memory: Memory
    at: datetime
    session: int  # index in the work sessions
    names: frozenset[str]


def extraction_findings(
    store: MemoryStore, now: datetime | None = None, gap_minutes: float = 30.0
) -> list[Finding]:
    """Theme, todo and lesson suggestions as of `now` (by project, then kind)."""
    now = now or datetime.now(UTC)
    starts = work_sessions(store, gap_minutes, until=now)
    entries: list[_Entry] = []
    all_lessons: list[Memory] = []
    for memory in store.iter_all():
        at = parse_time(memory.created_at)
        if at > now:
            continue
        if memory.type is MemoryType.LESSON:
            all_lessons.append(memory)  # archived or not: it was written
        if memory.superseded or memory.tier is Tier.ARCHIVED:
            continue
        session = max(0, bisect.bisect_right(starts, at) - 1)
        entries.append(_Entry(memory, at, session, frozenset(code_names(memory))))
    entries.sort(key=lambda e: (e.at, e.memory.id))
    known = _Known.load(store)
    findings: list[Finding] = []
    by_project: dict[str | None, list[_Entry]] = defaultdict(list)
    for entry in entries:
        by_project[entry.memory.project].append(entry)
    uses = _uses(store, now)
    linked = _linked_to_lessons(store)
    for project in sorted(by_project, key=lambda p: p or ""):
        members = by_project[project]
        findings.extend(_themes(project, members, starts, known))
        lessons = [m for m in all_lessons if m.project == project]
        findings.extend(_lessons(project, members, lessons, linked, uses, known))
        findings.extend(_todos(project, members, len(starts), known))
    findings.extend(_context_todos(store, starts, now, known, findings))
    return findings


@dataclass(frozen=True)
class _Known:
    """What earlier runs proposed: the keys of all extraction findings (pending or
    answered: never proposed twice), and how many are pending per kind and project."""

    keys: frozenset[str]
    pending: Counter[tuple[str, str | None]]

    @classmethod
    def load(cls, store: MemoryStore) -> _Known:
        rows = store.database.execute_sql(
            "SELECT kind, status, detail FROM finding WHERE op = ?", [OP]
        ).fetchall()
        keys: set[str] = set()
        pending: Counter[tuple[str, str | None]] = Counter()
        for kind, status, raw in rows:
            try:
                detail = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(detail, dict):
                continue
            if isinstance(detail.get("key"), str):
                keys.add(detail["key"])
            if status == "pending":
                project = detail.get("project")
                pending[(str(kind), project if isinstance(project, str) else None)] += 1
        return cls(frozenset(keys), pending)

    def room(self, kind: str, project: str | None) -> int:
        return max(0, MAX_PER_PROJECT - self.pending[(kind, project)])


def _uses(store: MemoryStore, now: datetime) -> Counter[str]:
    """Citations and uses of each memory up to `now` (usage_event)."""
    rows = store.database.execute_sql(
        "SELECT memory_id, at FROM usage_event WHERE event IN ('cited', 'used')"
    ).fetchall()
    return Counter(str(memory_id) for memory_id, at in rows if parse_time(at) <= now)


def _linked_to_lessons(store: MemoryStore) -> set[str]:
    """Memories a lesson links to, or that link to a lesson (any link kind)."""
    rows = store.database.execute_sql(
        "SELECT l.target FROM memory_link l JOIN memory m ON m.id = l.source "
        "WHERE m.type = 'lesson' "
        "UNION SELECT l.source FROM memory_link l JOIN memory m ON m.id = l.target "
        "WHERE m.type = 'lesson'"
    ).fetchall()
    return {str(r[0]) for r in rows}


# -- themes ---------------------------------------------------------------------------


def _themes(
    project: str | None, entries: list[_Entry], starts: list[datetime], known: _Known
) -> list[Finding]:
    covered: set[str] = set()
    mentions: dict[str, list[_Entry]] = defaultdict(list)
    for entry in entries:
        memory = entry.memory
        if memory.type in COVERING_TYPES or "consolidated" in memory.tags:
            covered |= entry.names
            continue
        for name in entry.names:
            mentions[name].append(entry)
    candidates = []
    for name, found in mentions.items():
        if name in covered or not theme_worthy(name):
            continue
        sessions = {e.session for e in found}
        if len(sessions) < MIN_THEME_SESSIONS or _key("theme", project, name) in known.keys:
            continue
        candidates.append((-len(sessions), -len(found), name, found))
    candidates.sort(key=lambda c: c[:3])
    return [
        _theme_finding(project, name, found, starts)
        for _, _, name, found in candidates[: known.room("theme", project)]
    ]


def _theme_finding(
    project: str | None, name: str, found: list[_Entry], starts: list[datetime]
) -> Finding:
    sessions = sorted({e.session for e in found})
    sources = [e.memory for e in found[:MAX_SOURCES]]  # entries are oldest first
    first, last = found[0].at.date().isoformat(), found[-1].at.date().isoformat()
    title = _clip(f"Recurring theme: `{name}`")
    intro = (
        f"`{name}` came up in {len(sessions)} work sessions from {first} to {last} "
        f"({len(found)} memories). What they say:"
    )
    content = _draft(title, intro, sources)
    where = f" of {project}" if project else ""
    return Finding(
        op=OP,
        kind="theme",
        summary=f"`{name}` came up in {len(sessions)} work sessions{where} and no "
        f"convention, pattern or lesson covers it: draft: {title}",
        memory_ids=[m.id for m in sources],
        options=THEME_OPTIONS,
        recommended="create",
        detail={
            "key": _key("theme", project, name),
            "theme": name,
            "project": project,
            "sessions": len(sessions),
            "session_starts": [starts[s].isoformat() for s in sessions[:MAX_SOURCES]],
            "mentions": len(found),
            "link_kind": "related",
            "memory": _memory_fields("pattern", title, content, project, sources),
        },
    )


# -- lessons --------------------------------------------------------------------------


def _lessons(
    project: str | None,
    entries: list[_Entry],
    lessons: list[Memory],
    linked: set[str],
    uses: Counter[str],
    known: _Known,
) -> list[Finding]:
    evidence: dict[str, list[_Entry]] = defaultdict(list)  # by code name or file
    for entry in entries:
        if entry.memory.type in EVIDENCE_TYPES:
            for key in _evidence_keys(entry):
                evidence[key].append(entry)
    quoted = [_normal(f"{m.title} {m.content}") for m in lessons]
    candidates = []
    for entry in entries:
        decision = entry.memory
        if decision.type is not MemoryType.DECISION or decision.id in linked:
            continue
        if _key("lesson", decision.id) in known.keys:
            continue
        later: dict[str, _Entry] = {}
        by_name: set[str] = set()  # those that share a code name (not only a file)
        shared: set[str] = set()  # the names and files they share with it
        for key in _evidence_keys(entry):
            for other in evidence.get(key, ()):
                if other.at > entry.at:
                    later[other.memory.id] = other
                    shared.add(key)
                    if key.startswith("name:"):
                        by_name.add(other.memory.id)
        used = uses.get(decision.id, 0)
        if len(later) < MIN_LESSON_EVIDENCE and used < MIN_LESSON_USES:
            continue
        if not by_name and used < MIN_LESSON_USES:
            continue  # a busy file alone ties unrelated pitfalls to a decision
        title = _normal(decision.title.rstrip("."))
        if title and any(title in text for text in quoted):
            continue
        followed = sorted(later.values(), key=lambda e: (e.at, e.memory.id))
        rank = (-len(by_name), -len(followed), -used, entry.at, decision.id)
        about = sorted(shared, key=lambda k: (not k.startswith("name:"), k))
        candidates.append((rank, decision, [e.memory for e in followed], about, used))
    candidates.sort(key=lambda c: c[0])
    return [
        _lesson_finding(project, decision, followed, about, used)
        for _, decision, followed, about, used in candidates[: known.room("lesson", project)]
    ]


def _evidence_keys(entry: _Entry) -> Iterable[str]:
    """What ties a decision to a pitfall or fix: code names, and exact files (a glob
    such as `src/**` is about too much to tie anything)."""
    for name in entry.names:
        if theme_worthy(name):
            yield "name:" + name
    for ref in entry.memory.file_refs:
        if not any(c in ref for c in "*?[") and not ref.endswith("/"):
            yield "file:" + ref


def _lesson_finding(
    project: str | None, decision: Memory, followed: list[Memory], about: list[str], used: int
) -> Finding:
    sources = [decision, *followed[: MAX_SOURCES - 1]]
    title = _clip(f"Lesson: {decision.title.rstrip('.')}")
    why = []
    if followed:
        shared = ", ".join(_shown(k) for k in about[:6])
        why.append(f"{len(followed)} later pitfalls and fixes are about it ({shared})")
    if used:
        why.append(f"it was cited or used {used} times")
    intro = (
        f"Decision ({decision.id}): {decision.title.rstrip('.')}. "
        f"{derived_summary(decision, 200)}\n\nSince then, {' and '.join(why)}."
    )
    if followed:
        intro += " What happened after it:"
    content = _draft(title, intro, followed[: MAX_SOURCES - 1], also=[decision])
    return Finding(
        op=OP,
        kind="lesson",
        summary=f"Decision {decision.id} ({decision.title}): {' and '.join(why)}, and no "
        f"lesson records it yet: draft: {title}",
        memory_ids=[m.id for m in sources],
        options=LESSON_OPTIONS,
        recommended="create",
        detail={
            "key": _key("lesson", decision.id),
            "project": project,
            "decision": decision.id,
            "followed_by": [m.id for m in followed],
            "shared": [k.split(":", 1)[1] for k in about],
            "uses": used,
            "link_kind": "related",
            "memory": _memory_fields("lesson", title, content, project, sources),
        },
    )


# -- todos ----------------------------------------------------------------------------


def _todos(
    project: str | None, entries: list[_Entry], total_sessions: int, known: _Known
) -> list[Finding]:
    """Todos written 5+ work sessions ago, oldest first."""
    findings: list[Finding] = []
    room = known.room("todo", project)
    for entry in entries:
        if len(findings) >= room:
            break
        memory = entry.memory
        ago = total_sessions - 1 - entry.session  # work sessions since the one it came from
        if ago < MIN_TODO_SESSIONS or _key("todo", memory.id) in known.keys:
            continue
        if "consolidated" in memory.tags:
            continue  # a summary quoting a todo: the todo itself is proposed
        marker = todo_marker(memory)
        if marker is None:
            continue
        findings.append(
            Finding(
                op=OP,
                kind="todo",
                summary=f"{memory.id} ({memory.title}) is a todo from {ago} work sessions "
                "ago: still to do?",
                memory_ids=[memory.id],
                options=TODO_OPTIONS,
                recommended="skip",
                detail={
                    "key": _key("todo", memory.id),
                    "project": project,
                    "marker": marker,
                    "sessions_ago": ago,
                    "created_at": memory.created_at,
                },
            )
        )
    return findings


CONTEXT_TODO_OPTIONS = [
    Option("keep", "Still to do", "it is still pending; do not ask about it again"),
    Option("drop", "Done or dropped", "remove it from the project context (a new snapshot)"),
    Option("skip", "Skip", "decide later; the finding stays open"),
]


def _context_todos(
    store: MemoryStore,
    starts: list[datetime],
    now: datetime,
    known: _Known,
    made: list[Finding],
) -> list[Finding]:
    """Todos of saved project contexts that every snapshot since the one of 5+ work
    sessions ago has listed (the longest-standing first)."""
    from services.knowledge.project_context import history, projects

    findings: list[Finding] = []
    for project in projects(store):
        entries = [e for e in history(store, project) if parse_time(e.saved_at) <= now]
        if not entries:
            continue
        room = known.room("todo", project) - sum(
            1 for f in made if f.kind == "todo" and f.detail.get("project") == project
        )
        candidates = []
        for todo in entries[-1].todos:
            first = len(entries) - 1
            while first > 0 and todo in entries[first - 1].todos:
                first -= 1
            since = parse_time(entries[first].saved_at)
            ago = len(starts) - 1 - max(0, bisect.bisect_right(starts, since) - 1)
            key = _key("context-todo", project, todo)
            if ago >= MIN_TODO_SESSIONS and key not in known.keys:
                candidates.append((since, todo, ago, len(entries) - first, key))
        for since, todo, ago, snapshots, key in sorted(candidates)[: max(0, room)]:
            findings.append(
                Finding(
                    op=OP,
                    kind="todo",
                    summary=f"{todo!r} has been on the todo list of the {project} context for "
                    f"{ago} work sessions (since {since.date().isoformat()}): still to do?",
                    memory_ids=[],
                    options=CONTEXT_TODO_OPTIONS,
                    recommended="skip",
                    detail={
                        "key": key,
                        "project": project,
                        "context_todo": todo,
                        "since": since.isoformat(),
                        "sessions_ago": ago,
                        "snapshots": snapshots,
                    },
                    id="f-" + sha256_hex(key, 12),
                )
            )
    return findings


# -- drafts ---------------------------------------------------------------------------


def _draft(title: str, intro: str, listed: list[Memory], also: Iterable[Memory] = ()) -> str:
    """`intro`, a line per source, then every key fact of the sources (and `also`) that
    the text does not state yet."""
    lines = [intro]
    lines.extend(f"- {m.title.rstrip('.')}: {derived_summary(m, 160)}" for m in listed[:MAX_LISTED])
    if len(listed) > MAX_LISTED:
        lines.append(f"- and {len(listed) - MAX_LISTED} more.")
    content = "\n".join(lines)
    missing = missing_facts(f"{title} {content}", [*also, *listed])
    if missing:
        content += "\n\nKey facts: " + "; ".join(missing) + "."
    return content


def _memory_fields(
    type_: str, title: str, content: str, project: str | None, sources: list[Memory]
) -> dict[str, Any]:
    """The fields of the drafted memory, as `MemoryService.add` takes them."""
    tags = Counter(t for m in sources for t in m.tags if t not in DRAFT_TAGS)
    refs = Counter(r for m in sources for r in m.file_refs)
    return {
        "type": type_,
        "title": title,
        "content": content,
        "project": project,
        "tags": [*DRAFT_TAGS, *_top(tags, 5)],
        "file_refs": _top(refs, 5),
        "confidence": DRAFT_CONFIDENCE,
    }


def _shown(key: str) -> str:
    kind, value = key.split(":", 1)
    return f"`{value}`" if kind == "name" else value


def _top(counts: Counter[str], limit: int) -> list[str]:
    return [k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def _key(kind: str, *parts: str | None) -> str:
    return json.dumps([kind, *parts])


def _clip(title: str) -> str:
    if len(title) <= MAX_TITLE_CHARS:
        return title
    return title[: MAX_TITLE_CHARS - 1].rstrip() + "…"


def _normal(text: str) -> str:
    return " ".join(text.lower().split())
