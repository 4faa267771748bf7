"""A later note that moves a value "from X to Y" replaces the note stating X."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.contradictions import reading_of
from services.knowledge.cues import compare
from services.knowledge.value_moves import moved_value, moves, stated
from tests.services.builders import make_memory

EARLIER = make_memory(
    '`Static::new("/assets").redirect_dirs()`: a request for `/assets/img` gets 302 '
    "Found to `/assets/img/`, so relative links inside the page resolve.",
    id="early",
    title="trailing slash redirect for static dirs",
    project="web",
    created_at="2026-01-05T10:00:00Z",
)
LATER = make_memory(
    "The 2.4 release changed the slash redirect for static dirs from 302 to 307; our "
    "e2e test asserting FOUND had to change.",
    id="late",
    title="static dir redirect status",
    project="web",
    created_at="2026-03-05T10:00:00Z",
)


def test_moves_read_values_with_units_versions_and_backticks() -> None:
    found = moves("Bumped the MSRV from `1.75` to 1.82. The timeout went from 5s to 10 s.")
    assert [(m.old, m.new) for m in found] == [("1.75", "1.82"), ("5", "10")]
    assert {"msrv", "bumped"} <= found[0].about and "from" not in found[0].about
    assert moves("from 2 to 2 nothing moved") == ()


def test_releases_are_compared_without_trailing_zeros() -> None:
    assert "1.9" in stated("pinned", "we pin v1.9.0 for now")


def test_a_later_move_from_the_stated_value_replaces_the_earlier_note() -> None:
    cues = compare(reading_of(EARLIER), reading_of(LATER))
    assert cues.replaces == "late"
    assert cues.moved is not None and (cues.moved["a"], cues.moved["b"]) == ("302", "307")
    assert cues.score() >= 0.5 and "moved_value" in cues.kinds()


def test_a_move_needs_two_shared_subject_words_and_the_old_value_stated() -> None:
    other_subject = make_memory(
        "Cache entries expire after 302 seconds on the edge nodes.",
        id="other",
        title="edge cache",
        project="web",
        created_at="2026-01-05T10:00:00Z",
    )
    assert compare(reading_of(other_subject), reading_of(LATER)).moved is None
    said = stated("slash redirect", "redirect for static dirs is 307 already")
    assert moved_value(said, moves(LATER.content)) is None  # the new value is stated too


@given(st.text(max_size=300))
def test_any_text_reads_without_error(text: str) -> None:
    for move in moves(text):
        assert move.old != move.new
    assert all(v == v.lower() for v in stated("t", text))
