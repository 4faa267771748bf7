"""Shared helpers of the integration tests (real models, real servers, real processes)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGRAM = Path(sys.executable).parent / "engram"


def free_port() -> int:
    """A TCP port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def clean_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(overrides)
    return env


def run_engram(
    data_dir: Path,
    *args: object,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`engram --data-dir DATA_DIR ARGS...` as its own process (the installed script)."""
    return subprocess.run(
        [str(ENGRAM), "--data-dir", str(data_dir), *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env if env is not None else clean_env(),
        cwd=ROOT,
    )
