"""The `Embedder` protocol and what every provider shares.

An embedder turns texts into L2-normalised vectors of a fixed dimension. Heavy libraries
load on first use, once, behind a lock; a provider that cannot load or reach its model
raises `EmbedderUnavailable` with a message the user can act on.

A model reads only its first few hundred tokens, so every provider cuts a text to
`clip_chars(max_tokens)` characters before tokenizing it (`clipped`): tokenizing a 10 MB
memory whole, to keep 256 tokens of it, took 4.6 GB.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one unit-length float32 row per text out."""

    @property
    def model_id(self) -> str:
        """Stable id of the model; vectors of different ids are never mixed."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


# No tokenizer gives fewer than one token per this many characters on real text (a word
# piece is a few letters; whitespace runs are the exception, hence the margin), so a
# cut there never changes what the model reads of a normal text.
CHARS_PER_TOKEN_BOUND = 32


def clip_chars(max_tokens: int) -> int:
    """The characters of a text that can matter to a model reading `max_tokens` tokens."""
    return max_tokens * CHARS_PER_TOKEN_BOUND


def clipped(texts: Sequence[str], max_tokens: int) -> list[str]:
    """The texts cut to `clip_chars(max_tokens)` characters each (an empty one as a
    space: tokenizers refuse nothing, models need one token)."""
    limit = clip_chars(max_tokens)
    return [text[:limit] or " " for text in texts]


def normalise(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Vectors = (vectors / norms).astype(np.float32)
    return result
