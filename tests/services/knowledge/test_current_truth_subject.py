"""Which two notes the write-time judge reads as being about one thing."""

from __future__ import annotations

from services.knowledge.current_truth import same_subject
from tests.services.builders import make_memory


def test_a_qualified_name_and_its_last_segment_are_one_subject() -> None:
    moved = make_memory(
        "Host extractor moved out of axum in 0.8 — it's `axum_extra::extract::Host` now."
    )
    removed = make_memory(
        "Host, Scheme and OptionalPath are removed from axum-extra on main. "
        "Read the header or `uri().authority()` yourself."
    )
    assert same_subject(moved, removed) and same_subject(removed, moved)


def test_template_twins_about_other_code_stay_apart() -> None:
    refund = make_memory("`issue_refund` retries three times before giving up.")
    price = make_memory("`price_for_plan` retries three times before giving up.")
    assert not same_subject(refund, price)
    short = make_memory("`io.Copy` streams the body.")
    other = make_memory("`bufio.Reader` wraps the copy.")
    assert not same_subject(short, other)  # the word "copy" is not the name `Copy`


def test_a_shared_file_or_a_note_without_code_is_enough() -> None:
    first = make_memory("`a_thing` is slow.", file_refs=["src/a.py"])
    second = make_memory("`b_thing` is fast.", file_refs=["src/a.py"])
    assert same_subject(first, second)
    assert same_subject(make_memory("plain words only"), first)
