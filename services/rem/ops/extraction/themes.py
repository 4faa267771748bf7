"""Theme suggestions: a code name that comes up in memories of 3+ work sessions of a
project, which no convention, pattern, lesson or consolidated summary of it mentions
yet; the finding drafts a pattern memory."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from services.rem.ops.extraction.common import MAX_SOURCES, OP, Entry, Known, finding_key
from services.rem.ops.extraction.drafts import clip_title, draft, memory_fields
from services.storage.findings import Finding, Option
from services.types import MemoryType

MIN_THEME_SESSIONS = 3
COVERING_TYPES = frozenset({MemoryType.CONVENTION, MemoryType.PATTERN, MemoryType.LESSON})

# A theme is a name, not a sentence: error lines and long commands are left out, and so
# are bare numbers and names of anything's members (`.get()`).
MIN_THEME_CHARS = 3
MAX_THEME_CHARS = 60
MAX_THEME_WORDS = 4


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


def theme_findings(
    project: str | None, entries: list[Entry], starts: list[datetime], known: Known
) -> list[Finding]:
    covered: set[str] = set()
    mentions: dict[str, list[Entry]] = defaultdict(list)
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
        if len(sessions) < MIN_THEME_SESSIONS or finding_key("theme", project, name) in known.keys:
            continue
        candidates.append((-len(sessions), -len(found), name, found))
    candidates.sort(key=lambda c: c[:3])
    return [
        theme_finding(project, name, found, starts)
        for _, _, name, found in candidates[: known.room("theme", project)]
    ]


def theme_finding(
    project: str | None, name: str, found: list[Entry], starts: list[datetime]
) -> Finding:
    sessions = sorted({e.session for e in found})
    sources = [e.memory for e in found[:MAX_SOURCES]]  # entries are oldest first
    first, last = found[0].at.date().isoformat(), found[-1].at.date().isoformat()
    title = clip_title(f"Recurring theme: `{name}`")
    intro = (
        f"`{name}` came up in {len(sessions)} work sessions from {first} to {last} "
        f"({len(found)} memories). What they say:"
    )
    content = draft(title, intro, sources)
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
            "key": finding_key("theme", project, name),
            "theme": name,
            "project": project,
            "sessions": len(sessions),
            "session_starts": [starts[s].isoformat() for s in sessions[:MAX_SOURCES]],
            "mentions": len(found),
            "link_kind": "related",
            "memory": memory_fields("pattern", title, content, project, sources),
        },
    )
