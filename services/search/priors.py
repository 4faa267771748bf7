"""What a query asks beyond its words, and which candidates meet it: the projects it
names, the days it asks about, whether it asks when (candidates that say when), what
holds now (candidates worded as a change) or about a person (turns that person spoke).

Each is a small prior of the hybrid score (`retrieval`), read once a search and only
when its weight counts; a lookup that fails leaves its prior empty, never the search.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

from services.errors import EngramError
from services.filters import MemoryFilter
from services.memory import Memory
from services.search.results import Weights
from services.storage.fulltext import fts_terms
from services.storage.memories import MemoryStore
from services.text.change_wording import asks_what_holds_now, says_change
from services.text.date_answers import is_temporal_question
from services.text.date_ranges import asked_range
from services.text.dates import local_date
from services.text.speakers import names_in, said_by_named
from services.types import MemoryType

log = logging.getLogger(__name__)

MAX_PROJECT_WORDS = 32
IMPLIED_MARGIN = 3.0  # nats: the implied project's words' lead (`implied_project`)
IMPLIED_TERM_CAP = 2.5  # nats one word adds at most: one rare word implies nothing alone
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
    named = frozenset[str]()
    if flt.project is None and weights.project:
        named = named_projects(store, query) or implied_project(store, query, memories)
    return Priors(
        named=named,
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


def implied_project(store: MemoryStore, query: str, memories: dict[str, Memory]) -> frozenset[str]:
    """The project a search over every project is about without naming it, read from
    its words: the candidates' project whose notes use them far more than the rest do
    ("how do crate releases get published": the Rust project's notes say "crate";
    "keep api keys out of the frontend bundle": the bundler's). Each project's
    log-likelihood ratio of the query's words against every other note, add-0.1
    smoothed; one project leads by `IMPLIED_MARGIN` nats, or none is implied."""
    projects = sorted({m.project for m in memories.values() if m.project is not None})
    terms = fts_terms(query, MAX_PROJECT_WORDS)
    if len(projects) < 2 or not terms:
        return frozenset()
    try:
        rows, holding = store.term_counts(projects, terms)
    except EngramError as error:  # a prior, not a reason to fail the search
        log.warning("could not count the query's words by project: %s", error)
        return frozenset()
    if not rows.get(""):
        return frozenset()
    ratio = {}
    for project in projects:
        ratio[project] = sum(
            max(-IMPLIED_TERM_CAP, min(IMPLIED_TERM_CAP, _log_ratio(holding, t, project, rows)))
            for t in terms
            if holding.get(("", t))
        )
    ranked = sorted(ratio.items(), key=lambda item: -item[1])
    best, score = ranked[0]
    if score >= IMPLIED_MARGIN and score - ranked[1][1] >= IMPLIED_MARGIN:
        return frozenset({best})
    return frozenset()


def _log_ratio(
    holding: dict[tuple[str, str], int], term: str, project: str, rows: dict[str, int]
) -> float:
    inside, outside = rows.get(project, 0), rows[""] - rows.get(project, 0)
    here = holding[(project, term)]
    return math.log((here + 0.1) / (inside + 1)) - math.log(
        (holding[("", term)] - here + 0.1) / (outside + 1)
    )


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
