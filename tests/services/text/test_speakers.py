"""Who spoke a conversation turn, and which people a question names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.text.speakers import names_in, said_by_named, speaker_of


def test_the_speaker_is_the_label_a_turn_opens_with() -> None:
    assert speaker_of("Caroline: I went to a support group yesterday.") == "Caroline"
    assert speaker_of("Mary Ann: we adopted a pup!") == "Mary Ann"
    assert speaker_of("  Tim: Who's your favorite player?") == "Tim"


def test_text_without_a_name_label_has_no_speaker() -> None:
    assert speaker_of("caroline: lower case is no name") is None
    assert speaker_of("Dev env: `make install` runs uv sync.") is None  # two words, one lower
    assert speaker_of("Released 0.28: compact JSON") is None
    assert speaker_of("Note that Caroline: said so") is None  # not at the start
    assert speaker_of("") is None


def test_the_names_a_question_asks_about() -> None:
    assert {"When", "Caroline", "LGBTQ"} == names_in("When did Caroline go to the LGBTQ group?")
    assert "Melanie" in names_in("What is Melanie's favourite book?")


def test_a_turn_said_by_a_named_person() -> None:
    names = names_in("What did Caroline paint last week?")
    assert said_by_named("Caroline: I painted a sunrise.", names)
    assert not said_by_named("Melanie: Caroline painted a sunrise!", names)
    assert said_by_named("Caroline Smith: the sunrise one.", names)
    assert not said_by_named("I painted a sunrise.", names)


@given(st.text(max_size=200), st.text(max_size=200))
def test_any_text_is_read_without_error(content: str, question: str) -> None:
    speaker = speaker_of(content)
    assert speaker is None or content.lstrip().startswith(speaker)
    assert said_by_named(content, names_in(question)) in (True, False)
