"""Todo suggestions: a todo memory written 5+ work sessions ago, and a todo that a
saved project context has listed through the snapshots of 5+ work sessions. The cycle
cannot know whether the work was done, so "skip" is recommended."""

from __future__ import annotations

import bisect
import re
from datetime import datetime

from services.memory import Memory, parse_time
from services.rem.ops.extraction.common import OP, Entry, Known, finding_key
from services.storage.findings import Finding, Option
from services.storage.memories import MemoryStore
from services.text.words import sha256_hex, without_code

MIN_TODO_SESSIONS = 5
TODO_TAGS = frozenset({"todo", "to-do", "fixme"})

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


TODO_OPTIONS = [
    Option("keep", "Still to do", "it is still pending; do not ask about it again"),
    Option(
        "archive",
        "Done or dropped",
        "archive it (never deleted; searchable with --mode exhaustive)",
    ),
    Option("skip", "Skip", "decide later; the finding stays open"),
]


def todo_findings(
    project: str | None, entries: list[Entry], total_sessions: int, known: Known
) -> list[Finding]:
    """Todos written 5+ work sessions ago, oldest first."""
    findings: list[Finding] = []
    room = known.room("todo", project)
    for entry in entries:
        if len(findings) >= room:
            break
        memory = entry.memory
        ago = total_sessions - 1 - entry.session  # work sessions since the one it came from
        if ago < MIN_TODO_SESSIONS or finding_key("todo", memory.id) in known.keys:
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
                    "key": finding_key("todo", memory.id),
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


def context_todo_findings(
    store: MemoryStore,
    starts: list[datetime],
    now: datetime,
    known: Known,
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
            key = finding_key("context-todo", project, todo)
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
