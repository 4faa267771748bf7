"""Token counting: one pluggable function used for chunking and budgets.

The default is a fast approximation of a BPE tokenizer: a token per four characters of
a word (at least one), one per punctuation mark. It leans
towards over-counting, which keeps budgets safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable

TokenCounter = Callable[[str], int]

_WORD = re.compile(r"\w+")
_LONG_WORD = re.compile(r"\w{8,}")
_OTHER = re.compile(r"[^\w\s]")


def approximate_tokens(text: str) -> int:
    """Approximate token count of `text` (0 for empty text): a token per four
    characters of a word (at least one), one per other non-space character."""
    words = len(_WORD.findall(text))
    extra = sum(len(word) // 4 - 1 for word in _LONG_WORD.findall(text))
    return words + extra + len(_OTHER.findall(text))


count_tokens: TokenCounter = approximate_tokens
