"""Fixtures of the services tests: a bare store, an Engram whose Chroma client is
released at the end (so a test can reopen the same folder as a new process would), and
the consolidation context over that Engram."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.rem.cycle import RemContext
from services.storage.memories import MemoryStore
from tests.fakes import HashEmbedder


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    instance = MemoryStore(tmp_path / "store" / "engram.sqlite3")
    yield instance
    instance.close()


def close_engram(instance: object) -> None:
    instance.vectors.close()  # type: ignore[attr-defined]
    instance.close()  # type: ignore[attr-defined]


@pytest.fixture
def engram(data_dir: Path) -> Iterator[object]:
    from app.composition import open_engram

    instance = open_engram(data_dir, embedder=HashEmbedder())
    yield instance
    close_engram(instance)


@pytest.fixture
def context(engram: object) -> RemContext:
    """The REM cycle's context over the test Engram, without an LLM."""
    return RemContext(
        engram.service,  # type: ignore[attr-defined]
        engram.vectors,  # type: ignore[attr-defined]
        engram.embedder.model_id,  # type: ignore[attr-defined]
    )
