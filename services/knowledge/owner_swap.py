"""Two short notes that say one thing, each of another owner and with its own value:
"The auth service listens on port 8001" / "The billing service listens on port 8002",
"the connect timeout is 5s" / "the read timeout is 30s". Both hold: neither changed
the other, however alike their words.

Read from the notes' word sequences: most of the two is the same words in the same
order, one place swaps a value for a value (numbers, versions, units, on/off) and one
swaps a word for a word in front of the same head word (auth *service* / billing
*service*). A swap of a generic word ("the default timeout", "the new limit") or of a
product together with its version ("Helm 3.12" / "Kustomize 5.0") is a change of the
value, not another owner, and a word only one of them has is said of its own owner
("… on port 8005 now"), unless it negates. An owner may be named by a number or an id
of its own: "Worker 1 owns shard 1" / "Worker 2 owns shard 2" swap one index for another
at every place the two differ, the first of them next to the (singular) head word
that opens the note (`indexed_owners`); a changed value is seldom repeated as a bare index
beside its subject ("30s … 30s" has a unit, "retries 3" counts). Over every labelled
pair of the thirteen hand-written sets and corpus-2k the reading holds of no
supersession or contradiction.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from services.text.words import STOPWORDS, without_fences

__all__ = ["MAX_TOKENS", "indexed_owners", "owners_differ", "swapped_values", "word_sequence"]

MAX_TOKENS = 60  # longer notes say more than one thing: not read
SAME_SHARE = 0.5  # the words in common, in order, over the longer note's
COPY_SHARE = 0.6  # as much for a note to be a copy of another with a value changed
_TOKEN = re.compile(r"[a-z][a-z0-9_\-]*|\d+(?:\.\d+)*[a-z%]*")
_VALUE = re.compile(
    r"v?\d[\w.%]*|ms|s|secs?|seconds?|minutes?|mins?|hours?|days?|[kmg]i?b|"
    r"true|false|on|off|enabled|disabled|yes|no"
)
_INDEX = re.compile(r"\d{1,4}|[a-z]{0,3}-?\d{1,4}[a-z]?")  # 1, 12, a1, eu-1, 3b
INDEX_START = 3  # the first swap within this many words of the start: beside the subject
_NEGATION = frozenset("not no never without nothing none cannot don't doesn't isn't won't".split())
# Words that qualify any owner: a swap of one of these words renames the same thing.
GENERIC = frozenset(
    "default new old current our their global overall main now previous actual real same "
    "other own usual standard whole total max maximum min minimum".split()
)


def word_sequence(text: str) -> tuple[str, ...]:
    """The lower-case words and values of `text` outside fenced code, in order; empty
    for a text longer than `MAX_TOKENS`."""
    found = _TOKEN.findall(" ".join(without_fences(text).split()).lower())
    return tuple(found) if len(found) <= MAX_TOKENS else ()


def _value(token: str) -> bool:
    return bool(_VALUE.fullmatch(token))


def owners_differ(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether the word sequences `a` and `b` say one thing of two owners, each with
    its own value (see the module's docstring)."""
    if not a or not b:
        return False
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    if same / max(len(a), len(b)) < SAME_SHARE:
        return False
    if indexed_owners(a, b, matcher.get_opcodes()):
        return True
    owner_swapped = value_swapped = False
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        left, right = a[i1:i2], b[j1:j2]
        if op != "replace":
            if _NEGATION & {*left, *right}:
                return False  # one says it is not so
            continue  # a word only one of them has ("now", "in dev") is said of its owner
        if all(_value(t) for t in (*left, *right)):
            value_swapped = True
            continue
        if any(_value(t) for t in (*left, *right)):
            if any(not _value(t) for t in left) and any(not _value(t) for t in right):
                return False  # a product and its version swapped together: a value
            if _NEGATION & {*left, *right}:
                return False
            value_swapped = True  # a value, and words only one of them has ("8005 now")
            continue
        words = {t for t in (*left, *right) if t not in STOPWORDS}
        if words & GENERIC or not {*left} - STOPWORDS or not {*right} - STOPWORDS:
            return False
        if i2 >= len(a) or j2 >= len(b) or a[i2] != b[j2] or a[i2] in STOPWORDS:
            return False  # not a qualifier of one head word ("runs on" / "listens on")
        if _one_name(left, right):
            return False  # "dev server" / "development server": one owner named twice
        owner_swapped = True
    return owner_swapped and value_swapped


