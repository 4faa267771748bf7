"""Reading resolved dates out: the absolute date(s) of a resolution, a text with each
relative phrase followed by its date ("yesterday (2026-06-05)"), and recognising the
questions that ask about time ("when did…", "how long ago…", "which day…")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

from services.memory import Memory
from services.text.dates import TimeRef


def describe(ref: TimeRef) -> str:
    """The absolute date(s) of a resolution: "2026-06-05", "2026-06-01 to 2026-06-07"."""
    if ref.resolved_end is None or ref.resolved_end == ref.resolved:
        return ref.resolved.isoformat()
    return f"{ref.resolved.isoformat()} to {ref.resolved_end.isoformat()}"


def with_dates(content: str, times: Iterable[TimeRef]) -> str:
    """The content with each phrase followed by its date: "yesterday (2026-06-05)"."""
    out: list[str] = []
    at = 0
    for ref in sorted(times, key=lambda r: r.start):
        if ref.start < at or content[ref.start : ref.end] != ref.phrase:
            continue  # stale or overlapping: leave the text as it is
        label = f" ({describe(ref)})"
        if content.startswith(label, ref.end):
            continue  # already dated (text shown twice goes through here twice)
        out.append(content[at : ref.end])
        out.append(label)
        at = ref.end
    out.append(content[at:])
    return "".join(out)


def with_phrases_dated(text: str, times: Iterable[TimeRef]) -> str:
    """`text` (a title or summary written from the content) with each phrase the
    content's resolutions name followed by its date, where it stands in `text` as a
    whole phrase and is not dated yet."""
    for ref in times:
        pattern = re.compile(rf"(?<!\w){re.escape(ref.phrase)}(?!\w)(?! \()", re.IGNORECASE)
        found = pattern.search(text)
        if found is not None:
            text = f"{text[: found.end()]} ({describe(ref)}){text[found.end() :]}"
    return text


class _HoldsMemory(Protocol):
    @property
    def memory(self) -> Memory: ...


Holder = TypeVar("Holder", bound=_HoldsMemory)  # a search result, a context candidate…


def with_memory_dates(
    items: Sequence[Holder], times: Mapping[str, Sequence[TimeRef]]
) -> list[Holder]:
    """The items (dataclasses holding a `memory`), each memory's relative phrases
    followed by their resolved dates, for reading; the stored memories are unchanged."""
    dated: list[Holder] = []
    for item in items:
        found = times.get(item.memory.id)
        if found:
            memory = item.memory
            # the title and the shorter forms repeat the content's words ("Released 3.1.6
            # yesterday."): the context shows them too
            shown = replace(
                memory,
                content=with_dates(memory.content, found),
                title=with_phrases_dated(memory.title, found),
                summary=memory.summary and with_phrases_dated(memory.summary, found),
                compressed=memory.compressed and with_phrases_dated(memory.compressed, found),
                index_line=memory.index_line and with_phrases_dated(memory.index_line, found),
            )
            item = replace(item, memory=shown)  # type: ignore[type-var]
        dated.append(item)
    return dated


_TEMPORAL_QUESTION = re.compile(
    # "when" opening the question, also after a hedge ("roughly when…", "any idea
    # when…"); elsewhere "when" is a conjunction ("what happens when the token expires").
    r"^\s*(?:and\s+|so\s+|but\s+)?(?:(?:roughly|about|approximately|around|exactly|"
    r"any\s+idea|do\s+you\s+(?:know|remember)|remind\s+me)\s+)?"
    r"(?:when\b|since\s+when\b|until\s+when\b|by\s+when\b)"
    r"|\b(?:what|which)\s+(?:date|dates|day|days|weekday|week|weeks|month|year|period|"
    r"time\s+frame|timeframe|time\s+span|stretch\s+of\s+time)\b"
    r"|\bon\s+what\s+(?:date|day)\b"
    r"|\bhow\s+long\s+ago\b"
    r"|\bhow\s+many\s+(?:days|weeks|months)\s+(?:ago|since|until|before|after|have)\b"
    r"|\bhow\s+long\s+(?:has\s+it\s+been|since)\b"
    r"|\bwhat\s+time\s+(?:did|was|were|is|will)\b"
    r"|\b(?:date|day)\s+(?:of|when)\b",
    re.IGNORECASE,
)
_HOW_LONG = re.compile(
    r"\bhow\s+long\s+ago\b|\bhow\s+many\s+(?:days|weeks|months)\b|\bhow\s+long\s+(?:has|since)\b",
    re.IGNORECASE,
)
_WEEKDAY_QUESTION = re.compile(r"\bwhat\s+day\s+of\s+the\s+week\b|\bwhich\s+weekday\b", re.I)


def is_temporal_question(text: str) -> bool:
    """Whether a question asks about time: "when did…", "what date…", "how long ago…",
    "what day…", "which day…", "since when…"."""
    return bool(_TEMPORAL_QUESTION.search(text))


def question_kind(text: str) -> str:
    """ "how_long" (days between then and now), "weekday", "date" or "" (not temporal)."""
    if _HOW_LONG.search(text):
        return "how_long"
    if _WEEKDAY_QUESTION.search(text):
        return "weekday"
    return "date" if is_temporal_question(text) else ""
