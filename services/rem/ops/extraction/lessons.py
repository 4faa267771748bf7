"""Lesson suggestions: a current decision that later pitfalls or fixes of its project
are about, or that was cited or used often, and that no lesson records yet; the finding
drafts a lesson."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from services.context.rendering import derived_summary
from services.memory import Memory
from services.rem.ops.extraction.common import MAX_SOURCES, OP, Entry, Known, finding_key
from services.rem.ops.extraction.drafts import clip_title, draft, memory_fields, normalised
from services.rem.ops.extraction.themes import theme_worthy
from services.storage.findings import Finding, Option
from services.types import MemoryType

MIN_LESSON_EVIDENCE = 2  # later pitfalls/fixes about the decision
MIN_LESSON_USES = 3  # or cited/used this often
EVIDENCE_TYPES = frozenset({MemoryType.PITFALL, MemoryType.FIX})

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


def lesson_findings(
    project: str | None,
    entries: list[Entry],
    lessons: list[Memory],
    linked: set[str],
    uses: Counter[str],
    known: Known,
) -> list[Finding]:
    evidence: dict[str, list[Entry]] = defaultdict(list)  # by code name or file
    for entry in entries:
        if entry.memory.type in EVIDENCE_TYPES:
            for key in evidence_keys(entry):
                evidence[key].append(entry)
    quoted = [normalised(f"{m.title} {m.content}") for m in lessons]
    candidates = []
    for entry in entries:
        decision = entry.memory
        if decision.type is not MemoryType.DECISION or decision.id in linked:
            continue
        if finding_key("lesson", decision.id) in known.keys:
            continue
        later: dict[str, Entry] = {}
        by_name: set[str] = set()  # those that share a code name (not only a file)
        shared: set[str] = set()  # the names and files they share with it
        for key in evidence_keys(entry):
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
        title = normalised(decision.title.rstrip("."))
        if title and any(title in text for text in quoted):
            continue
        followed = sorted(later.values(), key=lambda e: (e.at, e.memory.id))
        rank = (-len(by_name), -len(followed), -used, entry.at, decision.id)
        about = sorted(shared, key=lambda k: (not k.startswith("name:"), k))
        candidates.append((rank, decision, [e.memory for e in followed], about, used))
    candidates.sort(key=lambda c: c[0])
    return [
        lesson_finding(project, decision, followed, about, used)
        for _, decision, followed, about, used in candidates[: known.room("lesson", project)]
    ]


def evidence_keys(entry: Entry) -> Iterable[str]:
    """What ties a decision to a pitfall or fix: code names, and exact files (a glob
    such as `src/**` is about too much to tie anything)."""
    for name in entry.names:
        if theme_worthy(name):
            yield "name:" + name
    for ref in entry.memory.file_refs:
        if not any(c in ref for c in "*?[") and not ref.endswith("/"):
            yield "file:" + ref


def lesson_finding(
    project: str | None, decision: Memory, followed: list[Memory], about: list[str], used: int
) -> Finding:
    sources = [decision, *followed[: MAX_SOURCES - 1]]
    title = clip_title(f"Lesson: {decision.title.rstrip('.')}")
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
    content = draft(title, intro, followed[: MAX_SOURCES - 1], also=[decision])
    return Finding(
        op=OP,
        kind="lesson",
        summary=f"Decision {decision.id} ({decision.title}): {' and '.join(why)}, and no "
        f"lesson records it yet: draft: {title}",
        memory_ids=[m.id for m in sources],
        options=LESSON_OPTIONS,
        recommended="create",
        detail={
            "key": finding_key("lesson", decision.id),
            "project": project,
            "decision": decision.id,
            "followed_by": [m.id for m in followed],
            "shared": [k.split(":", 1)[1] for k in about],
            "uses": used,
            "link_kind": "related",
            "memory": memory_fields("lesson", title, content, project, sources),
        },
    )


def _shown(key: str) -> str:
    kind, value = key.split(":", 1)
    return f"`{value}`" if kind == "name" else value
