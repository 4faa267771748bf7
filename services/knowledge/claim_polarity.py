"""Which terms a note says plainly and which it says only in negated clauses, so two
notes that claim opposite things of one subject can be told apart from two that agree:
"single-command tools never get a `completion` command" against "single-command
programs now get the `completion` command too".

A note is read clause by clause. Each term (a code name, or a content word reduced to
the keyword search's stem, so "validate", "validated" and "validates" meet) is said
either in a clause with a negation ("doesn't", "no need to", "never", "without") or in a
plain one. A term the two notes share that one only negates and the other only affirms
is a clash.

The reading is crude and alone proves nothing (a paraphrase may say "don't use X" where
the first said "X is ignored"); it is one piece of evidence that a pair already judged a
change also disagrees with what the earlier note said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.storage.query_terms import stem
from services.text.words import STOPWORDS, without_fences

# Clause ends: sentence ends, and the joints people put between two claims.
_CLAUSE = re.compile(r"[.!?;:,()\n]+\s*|\s+[-—–]+\s+|\s+(?:but|unless|otherwise|so|whereas)\s+")
_NEGATED = re.compile(
    r"\bnot\b|\bnever\b|\bno\b|\bnor\b|\bwithout\b|n't\b|\bcannot\b|\bnothing\b|\bnone\b|"
    r"\bno need\b|\bneedn'?t\b|"
    # said without a negation word: "autogenerate misses server_default changes" is
    # "doesn't notice" them
    r"\bmiss(?:es|ed)?\b|\bignor(?:es|ed)\b|\bfails? to\b|\black(?:s|ed)?\b",
    re.IGNORECASE,
)
_TERM = re.compile(r"[a-z][a-z0-9_]{3,}")
_SPAN = re.compile(r"`([^`\n]{2,80})`")
# Words that say how a claim is made, not what it is about.
_FRAME_WORDS = frozenset(
    {
        "need", "needs", "needed", "matter", "matters", "default", "defaults", "work",
        "works", "help", "helps", "enough", "just", "also", "even", "still", "really",
        "only", "always", "have", "must", "should", "make", "sure", "thing", "things",
        "mean", "means", "careful", "note", "remember", "afaik", "iirc",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Polarity:
    """A note's terms by the polarity they are said with."""

    negated: frozenset[str]  # terms said only in negated clauses
    affirmed: frozenset[str]  # terms said only in plain clauses


def read_polarity(title: str, content: str) -> Polarity:
    """The polarity of each term of a note (fenced code left out)."""
    text = without_fences(f"{title}. {content}")
    names: dict[str, str] = {}  # placeholder → the code span it stands for

    def keep_whole(match: re.Match[str]) -> str:
        # a span's own punctuation (`SetArgs(nil)`, `a.b`) must not split its clause
        names[f"codespan{len(names)}x"] = match.group(1).strip().lower()
        return f" codespan{len(names) - 1}x "

    text = _SPAN.sub(keep_whole, text)
    negated: set[str] = set()
    affirmed: set[str] = set()
    for clause in _CLAUSE.split(text.lower()):
        if not clause.strip():
            continue
        terms = {name for key, name in names.items() if key in clause or name in clause}
        for word in _TERM.findall(clause):
            if word in names:
                continue
            if word not in STOPWORDS and word not in _FRAME_WORDS and not _NEGATED.match(word):
                terms.add(stem(word))
        (negated if _NEGATED.search(clause) else affirmed).update(terms)
    return Polarity(negated=frozenset(negated - affirmed), affirmed=frozenset(affirmed - negated))


def clashing_terms(a: Polarity, b: Polarity) -> frozenset[str]:
    """The terms one note only negates and the other only affirms."""
    return (a.negated & b.affirmed) | (a.affirmed & b.negated)
