"""Token counting: one pluggable function used for chunking and budgets.

The default approximates the BPE tokenizers of small local LLMs (measured against
SmolLM2's, the embedded LLM: `python bench/token_count.py`): a run of ASCII letters of
up to 4 characters is one token, a longer run one per 4 characters (rounded up), and
every other visible character — digit, underscore, punctuation, non-ASCII letter — one
token. It over-counts by about a fifth on memories and assembled context and
under-counts under 1 % of texts, so a budget kept by this count is kept in real tokens.
"""

from __future__ import annotations

import re
from collections.abc import Callable

TokenCounter = Callable[[str], int]

_LETTERS = re.compile(r"[A-Za-z]+")
_OTHER = re.compile(r"[^A-Za-z\s]")


def approximate_tokens(text: str) -> int:
    """Approximate token count of `text` (0 for empty text)."""
    letters = sum(1 if len(run) <= 4 else (len(run) + 3) // 4 for run in _LETTERS.findall(text))
    return letters + len(_OTHER.findall(text))


count_tokens: TokenCounter = approximate_tokens
