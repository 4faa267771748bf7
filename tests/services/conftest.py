"""Fixtures of the services tests: a bare store, and the consolidation context over the
shared `engram` fixture (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.composition import Engram
from services.rem.cycle import RemContext
from services.storage.memories import MemoryStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    instance = MemoryStore(tmp_path / "store" / "engram.sqlite3")
    yield instance
    instance.close()


@pytest.fixture
def context(engram: Engram) -> RemContext:
    """The REM cycle's context over the test Engram, without an LLM."""
    return RemContext(engram.service, engram.vectors, engram.embedder.model_id)
