"""Embeddings from a GGUF model file through llama-cpp-python (any model llama.cpp
can run in embedding mode). A text is cut to what the context can hold before it is
tokenized (`base.clipped`), then to the context's tokens."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from services.errors import EmbedderUnavailable
from services.llm.llama_native import weights_not_repacked
from services.vectors.embeddings.base import Vectors, clipped, normalise


class GGUFEmbedder:
    def __init__(self, model_path: Path, context_tokens: int = 512, threads: int = 2) -> None:
        self._path = Path(model_path)
        self._context_tokens = context_tokens
        self._threads = threads
        self._lock = threading.Lock()
        self._llama: Any = None
        self._dimension: int | None = None

    @property
    def model_id(self) -> str:
        return f"gguf:{self._path.name}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._load()
        assert self._dimension is not None
        return self._dimension

    def _load(self) -> None:
        with self._lock:
            if self._llama is not None:
                return
            if not self._path.is_file():
                raise EmbedderUnavailable(f"{self._path}: GGUF model file not found")
            try:
                from llama_cpp import Llama
            except ImportError as error:
                raise EmbedderUnavailable(f"llama-cpp-python is not installed ({error})") from None
            try:
                with weights_not_repacked():
                    llama = Llama(
                        model_path=str(self._path),
                        embedding=True,
                        n_ctx=self._context_tokens,
                        n_threads=self._threads,
                        verbose=False,
                        pooling_type=1,
                    )
            except Exception as error:  # llama.cpp raises ValueError/RuntimeError variously
                raise EmbedderUnavailable(f"{self._path}: cannot load ({error})") from None
            self._dimension = int(llama.n_embd())
            self._llama = llama

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self._llama is None:
            self._load()
        assert self._dimension is not None
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        rows = []
        with self._lock:
            for text in clipped(texts, self._context_tokens):
                tokens = self._llama.tokenize(text.encode("utf-8"))
                tokens = tokens[: self._context_tokens - 2]
                kept = self._llama.detokenize(tokens).decode("utf-8", errors="ignore")
                rows.append(np.asarray(self._llama.embed(kept or " "), dtype=np.float32))
        return normalise(np.vstack(rows))
