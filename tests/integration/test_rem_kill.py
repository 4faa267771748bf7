"""Killing a consolidation run with SIGKILL in the middle loses nothing: every memory
is intact, every answered finding's change is whole, and the next run completes."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from app.background import embedding_lock
from tests.integration.conftest import ENGRAM, ROOT, clean_env, run_engram

pytestmark = pytest.mark.slow
GROUPS = 300


def _count(database: Path, sql: str) -> int:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)
    try:
        return int(connection.execute(sql).fetchone()[0])
    finally:
        connection.close()


def test_sigkill_mid_cycle_loses_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    records = [
        {"id": f"m{g:03d}-{copy}", "project": "p", "content": f"Fact number {g}: keep it so."}
        for g in range(GROUPS)
        for copy in (0, 1)
    ]
    source = tmp_path / "dups.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    database = data_dir / "engram.sqlite3"
    # Hold the embedding lock: no background embedder competes (exact duplicates need
    # no vectors).
    with embedding_lock(data_dir) as held:
        assert held
        imported = run_engram(data_dir, "import", source)
        assert imported.returncode == 0, imported.stderr
        process = subprocess.Popen(
            [
                str(ENGRAM),
                "--data-dir",
                str(data_dir),
                "rem",
                "run",
                "--op",
                "duplicates",
                "--auto",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            # no waiting for the vectors this test keeps from being written
            env=clean_env(ENGRAM_REM_VECTOR_WAIT_S="0"),
            cwd=ROOT,
        )
        deadline = time.monotonic() + 120
        applied = 0
        while time.monotonic() < deadline and process.poll() is None:
            try:
                applied = _count(database, "SELECT count(*) FROM finding WHERE status = 'applied'")
            except sqlite3.OperationalError:
                applied = 0  # the table does not exist yet / busy
            if applied:
                break
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        assert applied > 0, "the run never started applying findings"

        assert _count(database, "SELECT count(*) FROM memory") == 2 * GROUPS  # nothing lost
        connection = sqlite3.connect(database)
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        done = connection.execute("SELECT count(*) FROM finding WHERE status = 'applied'")
        applied_after = done.fetchone()[0]
        superseded = connection.execute(
            "SELECT count(*) FROM memory WHERE superseded_by IS NOT NULL"
        ).fetchone()[0]
        connection.close()
        assert applied_after < GROUPS, "the kill came after the run had finished"
        assert superseded == applied_after  # each answered merge is whole, none half done

        again = run_engram(
            data_dir, "rem", "run", "--op", "duplicates", "--auto", "--json",
            env=clean_env(ENGRAM_REM_VECTOR_WAIT_S="0"),
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
        operation = json.loads(again.stdout)["operations"][0]
        assert operation["applied"] == GROUPS - applied_after  # it finishes what was left
    assert _count(database, "SELECT count(*) FROM memory") == 2 * GROUPS
    assert _count(database, "SELECT count(*) FROM memory WHERE superseded_by IS NOT NULL") == GROUPS
    assert _count(database, "SELECT count(*) FROM finding WHERE status = 'pending'") == 0
