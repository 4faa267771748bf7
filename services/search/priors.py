"""What a query asks beyond its words, and which candidates meet it: the projects it
names, the days it asks about, whether it asks when (candidates that say when), what
holds now (candidates worded as a change) or about a person (turns that person spoke).

Each is a small prior of the hybrid score (`retrieval`), read once a search and only
when its weight counts; a lookup that fails leaves its prior empty, never the search.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

from services.errors import EngramError
from services.filters import MemoryFilter
from services.memory import Memory
from services.search.results import Weights
from services.storage.memories import MemoryStore
from services.text.change_wording import asks_what_holds_now, says_change
from services.text.date_answers import is_temporal_question
from services.text.dates import asked_range, local_date
from services.text.speakers import names_in, said_by_named
from services.types import MemoryType

log = logging.getLogger(__name__)

MAX_PROJECT_WORDS = 32
_NAME_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]")


@dataclass(frozen=True)
class Priors:
    """One query's priors; a scored memory meets each or not."""

    named: frozenset[str] = frozenset()  # projects a search over every project names
    asked: tuple[date, date] | None = None  # the days the query asks about
    dated: frozenset[str] = frozenset()  # a question asking when: candidates that say when
    changed: frozenset[str] = frozenset()  # asking what holds now: candidates worded as a change
    spoken: frozenset[str] = frozenset()  # turns spoken by a person the query names

    def written_then(self, memory: Memory) -> bool:
        """Whether `memory` was written on the days the query asks about."""
        if self.asked is None:
            return False
        try:
            written = local_date(memory.created_at)
        except (TypeError, ValueError):
            return False
        return self.asked[0] <= written <= self.asked[1]


def read_priors(
    store: MemoryStore,
    weights: Weights,
    query: str,
    flt: MemoryFilter,
    memories: dict[str, Memory],
) -> Priors:
    """The priors of a hybrid search for `query` over the candidates `memories`."""
    return Priors(
        named=named_projects(store, query)
        if flt.project is None and weights.project
        else frozenset(),
        asked=asked_range(query, datetime.now(UTC).date()) if weights.time else None,
        dated=saying_when(store, query, memories) if weights.says_when else frozenset(),
        changed=saying_change(query, memories) if weights.says_change else frozenset(),
        spoken=spoken_by_named(query, memories) if weights.speaker else frozenset(),
    )


def named_projects(store: MemoryStore, query: str) -> frozenset[str]:
    """The projects the query names in its words ("pydantic", "vite's", `httpx/_main.py`)."""
    words = [word for word in dict.fromkeys(_NAME_WORD.findall(query)) if len(word) >= 3]
    words = words[:MAX_PROJECT_WORDS]
    candidates = words + [form(word) for word in words for form in (str.lower, str.capitalize)]
    try:
        return frozenset(store.projects_among(candidates))
    except EngramError as error:  # a prior, not a reason to fail the search
        log.warning("could not look up projects named in the query: %s", error)
        return frozenset()


def saying_when(store: MemoryStore, query: str, memories: dict[str, Memory]) -> frozenset[str]:
    """For a question asking when, the candidates that say when (hold a dated phrase)."""
    if not memories or not is_temporal_question(query):  # cheap, so asked before the lookup
        return frozenset()
    try:
        return frozenset(store.dated_among(list(memories)))
    except EngramError as error:  # a prior, not a reason to fail the search
        log.warning("could not look up which memories say when: %s", error)
        return frozenset()


def saying_change(query: str, memories: dict[str, Memory]) -> frozenset[str]:
    """For a search asking what holds now, the candidates worded as a change."""
    if not memories or not asks_what_holds_now(query):
        return frozenset()
    return frozenset(
        memory.id
        for memory in memories.values()
        if says_change(f"{memory.title}\n{memory.content}")
    )


def spoken_by_named(query: str, memories: dict[str, Memory]) -> frozenset[str]:
    """The candidates that are conversation turns spoken by a person the query names."""
    names = names_in(query)
    if not memories or not names:
        return frozenset()
    return frozenset(
        memory.id
        for memory in memories.values()
        if memory.type is MemoryType.EPISODE and said_by_named(memory.content, names)
    )
