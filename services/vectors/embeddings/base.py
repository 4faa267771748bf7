"""The `Embedder` protocol and what every provider shares.

An embedder turns texts into L2-normalised vectors of a fixed dimension. Heavy libraries
load on first use, once, behind a lock; a provider that cannot load or reach its model
raises `EmbedderUnavailable` with a message the user can act on.
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


def normalise(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Vectors = (vectors / norms).astype(np.float32)
    return result
