"""Values a note says moved: "changed the slash redirect from 302 to 307", "MSRV went
from 1.31 to 1.56", whatever the thing is called.

The cues read a change of value when they know the attribute (a timeout, a runtime
version, a size). People write the same form about anything ("the retry budget went
from 3 to 5", "the redirect from 302 to 307"), and the attribute vocabulary cannot list
it all. A later note that moves a value *from* one the earlier note states *to* one the
earlier does not, in a sentence sharing at least two subject words with the earlier
note, replaces it: over eight development sets and corpus-2k, every such pair (10) is a
labelled supersession and none is anything else; with one shared word, corpus-2k's
notes about other functions ("minutes", "rate") came in (14 false against 10 true).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.text.change_wording import release_value
from services.text.words import STOPWORDS
from services.text.words import sentences as split_sentences

_UNIT = r"(?:ms|s|m|h|d|mb|kb|gb|mib|kib|gib|%|x)"
_VALUE = r"`?v?(\d+(?:\.\d+)*)\s?" + _UNIT + r"?`?"
_MOVE = re.compile(rf"\bfrom\s+{_VALUE}\s+(?:to|->|→)\s+{_VALUE}", re.IGNORECASE)
_STATED = re.compile(rf"(?<![\w.])v?(\d+(?:\.\d+)*)(?:\s?{_UNIT})?(?![\w.]*\w)", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_MOVE_WORDS = frozenset({"from", "to"})
SHARED_WORDS = 2


@dataclass(frozen=True)
class Move:
    old: str
    new: str
    about: frozenset[str]  # the sentence's subject words


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text) if w not in STOPWORDS) - _MOVE_WORDS


def stated(title: str, content: str) -> frozenset[str]:
    """The values and subject words a note says."""
    text = f"{title}. {content}".lower()
    return frozenset(release_value(v) for v in _STATED.findall(text)) | _words(text)


def moves(content: str) -> tuple[Move, ...]:
    """The "from X to Y" value moves of a note's sentences."""
    found = []
    for sentence in split_sentences(content.lower()):
        for match in _MOVE.finditer(sentence):
            old, new = release_value(match.group(1)), release_value(match.group(2))
            if old != new:
                found.append(Move(old, new, _words(sentence)))
    return tuple(found)


def moved_value(
    earlier_said: frozenset[str], later_moves: tuple[Move, ...]
) -> dict[str, str] | None:
    """The move of the later note that replaces a value the earlier one states, if any."""
    for move in later_moves:
        if move.old not in earlier_said or move.new in earlier_said:
            continue
        shared = move.about & earlier_said
        if len(shared) >= SHARED_WORDS:
            return {"about": " ".join(sorted(shared)[:3]), "a": move.old, "b": move.new}
    return None
