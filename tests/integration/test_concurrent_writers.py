"""Several `engram` processes writing one data folder at once: none loses its write.
Each write takes SQLite's write lock when its transaction begins and waits for the
others (it used to read first and be refused with "database is locked" at once)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import ENGRAM, clean_env, run_engram

pytestmark = pytest.mark.slow

WRITERS = 8


def test_eight_processes_adding_at_once_lose_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_engram(data, "add", "seed", "--no-check").returncode == 0
    env = clean_env()
    writers = [
        subprocess.Popen(
            [
                str(ENGRAM),
                "--data-dir",
                str(data),
                "add",
                f"writer {n}: the timeout is {n}0 s",
                "-p",
                "p",
                "--no-check",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(WRITERS)
    ]
    outcomes = [writer.communicate(timeout=180) for writer in writers]
    codes = [writer.returncode for writer in writers]
    assert codes == [0] * WRITERS, [err for _, err in outcomes]
    ids = {json.loads(out)["id"] for out, _ in outcomes}
    assert len(ids) == WRITERS
    listed = json.loads(run_engram(data, "list", "--limit", 100, "--json").stdout)["memories"]
    assert ids <= {m["id"] for m in listed}
    assert len(listed) == WRITERS + 1
