"""Which search results a prompt is confidently about, read from the score breakdown.

The fused score cannot be thresholded as it is: its lexical part is normalised to the
best keyword hit of the query (the best hit of "run the tests" scores 1.0 on it however
weak), so every query has some result with a high total. What does not depend on the
other results is the dense similarity (cosine, 0–1) and whether the memory names a code
identifier of the prompt. A result is confident when

- it names a code identifier the prompt names and is not far from it in meaning, or
- it shares keywords with the prompt and is close to it in meaning, or
- it is very close in meaning on its own.

Of the confident results, those within DENSE_SPREAD of the closest are kept, at most
PROMPT_LIMIT, in the search's order. Before any search, a prompt with fewer than two
content words ("thanks!", "go on") asks for nothing.

Measured with the real MiniLM model on ../shared/bench/real-dev (270 notes, its 120
queries, and 18 prompts about nothing stored — "run the tests", "commit this please",
"why is this slow" — asked in each of its 5 projects): 92 of the 120 queries get a
relevant note (0.57 of the notes given are labelled relevant), and none of the 90
unrelated searches gets anything (their closest result had dense 0.46 with shared
keywords, 0.41 without).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from services.search.retrieval import SearchResult
from services.text.identifiers import query_identifiers
from services.text.words import STOPWORDS

MIN_CONTENT_WORDS = 2
UNSPACED_RUN = 4  # characters of a script without spaces that say as much as two words
DENSE_WITH_IDENTIFIER = 0.30
DENSE_WITH_KEYWORDS = 0.50
DENSE_ALONE = 0.62
DENSE_SPREAD = 0.15
PROMPT_LIMIT = 3


# What a person says to keep a conversation going: it asks for nothing.
CHAT_WORDS = frozenset(
    """
    thanks thank thx ty ok okay k please pls go ahead continue sure great nice cool yep
    yeah yup hi hello hey lgtm done good fine perfect awesome right alright agreed
    proceed looks
    """.split()
)
_WORD = re.compile(r"[^\W\d_][\w'-]*")


def content_words(prompt: str) -> list[str]:
    """The prompt's words that carry meaning: not function words, chat words or
    single letters."""
    found = (word.lower() for word in _WORD.findall(prompt[:2000]))
    return [w for w in found if len(w) > 1 and w not in STOPWORDS and w not in CHAT_WORDS]


def worth_searching(prompt: str) -> bool:
    """Whether the prompt says enough to look anything up: two content words, a code
    identifier, or a run of text in a script written without spaces (退款限额是多少)."""
    found = content_words(prompt)
    if len(found) >= MIN_CONTENT_WORDS or bool(query_identifiers(prompt)):
        return True
    return any(len(word) >= UNSPACED_RUN and not word.isascii() for word in found)


def confident(result: SearchResult) -> bool:
    """Whether `result` is about what the prompt asks (see the module docstring)."""
    score = result.breakdown
    if score.matched_identifiers and score.dense >= DENSE_WITH_IDENTIFIER:
        return True
    if score.lexical > 0 and score.dense >= DENSE_WITH_KEYWORDS:
        return True
    return score.dense >= DENSE_ALONE


def confident_results(
    results: list[SearchResult], skip: Collection[str] = (), limit: int = PROMPT_LIMIT
) -> list[SearchResult]:
    """The confident results close to the closest of them, at most `limit`, best first,
    leaving out the memories in `skip` (those count for "the closest" all the same: a
    weaker result does not move up because the best one was given before)."""
    chosen = [result for result in results if confident(result)]
    if not chosen:
        return []
    closest = max(result.breakdown.dense for result in chosen)
    near = [r for r in chosen if r.breakdown.dense >= closest - DENSE_SPREAD]
    return [r for r in near if r.memory.id not in skip][:limit]
