"""What kind of memory a query asks for, from its wording: "design decisions behind
pdf.py" wants decisions, "what breaks easily in sync.ts" pitfalls and fixes. A small,
explainable prior that the hybrid score adds on top of meaning, words and identifiers."""

from __future__ import annotations

import re

from services.types import MemoryType as T

_INTENTS: tuple[tuple[re.Pattern[str], frozenset[T]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), frozenset(types))
    for pattern, types in (
        (
            r"\b(decisions?|decided|design|architecture|architectural|rationale|why (did|do) we)\b",
            (T.DECISION, T.ARCHITECTURE),
        ),
        (
            r"\b(pitfalls?|gotchas?|breaks?|broken|bugs?|fix(es|ed)?|crash\w*|fail(s|ing|ure)?"
            r"|traceback|exception|error)\b",
            (T.PITFALL, T.FIX),
        ),
        (
            r"\b(conventions?|style|patterns?|idioms?|naming|guidelines?)\b",
            (T.CONVENTION, T.PATTERN),
        ),
        (
            r"\b(how (does|do|is) .{1,60} work|workflow|steps?|procedure|how do (i|we))\b",
            (T.FACT, T.WORKFLOW),
        ),
        (r"\b(lessons?|learned|learnt|retro(spective)?)\b", (T.LESSON,)),
        (r"\b(constraints?|limits?|not allowed|must not|mustn't)\b", (T.CONSTRAINT,)),
        (r"\b(dependenc(y|ies)|librar(y|ies)|packages?)\b", (T.DEPENDENCY,)),
        (r"\b(what happened|incident|outage|postmortem)\b", (T.EPISODE,)),
    )
)


def intended_types(query: str) -> frozenset[T]:
    """The memory types the query's wording asks for (empty when it does not say)."""
    wanted: set[T] = set()
    for pattern, types in _INTENTS:
        if pattern.search(query):
            wanted |= types
    return frozenset(wanted)
