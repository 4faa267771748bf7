"""How Engram loads a model into llama.cpp (llama-cpp-python), for the chat model and
the GGUF embedder alike."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_REPACK_LOCK = threading.Lock()


@contextlib.contextmanager
def weights_not_repacked() -> Iterator[None]:
    """Models load without llama.cpp's extra buffer types (weights repacked for the
    CPU's wider instructions): with llama-cpp-python 0.3.36 built on a CPU with AVX-512
    and AMX, the first decode of a repacked model (SmolLM2; the GGUF embedder's model)
    crashed the process (SIGSEGV); unpacked it answers. `Llama` takes no argument for
    it, so the defaults it reads are adjusted while it loads (a version without the
    field ignores the attribute)."""
    import llama_cpp.llama_cpp as native

    defaults = native.llama_model_default_params

    def unpacked() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    with _REPACK_LOCK:
        native.llama_model_default_params = unpacked
        try:
            yield
        finally:
            native.llama_model_default_params = defaults
