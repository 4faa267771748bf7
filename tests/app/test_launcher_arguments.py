"""Arguments that are not valid UTF-8 (a shell expanding `$'\\xff'`, a file name in
Latin-1) are refused at the entry point with exit 2, naming the argument; nothing is
stored. They had reached the store as lone surrogates and crashed it (exit 70)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _run(data_dir: Path, *args: bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "ENGRAM_NO_SERVICE": "1", "QT_QPA_PLATFORM": "offscreen"}
    command = [sys.executable.encode(), b"-m", b"ui.launcher", b"--data-dir", bytes(data_dir)]
    return subprocess.run([*command, *args], capture_output=True, env=env, timeout=120, check=False)


def test_an_argument_that_is_not_utf8_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    added = _run(data_dir, b"add", b"-p", b"demo", b"bad \xff\xfe bytes")
    assert added.returncode == 2, added.stderr
    assert b"argument 6" in added.stderr and b"not valid UTF-8" in added.stderr
    assert b"Traceback" not in added.stderr
    searched = _run(data_dir, b"search", b"timeout \xff")
    assert searched.returncode == 2
    listed = _run(data_dir, b"list", b"--json")
    assert listed.returncode == 0, listed.stderr
    assert b"bad" not in listed.stdout
