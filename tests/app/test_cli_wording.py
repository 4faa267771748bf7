"""Counts in what the CLI prints agree with their nouns."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.cli.common import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "finding") == "1 finding"
    assert counted(0, "finding") == "0 findings"
    assert counted(3, "memory", "memories") == "3 memories"


@given(st.integers(min_value=0, max_value=10**6))
def test_the_count_is_printed_as_given(count: int) -> None:
    text = counted(count, "proposal")
    assert text.startswith(f"{count} proposal") and text.endswith("s") == (count != 1)
