"""The installed `engram` command, one real process per call, when things go wrong
around it: the Chroma folder deleted behind its back, the database locked by another
process, and more memories than it embeds inline (the background embedder)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from app.background import INLINE_LIMIT
from tests.conftest import CORPUS_MEMORIES
from tests.integration.conftest import ENGRAM, clean_env, run_engram

pytestmark = pytest.mark.slow


def _corpus(count: int, start: int = 0) -> list[dict[str, Any]]:
    with CORPUS_MEMORIES.open(encoding="utf-8") as handle:
        lines = handle.readlines()[start : start + count]
    return [json.loads(line) for line in lines]


def _import(
    data_dir: Path, tmp_path: Path, records: list[dict[str, Any]], env: dict[str, str] | None = None
) -> dict[str, Any]:
    source = tmp_path / f"import-{len(records)}.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = run_engram(data_dir, "import", source, "--json", env=env)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def _json(data_dir: Path, *args: object, env: dict[str, str] | None = None) -> Any:
    result = run_engram(data_dir, *args, "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _exported(data_dir: Path) -> list[dict[str, Any]]:
    result = run_engram(data_dir, "export", "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    return sorted((json.loads(line) for line in result.stdout.splitlines()), key=lambda m: m["id"])


def test_chroma_folder_deleted_behind_engrams_back(tmp_path: Path) -> None:
    data = tmp_path / "data"
    records = _corpus(12)
    assert _import(data, tmp_path, records)["imported"] == 12
    before = _exported(data)
    shutil.rmtree(data / "chroma")

    found = _json(
        data,
        "search",
        "what happens with an empty list of targets in mergeDefaults",
        "-p",
        "shipit",
        "--retriever",
        "dense",
        "-n",
        3,
        "--no-record",  # reading is recorded; the export below compares the records
    )
    assert found["flags"] == []
    assert found["results"][0]["id"] == "shipit-m00001"
    assert (data / "chroma").is_dir()
    assert _json(data, "stats")["waiting_for_embedding"] == 0
    assert _exported(data) == before

    shutil.rmtree(data / "chroma")
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"id": "q1", "query": "emit_batched_session retries", "project": "ledgerly"})
        + "\n"
        + json.dumps({"id": "q2", "query": "mergeDefaults targets"})
        + "\n",
        encoding="utf-8",
    )
    # the benchmark contract, on the real stdout of a real process: one line per query
    for retriever in ("dense", "hybrid"):
        batch = run_engram(
            data, "search", "--json", "--retriever", retriever, "--limit", 2,
            "--queries-file", queries,
        )  # fmt: skip
        assert batch.returncode == 0, batch.stderr
        answers = [json.loads(line) for line in batch.stdout.splitlines()]
        assert [a["id"] for a in answers] == ["q1", "q2"]
        assert answers[0]["results"][0]["id"] == "ledgerly-m00001"
        assert answers[1]["results"][0]["id"] == "shipit-m00001"


def test_database_locked_by_another_process(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _import(data, tmp_path, _corpus(5))
    before = _exported(data)
    env = clean_env(ENGRAM_STORE_BUSY_TIMEOUT_MS="200", ENGRAM_STORE_WRITE_WAIT_S="1")

    holder = sqlite3.connect(data / "engram.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for args in (
            ["add", "written while locked"],
            ["delete", "--yes", "shipit-m00001"],
            ["edit", "shipit-m00002", "--title", "renamed"],
            ["cleanup"],
        ):
            started = time.monotonic()
            result = run_engram(data, *args, env=env)
            assert result.returncode == 3, (args, result.stderr)
            assert "locked" in result.stderr, (args, result.stderr)
            assert "Your memories are intact." in result.stderr
            assert "bug" not in result.stderr
            assert time.monotonic() - started < 60
        # reading still works while another process writes
        found = run_engram(data, "search", "mergeDefaults", "--json", env=env)
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"][0]["id"] == "shipit-m00001"
    finally:
        holder.execute("ROLLBACK")
        holder.close()

    assert _exported(data) == before
    added = run_engram(data, "add", "written after the lock", "--json", env=env)
    assert added.returncode == 0, added.stderr
    assert len(_exported(data)) == 6


def _engram_processes(data_dir: Path) -> list[int]:
    """Pids of processes whose command line names this data folder (Linux /proc)."""
    needle = str(data_dir).encode()
    found: list[int] = []
    if not Path("/proc").is_dir():
        return found
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_large_import_embeds_in_the_background(tmp_path: Path) -> None:
    data = tmp_path / "data"
    records = _corpus(INLINE_LIMIT + 8)
    source = tmp_path / "many.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    try:
        result = run_engram(data, "import", source, "--json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert (report["imported"], report["skipped"]) == (len(records), 0)
        assert 0 < report["queued_for_embedding"] <= len(records)
        assert "being embedded in the background" in result.stderr

        lexical = _json(data, "search", "mergeDefaults", "--retriever", "lexical", "-n", 1)
        assert lexical["results"][0]["id"] == "shipit-m00001"

        waited = run_engram(data, "embed", "--wait", "--json")
        assert waited.returncode == 0, waited.stderr
        assert json.loads(waited.stdout)["waiting"] == 0
        assert _json(data, "stats")["waiting_for_embedding"] == 0
        dense = _json(
            data,
            "search",
            "empty list of targets is a no-op",
            "-p",
            "shipit",
            "--retriever",
            "dense",
            "-n",
            1,
        )
        assert dense["results"][0]["id"] == "shipit-m00001"
        log = (data / "embed.log").read_text(encoding="utf-8", errors="replace")
        assert "Traceback" not in log
    finally:
        deadline = time.monotonic() + 60
        while _engram_processes(data) and time.monotonic() < deadline:
            time.sleep(0.2)
    assert _engram_processes(data) == []


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """`engram show ID | head -c 100`: the reader leaves early; no traceback, no "bug",
    the status a closed pipe gets (1, as click and Python's documentation give it)."""
    data = tmp_path / "data"
    long_note = {"id": "long", "content": "A long pasted log line. " * 12_000}  # ~290 KB
    _import(data, tmp_path, [long_note])
    process = subprocess.Popen(  # more than a pipe holds, so the write meets the close
        [str(ENGRAM), "--data-dir", str(data), "show", "long"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(COLUMNS="200"),
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(100)
    process.stdout.close()  # the reader leaves after a little, like `head -c 100`
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 1, stderr
    assert stderr == ""


def test_one_long_memory_embedded_in_the_background_is_named_in_the_singular(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    text = " ".join(f"line {n} of a long build log with a retry and a timeout" for n in range(4000))
    try:
        result = run_engram(data, "add", "-", "-p", "logs", "--no-check", input=text)
        assert result.returncode == 0, result.stderr
        assert "1 memory is being embedded in the background; until then it is" in result.stderr
        waited = run_engram(data, "embed", "--wait", "--json")
        assert waited.returncode == 0, waited.stderr
    finally:
        deadline = time.monotonic() + 60
        while _engram_processes(data) and time.monotonic() < deadline:
            time.sleep(0.2)
    assert _engram_processes(data) == []


def test_a_gguf_embedder_file_that_is_not_there_is_said_and_nothing_waits_on_it(
    data_dir: Path, tmp_path: Path
) -> None:
    """A new user's missing GGUF path was accepted, and every command then claimed to be
    re-embedding in the background, which never finished."""
    run_engram(data_dir, "add", "We pin httpx below 0.28.")
    missing = tmp_path / "nowhere" / "model.gguf"
    run_engram(data_dir, "config", "set", "embedder.provider", "gguf")
    said = run_engram(data_dir, "config", "set", "embedder.gguf_path", missing)
    assert said.returncode == 0 and f"{missing} is not a file" in said.stderr
    found = run_engram(data_dir, "search", "httpx")
    assert f"embedder.gguf_path {missing} is not a file" in found.stderr
    assert "in the background" not in found.stderr and "We pin httpx" in found.stdout
    assert "1 memory in" in run_engram(data_dir, "stats").stdout
