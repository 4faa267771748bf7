"""What a search gives back: each result with its score and the breakdown of that score
(the parts the `retrieval.weight_*` settings weigh), and the weights themselves."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from services.memory import Memory
from services.storage.metrics import SearchMetrics


class RetrieverKind(StrEnum):
    HYBRID = "hybrid"
    DENSE = "dense"
    LEXICAL = "lexical"


@dataclass(frozen=True)
class Weights:
    """α, β, γ, δ, ε, ζ, η, θ, λ, μ, ν of the score (their defaults are in the settings schema)."""

    dense: float
    lexical: float
    identifier: float
    intent: float
    project: float = 0.0
    file: float = 0.0
    time: float = 0.0
    neighbour: float = 0.0
    says_when: float = 0.0
    says_change: float = 0.0
    speaker: float = 0.0


@dataclass(frozen=True)
class ScoreBreakdown:
    dense: float
    lexical: float
    identifier: float
    intent: float = 0.0
    matched_identifiers: tuple[str, ...] = ()
    best_chunk: int = -1
    sources: tuple[str, ...] = ()
    named_project: float = 0.0
    named_file: float = 0.0
    asked_time: float = 0.0
    neighbour: float = 0.0  # the best score of a memory written right before or after
    says_when: float = 0.0  # 1: a question asking when, a memory saying when
    says_change: float = 0.0  # 1: a search asking what holds now, a memory worded as a change
    speaker: float = 0.0  # 1: a conversation turn spoken by a person the question names


@dataclass(frozen=True)
class SearchResult:
    memory: Memory
    score: float
    breakdown: ScoreBreakdown
    outdated_by: str | None = None  # an open conflict says this memory replaced it
    # Open conflicts that name no holder: memories this one disagrees with, which of them
    # holds not decided yet.
    disagrees_with: tuple[str, ...] = ()
    follows: str | None = None  # the question (a memory ending in "?") this one answers
    # The results an open conflict says this memory replaced: it ranks above them,
    # whatever its own score.
    replaces: tuple[str, ...] = ()


@dataclass
class SearchResponse:
    results: list[SearchResult]
    metrics: SearchMetrics
    flags: list[str] = field(default_factory=list)
    query: str = ""  # what was searched for (the result hooks read it)
