"""Fast, deterministic stand-ins for slow parts (tests only; the product never uses them).

`HashEmbedder` embeds a bag of hashed words: texts sharing words are similar, which is
enough to exercise dense retrieval without loading a model. `BrokenEmbedder` always
fails, like a missing model or a dead endpoint. `ScriptedLLM` answers prompts from a
queue of scripted replies.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Sequence

import numpy as np

from services.errors import EmbedderUnavailable
from services.vectors.embeddings.base import Vectors, normalise

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


class ScriptedLLM:
    """An `LLM` that answers from a queue of scripted replies (a string, or an exception
    to raise), recording every prompt; with the queue empty it repeats `default`."""

    def __init__(
        self,
        replies: Sequence[str | BaseException] = (),
        model_id: str = "scripted",
        default: str | BaseException | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self._replies = list(replies)
        self._model_id = model_id
        self._default = default
        self._delay_s = delay_s
        self.prompts: list[str] = []
        self.schemas: list[dict[str, object] | None] = []
        self.timeouts: list[float] = []
        self.closed = 0
        self.running = 0
        self.most_running = 0
        self._guard = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(
        self,
        prompt: str,
        *,
        schema: dict[str, object] | None = None,
        max_tokens: int = 256,
        timeout_s: float = 60.0,
    ) -> str:
        with self._guard:
            self.running += 1
            self.most_running = max(self.most_running, self.running)
            self.prompts.append(prompt)
            self.schemas.append(schema)
            self.timeouts.append(timeout_s)
            reply = self._replies.pop(0) if self._replies else self._default
        try:
            if self._delay_s:
                time.sleep(self._delay_s)
            if reply is None:
                raise AssertionError(f"{self._model_id}: no scripted reply left for {prompt!r}")
            if isinstance(reply, BaseException):
                raise reply
            return reply
        finally:
            with self._guard:
                self.running -= 1

    def close(self) -> None:
        self.closed += 1
