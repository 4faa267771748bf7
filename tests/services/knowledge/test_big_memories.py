"""Cues and pair features of huge memories: bounded, read from the memory's start."""

from __future__ import annotations

import time

from services.knowledge.cues import READ_CHARS, READ_SENTENCES, compare, read
from services.knowledge.pair_features import features, read_pair_text
from tests.services.big_text import big_text
from tests.services.builders import make_memory

TWO_MB = 2_000_000


def test_two_huge_memories_are_read_and_compared_in_bounded_time() -> None:
    first = make_memory(big_text(TWO_MB), project="p")
    second = make_memory(big_text(TWO_MB).replace("retry limit", "retry count"), project="p")
    started = time.perf_counter()
    a = read(first.id, first.title, first.content)
    b = read(second.id, second.title, second.content)
    cues = compare(a, b)
    texts = read_pair_text(first), read_pair_text(second)
    pair = features(*texts, 0.9, cues)
    assert time.perf_counter() - started < 5
    assert a.statements and cues.subject > 0 and pair["cosine"] == 0.9
    assert len(a.sentences) <= READ_SENTENCES and len(texts[0].sentences) <= READ_SENTENCES


def test_a_memory_is_read_by_its_start() -> None:
    filler = "Nothing to see in this line at all. " * (READ_CHARS // 36 + 10)
    late = filler + "The upload timeout is 90 seconds."
    early = "The upload timeout is 90 seconds. " + filler
    assert not read("a", "notes", late).statements
    assert read("b", "notes", early).statements
    assert "90" not in read_pair_text(make_memory(late)).numbers
    assert "90" in read_pair_text(make_memory(early)).numbers


def test_short_memories_are_read_whole() -> None:
    content = "We moved off Sentry. " * 10 + "The upload timeout is 90 seconds now (it was 30)."
    reading = read("a", "Upload timeout", content)
    assert {(s.value, s.old) for s in reading.statements if s.attribute == "timeout"} == {
        ("90", False),
        ("30", True),
    }
