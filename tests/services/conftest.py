"""Fixtures of the services tests: a bare store, and an Engram whose Chroma client is
released at the end (so a test can reopen the same folder as a new process would)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.store import MemoryStore
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
