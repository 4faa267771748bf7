"""The CLI starts light: `engram --help` loads none of the heavy libraries, and the
console script is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("chromadb", "onnxruntime", "llama_cpp", "tokenizers", "httpx", "numpy", "peewee")
PROBE = """
import json, sys
from app.cli import main
sys.argv = ["engram", *sys.argv[1:]]
try:
    main()
except SystemExit as exit:
    code = exit.code
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(%r)))
print("HEAVY=" + json.dumps(heavy), file=sys.stderr)
"""


def _probe(*args: str) -> tuple[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    result = subprocess.run(
        [sys.executable, "-c", PROBE % json.dumps(HEAVY), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    marker = [line for line in result.stderr.splitlines() if line.startswith("HEAVY=")]
    assert marker, result.stderr
    return result.stdout, json.loads(marker[0][len("HEAVY=") :])


@pytest.mark.parametrize(
    "args", [["--help"], ["search", "--help"], ["config", "--help"], ["--version"]]
)
def test_help_loads_no_heavy_library(args: list[str]) -> None:
    stdout, heavy = _probe(*args)
    assert heavy == []
    assert stdout


def test_help_lists_every_command() -> None:
    stdout, _ = _probe("--help")
    for command in (
        "add",
        "list",
        "show",
        "edit",
        "delete",
        "search",
        "export",
        "import",
        "ingest",
        "cleanup",
        "reindex",
        "stats",
        "config",
        "embed",
    ):
        assert f"  {command} " in stdout, command


def test_console_script_and_module_entry_points(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "engram"
    assert script.is_file() and os.access(script, os.X_OK)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    for command in ([str(script)], [sys.executable, "-m", "app.cli"]):
        result = subprocess.run(
            [*command, "--help"], capture_output=True, text=True, env=env, timeout=60
        )
        assert result.returncode == 0, result.stderr
        assert "Usage: engram" in result.stdout or "Usage: python -m app.cli" in result.stdout
    config = subprocess.run(
        [str(script), "--data-dir", str(tmp_path), "config", "get", "retrieval.limit"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (config.returncode, config.stdout) == (0, "10\n")
