"""Helpers for driving the real CLI in-process: `engram --data-dir DIR ...` through
click's CliRunner, with real SQLite, real Chroma and the real ONNX MiniLM embedder.

Loading the ONNX model costs ~0.7 s per process, so these tests build it once and hand
the same `OnnxMiniLMEmbedder` to every in-process invocation (`build_embedder` still runs
for other providers; tests/integration load it the product's way, in subprocesses).

Click ≥ 8.2 always keeps stdout and stderr apart (`result.stdout`, `result.stderr`;
`result.output` is both interleaved), so there is no `mix_stderr` to set.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import app.cli  # noqa: F401  (registers every command on the group)
from app import composition
from app.cli.common import cli
from tests.conftest import CORPUS_MEMORIES


def corpus_records(count: int = 30) -> list[dict[str, Any]]:
    """The first `count` memories of the benchmark corpus, as dictionaries."""
    with CORPUS_MEMORIES.open(encoding="utf-8") as handle:
        return [json.loads(next(handle)) for _ in range(count)]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


class EngramCli:
    """`engram --data-dir DATA_DIR ARGS...`, run in this process."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.runner = CliRunner()

    def __call__(
        self, *args: Any, input: str | bytes | None = None, env: dict[str, str | None] | None = None
    ) -> Result:
        return self.runner.invoke(
            cli,
            ["--data-dir", str(self.data_dir), *map(str, args)],
            input=input,
            env=env,
            catch_exceptions=False,
        )

    def ok(self, *args: Any, **kwargs: Any) -> Result:
        result = self(*args, **kwargs)
        assert result.exit_code == 0, (
            f"engram {' '.join(map(str, args))} exited {result.exit_code}\n"
            f"stdout: {result.stdout}\nstderr: {result.stderr}"
        )
        return result

    def json(self, *args: Any, **kwargs: Any) -> Any:
        """Run with --json and parse stdout (which must be exactly one JSON value)."""
        return json.loads(self.ok(*args, "--json", **kwargs).stdout)

    def add(self, content: str, *options: Any, **kwargs: Any) -> str:
        return str(self.json("add", content, *options, **kwargs)["id"])

    def ids(self, *options: Any) -> list[str]:
        return [m["id"] for m in self.json("list", "--limit", 1000, *options)["memories"]]

    def all_ids(self) -> set[str]:
        return set(self.ids("--mode", "exhaustive"))


_shared_onnx: list[Any] = []


@pytest.fixture(autouse=True)
def _share_the_onnx_model(monkeypatch: pytest.MonkeyPatch) -> None:
    real_build = composition.build_embedder

    def build(settings: Any) -> Any:
        if settings.get("embedder.provider") != "onnx":
            return real_build(settings)
        if not _shared_onnx:
            _shared_onnx.append(real_build(settings))
        return _shared_onnx[0]

    monkeypatch.setattr(composition, "build_embedder", build)


@pytest.fixture
def engram_cli(data_dir: Path) -> EngramCli:
    return EngramCli(data_dir)


@pytest.fixture(scope="session")
def _corpus30_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder holding the first 30 corpus memories, embedded; built once."""
    root = tmp_path_factory.mktemp("corpus30")
    source = write_jsonl(root / "corpus30.jsonl", corpus_records(30))
    clean_env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("ENGRAM_")}
    runner = EngramCli(root / "data")
    report = json.loads(runner.ok("import", source, "--json", env=clean_env).stdout)
    assert report == {
        "imported": 30,
        "skipped": 0,
        "queued_for_embedding": 0,
        "superseded": [],
        "contradictions_restored": 0,
        "already_stored": [],
        "redacted": {"count": 0, "kinds": {}},
    }
    stats = json.loads(runner.ok("stats", "--json", env=clean_env).stdout)
    assert stats["waiting_for_embedding"] == 0
    return root / "data"


@pytest.fixture
def corpus_cli(_corpus30_template: Path, data_dir: Path) -> Iterator[EngramCli]:
    """A private copy of the 30-memory data folder."""
    shutil.copytree(_corpus30_template, data_dir)
    yield EngramCli(data_dir)
