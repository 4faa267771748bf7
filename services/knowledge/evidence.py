"""How much a note shows what it says, rather than recalls or relays it.

Of two notes that disagree with nothing saying one replaced the other, the one that
shows more (quoted code, a pasted block) is likelier right than one that says "afaik"
or "if I remember". A later note that passes something on ("FYI", "heads-up", "seems")
against an earlier one that shows more of its source does not replace it, whatever
change words it uses ("FYI the cache keys on mtime now" after the note quoting
`--cache-strategy content` as the default): on the eleven hand-written sets every such
labelled pair has the earlier note right (14 of 14, in 7 sets; no compatible pair reads
so). Fourth-dev: holder right 24 → 25 of 28, scoped MRR 0.846 → 0.872; the rest
unchanged."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from services.text.words import UNSURE_PHRASES, code_spans

RECALLED = re.compile(UNSURE_PHRASES + r"|\bif i recall\b", re.IGNORECASE)
RELAYED = re.compile(UNSURE_PHRASES + r"|\bfyi\b|\bseems?\b|\bheads[- ]up\b", re.IGNORECASE)


def evidence_of(content: str) -> int:
    """Code a note quotes (up to three spans, a fenced block counting as one more), less
    two for wording that recalls or relays it ("afaik", "remember", "reviewer note")."""
    shown = min(len(code_spans(content, 2, 200)), 3) + (1 if "```" in content else 0)
    return shown - 2 * min(len(RECALLED.findall(content)), 1)


class Shows(Protocol):
    """What a note shows and whether it relays it (a cue `Reading`, or `shown_by`)."""

    @property
    def relays(self) -> bool: ...

    @property
    def evidence(self) -> int: ...


@dataclass(frozen=True)
class Shown:
    relays: bool
    evidence: int


def relays(title: str, content: str) -> bool:
    """Whether a note is worded as passing something on ("FYI", "heads-up", "afaik")."""
    return RELAYED.search(f"{title}\n{content}") is not None


def shown_by(title: str, content: str) -> Shown:
    return Shown(relays(title, content), evidence_of(content))


def relayed_over(earlier: Shows, later: Shows) -> bool:
    """Whether the later of two notes relays what it says where the earlier does not,
    and shows less of it: then the earlier holds, and the later replaces nothing."""
    return later.relays and not earlier.relays and earlier.evidence > later.evidence
