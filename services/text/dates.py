"""Relative time in memories: find "yesterday", "last Tuesday", "3 days ago", "next week"…
in a memory's text and resolve each against the memory's own `created_at` — the calendar
date in *its own* UTC offset (a note written at 00:20 in Kolkata is about that Kolkata
day, not the UTC one). Pure functions; nothing here reads the network or the clock.

Conventions (the bench README's, weeks start on Monday):

| phrase | resolves to |
| --- | --- |
| today, this morning/afternoon/evening, earlier/later today, tonight | the creation date |
| yesterday, last night | one day before |
| the day before yesterday / the day after tomorrow | two days before / after |
| tomorrow | one day after |
| N days / weeks / months / years ago; in N days / weeks / months / years | that offset |
| last <weekday> | the most recent such day strictly before, in the week before (**) |
| next <weekday> | the first such day strictly after (1 to 7 days ahead) |
| this <weekday> | that day of the creation date's week (Monday to Sunday) |
| on <weekday> | the nearest such day on or before (on or after in a future sentence) (*) |
| last / this / next week | the Monday of that week, ending on its Sunday |
| earlier / later this week | Monday up to the day before / the day after up to Sunday |
| last / this / next weekend | the Saturday of that week, ending on its Sunday |
| last / this / next month, earlier this month | the first of that month, ending on its last day |
| last / this / next year | 1 January of that year, ending on 31 December |
| over the weekend | the most recent Saturday–Sunday before the creation date |
| on the 16th | the most recent date on or before with that day of the month |
| on March 3 / on 3 March | that date on or before (after, in a future sentence) |
| a couple of days ago (vague) | 3 … 2 days before |
| a few days ago (vague) | 6 … 2 days before |
| the other day (vague) | 7 … 1 days before |
| the end of last month (vague) | the last 7 days of the previous month |
| last sprint (vague) | the 14 days before the Monday of the creation date's week |

A vague phrase resolves to a range with granularity "vague": what it means is a guess at
a span, not a day, and answers say so.

(**) When that day is earlier in the creation date's own week ("last Tuesday" on a
Wednesday), many mean the one of the week before: the phrase is vague, from that day of
the week before to the most recent one (both readings).

(*) "On Tuesday" has no direction of its own: a sentence with "will", "is scheduled",
"starts"… is taken as future. The resolution is a guess and is marked `inferred`.

Where `dateparser` (with `RELATIVE_BASE` = the local creation date at noon) follows these
conventions — the day words and counted offsets ("yesterday", "three days ago", "in 4
days", "2 months ago") — it does the arithmetic (a month back from 31 May is 30 April,
as with `relativedelta`). It differs from them elsewhere, so those rules are explicit:

- "last week" / "next week": dateparser gives the same weekday 7 days away; here it is
  the Monday of the previous / next week (a range to its Sunday).
- "last month": dateparser gives the same day a month back; here the 1st of the month.
- "this <weekday>": dateparser gives the next such day; here the day in this week.
- "last/next <weekday>": dateparser 1.5 gives the most recent / next such day, but its
  weekday handling has changed between releases and depends on `PREFER_DATES_FROM`, so
  the rule is written out (and "last <weekday>" earlier in the same week is vague).
- "earlier today", "later today" and the "…week/weekend/month" ranges it does not parse.

If dateparser is missing or cannot parse a counted phrase, the same arithmetic is done
here (days and weeks exactly; months and years clamped to the month's last day).
"""

from __future__ import annotations

import calendar
import functools
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from services.memory import parse_time

RULES_VERSION = "3"  # raise when phrases resolve differently: stored dates are redone
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
# Counts beyond these are not relative dates anyone writes (and keep dates in range).
_MAX_COUNT = {"day": 3660, "week": 520, "month": 240, "year": 50}

_NUMBER_WORDS = "|".join(sorted(_NUMBERS, key=len, reverse=True))
_AGO = rf"(?P<n>\d{{1,4}}|{_NUMBER_WORDS})\s+(?P<unit>day|week|month|year)s?\s+ago"
_IN = rf"in\s+(?P<n_in>\d{{1,4}}|{_NUMBER_WORDS})\s+(?P<unit_in>day|week|month|year)s?"
_WD = r"(?P<wd>" + "|".join(WEEKDAYS) + r")"

MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
)  # fmt: skip
_MONTH = r"(?P<mon>" + "|".join(f"{m[:3]}(?:{m[3:]})?" for m in MONTHS) + r")\.?"
_MONTH2 = _MONTH.replace("?P<mon>", "?P<mon2>")
_ORDINAL = r"(?:st|nd|rd|th)?"

