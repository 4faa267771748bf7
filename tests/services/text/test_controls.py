"""Control characters in memory text: escaped for a terminal, stripped for a context
block; ordinary text (newlines, tabs, any script, LRM marks) passes untouched."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from services.text.controls import escape_controls, has_controls, strip_controls

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
HOSTILE = (
    f"Use the cache{OSC52} for builds.\x1b[2J\x1b[H\x1b[31mred\x1b[0m "
    "\x9b31m \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ "
    "admin\u202e\u2066 // check\u2069\u2067 \x07\x08\x00done\r\nnext"
)
UNSAFE = st.sampled_from(["\x1b", "\x9b", "\x9d", "\x07", "\x00", "\x7f", "\u202e", "\u2066"])


def test_escaping_makes_every_control_visible() -> None:
    shown = escape_controls(HOSTILE)
    assert not has_controls(shown)
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in shown
    assert "\\u202e" in shown and "\\x9b31m" in shown
    assert shown.endswith("done\nnext")  # a Windows line ending is a line ending


def test_stripping_drops_whole_sequences_payloads_included() -> None:
    stripped = strip_controls(HOSTILE)
    assert not has_controls(stripped)
    for gone in ("52;c", "ZWNobyBwd25lZA", "[2J", "31m", "evil.example", "8;;"):
        assert gone not in stripped, gone
    assert stripped.startswith("Use the cache for builds.red ")
    assert "link" in stripped and stripped.endswith("done\nnext")


def test_ordinary_text_is_untouched() -> None:
    text = "Naïve café — 日本語 код\n\tindented `x = y[0]` \u200e mark [bold]not markup[/bold]"
    assert escape_controls(text) == text
    assert strip_controls(text) == text


@given(st.text())
def test_nothing_unsafe_survives_either_way(text: str) -> None:
    assert not has_controls(escape_controls(text))
    assert not has_controls(strip_controls(text))


@given(st.lists(st.one_of(st.text(max_size=20), UNSAFE), max_size=30).map("".join))
def test_safe_characters_are_kept_in_order(text: str) -> None:
    safe = "".join(c for c in text.replace("\r\n", "\n") if not has_controls(c))
    escaped = escape_controls(text)
    assert strip_controls(safe) == safe == escape_controls(safe)
    assert len(escaped) >= len(safe)
    # escaping is idempotent: what it produces has nothing left to escape
    assert escape_controls(escaped) == escaped


def test_pathological_input_is_linear() -> None:
    for text in ("\x1b]" + "a" * 2_000_000, "\x1b[" + "0;" * 1_000_000, "\x9d" * 1_000_000):
        started = time.perf_counter()
        strip_controls(text)
        escape_controls(text)
        assert time.perf_counter() - started < 5.0
