"""The days a question or a filter names by the calendar: a date with its year ("on 9
November, 2022", "2022-11-09"), a month with its year ("in April 2022"), a month alone
("september", "in Dec": the latest one begun), else the first phrase `dates.find_times`
reads ("last week", "on March 3")."""

from __future__ import annotations

import re
from datetime import date

from services.text.dates import MONTHS, find_times, month_end, month_number

_MONTH_NAME = r"(?P<m>" + "|".join(f"{m[:3]}(?:{m[3:]})?" for m in MONTHS) + r")\.?"
_YEAR = r"(?P<y>(?:19|20)\d\d)(?!\d)"
_DAY = r"(?P<d>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"
_DATED = (  # a day or a month with its year, as people write it
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH_NAME},?\s+{_YEAR}", re.IGNORECASE),
    re.compile(rf"\b{_MONTH_NAME}\s+{_DAY},?\s+{_YEAR}", re.IGNORECASE),
    re.compile(r"\b(?P<y>(?:19|20)\d\d)-(?P<mo>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\d|3[01])\b"),
    re.compile(rf"\b{_MONTH_NAME}\s+{_YEAR}", re.IGNORECASE),
)


_MONTH_ALONE = re.compile(
    rf"^(?:in\s+|since\s+|last\s+)?{_MONTH_NAME}(?:\s+{_YEAR})?$", re.IGNORECASE
)


def month_named(value: str, today: date) -> date | None:
    """The first day of the month `value` names and nothing else ("september", "in Sep",
    "September 2025"): without a year, the latest such month that has begun by `today`."""
    match = _MONTH_ALONE.match(" ".join(value.split()))
    if match is None:
        return None
    month = month_number(match.group("m"))
    if match.group("y"):
        return date(int(match.group("y")), month, 1)
    year = today.year if month <= today.month else today.year - 1
    return date(year, month, 1)


def asked_range(question: str, today: date) -> tuple[date, date] | None:
    """The days a question asks about, first and last: a date with its year ("on 9
    November, 2022", "2022-11-09"), a month with its year ("in April 2022"), else the
    first phrase `find_times` reads, resolved against `today` ("last week", "on March
    3"). None when it names no time."""
    for pattern in _DATED:
        match = pattern.search(question)
        if match is None:
            continue
        try:
            year = int(match.group("y"))
            groups = match.groupdict()
            month = int(groups["mo"]) if groups.get("mo") else month_number(groups["m"])
            if groups.get("d"):
                day = date(year, month, int(groups["d"]))
                return day, day
            first = date(year, month, 1)
            return first, month_end(first)
        except ValueError:  # 31 February: no such day
            continue
    for ref in find_times(question, today):
        return ref.resolved, ref.resolved_end or ref.resolved
    return None
