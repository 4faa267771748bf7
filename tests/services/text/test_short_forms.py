"""The other forms of the words developers abbreviate."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.text.short_forms import MAX_FORMS, other_forms


def test_a_spelled_out_word_gets_its_short_form_and_back() -> None:
    assert other_forms("how are the dependencies pinned") == ["deps"]
    assert other_forms("bump the deps") == ["dependencies"]
    assert other_forms("why did our executable get smaller") == ["binary"]
    assert other_forms("Dev environment setup") == ["development", "env"]


def test_a_form_the_text_holds_already_is_not_added() -> None:
    assert other_forms("env (the environment) variables") == ["vars"]
    assert other_forms("the environment variable API_KEY") == ["env", "var"]
    assert other_forms("nothing to shorten here") == []
    assert other_forms("deprecated environmental") == []  # whole words only


@given(st.text(max_size=400))
def test_any_text_gives_at_most_a_few_lowercase_words(text: str) -> None:
    forms = other_forms(text)
    assert len(forms) <= MAX_FORMS and len(set(forms)) == len(forms)
    assert all(form.isalpha() and form.islower() for form in forms)
