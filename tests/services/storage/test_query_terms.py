"""The words of a search and the trigger words of a memory: normalised so the forms of a
word meet, identifiers whole and in parts, and stored only as salted hashes."""

from __future__ import annotations

import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from services.storage.memories import MemoryStore
from services.storage.query_terms import (
    STOP_WORDS,
    hash_term,
    query_terms,
    stem,
    stored_term_salt,
    term_salt,
    trigger_word_forms,
    trigger_words,
)
from tests.services.builders import make_memory


def test_words_are_lowercased_and_short_and_stop_words_dropped() -> None:
    assert query_terms("How do WE store the Amounts in an API?") == {"stor", "amount", "api"}


@pytest.mark.parametrize(
    "forms",
    [
        ["retry", "retries", "retried", "retrying", "Retrying"],
        ["cache", "caches", "cached", "caching"],
        ["payment", "payments", "PAYMENTS"],
        ["deploy", "deploys", "deployed", "deploying"],
        ["embed", "embedding", "embedded", "embeddings"],
        ["run", "running", "runs"],
        ["pass", "passing", "passes"],
        ["box", "boxes"],
        ["city", "cities"],
    ],
)
def test_the_forms_of_a_word_meet(forms: list[str]) -> None:
    assert len({frozenset(query_terms(form)) for form in forms}) == 1, forms
    assert len(query_terms(forms[0])) == 1


@given(st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=14))
def test_stems_never_get_shorter_than_three(word: str) -> None:
    assert len(stem(word)) >= 3


def test_what_only_looks_like_a_suffix_stays() -> None:
    assert [stem(w) for w in ["string", "bring", "speed", "bed", "class"]] == [
        "string",
        "bring",
        "speed",
        "bed",
        "class",
    ]


def test_identifiers_count_whole_and_by_parts() -> None:
    assert query_terms("why does parseOrderDate fail") == {
        "parseorderdate",
        "pars",
        "order",
        "dat",
        "fail",
    }
    assert {"refund_payment", "refund", "payment"} <= query_terms("refund_payment() raises")
    assert {"billing.refunds", "billing.refunds.py", "bill", "refund"} & query_terms(
        "see billing.refunds.py"
    ) == {"billing.refunds.py", "bill", "refund"}
    assert {"httpservererror", "http", "server", "error"} <= query_terms("HTTPServerError")
    assert {"src", "app", "main.py", "main"} <= query_terms("in src/app/main.py")
    assert query_terms("2026 404 1.5 v2") == set()  # numbers are not terms


def test_trigger_words_come_from_title_tags_and_code_names() -> None:
    memory = make_memory(
        "Celery workers retry failed jobs. Call `requeue_job` from tasks.celery_app, "
        "never retryNow.",
        title="Celery retries",
        tags=["background-jobs", "pinned"],
    )
    words = trigger_words(memory)
    assert {"celeri", "retri"} <= words  # title
    assert {"background", "job", "pin"} <= words  # tags
    assert {"requeue_job", "requeu", "tasks.celery_app", "retrynow"} <= words  # code names
    assert "worker" not in words  # prose of the content is not a trigger word
    forms = trigger_word_forms(memory)
    assert forms["retri"] == "retries" and forms["requeue_job"] == "requeue_job"
    assert list(forms)[:2] == ["celeri", "retri"]  # title first


def test_hashes_are_short_salted_and_stable() -> None:
    assert hash_term("salt-a", "refund") == hash_term("salt-a", "refund")
    assert hash_term("salt-a", "refund") != hash_term("salt-b", "refund")
    assert len(hash_term("salt-a", "refund")) == 16
    assert "refund" not in hash_term("salt-a", "refund")
    hash_term("salt", "\ud800odd")  # a lone surrogate does not fail


def test_the_salt_is_made_once_per_data_folder(store: MemoryStore) -> None:
    assert stored_term_salt() is None
    salt = term_salt()
    assert len(salt) == 32 and term_salt() == salt == store.meta_get("query_term_salt")


@given(st.text())
def test_query_terms_never_fail_and_are_lowercase_and_long_enough(text: str) -> None:
    for term in query_terms(text):
        assert term == term.lower()
        assert len(term) >= 3


@given(st.text(alphabet=st.characters(categories=["Cs", "L", "M", "N", "P", "Zs"])))
def test_odd_unicode_never_fails(text: str) -> None:
    query_terms(text)
    trigger_words(make_memory(text.strip() or "x", title=text.strip() or None, tags=[]))


def _plural(word: str) -> str:
    if word.endswith(("x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


@given(
    st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=12),
    st.sampled_from([str.lower, str.upper, str.title]),
    st.booleans(),
)
def test_a_title_word_matches_the_same_word_in_a_query_in_any_case_or_plural(
    word: str, case: object, plural: bool
) -> None:
    assume(not word.endswith("s"))
    asked = _plural(word) if plural else word
    assume(word not in STOP_WORDS and asked not in STOP_WORDS)
    memory = make_memory(f"About {word}.", title=f"Notes on {word}")
    query = f"what about {case(asked)}?"  # type: ignore[operator]
    assert query_terms(query) & trigger_words(memory)
