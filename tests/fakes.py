"""Fast, deterministic stand-ins for slow parts (tests only; the product never uses them).

`HashEmbedder` embeds a bag of hashed words: texts sharing words are similar, which is
enough to exercise dense retrieval without loading a model. `BrokenEmbedder` always
fails, like a missing model or a dead endpoint.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from services.embeddings.base import Vectors, normalise
from services.errors import EmbedderUnavailable

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    def __init__(self, dimension: int = 64, model_id: str = "test-hash") -> None:
        self._dimension = dimension
        self._model_id = model_id
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        rows = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                rows[row, int.from_bytes(digest, "little") % self._dimension] += 1.0
            rows[row, 0] += 0.01
        return normalise(rows)


class BrokenEmbedder(HashEmbedder):
    def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbedderUnavailable("test: the embedding model is missing")
