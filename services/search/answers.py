"""Answers after questions: a memory that asks (a conversation turn ending in "?") is
found by a question worded like it, but what answers it is the memory written next. In
the results, the memory written right after a question, within the hour, follows it."""

from __future__ import annotations

import logging
from dataclasses import replace

from services.errors import EngramError
from services.filters import MemoryFilter
from services.search.results import ScoreBreakdown, SearchResult
from services.storage.memories import MemoryStore

log = logging.getLogger(__name__)

ANSWER_WITHIN_S = 3600.0  # turns of one conversation are seconds or minutes apart


def answers_after_questions(
    store: MemoryStore, ranked: list[SearchResult], flt: MemoryFilter, limit: int
) -> list[SearchResult]:
    """The `limit` best of `ranked`, each memory that asks a question followed by the
    memory written right after it (when that passes `flt`), marked `follows`."""
    top = ranked[:limit]
    asking = [r.memory.id for r in top if r.memory.content.rstrip().endswith("?")]
    if not asking:
        return top
    try:
        answers = store.written_next(asking, ANSWER_WITHIN_S)
        allowed = store.filter_ids(sorted(set(answers.values())), flt)
    except EngramError as error:  # an ordering aid, not a reason to fail the search
        log.warning("could not look up the answers to questions found: %s", error)
        return top
    by_id = {r.memory.id: r for r in ranked}
    ordered: list[SearchResult] = []
    placed: set[str] = set()
    for result in top:
        if result.memory.id in placed:
            continue
        ordered.append(result)
        placed.add(result.memory.id)
        answer_id = answers.get(result.memory.id)
        if answer_id is None or answer_id in placed or answer_id not in allowed:
            continue
        answer = by_id.get(answer_id) or SearchResult(
            allowed[answer_id], result.score, ScoreBreakdown(0.0, 0.0, 0.0)
        )
        ordered.append(replace(answer, follows=result.memory.id))
        placed.add(answer_id)
    return ordered[:limit]
