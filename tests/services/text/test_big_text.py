"""Readers of text on huge input: linear (or bounded) and the same as before on small."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from services.text import dates
from services.text import identifiers as ids
from services.text.dates import find_times
from services.text.identifiers import MAX_QUERY_CHARS, mentions, query_identifiers
from tests.services.big_text import big_text

TWO_MB = 2_000_000
_ANY = st.characters(blacklist_categories=("Cs",))


def test_dates_of_two_megabytes_resolve_in_bounded_time() -> None:
    text = big_text(TWO_MB)
    started = time.perf_counter()
    found = find_times(text, "2024-03-15T12:00:00+00:00")
    assert time.perf_counter() - started < 5
    assert len(found) > 8_000  # "last Tuesday" and "on Friday" in every block


def _sentence_before(text: str, start: int) -> str:
    """The sentence lookup as it was: every break scanned from the text's start."""
    begin = 0
    for cut in dates._SENTENCE_END.finditer(text):
        if cut.end() <= start:
            begin = cut.end()
        else:
            return text[begin : cut.start()]
    return text[begin:]


@given(st.text(st.sampled_from("ab .!?\n"), max_size=60), st.integers(0, 70))
def test_sentence_lookup_is_what_it_was(text: str, start: int) -> None:
    assert dates._sentence(text, start) == _sentence_before(text, start)


def test_identifiers_of_a_huge_query_are_read_from_its_start() -> None:
    text = big_text(TWO_MB)
    started = time.perf_counter()
    found = query_identifiers(text)
    assert time.perf_counter() - started < 5
    assert found == query_identifiers(text[:MAX_QUERY_CHARS])
    assert "worker_1.run" in found and "worker_500.run" not in found


_IDENTIFIER_TEXT = st.lists(
    st.sampled_from(
        [
            "src/pdf.py",
            "pdf.py",
            "pdf",
            "os.path",
            "path",
            "os",
            "`a.b`",
            "a.b.c",
            "snake_case",
            "camelCase(",
            "x",
            " ",
            ".",
            "/",
            "_",
            "-",
        ]
    ),
    max_size=20,
).map("".join)


@given(st.one_of(_IDENTIFIER_TEXT, st.text(_ANY, max_size=80)))
def test_containment_filter_is_what_it_was(query: str) -> None:
    kept = query_identifiers(query)
    # The identifiers before the filter, then the filter as it was (every pair).
    every = _unfiltered(query)
    assert kept == [i for i in every if not any(o != i and mentions(o, i) for o in every)]


def _unfiltered(query: str) -> list[str]:
    """`query_identifiers` up to its containment filter."""
    found: list[tuple[int, str]] = []
    for match in ids._BACKTICKED.finditer(query):
        span = match.group(1).strip()
        words = ids._WORD_IN_SPAN.findall(span)
        if len(words) == 1 and words[0] == span:
            found.append((match.start(1), span))
        else:
            found.extend((match.start(1), w) for w in words if ids._looks_like_code(w))
    for pattern in (ids._PATH, ids._DOTFILE, ids._DOTTED, ids._CAMEL, ids._SNAKE):
        found.extend((m.start(), m.group()) for m in pattern.finditer(query))
    found.extend((m.start(1), m.group(1)) for m in ids._CALL.finditer(query))
    result: list[str] = []
    for _, identifier in sorted(found, key=lambda item: item[0]):
        identifier = identifier.rstrip(".:")
        if len(identifier) >= 2 and identifier not in result:
            result.append(identifier)
    return result
