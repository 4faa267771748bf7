"""Shared fixtures: every test gets its own data folder and can have an `Engram` over it
with the fast fake embedder (tests of the real model are marked `slow` and load it for
real); the Engram's close releases its Chroma client, so a test can reopen the same
folder as a new process would."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from app.composition import Engram, open_engram
from tests.fakes import HashEmbedder

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", deadline=None, max_examples=50, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "default")

# The first 60 memories of ../shared/bench/corpus-2k, kept here so the tests do not
# depend on the benchmark folder being beside the clone.
CORPUS = Path(__file__).resolve().parent / "data"
CORPUS_MEMORIES = CORPUS / "memories-sample.jsonl"


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the user's data folder or inherits ENGRAM_* settings, and each
    runs in its own folder (not this repository: `engram add` in a repository takes
    its project)."""
    monkeypatch.chdir(tmp_path)
    for key in list(os.environ):
        if key.startswith("ENGRAM_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(tmp_path / "default-data"))
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def engram(data_dir: Path) -> Iterator[Engram]:
    instance = open_engram(data_dir, embedder=HashEmbedder())
    yield instance
    instance.close()


@pytest.fixture
def generous_model_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Model budgets scale with the memories an operation looks at (a tiny store gets
    no model calls); tests of the model paths use a few memories, so they get time as
    if the store were large."""
    import services.llm.base

    monkeypatch.setattr(services.llm.base, "PER_ITEM_S", 100.0)
