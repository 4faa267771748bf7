"""Token counting: one pluggable function used for chunking and budgets.

The default is a fast approximation of a BPE tokenizer: a word piece per short word, one
more for every four characters past the fourth, one per punctuation mark. It leans
towards over-counting, which keeps budgets safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable

TokenCounter = Callable[[str], int]

_PIECE = re.compile(r"\w+|[^\w\s]")


def _piece_tokens(piece: str) -> int:
    if len(piece) == 1 or not (piece[0].isalnum() or piece[0] == "_"):
        return 1
    return 1 + max(0, len(piece) - 4) // 4


def approximate_tokens(text: str) -> int:
    """Approximate token count of `text` (0 for empty text)."""
    return sum(_piece_tokens(match.group()) for match in _PIECE.finditer(text))


count_tokens: TokenCounter = approximate_tokens
