"""The issue's measurement, reversed, on a real `engram` process: a memory holding a
GitHub token, an AWS key id, an OpenAI-style key, a password in a database URL and a
private key block is added; show, search, list, context and export print none of the
five, and neither do the raw bytes of the SQLite database, its WAL or the vector
index's files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.integration.conftest import run_engram
from tests.services.text.fake_secrets import key_lines, pem_block, sample

pytestmark = pytest.mark.slow


def _five_secrets() -> tuple[str, list[str]]:
    rng = random.Random(515)
    github = sample("github-token", rng).secret
    aws = sample("aws-access-key", rng).secret
    openai = sample("openai-key", rng).secret
    password = "Corr3ct-h0rse-Battery"
    lines = key_lines(rng)
    text = (
        "Staging deploy notes for the billing service.\n"
        f"The release bot authenticates with GITHUB_TOKEN={github}.\n"
        f"Backups go to S3 with key id {aws}; summaries call OpenAI with {openai}.\n"
        f"DATABASE_URL=postgres://billing:{password}@db.staging.internal:5432/billing\n"
        f"The deploy key:\n{pem_block(lines, 'OPENSSH PRIVATE KEY')}\n"
    )
    return text, [github, aws, openai, password, *lines]


def _files_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_no_secret_reaches_any_output_or_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    text, secrets = _five_secrets()
    added = run_engram(data, "add", "-", "--project", "billing", "--no-check", "--json", input=text)
    assert added.returncode == 0, added.stderr
    report = json.loads(added.stdout)
    assert report["redacted"] == {
        "count": 5,
        "kinds": {
            "aws-access-key": 1,
            "github-token": 1,
            "openai-key": 1,
            "password": 1,
            "private-key": 1,
        },
    }
    assert "5 secrets redacted" in added.stderr
    memory_id = report["id"]
    outputs = {
        "show": run_engram(data, "show", memory_id),
        "show --json": run_engram(data, "show", memory_id, "--json"),
        "search": run_engram(data, "search", "staging deploy key billing"),
        "search --json": run_engram(data, "search", "release bot authenticates", "--json"),
        "list": run_engram(data, "list", "--json"),
        "context": run_engram(data, "context", "--project", "billing", "--activity", "feature"),
        "export": run_engram(data, "export", "--format", "jsonl"),
    }
    for name, result in outputs.items():
        assert result.returncode == 0, (name, result.stderr)
        for secret in secrets:
            assert secret not in result.stdout + result.stderr, (name, secret)
    assert "[redacted:private-key]" in outputs["show"].stdout
    assert "postgres://billing:[redacted:password]@db.staging.internal" in outputs["export"].stdout
    assert memory_id in outputs["search --json"].stdout
    files = _files_bytes(data)
    assert "engram.sqlite3" in files and any(name.startswith("chroma") for name in files)
    for name, raw in files.items():
        for secret in secrets:
            assert secret.encode() not in raw, (name, secret)
