"""Terms a note says plainly or only negated, and the clash of two notes that say
opposite things of one subject."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.knowledge.claim_polarity import clashing_terms, read_polarity
from services.knowledge.pair_features import features, read_pair_text
from tests.services.builders import make_memory


def test_terms_of_a_negated_clause_are_negated_and_the_rest_affirmed() -> None:
    read = read_polarity("caching", "The client never caches redirects, but it caches lookups.")
    assert "redirect" in read.negated
    assert "lookup" in read.affirmed
    assert "cach" not in read.negated | read.affirmed  # said both ways: no polarity


def test_a_term_one_note_negates_and_the_other_affirms_clashes() -> None:
    before = read_polarity("plugins", "Single-binary builds never get the `plugins` folder.")
    after = read_polarity("plugins", "Single-binary builds now get the `plugins` folder too.")
    assert {"build", "folder"} <= clashing_terms(before, after)
    assert "never" not in before.negated  # the negation itself is no term


def test_two_notes_that_agree_do_not_clash() -> None:
    one = read_polarity("tests", "Don't run the slow suite locally; CI runs it.")
    two = read_polarity("tests", "There is no need to run the slow suite locally, CI does.")
    assert not clashing_terms(one, two)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300))
def test_any_text_is_read_and_the_clash_is_symmetric(first: str, second: str) -> None:
    a, b = read_polarity("t", first), read_polarity("t", second)
    assert not a.negated & a.affirmed
    assert clashing_terms(a, b) == clashing_terms(b, a)


def test_the_pair_feature_counts_clashing_terms() -> None:
    earlier = make_memory(
        "Single-binary builds never get the `plugins` folder.",
        title="plugins",
        created_at="2024-01-01T10:00:00+00:00",
    )
    later = make_memory(
        "Single-binary builds now get the `plugins` folder too.",
        title="plugins",
        created_at="2025-01-01T10:00:00+00:00",
    )
    found = features(read_pair_text(earlier), read_pair_text(later), cosine=0.8)
    assert found["polarity_clash"] >= 1
    same = features(read_pair_text(earlier), read_pair_text(earlier), cosine=1.0)
    assert same["polarity_clash"] == 0


def test_a_code_span_with_punctuation_stays_one_term_of_its_clause() -> None:
    nil_fails = read_polarity(
        "SetArgs(nil)", "Careful: `cmd.SetArgs(nil)` does NOT help — nil means os.Args."
    )
    nil_works = read_polarity("test args", "`cmd.SetArgs(nil)` is enough in command tests.")
    assert "cmd.setargs(nil)" in nil_fails.negated
    assert "cmd.setargs(nil)" in nil_works.affirmed
    assert "cmd.setargs(nil)" in clashing_terms(nil_fails, nil_works)


def test_a_verb_that_says_no_is_a_negation_too() -> None:
    """Two notes saying autogenerate overlooks server_default changes agree, whether one
    says "misses" and the other "doesn't notice"."""
    lesson = read_polarity("lesson", "Autogenerate misses server_default changes.")
    pitfall = read_polarity("pitfall", "Autogenerate doesn't notice server_default changes.")
    assert not clashing_terms(lesson, pitfall)
    for said in ("The linter ignores vendored files.", "The build fails to pick up the env."):
        assert read_polarity("n", said).negated
