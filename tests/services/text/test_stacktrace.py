"""Key lines of pasted errors: what a traceback or stack is about."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.search.retrieval import MAX_QUERY_EMBED_CHARS, focused_query
from services.text.stacktrace import (
    error_in_text,
    key_line,
    quotes_an_error,
    share_of_error_words,
)

PYTHON = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/api/errors.py", line 169, in rebuild\n'
    "    result = self._run(payload)\n"
    "ValueError: nightly_error_at must be timezone-aware\n"
)
JAVASCRIPT = (
    "TypeError: Cannot read properties of undefined (reading 'scopedBoardCode')\n"
    "    at ensureDraftCount (src/utils/format.ts:181:15)\n"
    "    at renderWithHooks (node_modules/react-dom/cjs/react-dom.development.js:16305:18)"
)
GO = "Error: unknown flag: --frozen-step-key\nexit status 1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PYTHON, "ValueError: nightly_error_at must be timezone-aware"),
        (JAVASCRIPT, "TypeError: Cannot read properties of undefined (reading 'scopedBoardCode')"),
        (GO, "Error: unknown flag: --frozen-step-key"),
        ("\n\n" + PYTHON + "\n\n", "ValueError: nightly_error_at must be timezone-aware"),
    ],
)
def test_key_line_of_stacks(text: str, expected: str) -> None:
    assert key_line(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "ValueError: x must be timezone-aware",  # one line: the query is the key line
        "how do we deploy?\nand who approves it?\nasking for the release",  # prose
        "Traceback (most recent call last):",  # a header with nothing after it
        "",
    ],
)
def test_not_a_stack(text: str) -> None:
    assert key_line(text) is None


def test_focused_query_keeps_the_key_line_and_cuts_long_text() -> None:
    assert focused_query(PYTHON) == "ValueError: nightly_error_at must be timezone-aware"
    assert focused_query("how do refunds work") == "how do refunds work"
    assert len(focused_query("word " * 200)) == MAX_QUERY_EMBED_CHARS


@given(st.text(max_size=400))
def test_key_line_is_one_of_the_lines(text: str) -> None:
    line = key_line(text)
    if line is not None:
        assert "\n" not in line and line.strip() == line and line in text


def test_errors_in_copied_text() -> None:
    trace = (
        "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'x'"
    )
    assert error_in_text(trace) == "KeyError: 'x'"
    assert error_in_text("TypeError: cannot read properties of undefined") is not None
    assert error_in_text("error[E0382]: borrow of moved value: `v`") is not None
    assert error_in_text("panic: runtime error: index out of range") is not None
    assert error_in_text("We decided to use UTC everywhere.") is None
    assert error_in_text("def handle_error(x):\n    return x") is None
    assert error_in_text("") is None
    assert error_in_text("ValueError: x" * 10_000) is None  # too long to be a copied error


def test_a_fix_for_the_same_error_has_most_of_its_words() -> None:
    error = 'Blocked request. This host ("web.myapp.test") is not allowed.'
    same = "Vite answers `Blocked request. This host is not allowed` for unknown hosts."
    other = "```\nError: listen EADDRINUSE: address already in use :::5173\n```"
    assert share_of_error_words(error, same) > 0.5 >= share_of_error_words(error, other)
    assert share_of_error_words("", same) == 0.0


@pytest.mark.parametrize(
    ("note", "quotes"),
    [
        ("```\nTypeError: x is undefined\n```\nGuard it.", True),
        ("TypeError: x is undefined when the list is empty.", True),
        ('`get_one("o")` panics: "Unknown argument or group id".', True),
        ("Pin the toolchain; newer clippy adds lints.", False),
        ("Errors are logged as JSON in production.", False),
    ],
)
def test_a_note_quoting_an_error_of_its_own(note: str, quotes: bool) -> None:
    assert quotes_an_error(note) is quotes


@given(st.text(max_size=400), st.text(max_size=200))
def test_reading_any_text_for_errors_is_total(text: str, error: str) -> None:
    assert isinstance(quotes_an_error(text), bool)
    assert 0.0 <= share_of_error_words(error, text) <= 1.0
