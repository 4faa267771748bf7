"""Keyword terms and trigger words of a huge text: linear, and as before on small ones."""

from __future__ import annotations

import re
import time

from hypothesis import given
from hypothesis import strategies as st

from services.storage.fulltext import fts_terms
from services.storage.query_terms import trigger_word_forms
from services.text.words import KEYWORD_STOPWORDS
from tests.services.big_text import big_text
from tests.services.builders import make_memory


def _fts_terms_before(text: str, max_terms: int = 64) -> list[str]:
    """The term selection as it was (a list membership test over every word)."""
    terms: list[str] = []
    for word in re.findall(r"\w+", text.lower()):
        for part in word.split("_"):
            if part and part not in KEYWORD_STOPWORDS and part not in terms:
                terms.append(part)
    return terms[:max_terms]


@given(st.text(max_size=400), st.integers(0, 80))
def test_fts_terms_are_what_they_were(text: str, max_terms: int) -> None:
    assert fts_terms(text, max_terms) == _fts_terms_before(text, max_terms)


def test_terms_of_two_megabytes_in_bounded_time() -> None:
    memory = make_memory(big_text(2_000_000), title="Big log")
    started = time.perf_counter()
    terms = fts_terms(f"{memory.title} {memory.content}")
    forms = trigger_word_forms(memory)
    assert time.perf_counter() - started < 5
    assert len(terms) == 64 and terms[:2] == ["big", "log"]
    assert "worker_1.run" in forms.values()
