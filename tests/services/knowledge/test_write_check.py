"""The reason `engram add` gives for "this may replace X"."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.conflict_records import reading_of
from services.knowledge.cues import Cues, compare
from services.knowledge.pair_features import PairText, read_pair_text
from services.knowledge.write_check import why
from tests.services.builders import make_memory


def _why(first: str, second: str) -> str:
    earlier = make_memory(first, title="upgrade", created_at="2025-01-01T10:00:00+00:00")
    later = make_memory(second, title="upgrade", created_at="2025-06-01T10:00:00+00:00")
    cues = compare(reading_of(earlier), reading_of(later))
    return why(read_pair_text(earlier), read_pair_text(later), cues)


def test_a_version_step_names_the_old_and_the_new_version() -> None:
    assert "1.4 → 1.9" in _why("We pin pool-lib 1.4 for now.", "pool-lib 1.9 is required now.")


def test_two_products_versions_are_not_read_as_one_step() -> None:
    """Flask-SQLAlchemy 2.5 beside SQLAlchemy 1.4.49, then SQLAlchemy 2.0.25: "2.5 →
    2.0.25" would pair the two products' versions."""
    said = _why(
        "We run Flask-SQLAlchemy 2.5 with SQLAlchemy 1.4.49.",
        "Upgraded: SQLAlchemy 2.0.25 everywhere now.",
    )
    assert "2.5 → 2.0.25" not in said


def _kind(first: str, second: str) -> str:
    from services.knowledge.conflict_judge import change_kind
    from services.knowledge.pair_features import features

    earlier = make_memory(first, title="billing client", created_at="2025-01-01T10:00:00+00:00")
    later = make_memory(second, title="billing client", created_at="2025-01-02T10:00:00+00:00")
    cues = compare(reading_of(earlier), reading_of(later))
    old, new = read_pair_text(earlier), read_pair_text(later)
    return change_kind(old, new, features(old, new, 0.8, cues), cues)


def test_a_later_note_naming_the_old_value_it_replaces_is_a_supersession() -> None:
    """No change verb: "60 s, was 30 s" names what it replaces (it had been proposed as
    a contradiction, with no holder)."""
    assert _kind("The request timeout is 30s.", "timeout: 60s, was 30s") == "supersedes"
    assert _kind("The request timeout is 30s.", "The request timeout is 60s.") == "contradiction"
    # a heads-up relayed against a note that shows its source stays a disagreement
    shown = "It still runs on Node 14: `engines.node` is written from `MINIMAL_NODE` in a.js."
    relayed = "Heads-up: the package needs Node 22 for end users as well."
    assert _kind(shown, relayed) == "contradiction"


def test_a_guess_of_the_scorer_says_what_it_rests_on() -> None:
    """ "same subject, different statement" had told a new user nothing."""

    def texts(first: str, second: str, title: str = "notes") -> tuple[PairText, PairText]:
        return (
            read_pair_text(make_memory(first, title=title, created_at="2025-01-01T00:00:00+00:00")),
            read_pair_text(
                make_memory(second, title=title, created_at="2025-06-01T00:00:00+00:00")
            ),
        )

    lines = texts("Request lines over 4094 bytes fail.", "Header fields over 100 fail.", "a")
    assert why(*lines, Cues(0.0)).startswith("other numbers: 4094 vs 100")
    titled = texts("Workers recycle themselves.", "Workers are recycled by the arbiter.")
    assert why(*titled, Cues(0.0)).startswith("the same title")


@given(st.sampled_from(["undefined", "escaping", "autoescape", "retries", "enabled"]), st.text())
def test_a_term_in_a_reason_is_a_word_the_notes_write(word: str, around: str) -> None:
    """A new user read "one says not what the other says of test, undefin": the reason
    showed the stems it compares."""
    from services.knowledge.write_check import _as_written
    from services.storage.query_terms import stem

    text = f"{around.lower()} {word} {around.lower()}"
    written = _as_written(stem(word), text)
    assert stem(written) == stem(word) and written in text
