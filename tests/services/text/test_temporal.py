"""Relative dates: every phrase form, resolved against the local date of `created_at`
(its own UTC offset), across week, month, year and leap-day edges; question recognition;
rendering; and properties of the phrase finder over arbitrary text."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.text.date_answers import is_temporal_question, question_kind, with_dates
from services.text.date_ranges import asked_range
from services.text.dates import (
    WEEKDAYS,
    TimeRef,
    find_times,
    local_date,
    phrase_kind,
    times_for,
)

TUESDAY = date(2026, 6, 9)


def one(text: str, base: date | str = TUESDAY) -> TimeRef:
    found = find_times(text, base)
    assert len(found) == 1, found
    return found[0]


def resolved(text: str, base: date | str = TUESDAY) -> str:
    return one(text, base).resolved.isoformat()


# --- the creation date in its own offset ---------------------------------------------------


@pytest.mark.parametrize(
    ("created_at", "expected"),
    [
        ("2026-06-10T00:20:00+05:30", "2026-06-09"),  # UTC 2026-06-09T18:50, local the 10th
        ("2026-06-09T23:40:00-07:00", "2026-06-08"),  # UTC the 10th, local the 9th
        ("2026-06-09T23:40:00+00:00", "2026-06-08"),
        ("2026-06-09T23:40:00", "2026-06-08"),  # no offset: UTC
        ("2026-03-01T00:05:00+01:00", "2026-02-28"),  # UTC still in February
    ],
)
def test_yesterday_uses_the_local_date_of_created_at(created_at: str, expected: str) -> None:
    assert resolved("Fixed it yesterday.", created_at) == expected


def test_local_date_keeps_the_offset() -> None:
    assert local_date("2026-06-10T00:20:00+05:30") == date(2026, 6, 10)
    assert local_date("2026-06-09T23:59:00-11:00") == date(2026, 6, 9)


# --- every phrase form -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("today", "2026-06-09"),
        ("this morning", "2026-06-09"),
        ("this afternoon", "2026-06-09"),
        ("earlier today", "2026-06-09"),
        ("later today", "2026-06-09"),
        ("tonight", "2026-06-09"),
        ("yesterday", "2026-06-08"),
        ("last night", "2026-06-08"),
        ("the day before yesterday", "2026-06-07"),
        ("tomorrow", "2026-06-10"),
        ("the day after tomorrow", "2026-06-11"),
        ("3 days ago", "2026-06-06"),
        ("three days ago", "2026-06-06"),
        ("a day ago", "2026-06-08"),
        ("a week ago", "2026-06-02"),
        ("two weeks ago", "2026-05-26"),
        ("2 months ago", "2026-04-09"),
        ("a year ago", "2025-06-09"),
        ("in 4 days", "2026-06-13"),
        ("in ten days", "2026-06-19"),
        ("in a week", "2026-06-16"),
        ("in 2 months", "2026-08-09"),
        ("last Tuesday", "2026-06-02"),  # today is Tuesday: a week back
        ("last Monday", "2026-06-01"),  # yesterday, or the Monday before: both (vague)
        ("last Wednesday", "2026-06-03"),
        ("next Tuesday", "2026-06-16"),
        ("next Wednesday", "2026-06-10"),
        ("next Monday", "2026-06-15"),
        ("this Friday", "2026-06-12"),
        ("this Monday", "2026-06-08"),
        ("last week", "2026-06-01"),
        ("this week", "2026-06-08"),
        ("next week", "2026-06-15"),
        ("earlier this week", "2026-06-08"),
        ("later this week", "2026-06-10"),
        ("last weekend", "2026-06-06"),
        ("next weekend", "2026-06-20"),
        ("last month", "2026-05-01"),
        ("this month", "2026-06-01"),
        ("next month", "2026-07-01"),
        ("earlier this month", "2026-06-01"),
        ("last year", "2025-01-01"),
    ],
)
def test_every_phrase_form(phrase: str, expected: str) -> None:
    ref = one(f"Note: {phrase} we changed it.")
    assert ref.resolved.isoformat() == expected
    assert ref.phrase == phrase


@pytest.mark.parametrize(
    ("phrase", "end", "granularity"),
    [
        ("last week", "2026-06-07", "week"),
        ("next week", "2026-06-21", "week"),
        ("earlier this week", "2026-06-08", "week"),
        ("later this week", "2026-06-14", "week"),
        ("last month", "2026-05-31", "month"),
        ("next month", "2026-07-31", "month"),
        ("last year", "2025-12-31", "year"),
        ("yesterday", None, "day"),
        ("last Tuesday", None, "day"),  # today is Tuesday: only the one a week back
        ("last Monday", "2026-06-08", "vague"),
    ],
)
def test_ranges_have_an_end_and_a_granularity(
    phrase: str, end: str | None, granularity: str
) -> None:
    ref = one(phrase)
    assert (ref.resolved_end.isoformat() if ref.resolved_end else None) == end
    assert ref.granularity == granularity


def test_weekday_conventions_for_every_day_of_the_week() -> None:
    for offset in range(7):
        base = date(2026, 6, 8) + timedelta(days=offset)  # Monday .. Sunday
        for index, name in enumerate(WEEKDAYS):
            latest = one(f"last {name}", base)
            last = latest.resolved_end or latest.resolved  # the nearer reading
            following = one(f"next {name}", base).resolved
            assert last.weekday() == index == following.weekday()
            assert 1 <= (base - last).days <= 7
            assert 1 <= (following - base).days <= 7
            this = one(f"this {name}", base).resolved
            assert this.isocalendar()[:2] == base.isocalendar()[:2]


def test_week_edges() -> None:
    sunday, monday = date(2026, 6, 14), date(2026, 6, 15)
    assert one("last week", sunday).resolved == date(2026, 6, 1)
    assert one("last week", monday).resolved == date(2026, 6, 8)
    assert one("next week", sunday).resolved == monday
    assert one("next Monday", sunday).resolved == monday
    assert one("last Sunday", monday).resolved == sunday
    assert one("earlier this week", monday).resolved_end == monday  # nothing before it
    assert one("later this week", sunday).resolved == sunday
    # a week that crosses the year
    assert one("last week", date(2027, 1, 1)).resolved == date(2026, 12, 21)
    assert one("next week", date(2026, 12, 30)).resolved == date(2027, 1, 4)


def test_month_and_year_edges() -> None:
    assert one("last month", date(2026, 1, 15)).resolved == date(2025, 12, 1)
    assert one("last month", date(2026, 3, 31)).resolved_end == date(2026, 2, 28)
    assert one("next month", date(2026, 12, 31)).resolved == date(2027, 1, 1)
    assert one("yesterday", date(2026, 3, 1)).resolved == date(2026, 2, 28)
    assert one("tomorrow", date(2026, 12, 31)).resolved == date(2027, 1, 1)
    assert one("a month ago", date(2026, 5, 31)).resolved == date(2026, 4, 30)
    assert one("in 1 month", date(2026, 1, 31)).resolved == date(2026, 2, 28)


def test_leap_day() -> None:
    assert one("yesterday", date(2028, 3, 1)).resolved == date(2028, 2, 29)
    assert one("tomorrow", date(2028, 2, 28)).resolved == date(2028, 2, 29)
    assert one("a year ago", date(2028, 2, 29)).resolved == date(2027, 2, 28)
    assert one("last month", date(2028, 3, 15)).resolved_end == date(2028, 2, 29)


def test_on_weekday_follows_the_tense_and_is_marked_inferred() -> None:
    past = one("We deployed on Friday and it held.")
    future = one("The freeze starts on Friday.")
    assert past.resolved == date(2026, 6, 5) and past.inferred
    assert future.resolved == date(2026, 6, 12) and future.inferred
    assert one("Deployed on Tuesday.").resolved == TUESDAY


def test_what_is_not_a_date() -> None:
    for text in (
        "one created a moment ago may be missing",
        "records created before the last migration",
        "Worth re-checking after the next clsx upgrade.",
        "puts late-evening deploys on the next day",
        "renamed in the last release",
        "the yesterday_cache table",
        "see todays-report.md",
    ):
        assert find_times(text, TUESDAY) == [], text


def test_several_phrases_in_text_order() -> None:
    refs = find_times("Broke yesterday, fixed today, ships next week.", TUESDAY)
    assert [r.phrase for r in refs] == ["yesterday", "today", "next week"]
    assert [r.kind for r in refs] == ["yesterday", "today", "next week"]


def test_phrase_kind() -> None:
    assert phrase_kind("last Saturday") == "last <weekday>"
    assert phrase_kind("three days ago") == "<n> days ago"
    assert phrase_kind("in 4 days") == "in <n> days"
    assert phrase_kind("yesterday") == "yesterday"
    assert phrase_kind("last week") == "last week"


def test_malformed_created_at_gives_nothing() -> None:
    assert times_for("fixed yesterday", "not a time") == []
    assert times_for("fixed yesterday", "") == []


# --- rendering -------------------------------------------------------------------------------


def test_with_dates_puts_the_date_after_each_phrase() -> None:
    text = "Broke yesterday; review next week."
    shown = with_dates(text, find_times(text, TUESDAY))
    assert shown == "Broke yesterday (2026-06-08); review next week (2026-06-15 to 2026-06-21)."


def test_with_dates_ignores_stale_resolutions() -> None:
    text = "Broke yesterday."
    stale = TimeRef(0, "yesterday", date(2026, 1, 1), None, "day", "yesterday")
    assert with_dates(text, [stale]) == text


# --- questions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "When did hotfix 1.2.12 ship?",
        "when is the SHIP-1012 demo?",
        "On what date was release 3.2.10 rolled back?",
        "What date does the code freeze start?",
        "How long ago was the staging data restored?",
        "What day did we pin pydantic?",
        "Which day was PR #2013 merged?",
        "Since when is the v1 endpoint off?",
        "How many days since the outage?",
        "Roughly when did the v4 branch drop Node 18?",
        "Any idea when the MSRV went up?",
        "Which period does the retro note cover?",
        "What time frame was the migration in?",
    ],
)
def test_temporal_questions(question: str) -> None:
    assert is_temporal_question(question)


@pytest.mark.parametrize(
    "question",
    [
        "How do we store money amounts?",
        "what happens when the token expires",
        "roughly how big is the wheel",
        "which time zone do the CI runners use",
        "Why did we pick SQLite?",
        "design decisions behind pdf.py",
        "",
    ],
)
def test_other_questions(question: str) -> None:
    assert not is_temporal_question(question)


def test_question_kinds() -> None:
    assert question_kind("How long ago was the outage?") == "how_long"
    assert question_kind("What day of the week was the outage?") == "weekday"
    assert question_kind("When was the outage?") == "date"
    assert question_kind("Where is the config?") == ""


# --- properties ------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "yesterday",
        "today",
        "last ",
        "next ",
        "this ",
        "on ",
        "week",
        "month",
        "year",
        "weekend",
        " days ago",
        "in ",
        "3",
        "9999",
        "a",
        "the day before ",
        "earlier ",
        *WEEKDAYS,
        "Tuesday",
        " ",
        ".",
        "\n",
        "-",
        "_",
    ]
)
_TEXT = st.one_of(
    st.text(max_size=200), st.lists(_PIECES | st.text(max_size=5), max_size=30).map("".join)
)
_DATES = st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 12, 31))


@settings(max_examples=300, deadline=None)
@given(_TEXT, _DATES)
def test_any_text_resolves_within_a_sane_window(text: str, base: date) -> None:
    for ref in find_times(text, base):
        assert text[ref.start : ref.end] == ref.phrase
        assert abs((ref.resolved - base).days) <= 51 * 366
        if ref.resolved_end is not None:
            assert ref.resolved <= ref.resolved_end
            assert (ref.resolved_end - ref.resolved).days <= 366
        assert ref.granularity in {"day", "week", "month", "year", "vague"}


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.sampled_from(["+05:30", "-11:00", "+14:00", "+00:00", ""]))
def test_any_text_and_offset_never_raise(text: str, offset: str) -> None:
    refs = times_for(text, f"2026-06-10T00:20:00{offset}")
    rendered = with_dates(text, refs)
    assert len(rendered) >= len(text)


@settings(max_examples=200, deadline=None)
@given(_DATES)
def test_relative_days_match_plain_arithmetic(base: date) -> None:
    assert one("yesterday", base).resolved == base - timedelta(days=1)
    assert one("tomorrow", base).resolved == base + timedelta(days=1)
    assert one("5 days ago", base).resolved == base - timedelta(days=5)
    assert one("in 3 weeks", base).resolved == base + timedelta(days=21)
    assert one("last week", base).resolved.weekday() == 0


@settings(max_examples=200, deadline=None)
@given(_DATES, st.sampled_from(WEEKDAYS))
def test_last_weekday_is_vague_only_when_it_falls_in_the_same_week(
    base: date, weekday: str
) -> None:
    """ "Last Tuesday" written on a Wednesday had been yesterday, not marked vague; many
    mean the Tuesday of the week before. Earlier in the week it is both, as one vague
    range; in the week before it is that day."""
    ref = one(f"last {weekday.capitalize()} we moved it", base)
    latest = base - timedelta(days=(base.weekday() - WEEKDAYS.index(weekday)) % 7 or 7)
    monday = base - timedelta(days=base.weekday())
    if latest >= monday:
        assert ref.granularity == "vague"
        assert (ref.resolved, ref.resolved_end) == (latest - timedelta(days=7), latest)
    else:
        assert ref.granularity == "day" and ref.resolved == latest and ref.resolved_end is None
    assert (ref.resolved_end or ref.resolved) < base
    assert all(d.weekday() == WEEKDAYS.index(weekday) for d in (ref.resolved, latest))


@pytest.mark.parametrize(
    ("text", "written", "start", "end", "granularity"),
    [
        (
            "the other day the build broke",
            "2025-03-20T09:00:00+01:00",
            "2025-03-13",
            "2025-03-19",
            "vague",
        ),
        ("a couple of days ago", "2026-07-02T10:00:00-07:00", "2026-06-29", "2026-06-30", "vague"),
        ("a few days ago", "2026-07-02T10:00:00+00:00", "2026-06-26", "2026-06-30", "vague"),
        ("over the weekend", "2026-01-12T08:00:00+00:00", "2026-01-10", "2026-01-11", "week"),
        (
            "at the end of last month",
            "2024-12-16T12:00:00+00:00",
            "2024-11-24",
            "2024-11-30",
            "vague",
        ),
        ("last sprint", "2026-07-27T12:00:00+00:00", "2026-07-13", "2026-07-26", "vague"),
        ("merged on the 27th", "2025-06-30T12:00:00+00:00", "2025-06-27", None, "day"),
        ("on the 31st", "2025-03-05T12:00:00+00:00", "2025-01-31", None, "day"),
        ("released on March 3", "2025-06-01T12:00:00+00:00", "2025-03-03", None, "day"),
        ("it starts on 3rd of June", "2025-06-01T12:00:00+00:00", "2025-06-03", None, "day"),
        ("we shipped it on Dec 30", "2026-01-02T12:00:00+00:00", "2025-12-30", None, "day"),
    ],
)
def test_phrases_people_write(
    text: str, written: str, start: str, end: str | None, granularity: str
) -> None:
    (ref,) = times_for(text, written)
    assert ref.resolved.isoformat() == start
    assert (None if ref.resolved_end is None else ref.resolved_end.isoformat()) == end
    assert ref.granularity == granularity


@given(
    st.dates(min_value=date(2000, 1, 1), max_value=date(2090, 12, 31)),
    st.integers(1, 31),
    st.sampled_from(["the other day", "a couple of days ago", "last sprint", "over the weekend"]),
)
def test_past_phrases_resolve_before_the_day_written(day: date, number: int, phrase: str) -> None:
    for text in (f"on the {number}th", phrase):
        for ref in find_times(text, day):
            last = ref.resolved_end or ref.resolved
            assert ref.resolved <= last
            assert last <= day


@pytest.mark.parametrize(
    ("question", "first", "last"),
    [
        ("What dish did Nate make on 9 November, 2022?", "2022-11-09", "2022-11-09"),
        ("the deploy on November 9th 2022", "2022-11-09", "2022-11-09"),
        ("what broke on 2022-11-09", "2022-11-09", "2022-11-09"),
        ("What game was James playing in April 2022?", "2022-04-01", "2022-04-30"),
        ("incidents in Feb 2024", "2024-02-01", "2024-02-29"),
        ("what changed last week", "2026-11-16", "2026-11-22"),  # against today
        ("what did we decide on March 3", "2026-03-03", "2026-03-03"),
    ],
)
def test_the_days_a_question_asks_about(question: str, first: str, last: str) -> None:
    asked = asked_range(question, date(2026, 11, 24))
    assert asked == (date.fromisoformat(first), date.fromisoformat(last))


def test_a_question_naming_no_time_or_no_real_day_asks_none() -> None:
    today = date(2026, 11, 24)
    assert asked_range("why does the pool time out", today) is None
    assert asked_range("python 3.10 since 2024", today) is None  # a year alone is no range
    assert asked_range("the 31 February, 2022 note", today) is None


@given(st.text(max_size=120))
def test_any_question_gives_no_range_or_an_ordered_one(question: str) -> None:
    asked = asked_range(question, date(2026, 11, 24))
    assert asked is None or asked[0] <= asked[1]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.sampled_from(["yesterday", "last week", "3 days ago"]))
def test_a_title_gets_its_phrase_dated_once_and_nothing_else_changes(
    around: str, phrase: str
) -> None:
    from services.text.date_answers import describe, with_phrases_dated

    content = f"We shipped it {phrase}."
    (ref,) = times_for(content, "2026-06-10T09:00:00+00:00")
    title = f"{around} {phrase.capitalize()} {around}"
    dated = with_phrases_dated(title, [ref])
    assert with_phrases_dated(dated, [ref]) == dated  # shown twice, dated once
    assert dated.replace(f" ({describe(ref)})", "", 1) == title
