"""Drafting the memory a suggestion proposes: a line per source, every key fact of the
sources the text does not state yet, and the fields `MemoryService.add` takes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from services.context.rendering import derived_summary
from services.memory import MAX_TITLE_CHARS, Memory
from services.rem.ops.clusters import missing_facts

MAX_LISTED = 8  # sources quoted line by line in a draft
DRAFT_TAGS = ["extracted", "consolidated"]
DRAFT_CONFIDENCE = 0.6


def draft(title: str, intro: str, listed: list[Memory], also: Iterable[Memory] = ()) -> str:
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


def memory_fields(
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


def _top(counts: Counter[str], limit: int) -> list[str]:
    return [k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def clip_title(title: str) -> str:
    if len(title) <= MAX_TITLE_CHARS:
        return title
    return title[: MAX_TITLE_CHARS - 1].rstrip() + "…"


def normalised(text: str) -> str:
    return " ".join(text.lower().split())
