"""Search: a later note worded as a change goes above the earlier note the search put
first, when no open conflict links the two yet.

The contradictions operation misses many replacements people write (real-dev and
fourteen other hand-written sets: about a quarter of the labelled ones), and search
then ranks the stale note first as often as not. Where the two best results are about
the same thing (cosine `MIN_COSINE`, and `current_truth.same_subject` without the
shared-file rule: two helpers of one file are two subjects), the second was written a
day or more after the first, is worded as a change ("no longer", "is gone", "since
3.18", "3.18.0 came out …") and the fitted scorers flag the pair from `MIN_SCORE`
(`is_conflict`: not a duplicate, nor the same said of other code), the second goes
first. Nothing is marked: unlike an open conflict this is a guess made at read time,
and the review never hears of it.

A search that is not a question in words is left as it ranked: one or two words (an
identifier, a file path), a pasted error, or a line the first result quotes as written
— there the user looks for the note that matches, not for what holds now.

Both bars were chosen leaving one set out at a time over the fifteen development sets
(`bench/fit_later_first.py`; every fold chose cosine 0.5 and score 0.5, the highest
bars with the best total on the other sets). Held out, the sets gain 6 points in all
(a point: a reciprocal rank, or a current-truth query whose stale notes rank below
its replacement); end to end, bench/real_dev.py's figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import re
from dataclasses import replace

from services.errors import EngramError
from services.knowledge.conflict_scorer import is_conflict
from services.knowledge.contradictions import reading_of
from services.knowledge.cues import READ_CHARS, compare
from services.knowledge.current_truth import same_subject
from services.knowledge.pair_features import features, read_pair_text
from services.knowledge.supersession import unit_vector
from services.memory import Memory, written_at
from services.search.results import SearchResponse, SearchResult
from services.text.change_wording import from_releases, says_change
from services.text.stacktrace import error_in_text
from services.vectors.index import VectorIndex

MIN_COSINE = 0.5
MIN_SCORE = 0.5
MIN_GAP_S = 24 * 3600
MIN_QUERY_WORDS = 3
_WORD = re.compile(r"\w+")


def later_change_first(
    vectors: VectorIndex, model_id: str, response: SearchResponse
) -> SearchResponse:
    """`response` with its second result first when that is a later change of the
    first (see the module docstring)."""
    if len(response.results) < 2 or not _asks_in_words(response.query):
        return response
    first, second = response.results[0], response.results[1]
    if not _may_replace(first, second) or _quotes(first.memory, response.query):
        return response
    earlier, later = first.memory, second.memory
    try:
        found = vectors.vectors_for(model_id, earlier.project, [earlier.id, later.id])
    except EngramError:  # the index is unreadable: the search answers as it ranked
        return response
    if earlier.id not in found or later.id not in found:
        return response
    cosine = float(unit_vector(found[earlier.id]) @ unit_vector(found[later.id]))
    if cosine < MIN_COSINE:
        return response
    old, new = read_pair_text(earlier), read_pair_text(later)
    pair = features(old, new, cosine, compare(reading_of(earlier), reading_of(later)))
    if not is_conflict(pair, (old, new), MIN_SCORE)[0]:
        return response
    return replace(response, results=[second, first, *response.results[2:]])


def _may_replace(first: SearchResult, second: SearchResult) -> bool:
    """Whether `second` can be a later change of `first` that no open conflict orders."""
    earlier, later = first.memory, second.memory
    if earlier.project != later.project or second.outdated_by is not None:
        return False
    if first.replaces or first.outdated_by is not None or later.id in first.disagrees_with:
        return False  # an open conflict already placed or marked them
    if written_at(later) - written_at(earlier) < MIN_GAP_S or not same_subject(
        earlier, later, by_file=False
    ):
        return False
    text = f"{later.title}. {later.content[:READ_CHARS]}"
    return says_change(text) or bool(from_releases(text))


def _asks_in_words(query: str) -> bool:
    return len(query.split()) >= MIN_QUERY_WORDS and error_in_text(query) is None


def _quotes(memory: Memory, query: str) -> bool:
    """Whether `memory` holds the query's words as written, in order."""
    asked = " ".join(_WORD.findall(query.lower()))
    text = f"{memory.title} {memory.content[:READ_CHARS]}".lower()
    return asked in " ".join(_WORD.findall(text))
