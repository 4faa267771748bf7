"""Opening Chroma quickly: the `overrides` checks are skipped only inside the block,
and the embedding model loaded ahead on a thread gives the same vectors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from overrides import EnforceOverrides, override

from services.vectors.embeddings.onnx_minilm import OnnxMiniLMEmbedder
from services.vectors.quick_import import override_checks_skipped


class _Base(EnforceOverrides):
    def run(self, value: int) -> int:
        return value


def test_inside_the_block_override_only_marks_the_method() -> None:
    module = importlib.import_module("overrides.overrides")
    original = module._overrides
    with override_checks_skipped():

        class Loose(_Base):
            @override
            def run(self, value: int, extra: int) -> int:  # type: ignore[override]
                return value + extra

    assert Loose().run(1, 2) == 3
    assert Loose.run.__override__ is True  # type: ignore[attr-defined]
    assert module._overrides is original
    with pytest.raises(TypeError):  # outside it, the package checks again

        class Checked(_Base):
            @override
            def run(self, value: int, extra: int) -> int:  # type: ignore[override]
                return value + extra


def test_a_model_loaded_ahead_embeds_as_one_loaded_on_demand() -> None:
    ahead = OnnxMiniLMEmbedder()
    ahead.preload()
    on_demand = OnnxMiniLMEmbedder()
    texts = ["retry the upload on 503", "pin ruff"]
    assert np.allclose(ahead.embed(texts), on_demand.embed(texts), atol=1e-6)


def test_a_process_that_ends_while_the_model_loads_ends_cleanly() -> None:
    """The load thread is waited for at exit: ending mid-load used to abort the process
    (onnxruntime's state torn down under the thread)."""
    import subprocess
    import sys

    code = (
        "from services.vectors.embeddings.onnx_minilm import OnnxMiniLMEmbedder\n"
        "OnnxMiniLMEmbedder().preload()\n"
    )
    for _ in range(3):
        ended = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
        assert ended.returncode == 0, ended.stderr.decode()[-500:]
