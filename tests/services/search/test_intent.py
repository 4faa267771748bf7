"""The type-intent prior: wording that asks for a kind of memory, and nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.search.intent import intended_types
from services.types import MemoryType as T


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("design decisions behind pdf.py", {T.DECISION, T.ARCHITECTURE}),
        ("known pitfalls in scripts/export.py", {T.PITFALL, T.FIX}),
        ("what breaks easily in sync.ts?", {T.PITFALL, T.FIX}),
        ("conventions for code in internal/version/version.go", {T.CONVENTION, T.PATTERN}),
        ("how does ssh.go work?", {T.FACT, T.WORKFLOW}),
        ("what lessons did we learn from the outage", {T.LESSON, T.EPISODE}),
    ],
)
def test_wording_names_the_types(query: str, expected: set[T]) -> None:
    assert intended_types(query) == expected


@pytest.mark.parametrize(
    "query", ["warm_expired_log_record", "TypeError in useBoard", "refund amounts for invoices"]
)
def test_queries_without_type_words_ask_for_nothing(query: str) -> None:
    assert intended_types(query) == frozenset()


@given(st.text(max_size=300))
def test_any_text_gives_known_types(text: str) -> None:
    assert intended_types(text) <= set(T)