def _one_name(left: Sequence[str], right: Sequence[str]) -> bool:
    """Whether two swapped words name one thing, one short for the other ("dev" /
    "development", "config" / "configuration")."""
    if len(left) != 1 or len(right) != 1:
        return False
    short, long = sorted((left[0], right[0]), key=len)
    return len(short) >= 3 and long.startswith(short)


def indexed_owners(
    a: tuple[str, ...], b: tuple[str, ...], opcodes: Sequence[tuple[str, int, int, int, int]]
) -> bool:
    """Whether the two differ only where one swaps an index for another, the same swap at
    two places or more, the first beside the head word that opens the note: "worker 1
    owns shard 1" / "worker 2 owns shard 2" are two workers, each with its own shard."""
    swaps = [(a[i1:i2], b[j1:j2], i1) for op, i1, i2, j1, j2 in opcodes if op != "equal"]
    if len(swaps) < 2 or any(len(left) != 1 or len(right) != 1 for left, right, _ in swaps):
        return False
    if len({(left, right) for left, right, _ in swaps}) != 1:
        return False
    (old,), (new,), first = swaps[0]
    opener = a[:first]
    return (
        bool(_INDEX.fullmatch(old) and _INDEX.fullmatch(new))
        and 0 < first < INDEX_START
        and opener[-1] not in STOPWORDS
        and opener[-1] not in GENERIC
        and not _value(opener[-1])
        and not _counted(opener[-1])
    )


def _counted(word: str) -> bool:
    """A plural in front of a number counts ("retries 3"); an owner's name is one of
    many ("worker 3")."""
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


_STATED = re.compile(r"v?\d[\w.%]*|true|false|enabled|disabled")  # no "on", "no": words too
_CHANGE_NEGATION = frozenset({"longer", "anymore"})  # "no longer 8001" names the old one
_OLD_NAMED = _CHANGE_NEGATION | {"was", "from", "instead"}  # "(was 30s)", "from 30s to 60s"


def swapped_values(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, str] | None:
    """(old, new) values when `b` is a copy of `a` (most of its words, in order, none
    replaced by another word) that states values `a` does not: "The billing service
    listens on port 8001" / "The billing service listens on port 8002 now, no longer
    8001" → ("8001", "8002"). Words only one of them has may come with it ("now", "no
    longer 8001"); a negation only as such a change ("no longer"). A copy that keeps every
    value and adds one says more, unless it names the old one ("was", "from"). None
    otherwise, and when the two say it of two owners (`owners_differ`)."""
    if not a or not b:
        return None
    words_a = [t for t in a if not _STATED.fullmatch(t)]
    words_b = [t for t in b if not _STATED.fullmatch(t)]
    values_a = [t for t in a if _STATED.fullmatch(t)]
    new = [t for t in b if _STATED.fullmatch(t) and t not in values_a]
    if not values_a or not new or not words_a:
        return None
    matcher = difflib.SequenceMatcher(a=words_a, b=words_b, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    if same / max(len(words_a), len(words_b)) < COPY_SHARE:
        return None
    if any(op == "replace" for op, *_ in matcher.get_opcodes()):
        return None
    negated = (_NEGATION & set(words_a)) ^ (_NEGATION & set(words_b))
    if negated and not _CHANGE_NEGATION & {*words_a, *words_b}:
        return None
    if all(t in b for t in values_a) and not _OLD_NAMED & set(words_b):
        return None  # every value kept, one added: "10 connections, 5 of them idle"
    if owners_differ(a, b):
        return None
    old = [t for t in values_a if t not in new]
    return " ".join(dict.fromkeys(old)), " ".join(dict.fromkeys(new))
