"""Fuzzing the text readers with any Unicode, control characters and odd line breaks
included: `MEMORY:` lines, relative dates (any text, any day, any `created_at` string)
and the readings of temporal questions never raise, and what they return points back
into the text they were given."""

from __future__ import annotations

import re
from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from services.text.capture import parse_memory_lines
from services.text.date_answers import describe, is_temporal_question, question_kind, with_dates
from services.text.dates import find_times, phrase_kind, times_for
from services.types import MemoryType

_ANY = st.characters(blacklist_categories=("Cs",))
_PIECES = st.sampled_from(
    [
        "MEMORY:",
        "MEMORY:fact:",
        "MEMORY:pitfall: ",
        "MEMORY::",
        "# ",
        "\r\n",
        "\r",
        "\n",
        "\x0c",
        "\u2028",
        "\x85",
        "\x1b]52;c;",
        "yesterday",
        "last week",
        "in 3 days",
        "2 months ago",
        "on Friday",
        "since March",
        "when did ",
        "how long ago ",
        "?",
    ]
)
_TEXT = st.one_of(
    st.text(_ANY, max_size=300),
    st.lists(_PIECES | st.text(_ANY, max_size=8), max_size=40).map("".join),
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_memory_lines_of_any_text_point_at_their_lines(text: str) -> None:
    captured, problems = parse_memory_lines(text, "notes.md")
    lines = _LINE_BREAK.split(text)
    for memory in captured:
        assert 1 <= memory.line <= len(lines)
        assert "MEMORY:" in lines[memory.line - 1]
        assert memory.content and memory.content in lines[memory.line - 1]
        assert isinstance(memory.type, MemoryType)
        assert memory.title
    for problem in problems:
        where, number = problem.where.rsplit(":", 1)
        assert where == "notes.md" and 1 <= int(number) <= len(lines)
        assert "MEMORY:" in lines[int(number) - 1]


@settings(max_examples=300, deadline=None)
@given(_TEXT, st.dates(min_value=date.min, max_value=date.max))
def test_dates_of_any_text_on_any_day_are_slices_of_it(text: str, base: date) -> None:
    for ref in find_times(text, base):
        assert text[ref.start : ref.end] == ref.phrase
        assert ref.resolved_end is None or ref.resolved <= ref.resolved_end
        assert phrase_kind(ref.phrase)
        assert describe(ref)
    assert len(with_dates(text, find_times(text, base))) >= len(text)


@settings(max_examples=300, deadline=None)
@given(
    _TEXT,
    st.text(_ANY, max_size=40)
    | st.sampled_from(["", "2026-13-40", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"]),
)
def test_any_created_at_string_gives_dates_or_nothing(text: str, created_at: str) -> None:
    for ref in times_for(text, created_at):
        assert text[ref.start : ref.end] == ref.phrase


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_any_question_has_a_kind_exactly_when_it_asks_about_time(text: str) -> None:
    kind = question_kind(text)
    assert kind in ("how_long", "weekday", "date", "")
    if is_temporal_question(text):
        assert kind
    elif kind:
        assert kind in ("how_long", "weekday")
