"""Which wording passes on something recalled or heard rather than stating it."""

from __future__ import annotations

import pytest

from services.text.words import sounds_unsure


@pytest.mark.parametrize(
    ("text", "unsure"),
    [
        ("afaik argument order doesn't matter", True),
        ("IIRC the pin is exact", True),
        ("I think the default is 5 s", True),
        ("reviewer note: coverage gate is 95%", True),
        ("The body extractor goes last.", False),
        ("Thinking about it, the pin is exact.", False),  # not "I think"
        ("the guesswork is over", False),
    ],
)
def test_sounds_unsure(text: str, unsure: bool) -> None:
    assert sounds_unsure(text) is unsure
