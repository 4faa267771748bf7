"""A later note worded as a change goes above the earlier one search put first, when no
open conflict links them yet; searches that look for the matching note, not for what
holds now, keep their order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from services.errors import EnvironmentProblem
from services.knowledge.later_first import later_change_first
from services.memory import Memory
from services.search.results import ScoreBreakdown, SearchResponse, SearchResult
from services.storage.metrics import SearchMetrics
from tests.services.builders import make_memory

EARLIER = make_memory(
    "pre-commit runs black and flake8; flake8 settings live in setup.cfg.",
    id="old", project="app", title="lint stack", created_at="2025-01-05T10:00:00+00:00",
)  # fmt: skip
LATER = make_memory(
    "flake8 is gone: pre-commit runs ruff and ruff-format now, configured in pyproject.toml.",
    id="new", project="app", title="lint stack", created_at="2025-03-05T10:00:00+00:00",
)  # fmt: skip
QUESTION = "which tools lint the code in pre-commit"


class Vectors:
    """`VectorIndex.vectors_for` over fixed vectors: `cosine` between the two notes."""

    def __init__(self, cosine: float) -> None:
        self.found = {
            "old": np.array([1.0, 0.0]),
            "new": np.array([cosine, float(np.sqrt(max(0.0, 1 - cosine**2)))]),
        }

    def vectors_for(
        self, model_id: str, project: str | None, memory_ids: Sequence[str]
    ) -> dict[str, Any]:
        return {i: self.found[i] for i in memory_ids if i in self.found}


def searched(query: str, *memories: Memory, **marks: Any) -> SearchResponse:
    breakdown = ScoreBreakdown(0.5, 0.5, 0.0)
    results = [SearchResult(m, 1.0 - i / 10, breakdown) for i, m in enumerate(memories)]
    if marks:
        results[1] = replace(results[1], **marks)
    return SearchResponse(results, SearchMetrics("hybrid", "standard", len(query)), query=query)


def ranked(response: SearchResponse, cosine: float = 0.8) -> list[str]:
    reordered = later_change_first(Vectors(cosine), "model", response)  # type: ignore[arg-type]
    return [r.memory.id for r in reordered.results]


def test_a_later_change_goes_above_the_note_it_replaces() -> None:
    assert ranked(searched(QUESTION, EARLIER, LATER)) == ["new", "old"]
    assert ranked(searched(QUESTION, LATER, EARLIER)) == ["new", "old"]  # already first


@pytest.mark.parametrize(
    "query",
    [
        "flake8",  # an identifier
        "setup.cfg flake8",  # two words
        "TypeError: flake8 got an unexpected keyword argument 'config'",  # a pasted error
        "flake8 settings live in setup.cfg",  # a line the first result quotes as written
    ],
)
def test_searches_for_the_matching_note_keep_their_order(query: str) -> None:
    assert ranked(searched(query, EARLIER, LATER)) == ["old", "new"]


def test_only_a_later_change_about_the_same_thing_moves() -> None:
    assert ranked(searched(QUESTION, EARLIER, LATER), cosine=0.3) == ["old", "new"]
    plain = replace(LATER, content="pre-commit runs ruff and ruff-format, set in pyproject.toml.")
    assert ranked(searched(QUESTION, EARLIER, plain)) == ["old", "new"]  # no change wording
    same_day = replace(LATER, created_at="2025-01-05T16:00:00+00:00")
    assert ranked(searched(QUESTION, EARLIER, same_day)) == ["old", "new"]
    elsewhere = replace(LATER, project="other")
    assert ranked(searched(QUESTION, EARLIER, elsewhere)) == ["old", "new"]


def test_an_open_conflict_decides_instead() -> None:
    assert ranked(searched(QUESTION, EARLIER, LATER, outdated_by="old")) == ["old", "new"]
    response = searched(QUESTION, EARLIER, LATER)
    held = replace(response.results[0], replaces=("x",))
    response = replace(response, results=[held, *response.results[1:]])
    assert ranked(response) == ["old", "new"]


def test_two_helpers_of_one_file_are_two_subjects() -> None:
    """Template twins naming two functions of one file: the later deprecating its own
    helper does not replace the note on the other (corpus-2k)."""
    first = make_memory(
        "Don't use `build_stale_export` in new code for the invoice exporter: it is "
        "deprecated in favour of the v2 payment API.",
        id="old", project="app", type="decision", file_refs=["src/workers/export_tasks.py"],
        title="Deprecated payment helper in the invoice exporter",
        created_at="2026-04-13T10:00:00+00:00",
    )  # fmt: skip
    second = make_memory(
        "The v2 subscription API replaces `trim_queued_export` in the invoice exporter; the "
        "old helper only stays for existing callers.",
        id="new", project="app", type="decision", file_refs=["src/workers/export_tasks.py"],
        title="Deprecated subscription helper in the invoice exporter",
        created_at="2026-06-04T10:00:00+00:00",
    )  # fmt: skip
    query = "which payment API to use in new code for the invoice exporter"
    assert ranked(searched(query, first, second)) == ["old", "new"]


def test_an_unreadable_index_leaves_the_order() -> None:
    class Broken:
        def vectors_for(self, *args: Any) -> dict[str, Any]:
            raise EnvironmentProblem("the vector index cannot be read")

    moved = later_change_first(Broken(), "model", searched(QUESTION, EARLIER, LATER))  # type: ignore[arg-type]
    assert [r.memory.id for r in moved.results] == ["old", "new"]
