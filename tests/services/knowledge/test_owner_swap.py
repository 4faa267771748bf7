"""`owner_swap`: two short notes saying one thing of two owners, each with its own value,
both hold (a new user's two services' ports had been flagged as a contradiction at 1.00)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.conflict_records import reading_of
from services.knowledge.conflict_scorer import is_conflict
from services.knowledge.cues import compare
from services.knowledge.owner_swap import MAX_TOKENS, owners_differ, swapped_values, word_sequence
from services.knowledge.pair_features import features, read_pair_text
from tests.services.builders import make_memory


def differ(first: str, second: str) -> bool:
    return owners_differ(word_sequence(first), word_sequence(second))


def test_one_thing_said_of_two_owners_with_their_own_values() -> None:
    assert differ(
        "The auth service listens on port 8001 in dev.",
        "The billing service listens on port 8002 in dev.",
    )
    assert differ("The connect timeout is 5s.", "The read timeout is 30s.")
    assert differ("Caching is enabled for the auth API.", "Caching is disabled for the admin API.")
    # a word only one has is said of its own owner
    assert differ("The auth service listens on 8001.", "The billing service listens on 8005 now.")


def test_owners_named_by_an_index_of_their_own() -> None:
    # a new user's walkthrough: the second worker's note was offered as replacing the first
    assert differ("Worker 1 owns shard 1.", "Worker 2 owns shard 2.")
    assert differ("Shard 3 is served by worker 3.", "Shard 4 is served by worker 4.")
    assert differ("The replica a1 lives on node a1.", "The replica a2 lives on node a2.")


def test_an_index_changed_at_one_place_or_a_count_is_a_change() -> None:
    # the same worker, another shard: it moved
    assert not differ("Worker 1 owns shard 1.", "Worker 1 owns shard 2.")
    # two different swaps: not one index for another
    assert not differ("Worker 1 owns shard 1.", "Worker 2 owns shard 3.")
    # a plural in front of the number counts
    assert not differ("Retries 3, backoff 3 seconds.", "Retries 5, backoff 5 seconds.")
    # a value with a unit, repeated, is a changed value
    assert not differ("Timeout is 30s and retry after 30s.", "Timeout is 60s and retry after 60s.")


def test_a_change_of_one_owners_value_is_not_another_owner() -> None:
    assert not differ("The request timeout is 30s.", "The request timeout is 60s now.")
    # a generic qualifier renames the same thing
    assert not differ("The request timeout is 30s.", "The default timeout is 60s.")
    # a product swapped with its version is the value
    assert not differ("We deploy with Helm 3.12.", "We deploy with Kustomize 5.0.")
    # a negation said of the other owner
    assert not differ(
        "The auth service listens on 8001.", "The billing service never listens on 8002."
    )
    # another owner but the same value: nothing says they differ
    assert not differ("The auth service listens on 8001.", "The billing service listens on 8001.")
    # not a qualifier of one head word
    assert not differ("Auth listens on port 8001.", "Billing answers on port 8002.")
    # a new user's two defaults of one dev server: a verb swapped before "on" and one
    # owner named in full and short are no two owners
    assert not differ(
        "The dev server runs on port 5000 by default.",
        "The development server listens on port 8000 by default.",
    )
    assert not differ("The dev server uses port 5000.", "The development server uses port 8000.")
    # long notes say more than one thing
    long = " ".join(["word"] * MAX_TOKENS)
    assert not differ(
        f"The auth service is on 8001. {long}", f"The billing service is on 8002. {long}"
    )


def test_the_judge_lets_both_hold_and_still_flags_a_change() -> None:
    def flagged(first: str, second: str) -> bool:
        a = make_memory(first, created_at="2025-01-01T10:00:00+00:00")
        b = make_memory(second, created_at="2025-03-01T10:00:00+00:00")
        texts = (read_pair_text(a), read_pair_text(b))
        cues = compare(reading_of(a), reading_of(b))
        return is_conflict(features(*texts, 0.95, cues), texts)[0]

    assert not flagged(
        "The auth service listens on port 8001 in dev.",
        "The billing service listens on port 8002 in dev.",
    )
    assert flagged(
        "The auth service listens on port 8001 in dev.",
        "The auth service listens on port 8005 in dev now.",
    )
    assert not flagged("Worker 1 owns shard 1.", "Worker 2 owns shard 2.")


def swapped(first: str, second: str) -> tuple[str, str] | None:
    return swapped_values(word_sequence(first), word_sequence(second))


def test_a_copy_with_a_value_changed_says_another_value_of_the_same_thing() -> None:
    """A new user's "listens on port 8002 now, no longer 8001" after "listens on port
    8001" had been offered as repeating it (0.99): the scorers, fitted on reworded
    notes, read a near copy as a restatement."""
    assert swapped(
        "The billing service listens on port 8001.",
        "The billing service listens on port 8002 now, no longer 8001.",
    ) == ("8001", "8002")
    assert swapped("The request timeout is 30s.", "The request timeout is 60s.") == ("30s", "60s")
    assert swapped("The timeout is 30s.", "The timeout is 60s (was 30s).") == ("30s", "60s")
    assert swapped("Caching is enabled.", "Caching is disabled now.") == ("enabled", "disabled")


def test_two_owners_a_negation_an_addition_or_other_words_are_no_changed_value() -> None:
    assert (
        swapped("The auth service listens on 8001.", "The billing service listens on 8002.") is None
    )
    assert swapped("Worker 1 owns shard 1.", "Worker 2 owns shard 2.") is None
    assert swapped("The service listens on 8001.", "The service never listens on 8002.") is None
    assert (
        swapped("The pool holds 10 connections.", "The pool holds 10 connections, 5 idle.") is None
    )
    assert swapped("Use 2 spaces in YAML.", "Use 4 spaces in Python.") is None
    assert swapped("The timeout is 30s.", "The timeout is 30s.") is None


def test_the_judge_flags_a_copy_with_a_value_changed() -> None:
    a = make_memory("The billing service listens on port 8001.")
    b = make_memory("The billing service listens on port 8002 now, no longer 8001.")
    texts = (read_pair_text(a), read_pair_text(b))
    flagged, score = is_conflict(
        features(*texts, 0.86, compare(reading_of(a), reading_of(b))), texts
    )
    assert flagged and score >= 0.9


WORDS = st.sampled_from(
    "the auth billing service port timeout is on listens 8001 8002 5s 30s not now default "
    "uses v1.2 enabled disabled read connect".split()
)


@given(st.lists(WORDS, max_size=20), st.lists(WORDS, max_size=20))
def test_any_two_texts_are_read_without_error_and_a_text_has_one_owner(
    first: list[str], second: list[str]
) -> None:
    a, b = " ".join(first), " ".join(second)
    assert differ(a, b) in (True, False)
    assert not differ(a, a)
    assert swapped(a, a) is None


@given(st.text(max_size=300), st.text(max_size=300))
def test_any_text_at_all(first: str, second: str) -> None:
    assert differ(first, second) in (True, False)
    assert len(word_sequence(first)) <= MAX_TOKENS


def test_notes_of_one_sitting_are_read_without_their_dates_unless_they_clash() -> None:
    """The scorer learnt from the sets that two notes written the same day are often two
    people's opposite rules; an assistant restating a rule minutes later is not. Dates
    are read as unknown for such a pair, unless a sentence of one says the opposite of a
    sentence of the other."""
    from services.knowledge.conflict_scorer import dates_unread, probability
    from services.knowledge.conflict_weights import WEIGHTS

    minutes = {name: mean for name, (_, mean, _) in WEIGHTS.items()}
    minutes.update(gap_days=0.0, same_day=1.0, sentence_polarity_clash=0.0)
    unread = dates_unread(minutes, WEIGHTS)
    assert unread["gap_days"] == WEIGHTS["gap_days"][1]
    assert unread["same_day"] == WEIGHTS["same_day"][1]
    assert probability(minutes) < probability({**minutes, "sentence_polarity_clash": 1.0})
    clashing = {**minutes, "sentence_polarity_clash": 1.0}
    assert dates_unread(clashing, WEIGHTS) == clashing
    weeks = {**minutes, "gap_days": 3.0, "same_day": 0.0}
    assert dates_unread(weeks, WEIGHTS) == weeks


def test_a_copy_with_another_value_weeks_later_replaces_the_first() -> None:
    """ "setup.cfg sets flake8 max-line-length = 88." and, a year later, the same
    sentence with 119: a new user saw both marked as disagreeing, the old one first."""
    from services.knowledge.conflict_scorer import kind_of

    def pair(gap_days: float) -> str:
        a = make_memory(
            "setup.cfg sets flake8 max-line-length = 88.", created_at="2025-03-01T10:00:00+00:00"
        )
        b = make_memory(
            "setup.cfg sets flake8 max-line-length = 119.", created_at="2026-03-01T10:00:00+00:00"
        )
        texts = (read_pair_text(a), read_pair_text(b))
        found = {
            **features(*texts, 0.95, compare(reading_of(a), reading_of(b))),
            "gap_days": gap_days,
        }
        return kind_of(*texts, found)

    assert pair(math.log1p(365)) == "supersedes"
    assert pair(0.0) == "contradiction"  # the same day: two people, one of them wrong
