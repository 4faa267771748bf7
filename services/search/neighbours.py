"""Context in time: memories written minutes apart in one project (the turns of a
conversation, the notes of one work session) share a context that each one alone may not
spell out. "Her name is Shadow!" is about the pup adopted one turn earlier; "That letter
is really awesome!" is about the letter the next turn says a brother wrote. So a hit
lends a share λ of its score (`retrieval.weight_neighbour`) to the memory written right
before and right after it, and the turn that holds the answer without the question's
words rises beside the one that has them. Memories written far apart (most notes) have
no such neighbours and keep their scores."""

from __future__ import annotations

import logging
from dataclasses import replace

from services.errors import EngramError
from services.search.results import SearchResult
from services.storage.memories import MemoryStore

log = logging.getLogger(__name__)

# The turns of one exchange are seconds apart. Notes written in one sitting, minutes
# apart, are mostly about different things (real-dev: 600 s lowered scoped R@5).
NEIGHBOUR_WITHIN_S = 120.0
# Only hits that can still reach the results are looked at: a few times the page.
LOOKED_AT_MIN = 30
LOOKED_AT_PER_RESULT = 3


def with_neighbours_in_time(
    store: MemoryStore, ranked: list[SearchResult], weight: float, limit: int
) -> list[SearchResult]:
    """`ranked` with each of its best hits raised by `weight` × the best score among the
    scored memories written right before or after it, best first again."""
    if weight <= 0 or len(ranked) < 2:
        return ranked
    looked_at = ranked[: max(LOOKED_AT_MIN, LOOKED_AT_PER_RESULT * limit)]
    try:
        around = store.written_around([r.memory.id for r in looked_at], NEIGHBOUR_WITHIN_S)
    except EngramError as error:  # a ranking aid, not a reason to fail the search
        log.warning("could not look up the memories written around the hits: %s", error)
        return ranked
    if not around:
        return ranked
    own = {r.memory.id: r.score for r in ranked}
    raised: list[SearchResult] = []
    for result in ranked:
        lent = max((own.get(n, 0.0) for n in around.get(result.memory.id, ())), default=0.0)
        if lent <= 0:
            raised.append(result)
            continue
        breakdown = replace(result.breakdown, neighbour=lent)
        raised.append(replace(result, score=result.score + weight * lent, breakdown=breakdown))
    raised.sort(key=lambda r: (-r.score, -r.memory.confidence, r.memory.id))
    return raised
