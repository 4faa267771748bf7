"""Restatements: two notes that record one thing in other words, often as other types.

People record one incident twice: as a pitfall when it bites and as a lesson or a fix
later, or a convention once and a workflow step another week. The two share little
wording, so the duplicate scorer fitted on real-dev (where 24 of 25 duplicates are of
one type) finds 0.2–0.3 of them on the sets other people wrote, where about half the
duplicate pairs cross types. What those pairs do share is the specific: the same
files, the same rare tokens (an error's key words, a flag, a path; fenced code
included), and they are both about something that went wrong or both about a rule.

`restatement_features` adds those readings to a pair's `pair_features`, and
`restatement_probability` scores them with weights fitted on every hand-written
development set at once (`bench/fit_restatements.py`, leave-one-set-out folds in
`restatement_weights`). The duplicates operation proposes a pair this scorer or the
duplicate scorer claims. Where the conflict scorer also fires, the surer of the two
decides (`conflict_scorer.restatement_claims`), in the REM scan and the duplicates
operation, which read a whole project's vocabulary; the write-time replacement, which
reads a memory and its few neighbours, keeps the duplicate scorer alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from functools import cached_property

from services.knowledge import restatement_weights
from services.knowledge.conflict_scorer import logistic
from services.knowledge.pair_features import jaccard
from services.memory import Memory
from services.types import MemoryType

__all__ = [
    "EXTRA_FEATURES",
    "LEFT_OUT",
    "RESTATEMENT_THRESHOLD",
    "Vocabulary",
    "lengths_apart",
    "restatement_features",
    "restatement_of",
    "restatement_probability",
]

RESTATEMENT_THRESHOLD = restatement_weights.THRESHOLD
# A restatement is about as long as what it restates: over the sixteen labelled sets no
# duplicate pair's longer note is three times the other's. A pasted log and the pitfall
# it shows are not one fact told twice, however alike their words (a new user's 2 MB log
# was offered to merge with a pitfall at 0.99).
LENGTH_RATIO = 8.0
PASTE_CHARS = 2_000


def lengths_apart(a: Memory, b: Memory) -> bool:
    """One is a paste (`PASTE_CHARS` or more) over `LENGTH_RATIO` times the other's length."""
    short, long = sorted((len(a.content), len(b.content)))
    return long >= PASTE_CHARS and long > LENGTH_RATIO * max(short, 1)


# Pair features the scorer does not read: how far apart two notes were written. The
# sets' authors dated their restatements months apart, and a scorer fitted on that took
# a pitfall and its lesson written the same day for two things; people restate the same
# day too (two sessions, two assistants). Out of fold it costs recall 0.347 → 0.337.
LEFT_OUT = ("gap_days", "same_day")
EXTRA_FEATURES = (
    "files_jaccard",
    "files_shared",
    "both_problem",
    "both_rule",
    "rare_shared",
    "idf_jaccard",
)
# Types that record something that went wrong and what was done about it; the rest
# state how things are or should be done.
PROBLEM_TYPES = frozenset(
    {MemoryType.PITFALL, MemoryType.FIX, MemoryType.EPISODE, MemoryType.LESSON}
)
RARE_DOCUMENTS = 3  # a token in at most this many of the project's notes is rare
RARE_CAP = 10
READ_CHARS = 4000
_TOKEN = re.compile(r"[a-z0-9_][a-z0-9_.\-/]{2,}")


def tokens(memory: Memory) -> frozenset[str]:
    """The lower-case words, names, paths and numbers of a memory's title and content,
    fenced code included (an error's text is what two tellings of it share)."""
    text = f"{memory.title} {memory.content[:READ_CHARS]}".lower()
    found = {t.rstrip(".-/") for t in _TOKEN.findall(text)}
    found.discard("")
    return frozenset(found)


class Vocabulary:
    """How many of a project's memories use each token."""

    def __init__(self, memories: Iterable[Memory]) -> None:
        self._tokens = {m.id: tokens(m) for m in memories}

    @cached_property
    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for found in self._tokens.values():
            for token in found:
                counts[token] = counts.get(token, 0) + 1
        return counts

    def tokens_of(self, memory: Memory) -> frozenset[str]:
        if memory.id not in self._tokens:
            self._tokens[memory.id] = tokens(memory)
        return self._tokens[memory.id]

    def idf(self, token: str) -> float:
        documents = max(len(self._tokens), 1)
        return math.log((1 + documents) / (1 + self.counts.get(token, 0))) + 0.1


def restatement_features(a: Memory, b: Memory, vocabulary: Vocabulary) -> dict[str, float]:
    """The readings the restatement scorer adds to a pair's `pair_features`."""
    files_a, files_b = frozenset(a.file_refs), frozenset(b.file_refs)
    tokens_a, tokens_b = vocabulary.tokens_of(a), vocabulary.tokens_of(b)
    shared = tokens_a & tokens_b
    rare = sum(1 for t in shared if vocabulary.counts.get(t, 0) <= RARE_DOCUMENTS)
    everything = sum(vocabulary.idf(t) for t in tokens_a | tokens_b)
    problem_a, problem_b = a.type in PROBLEM_TYPES, b.type in PROBLEM_TYPES
    return {
        "files_jaccard": jaccard(files_a, files_b),
        "files_shared": float(bool(files_a & files_b)),
        "both_problem": float(problem_a and problem_b),
        "both_rule": float(not problem_a and not problem_b),
        "rare_shared": float(min(rare, RARE_CAP)),
        "idf_jaccard": sum(vocabulary.idf(t) for t in shared) / everything if everything else 0.0,
    }


def restatement_probability(features: Mapping[str, float]) -> float:
    """The probability that the pair restates one thing (propose at
    `RESTATEMENT_THRESHOLD`); `features` holds the pair features and the
    `restatement_features`. Two notes giving one quantity different values never do."""
    if features.get("quantity_clash", 0.0):
        return 0.0
    return logistic(features, restatement_weights.WEIGHTS, restatement_weights.BIAS)


def restatement_of(
    a: Memory, b: Memory, features: Mapping[str, float], vocabulary: Vocabulary
) -> float:
    """The restatement scorer's probability for two memories whose `pair_features` are
    `features`, read against their project's `vocabulary`."""
    return restatement_probability({**features, **restatement_features(a, b, vocabulary)})
