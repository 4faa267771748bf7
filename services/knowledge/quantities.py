"""The quantities a note states, and whether two notes state one quantity differently.

Two notes that restate one fact give its numbers alike ("at most 100 connections" /
`max_connections=100`); two notes that disagree about it do not ("follows at most 30
redirects" / "gives up after 20 redirects"; "`DEFAULT_RETRIES = 0`" / "retries 3 times";
"8 MiB" / "`32 << 20`"). However alike the rest of their words, such a pair is not a
duplicate: it is a change or a mistake, and a merge would lose one of the values.

A quantity is a number with what it counts: the word after it ("30 redirects"), the name
it is assigned to (`DEFAULT_REDIRECT_LIMIT = 30` counts redirect, limit), the words
before a version in its clause ("Go 1.23", "the Python floor is 3.9"), what is repeated
("retries a failed connection 3 times"), or its unit for sizes and durations; how often
something happens ("monthly", "once a week") is a frequency, in days.
Bounds are read as ranges ("Go < 1.24", "1.24+", "at least 3", "≥ 15", "engines: >=20"),
so "Go < 1.24" and "Go 1.23" agree, while two floors of one thing (">=18" / ">=20") are
two different minimums. Two notes clash on a quantity when they count one thing (a word in
common), no value of one fits a value of the other, and neither mentions the other's
number at all (a note that names the old value next to the new one is read by the change
cues, not here). These are readings of wording, never of particular notes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from services.storage.query_terms import stem
from services.text.words import STOPWORDS, without_fences

__all__ = [
    "Quantity",
    "agreeing_counts",
    "agreeing_versions",
    "quantity_clash",
    "read_quantities",
    "version_value",
]

_NUMBER = r"\d+(?:\.\d+)*"
_LOWER = r"(?P<lower>at least|min(?:imum)?|>=|≥|>|over|above|more than)"
_UPPER = r"(?P<upper>at most|max(?:imum)?|<=|≤|<|under|below|less than|fewer than)"
_SIZE_BYTES = {
    "kb": 1e3, "kib": 1024, "mb": 1e6, "mib": 1024**2, "gb": 1e9, "gib": 1024**3,
}  # fmt: skip
_SECONDS = {
    "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hour": 3600, "hours": 3600, "day": 86400, "days": 86400,
}  # fmt: skip
_UNIT = "|".join(sorted({*_SIZE_BYTES, *_SECONDS}, key=len, reverse=True))
# "30 redirects", "8 MiB", "5 s", "3 times" (a bound on a count states the count: "at
# most 30 redirects" says the limit is 30)
_COUNTED = re.compile(
    rf"(?<![\w.])(?P<number>{_NUMBER})(?![\d.])(?:\s*(?P<unit>{_UNIT})\b)?"
    r"(?:\s+(?P<noun>[a-z][a-z-]{2,}))?",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z][a-z_-]{2,}")
_NAME_WORD = re.compile(r"(?<![\w.])[a-z][a-z_-]+")  # "go", "rustc", "requires-python"
# `DEFAULT_REDIRECT_LIMIT = 30`, `max_connections=100`, `defaultMultipartMemory = 32 << 20`
_ASSIGNED = re.compile(
    rf"(?P<name>[A-Za-z_][\w.]*)\s*(?:==|=|:)\s*(?P<value>{_NUMBER})(?:\s*<<\s*(?P<shift>\d+))?"
    r"(?![\w.])"
)
# "Go 1.23", "python >= 3.9", "rustc 1.80", "1.24+", "v1.56.2 or later"
_VERSION = re.compile(
    rf"(?:(?:{_LOWER}|{_UPPER})\s*)?(?<![\w.])v?"
    r"(?P<value>\d+(?:\.\d+)+|\d+(?=\+)|(?<=[<>=≥≤])\s*\d+|(?<=[<>=≥≤]\s)\d+)(?![\w.]*\d)"
    r"(?P<plus>\+|\s+(?:or|and) (?:later|newer|above|higher|up)|\s+up\b)?",
    re.IGNORECASE,
)
# Words that say a version is stated, not what it is the version of.
_NOT_VERSIONED = STOPWORDS | {
    "version", "versions", "release", "released", "since", "went", "up", "run", "runs",
    "support", "supported", "supports", "now", "bumped", "raised", "moved", "dropped",
    "require", "requires", "required", "needs", "need", "tagged", "shipped", "through",
    "lands", "landed", "pinned", "pin", "fixed", "added", "removed",
}  # fmt: skip
_LEADING_COLON = re.compile(r":\s*$")
_CLAUSE = re.compile(r"[.;:!?(){}\[\]—–]|\s-\s|\n")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# Words after a number that say nothing of what it counts.
_NOT_COUNTED = STOPWORDS | {"percent", "times", "time", "more", "less", "later", "newer"}


# How often something happens ("schedule interval: monthly", "once a week", "every
# night"), in days: two notes saying one job runs at other intervals disagree.
_FREQUENCY = re.compile(
    r"\b(?:(?P<adverb>hourly|daily|nightly|weekly|biweekly|fortnightly|monthly|quarterly|"
    r"yearly|annually)|(?:once|(?P<twice>twice)) (?:a|an|per|every) "
    r"(?P<per>hour|day|night|week|fortnight|month|quarter|year)|"
    r"every (?P<every>hour|day|night|week|fortnight|month|quarter|year))\b",
    re.IGNORECASE,
)
_PERIOD_DAYS = {
    "hour": 1 / 24, "hourly": 1 / 24, "day": 1, "daily": 1, "night": 1, "nightly": 1,
    "week": 7, "weekly": 7, "biweekly": 14, "fortnight": 14, "fortnightly": 14,
    "month": 30, "monthly": 30, "quarter": 91, "quarterly": 91, "year": 365,
    "yearly": 365, "annually": 365,
}  # fmt: skip


@dataclass(frozen=True)
class Quantity:
    """A stated value: what it counts (stemmed words) and the range it allows."""

    counts: frozenset[str]
    low: float
    high: float
    number: str  # as written, to look for in the other note
    version: bool = False  # read as a version ("Go 1.23", ">=18"), not a count or size

    def fits(self, other: Quantity) -> bool:
        """Whether the two can both hold: ranges that overlap, except two floors (or two
        ceilings) of one thing, which say different things however they overlap
        (">=18" / ">=20" are two minimum versions)."""
        if self.high == other.high == math.inf and -math.inf < self.low != other.low:
            return False
        if self.low == other.low == -math.inf and math.inf > self.high != other.high:
            return False
        return self.low <= other.high and other.low <= self.high


def _words_of(name: str) -> set[str]:
    parts = re.split(r"[_.\s]+", name)
    words = {w.lower() for part in parts for w in _CAMEL.findall(part)}
    return {stem(w) for w in words if len(w) >= 3 and w not in STOPWORDS}


def version_value(number: str) -> float:
    """A version as one comparable value, part by part (1.9 < 1.10; 1.23.4 → 1.023004)."""
    head, *rest = number.split(".")
    return float(head) + sum(int(p[:3]) / 1000.0 ** (i + 1) for i, p in enumerate(rest))


def _value(number: str) -> float:
    return float(number) if number.count(".") <= 1 else version_value(number)


_STRICT = frozenset({">", "over", "above", "more than", "<", "under", "below", "less than"})


def _bounded(
    value: float, lower: str | None, upper: str | None, plus: str | None
) -> tuple[float, float]:
    """The range a version bound allows: "< 1.24" up to just below 1.24, "1.24+" from it."""
    step = 1e-9 if (lower or upper or "").lower() in _STRICT else 0.0
    if lower or plus:
        return value + step, math.inf
    if upper:
        return -math.inf, value - step
    return value, value


def read_quantities(title: str, content: str) -> tuple[Quantity, ...]:
    """The quantities a note states (fenced code left out; inline code read)."""
    text = without_fences(f"{title}. {content}").replace("`", " ")
    found: list[Quantity] = []
    for match in _ASSIGNED.finditer(text):
        named = _words_of(match.group("name"))
        if not named:
            continue
        value = _value(match.group("value"))
        if match.group("shift"):
            value *= 2 ** int(match.group("shift"))
            named |= {"size"}
        found.append(Quantity(frozenset(named), value, value, match.group("value")))
    for match in _VERSION.finditer(text):
        # "MSRV: 1.78", "engines: >=20": a colon right before the value names its thing.
        window = _LEADING_COLON.sub(" ", text[max(0, match.start() - 60) : match.start()])
        clause = _CLAUSE.split(window)[-1]
        before = [w for w in _NAME_WORD.findall(clause.lower()) if w not in _NOT_VERSIONED]
        named = {stem(part) for w in before[-3:] for part in re.split(r"[-_]", w) if len(part) >= 2}
        if not named:
            continue
        low, high = _bounded(
            version_value(match.group("value")),
            match.group("lower"),
            match.group("upper"),
            match.group("plus"),
        )
        found.append(Quantity(frozenset(named), low, high, match.group("value"), version=True))
    for match in _FREQUENCY.finditer(text):
        period = (match.group("adverb") or match.group("per") or match.group("every")).lower()
        days = _PERIOD_DAYS[period] / (2 if match.group("twice") else 1)
        found.append(Quantity(frozenset({"frequency"}), days, days, match.group(0).lower()))
    for match in _COUNTED.finditer(text):
        number = match.group("number")
        if number.count(".") > 1:
            continue
        value = float(number)
        counts: set[str] = set()
        unit = (match.group("unit") or "").lower()
        noun = (match.group("noun") or "").lower()
        if unit in _SIZE_BYTES:
            value, counts = value * _SIZE_BYTES[unit], {"size"}
        elif unit in _SECONDS:
            value, counts = value * _SECONDS[unit], {"duration"}
        elif "." in number:
            continue  # "1.23 job", "0.28 removals": a version, not a count
        if noun == "times":  # "retries a failed connection 3 times": what is repeated
            before = _WORD.findall(text[max(0, match.start() - 40) : match.start()].lower())
            counts |= {stem(w) for w in before[-4:] if w not in STOPWORDS}
        elif noun and noun not in _NOT_COUNTED and noun not in _SECONDS:
            counts.add(stem(noun))
        if counts:
            found.append(Quantity(frozenset(counts), value, value, number))
    return tuple(found)


def _mentions(text: str, number: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(number)}(?![\w]|\.\d)", text) is not None


def quantity_clash(
    first: tuple[Quantity, ...], second: tuple[Quantity, ...], first_text: str, second_text: str
) -> str | None:
    """What the two notes count differently ("redirect: 30 vs 20"), or None. The texts
    are the notes' plain texts, searched for the other's numbers."""
    agreed: set[str] = set()  # what some value of one fits a value of the other on
    differing: list[tuple[Quantity, Quantity, frozenset[str]]] = []
    for one in first:
        for other in second:
            shared = one.counts & other.counts
            if not shared:
                continue
            if one.fits(other):
                agreed |= shared
            else:
                differing.append((one, other, shared))
    for one, other, shared in differing:
        if shared & agreed:
            continue
        if _mentions(first_text, other.number) or _mentions(second_text, one.number):
            continue
        return f"{sorted(shared)[0]}: {one.number} vs {other.number}"
    return None


def agreeing_counts(first: tuple[Quantity, ...], second: tuple[Quantity, ...]) -> int:
    """How many different values (not versions) the two notes give alike of things both
    count: "max_connections=100 … keepalive_expiry=5.0 seconds" and "at most 100
    connections … dropped after 5 s" agree on two."""
    values = {
        one.low
        for one in first
        for other in second
        if not one.version and not other.version and one.counts & other.counts and one.fits(other)
    }
    return len(values)


def agreeing_versions(first: tuple[Quantity, ...], second: tuple[Quantity, ...]) -> frozenset[str]:
    """The versions (as written) the two notes state of a thing both give agreeing
    versions of: "Go < 1.24" and "Go 1.23" name two versions that do not differ, since
    the bound holds the version; so do "1.24+" and "1.24". Two floors never agree."""
    shared: set[str] = set()
    for one in first:
        for other in second:
            if one.version and other.version and one.counts & other.counts and one.fits(other):
                shared |= one.counts & other.counts
    return frozenset(q.number for q in (*first, *second) if q.version and q.counts & shared)
