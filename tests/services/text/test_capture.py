"""`MEMORY:type:content` lines are captured from any surrounding text; bad lines are
reported by line number while the good ones are still captured."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.memory import MAX_TITLE_CHARS
from services.text.capture import parse_memory_lines
from services.types import MemoryType

TYPES = [t.value for t in MemoryType]
_LINE_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n")
noise_line = st.text(_LINE_CHARS, max_size=80).filter(lambda s: "MEMORY:" not in s)
content = st.text(_LINE_CHARS, min_size=1, max_size=300).filter(lambda s: s.strip())
prefix = st.sampled_from(["", "  ", "# ", "// ", "> ", "* ", "- ", "; ", "/* ", "\t"])
bad_type = st.text("abcdefghijklmnopqrstuvwxyz-", min_size=0, max_size=12).filter(
    lambda s: s not in TYPES
)


@st.composite
def transcripts(draw: st.DrawFn) -> tuple[str, list[tuple[int, str, str]], list[int]]:
    """Text with memory lines among noise: (text, [(line, type, content)], [bad lines])."""
    lines: list[str] = []
    good: list[tuple[int, str, str]] = []
    bad: list[int] = []
    for _ in range(draw(st.integers(0, 25))):
        choice = draw(st.sampled_from(["noise", "noise", "good", "bad", "empty"]))
        number = len(lines) + 1
        if choice == "noise":
            lines.append(draw(noise_line))
        elif choice == "good":
            kind = draw(st.sampled_from(TYPES))
            shown = draw(st.sampled_from([kind, kind.upper(), f" {kind} "]))
            text = draw(content)
            lines.append(f"{draw(prefix)}MEMORY:{shown}:{text}")
            good.append((number, kind, text.strip()))
        elif choice == "bad":
            lines.append(f"{draw(prefix)}MEMORY:{draw(bad_type)}:{draw(content)}")
            bad.append(number)
        else:
            lines.append(
                f"MEMORY:{draw(st.sampled_from(TYPES))}:{draw(st.sampled_from(['', '  ']))}"
            )
            bad.append(number)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines), good, bad


@given(transcripts())
@settings(max_examples=200)
def test_captures_good_lines_and_reports_bad_ones(
    case: tuple[str, list[tuple[int, str, str]], list[int]],
) -> None:
    text, good, bad = case
    captured, problems = parse_memory_lines(text, "answer.md")
    assert [(c.line, c.type.value, c.content) for c in captured] == good
    assert [p.where for p in problems] == [f"answer.md:{n}" for n in bad]
    for item in captured:
        assert 0 < len(item.title) <= MAX_TITLE_CHARS
        assert item.title.strip() == item.title


def test_unknown_type_message_lists_the_choices() -> None:
    captured, problems = parse_memory_lines(
        "hello\nMEMORY:gossip:x\nMEMORY:fact:Postgres runs on 5433.\n", "notes.txt"
    )
    assert [(c.line, c.type, c.content) for c in captured] == [
        (3, MemoryType.FACT, "Postgres runs on 5433.")
    ]
    assert len(problems) == 1
    assert problems[0].where == "notes.txt:2"
    assert "unknown type 'gossip'" in problems[0].reason
    assert all(t in problems[0].reason for t in TYPES)
    assert str(problems[0]).startswith("notes.txt:2: ")


def test_empty_content_is_reported() -> None:
    captured, problems = parse_memory_lines("MEMORY:fact:   ")
    assert captured == []
    assert [(p.where, p.reason) for p in problems] == [("<stdin>:1", "no content after the type")]


@pytest.mark.parametrize("separator", ["\x0c", "\u2028", "\x85", "\x1c", "\x0b"])
def test_unusual_separators_do_not_shift_line_numbers(separator: str) -> None:
    """Line numbers are the ones an editor or `grep -n` shows: only \\n (and \\r) end
    lines; other separators stay inside the line's content."""
    text = f"intro{separator}more\nMEMORY:nope:x\nMEMORY:fact:a{separator}b\n"
    captured, problems = parse_memory_lines(text, "f")
    assert [p.where for p in problems] == ["f:2"]
    assert [(c.line, c.content) for c in captured] == [(3, f"a{separator}b")]


def test_memory_marker_must_start_the_line() -> None:
    captured, problems = parse_memory_lines("say MEMORY:fact:not captured\n`MEMORY:fact:x`")
    assert captured == [] and problems == []


@given(content)
@settings(max_examples=200)
def test_titles_are_short_and_come_from_the_content(text: str) -> None:
    captured, _ = parse_memory_lines(f"MEMORY:fact:{text}")
    (item,) = captured
    assert len(item.title) <= MAX_TITLE_CHARS
    assert item.title and item.title.strip() == item.title
    first_line = re.split(r"\n", item.content)[0]
    # A cut title ends with "…" (content may itself contain "…": then it is kept whole).
    title = item.title if item.title in first_line else item.title.removesuffix("…")
    assert title and (title in first_line or title.rstrip() in first_line)
