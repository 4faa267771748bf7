"""`month_named`: a month written alone ("september", "in Dec", "May 2025") as `--after`
and `--before` take it (a new user's `list --after "september"` was refused)."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31)), st.integers(1, 12))
def test_a_month_named_alone_is_the_latest_one_begun(today: date, month: int) -> None:
    from services.text.date_ranges import month_named

    name = date(2000, month, 1).strftime("%B")
    for written in (name, name.lower(), f"in {name[:3]}", f"  since {name.upper()} "):
        first = month_named(written, today)
        assert first is not None and first.day == 1 and first.month == month
        assert first <= today and (today - first).days < 366
    assert month_named(f"{name} 2031", today) == date(2031, month, 1)
    assert month_named(f"{name} 3rd", today) is None  # a day: `find_times` reads it
