"""`services.knowledge.recall`: picking the memory and phrase that answer a question about time, and
asking the language model only when the resolved dates are not enough."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date

from services.knowledge.recall import LoadTimes, Search, recall, word_overlap
from services.llm.base import LLMUnavailable
from services.memory import Memory
from services.text.dates import TimeRef, times_for
from tests.fakes import ScriptedLLM
from tests.services.builders import make_memory

AS_OF = date(2026, 10, 31)


def setup(*memories: Memory) -> tuple[Search, LoadTimes]:
    def search(query: str, limit: int) -> list[tuple[Memory, float]]:
        scored = [(m, word_overlap(query, m.content)) for m in memories]
        return sorted(scored, key=lambda pair: -pair[1])[:limit]

    def load(ids: Sequence[str]) -> dict[str, list[TimeRef]]:
        found = {m.id: times_for(m.content, m.created_at) for m in memories if m.id in ids}
        return {k: v for k, v in found.items() if v}

    return search, load


def test_the_sentence_holding_the_phrase_decides() -> None:
    memory = make_memory(
        "Release 2.1.4 went out yesterday. Release 2.1.5 is planned for next Friday.",
        created_at="2026-06-10T09:00:00+00:00",  # a Wednesday
    )
    search, load = setup(memory)
    past = recall("When did release 2.1.4 go out?", search, load, AS_OF)
    future = recall("When is release 2.1.5 planned?", search, load, AS_OF)
    assert past.date == "2026-06-09"
    assert future.date == "2026-06-12"  # the first Friday after
    assert not past.inference_needed and not past.used_llm


def test_an_inferred_date_is_checked_by_the_model() -> None:
    memory = make_memory(
        "We deployed the ledger fix on Friday.", created_at="2026-06-10T09:00:00+00:00"
    )
    search, load = setup(memory)
    llm = ScriptedLLM(
        [json.dumps({"date": "2026-06-05", "confidence": 0.8, "reasoning": "last Friday"})]
    )
    answer = recall("When did we deploy the ledger fix?", search, load, AS_OF, llm)
    assert answer.inference_needed and answer.used_llm
    assert answer.date == "2026-06-05"
    assert "on Friday (2026-06-05)" in llm.prompts[0]


def test_a_model_that_is_down_leaves_the_metadata_answer() -> None:
    memory = make_memory(
        "We deployed the ledger fix on Friday.", created_at="2026-06-10T09:00:00+00:00"
    )
    search, load = setup(memory)
    llm = ScriptedLLM(default=LLMUnavailable("no model"))
    answer = recall("When did we deploy the ledger fix?", search, load, AS_OF, llm)
    assert answer.date == "2026-06-05" and not answer.used_llm
    assert any("no language model" in step for step in answer.reasoning)


def test_a_model_answer_outside_the_known_dates_is_refused() -> None:
    memory = make_memory(
        "We deployed the ledger fix on Friday.", created_at="2026-06-10T09:00:00+00:00"
    )
    search, load = setup(memory)
    llm = ScriptedLLM(default=json.dumps({"date": "1999-01-01", "confidence": 1, "reasoning": "x"}))
    answer = recall("When did we deploy the ledger fix?", search, load, AS_OF, llm)
    assert answer.date == "2026-06-05" and not answer.used_llm


def test_nothing_found() -> None:
    search, load = setup()
    answer = recall("When did it break?", search, load, AS_OF)
    assert answer.temporal_question and answer.date is None and answer.sources == []


def test_short_words_meet_their_inflected_forms() -> None:
    """'pin' in the question is the 'pin' of 'pinned' in the note (and 'fix' of 'fixed'):
    a three-letter word used to count only when written the same way."""
    assert word_overlap("esbuild pin", "we pinned esbuild") == 1.0
    assert word_overlap("fix made", "fixed and made it") == 1.0
    assert word_overlap("pin", "a pine tree") == 0.0
    assert word_overlap("use", "the user table") == 0.0


def test_a_dated_note_about_the_event_answers_though_another_names_it_better() -> None:
    """The note that says when ("the pin from 4 days ago") answers; the note that names
    the event best but carries no date only offers its recording day."""
    pinned = make_memory(
        "fix(deps): pin esbuild to exactly 0.24.0 — 0.24.1 has a regression.",
        id="pinned",
        created_at="2024-12-20T12:40:00+01:00",
    )
    reverted = make_memory(
        "Reverted the esbuild pin from 4 days ago: back to a caret range.",
        id="reverted",
        created_at="2024-12-24T12:00:00+09:00",
    )
    search, load = setup(pinned, reverted)
    answer = recall("When was esbuild pinned to 0.24.0?", search, load, AS_OF)
    assert answer.date == "2024-12-20"
    assert answer.sources == ["reverted"]


def test_the_date_a_memory_was_recorded_reads_as_a_sentence() -> None:
    """It had said "the closest one was recorded on 40 days ago: 2026-09-21"."""
    memory = make_memory("We chose FastAPI over Flask.", created_at="2026-09-21T10:00:00+00:00")
    search, load = setup(memory)
    how_long = recall("How long ago did we choose FastAPI?", search, load, AS_OF, None)
    assert "recorded 40 days ago, on 2026-09-21" in how_long.answer
    when = recall("When did we choose FastAPI?", search, load, AS_OF, None)
    assert "recorded on 2026-09-21" in when.answer and "on on" not in when.answer


def test_how_long_ago_a_vague_span_was_is_a_span_of_days() -> None:
    """ "The other day" answered "7 days ago", the span's far end as if it were the day."""
    memory = make_memory(
        "The other day we moved the docs build to mkdocs-material.",
        created_at="2026-10-30T10:00:00+00:00",
    )
    search, load = setup(memory)
    answer = recall("How long ago did we move the docs build?", search, load, AS_OF, None)
    (ref,) = load([memory.id])[memory.id]
    assert ref.granularity == "vague" and ref.resolved_end is not None
    near, far = (AS_OF - ref.resolved_end).days, (AS_OF - ref.resolved).days
    assert f"{near} to {far} days ago" in answer.answer, answer.answer


def test_when_something_was_dropped_is_answered_by_the_note_that_drops_it() -> None:
    """ "When did we drop Python 3.7?" was answered from the note that set 3.7 as the
    floor, which shares as many of the question's words as the one retiring it."""
    floor = make_memory(
        'Python floor for jinja: pyproject.toml has requires-python = ">=3.7".',
        id="floor",
        created_at="2026-02-03T10:00:00+00:00",
    )
    dropped = make_memory(
        "Bumped requires-python to >=3.8 in pyproject.toml. 3.7 is EOL and no longer tested.",
        id="dropped",
        created_at="2026-06-02T10:00:00+00:00",
    )
    search, load = setup(floor, dropped)
    answer = recall("When did we drop Python 3.7?", search, load, AS_OF, None)
    assert answer.sources == ["dropped"] and answer.recorded_on == "2026-06-02"
    # a question that retires nothing still goes by the words
    set_up = recall("When did we set the Python floor?", search, load, AS_OF, None)
    assert set_up.sources == ["floor"]
