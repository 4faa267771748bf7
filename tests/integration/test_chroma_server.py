"""Vectors in a real Chroma server (`chroma run`), the team set-up: the same store and
search behaviour as with the local folder, through `VectorIndex(host=..., port=...)`
and through the settings `vectors.backend=server`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from click.testing import CliRunner

import app.cli  # noqa: F401  (registers the commands)
from app.cli.common import cli
from app.composition import open_engram
from app.settings import Settings
from services.errors import VectorStoreUnavailable
from services.search.retrieval import RetrieverKind
from services.vectors.index import VectorIndex, VectorItem, collection_name
from tests.fakes import HashEmbedder
from tests.integration.conftest import free_port

pytestmark = pytest.mark.slow

CHROMA = Path(sys.executable).parent / "chroma"


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    if not CHROMA.exists() and shutil.which("chroma") is None:
        pytest.skip("the `chroma` server binary is not installed in the virtualenv")
    binary = str(CHROMA if CHROMA.exists() else shutil.which("chroma"))
    folder = tmp_path_factory.mktemp("chroma-server")
    host, port = "127.0.0.1", free_port()
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen(
        [binary, "run", "--path", str(folder / "data"), "--host", host, "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(
                    f"chroma run exited with {process.returncode}: "
                    f"{(folder / 'server.log').read_text(errors='replace')}"
                )
            try:
                if httpx.get(f"http://{host}:{port}/api/v2/heartbeat", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("chroma run did not answer its heartbeat within 60 s")
            time.sleep(0.2)
        yield host, port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _unit(values: list[float]) -> list[float]:
    vector = np.asarray(values, dtype=np.float32)
    return (vector / np.linalg.norm(vector)).tolist()


def test_vector_index_against_the_server(chroma_server: tuple[str, int]) -> None:
    host, port = chroma_server
    index = VectorIndex(host=host, port=port)
    assert index.location == f"http://{host}:{port}"
    model = "test-server-index"
    index.drop_model(model)
    index.upsert(
        model,
        "alpha",
        [
            VectorItem("a-1", -1, _unit([1, 0, 0, 0])),
            VectorItem("a-1", 0, _unit([1, 1, 0, 0])),
            VectorItem("a-2", -1, _unit([0, 1, 0, 0])),
        ],
    )
    index.upsert(model, None, [VectorItem("n-1", -1, _unit([0, 0, 1, 0]))])
    assert index.count(model) == 4

    hits = index.query(model, np.asarray(_unit([1, 0.1, 0, 0]), dtype=np.float32), 10, ["alpha"])
    assert hits[0].memory_id == "a-1" and hits[0].chunk_index == -1
    assert hits[0].similarity == pytest.approx(0.995, abs=0.01)
    assert {h.memory_id for h in hits} == {"a-1", "a-2"}
    everywhere = index.query(model, np.asarray(_unit([0, 0, 1, 0]), dtype=np.float32), 10, None)
    assert everywhere[0].memory_id == "n-1"
    assert (
        index.query(model, np.asarray(_unit([1, 0, 0, 0]), dtype=np.float32), 5, ["nobody"]) == []
    )

    assert index.memory_ids(model) == {
        collection_name(model, "alpha"): {"a-1", "a-2"},
        collection_name(model, None): {"n-1"},
    }
    assert set(index.vectors_for(model, "alpha", ["a-1", "zz"])) == {"a-1"}
    index.delete_memories(model, "alpha", ["a-1"])
    assert index.count(model) == 2
    index.drop_model(model)
    assert index.count(model) == 0


def test_store_and_search_through_server_settings(
    chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    host, port = chroma_server
    settings = Settings(
        tmp_path / "settings.json",
        environ={
            "ENGRAM_VECTORS_BACKEND": "server",
            "ENGRAM_VECTORS_HOST": host,
            "ENGRAM_VECTORS_PORT": str(port),
        },
    )
    embedder = HashEmbedder(model_id="test-hash-server")
    engram = open_engram(tmp_path / "data", embedder=embedder, settings=settings)
    try:
        assert engram.vectors.location == f"http://{host}:{port}"
        engram.vectors.drop_model(embedder.model_id)
        kept = engram.service.add(
            {"content": "flamingo queue workers drain nightly"}, default_project="team"
        )
        other = engram.service.add(
            {"content": "penguin cache warms on deploy"}, default_project="team"
        )
        assert engram.store.pending_count(embedder.model_id) == 0
        assert engram.vectors.count(embedder.model_id) == 2
        response = engram.service.search("flamingo queue", kind=RetrieverKind.DENSE)
        assert response.results[0].memory.id == kept.id
        assert response.flags == []
        engram.service.delete(other.id)
        assert engram.vectors.count(embedder.model_id) == 1
        assert engram.start_up().queued == 0
    finally:
        engram.close()
    # nothing of it is in a local folder
    assert not (tmp_path / "data" / "chroma").exists()


def test_cli_with_the_server_backend(chroma_server: tuple[str, int], tmp_path: Path) -> None:
    host, port = chroma_server
    env = {
        "ENGRAM_VECTORS_BACKEND": "server",
        "ENGRAM_VECTORS_HOST": host,
        "ENGRAM_VECTORS_PORT": str(port),
    }
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(
            cli,
            ["--data-dir", str(tmp_path / "data"), *args, "--json"],
            env=env,
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    project = f"team-{port}"
    first = run("add", "Deploys go out with blue-green releases.", "-p", project)
    run("add", "Postgres is our database because of JSONB.", "-p", project)
    assert run("stats")["waiting_for_embedding"] == 0
    found = run("search", "which database do we use", "-p", project, "--retriever", "dense")
    assert found["flags"] == []
    assert found["results"][0]["title"] == "Postgres is our database because of JSONB."
    run("delete", "--yes", first["id"])
    after = run("search", "blue-green deploys", "-p", project, "--retriever", "dense")
    assert first["id"] not in [r["id"] for r in after["results"]]
    assert not (tmp_path / "data" / "chroma").exists()


def test_server_down_keeps_memories_and_searches_by_keywords(tmp_path: Path) -> None:
    dead = free_port()
    index = VectorIndex(host="127.0.0.1", port=dead)
    with pytest.raises(VectorStoreUnavailable, match=f"http://127.0.0.1:{dead}"):
        index.count("m")
    settings = Settings(
        tmp_path / "settings.json",
        environ={"ENGRAM_VECTORS_BACKEND": "server", "ENGRAM_VECTORS_PORT": str(dead)},
    )
    engram = open_engram(tmp_path / "data", embedder=HashEmbedder(), settings=settings)
    try:
        memory = engram.service.add({"content": "flamingo queue workers drain nightly"})
        assert engram.store.pending_count("test-hash") == 1
        response = engram.service.search("flamingo queue")
        assert [r.memory.id for r in response.results] == [memory.id]
        assert "vectors_unavailable" in response.flags
    finally:
        engram.close()
