"""`services.text.acronyms`: the acronyms a question spells out in full words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.text.acronyms import MAX_ACRONYMS, MAX_LETTERS, MIN_LETTERS, spelled_out_acronyms


def test_a_spelled_out_name_gives_its_acronym_first() -> None:
    assert spelled_out_acronyms("what's axum's minimum supported rust version")[0] == "msrv"


def test_inner_of_and_to_give_their_letter_or_not() -> None:
    found = spelled_out_acronyms("how long is the time to live of a cached token")
    assert "ttl" in found
    assert "bom" in spelled_out_acronyms("the bill of materials")


def test_stop_words_and_other_tokens_break_a_run() -> None:
    # "code in slack.go": "in" is a stop word here and the dot ends the run
    assert spelled_out_acronyms("how is code in slack.go supposed to be written?") == []
    assert spelled_out_acronyms("fix the bug") == []  # fewer than three plain words


def test_words_with_digits_or_code_do_not_count() -> None:
    assert spelled_out_acronyms("bump esbuild 0.24 pin") == []
    assert spelled_out_acronyms("parse_order_date returns naive") == []
    assert spelled_out_acronyms("see slack.go config.yaml main.rs") == []


@given(st.text(max_size=400))
def test_any_text_gives_few_short_lowercase_acronyms(text: str) -> None:
    found = spelled_out_acronyms(text)
    assert len(found) <= MAX_ACRONYMS
    assert len(set(found)) == len(found)
    for acronym in found:
        assert MIN_LETTERS <= len(acronym) <= MAX_LETTERS
        assert acronym.isalpha() and acronym == acronym.lower()