# (kind, pattern), longest forms first: the first alternative matching at a position wins.
_FORMS: tuple[tuple[str, str], ...] = (
    ("the other day", r"the\s+other\s+day"),
    ("a couple of days ago", r"a\s+couple\s+(?:of\s+)?days\s+ago"),
    ("a few days ago", r"a\s+few\s+days\s+ago"),
    ("over the weekend", r"over\s+the\s+weekend"),
    ("the end of last month", r"(?:the\s+)?end\s+of\s+last\s+month"),
    ("last sprint", r"last\s+sprint"),
    ("on the <nth>", r"on\s+the\s+(?P<dom>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)"),
    ("on <month> <day>", rf"on\s+{_MONTH}\s+(?P<mday>[1-9]|[12]\d|3[01]){_ORDINAL}(?!\d)"),
    (
        "on <day> <month>",
        rf"on\s+(?:the\s+)?(?P<mday2>[1-9]|[12]\d|3[01]){_ORDINAL}\s+(?:of\s+)?{_MONTH2}",
    ),
    ("the day before yesterday", r"the\s+day\s+before\s+yesterday"),
    ("the day after tomorrow", r"the\s+day\s+after\s+tomorrow"),
    ("earlier today", r"earlier\s+today"),
    ("later today", r"later\s+today"),
    ("earlier this week", r"earlier\s+this\s+week"),
    ("later this week", r"later\s+this\s+week"),
    ("earlier this month", r"earlier\s+this\s+month"),
    ("<n> <unit> ago", _AGO),
    ("in <n> <unit>", _IN),
    ("<rel> <weekday>", r"(?P<rel>last|next|this|on)\s+" + _WD),
    ("<rel> week", r"(?P<wrel>last|next|this)\s+week(?P<weekend>end)?"),
    ("<rel> month", r"(?P<mrel>last|next|this)\s+month"),
    ("<rel> year", r"(?P<yrel>last|next|this)\s+year"),
    ("last night", r"last\s+night"),
    ("this <part of day>", r"this\s+(?:morning|afternoon|evening)"),
    ("tonight", r"tonight"),
    ("today", r"today"),
    ("yesterday", r"yesterday"),
    ("tomorrow", r"tomorrow"),
)
_PATTERN = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(f"(?P<f{i}>{p})" for i, (_, p) in enumerate(_FORMS))
    + r")(?![\w-])",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(will|shall|'ll|going\s+to|is\s+scheduled|are\s+scheduled|scheduled\s+for|planned"
    r"|starts?|begins?|due|upcoming)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


@dataclass(frozen=True)
class TimeRef:
    """One relative expression found in a text and the date(s) it stands for."""

    start: int  # offset of the phrase in the text
    phrase: str  # as written
    resolved: date  # the day, or the first day of a range
    resolved_end: date | None  # the last day of a range (a week, a month), else None
    granularity: str  # "day", "week", "month", "year", or "vague" (a guessed span)
    kind: str  # the phrase form, e.g. "last <weekday>", "<n> days ago"
    inferred: bool = False  # the date depends on a guess (tense of "on Tuesday")

    @property
    def end(self) -> int:
        return self.start + len(self.phrase)


def local_date(created_at: str) -> date:
    """The calendar date of an ISO time in its own UTC offset (UTC when it has none)."""
    return parse_time(created_at).date()


def find_times(text: str, created_at: str | date) -> list[TimeRef]:
    """Every relative expression in `text`, resolved against the creation date."""
    base = created_at if isinstance(created_at, date) else local_date(created_at)
    found: list[TimeRef] = []
    for match in _PATTERN.finditer(text):
        try:
            ref = _resolve(match, base, text)
        except (OverflowError, ValueError):
            continue  # a date outside the calendar's range: not a usable resolution
        if ref is not None:
            found.append(ref)
    return found


def times_for(content: str, created_at: str) -> list[TimeRef]:
    """`find_times` for a memory's content; a malformed `created_at` gives none."""
    try:
        base = local_date(created_at)
    except (TypeError, ValueError):
        return []
    return find_times(content, base)


def phrase_kind(phrase: str) -> str:
    """The phrase's form for reporting, e.g. "last <weekday>", "<n> days ago", "today"."""
    for match in _PATTERN.finditer(phrase):
        if match.start() == 0 and match.end() == len(phrase.strip()):
            kind = _kind(match)
            return kind if "<" in kind else phrase.lower()
    return phrase.lower()


def _kind(match: re.Match[str]) -> str:
    for i, (kind, _) in enumerate(_FORMS):
        if match.group(f"f{i}") is not None:
            if kind == "<rel> <weekday>":
                return f"{match.group('rel').lower()} <weekday>"
            if kind == "<n> <unit> ago":
                return f"<n> {match.group('unit').lower()}s ago"
            if kind == "in <n> <unit>":
                return f"in <n> {match.group('unit_in').lower()}s"
            if kind == "<rel> week":
                word = "weekend" if match.group("weekend") else "week"
                return f"{match.group('wrel').lower()} {word}"
            for group in ("mrel", "yrel"):
                if kind.startswith("<rel>") and match.group(group):
                    return f"{match.group(group).lower()} {kind.split()[1]}"
            return kind
    return match.group(0).lower()


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.lower()]


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _month_start(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def month_end(first: date) -> date:
    return first.replace(day=calendar.monthrange(first.year, first.month)[1])


def _add_months(day: date, months: int) -> date:
    first = _month_start(day, months)
    return first.replace(day=min(day.day, month_end(first).day))


@functools.lru_cache(maxsize=4)
def _sentence_cuts(text: str) -> tuple[list[int], list[int]]:
    """Where the sentence breaks of `text` start and end, found once per text (a long
    memory has a phrase to resolve in many of its sentences)."""
    cuts = list(_SENTENCE_END.finditer(text))
    return [cut.start() for cut in cuts], [cut.end() for cut in cuts]


def _sentence(text: str, start: int) -> str:
    starts, ends = _sentence_cuts(text)
    index = bisect_right(ends, start)  # the breaks that end at or before `start`
    begin = ends[index - 1] if index else 0
    return text[begin : starts[index]] if index < len(starts) else text[begin:]


def sentence_at(text: str, start: int) -> str:
    """The sentence of `text` that holds the character at `start`."""
    return _sentence(text, start).strip()


def _resolve(match: re.Match[str], d: date, text: str) -> TimeRef | None:
    kind = _kind(match)
    phrase = match.group(0)
    start = match.start()

    def day(value: date, inferred: bool = False) -> TimeRef:
        return TimeRef(start, phrase, value, None, "day", kind, inferred)

    def span(first: date, last: date, granularity: str) -> TimeRef:
        return TimeRef(start, phrase, first, last, granularity, kind)

    if kind in ("today", "earlier today", "later today", "tonight", "this <part of day>"):
        return day(d)
    vague = _VAGUE_SPANS.get(kind)
    if vague is not None:
        first, last = vague(d)
        return span(first, last, "vague")
    if kind == "over the weekend":
        sunday = d - timedelta(days=(d.weekday() + 1) % 7 or 7)
        return span(sunday - timedelta(days=1), sunday, "week")
    if kind == "on the <nth>":
        return _day_of_month(int(match.group("dom")), d, day)
    if kind in ("on <month> <day>", "on <day> <month>"):
        month = match.group("mon") or match.group("mon2")
        number = int(match.group("mday") or match.group("mday2"))
        future = bool(_FUTURE.search(_sentence(text, start)))
        return _month_day(month_number(month), number, d, future, day)
    if kind in ("yesterday", "last night"):
        return day(_dateparser_day("yesterday", d) or d - timedelta(days=1))
    if kind == "the day before yesterday":
        return day(_dateparser_day("the day before yesterday", d) or d - timedelta(days=2))
    if kind == "tomorrow":
        return day(_dateparser_day("tomorrow", d) or d + timedelta(days=1))
    if kind == "the day after tomorrow":
        return day(d + timedelta(days=2))
    if kind.endswith(" ago") or kind.startswith("in <n>"):
        ago = kind.endswith(" ago")
        unit = match.group("unit" if ago else "unit_in").lower()
        n = _count(match.group("n" if ago else "n_in"))
        if n < 1 or n > _MAX_COUNT[unit]:
            return None
        sign = -1 if ago else 1
        text_form = f"{n} {unit}s ago" if sign < 0 else f"in {n} {unit}s"
        value = _dateparser_day(text_form, d) or _offset(d, sign * n, unit)
        return (
            day(value)
            if unit in ("day", "week")
            else TimeRef(start, phrase, value, None, unit, kind)
        )
    if kind.endswith("<weekday>"):
        rel = match.group("rel").lower()
        target = WEEKDAYS.index(match.group("wd").lower())
        if rel == "last":
            latest = d - timedelta(days=(d.weekday() - target) % 7 or 7)
            if latest < _monday(d):
                return day(latest)  # in the week before: the one reading there is
            # Earlier this week ("last Tuesday" on a Wednesday): many mean the Tuesday of
            # the week before, so the phrase stands for both, as a vague range.
            return span(latest - timedelta(days=7), latest, "vague")
        if rel == "next":
            return day(d + timedelta(days=(target - d.weekday()) % 7 or 7))
        if rel == "this":
            return day(_monday(d) + timedelta(days=target))
        future = bool(_FUTURE.search(_sentence(text, start)))
        if future:
            return day(d + timedelta(days=(target - d.weekday()) % 7), inferred=True)
        return day(d - timedelta(days=(d.weekday() - target) % 7), inferred=True)
    if kind in ("earlier this week", "later this week"):
        monday = _monday(d)
        sunday = monday + timedelta(days=6)
        if kind.startswith("earlier"):
            return span(monday, max(monday, d - timedelta(days=1)), "week")
        return span(min(sunday, d + timedelta(days=1)), sunday, "week")
    if kind.endswith(" week") or kind.endswith(" weekend"):
        shift = {"last": -7, "this": 0, "next": 7}[kind.split()[0]]
        monday = _monday(d) + timedelta(days=shift)
        if kind.endswith("weekend"):
            return span(monday + timedelta(days=5), monday + timedelta(days=6), "week")
        return span(monday, monday + timedelta(days=6), "week")
    if kind == "earlier this month":
        first = d.replace(day=1)
        return span(first, max(first, d - timedelta(days=1)), "month")
    if kind.endswith(" month"):
        first = _month_start(d, {"last": -1, "this": 0, "next": 1}[kind.split()[0]])
        return span(first, month_end(first), "month")
    if kind.endswith(" year"):
        year = d.year + {"last": -1, "this": 0, "next": 1}[kind.split()[0]]
        return span(date(year, 1, 1), date(year, 12, 31), "year")
    return None


def _last_month_end(d: date) -> tuple[date, date]:
    last = d.replace(day=1) - timedelta(days=1)
    return last - timedelta(days=6), last


def _last_sprint(d: date) -> tuple[date, date]:
    monday = _monday(d)
    return monday - timedelta(days=14), monday - timedelta(days=1)


_VAGUE_SPANS = {
    "the other day": lambda d: (d - timedelta(days=7), d - timedelta(days=1)),
    "a couple of days ago": lambda d: (d - timedelta(days=3), d - timedelta(days=2)),
    "a few days ago": lambda d: (d - timedelta(days=6), d - timedelta(days=2)),
    "the end of last month": _last_month_end,
    "last sprint": _last_sprint,
}


def month_number(word: str) -> int:
    prefix = word.lower().rstrip(".")[:3]
    return next(i for i, name in enumerate(MONTHS, start=1) if name.startswith(prefix))


def _day_of_month(number: int, d: date, day: Callable[[date], TimeRef]) -> TimeRef | None:
    """The most recent date on or before `d` whose day of the month is `number`."""
    first = d.replace(day=1)
    for back in range(0, 13):
        month = _month_start(first, -back)
        if number <= month_end(month).day:
            candidate = month.replace(day=number)
            if candidate <= d:
                return day(candidate)
    return None


def _month_day(
    month: int, number: int, d: date, future: bool, day: Callable[[date], TimeRef]
) -> TimeRef | None:
    """That month and day nearest to `d` on or before it (after it, in a sentence about
    the future), within a year."""
    candidates = [
        date(year, month, number)
        for year in (d.year - 1, d.year, d.year + 1)
        if number <= calendar.monthrange(year, month)[1]
    ]
    if future:
        ahead = [c for c in candidates if d < c <= d + timedelta(days=366)]
        return day(min(ahead)) if ahead else None
    behind = [c for c in candidates if d - timedelta(days=366) <= c <= d]
    return day(max(behind)) if behind else None


def _offset(d: date, n: int, unit: str) -> date:
    if unit == "day":
        return d + timedelta(days=n)
    if unit == "week":
        return d + timedelta(days=7 * n)
    if unit == "month":
        return _add_months(d, n)
    return _add_months(d, 12 * n)


@functools.lru_cache(maxsize=4096)
def _dateparser_day(phrase: str, base: date) -> date | None:
    """dateparser's reading of a day word or counted offset, relative to `base` at noon
    (None when it cannot parse it or is not installed)."""
    try:
        import dateparser
    except ImportError:  # pragma: no cover - it is a dependency
        return None
    try:
        parsed = dateparser.parse(
            phrase,
            languages=["en"],
            settings={
                "RELATIVE_BASE": datetime.combine(base, time(12)),
                "RETURN_AS_TIMEZONE_AWARE": False,
                "PARSERS": ["relative-time"],
            },
        )
    except (ValueError, OverflowError):
        return None
    return parsed.date() if isinstance(parsed, datetime) else None
