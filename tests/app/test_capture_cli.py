"""`engram capture TRANSCRIPT`: a Claude Code or Codex transcript read whole; what it
holds is proposed for `engram rem review` (or stored, for the kinds of
`capture.auto_accept`), once; --dry-run changes nothing; --json says everything; the
session, assistant and project come from the transcript unless given."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import EngramCli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude_fix_session.jsonl"
CODEX = FIXTURES / "codex_rollout.jsonl"


def test_a_transcript_is_proposed_for_review(engram_cli: EngramCli) -> None:
    result = engram_cli.ok("capture", CLAUDE, "--no-llm")
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"read 21 records of {CLAUDE} (claude session 5f1c2a9e-7b3d-4c1e-9a2f-0d6b8e4c3a11, "
        "project none)"
    )
    proposed = [line for line in lines if line.startswith("proposed f-cap-")]
    assert [line.split("] ", 1)[0].split(" [")[1] for line in proposed] == [
        "decision",
        "fix",
        "pitfall",
        "convention",
    ]
    assert lines[-1] == "4 proposals wait for you: engram rem review"
    again = engram_cli.ok("capture", CLAUDE, "--no-llm").stdout
    assert "proposed f-cap-" not in again and again.count(": already proposed (f-cap-") == 4


def test_review_shows_and_stores_a_capture(engram_cli: EngramCli) -> None:
    report = engram_cli.json("capture", CLAUDE, "--no-llm", "--session", "s-42", "-p", "shop")
    assert report["session_id"] == "s-42" and report["project"] == "shop"
    fix = next(o for o in report["proposed"] if o["origin"] == "fix")
    shown = engram_cli.ok("rem", "review", input="store\nskip\nskip\nskip\n").stdout
    assert "captured_decision: Captured from a claude session (a decision you stated)" in shown
    assert f"proposed: {fix['title']}" in shown
    assert "store (recommended): keep it as a memory of the project" in shown
    engram_cli.ok("rem", "review", "--answer", f"{fix['finding_id']}=store")
    memory = engram_cli.json("show", fix["memory_id"])
    assert memory["title"] == fix["title"] and memory["type"] == "fix"
    assert memory["session_id"] == "s-42" and memory["project"] == "shop"
    assert memory["file_refs"] == ["src/ingest.py"]
    assert memory["tags"] == ["captured", "claude"]


def test_json_and_kinds_stored_without_review(engram_cli: EngramCli) -> None:
    engram_cli.ok("config", "set", "capture.auto_accept", "fix,decision")
    report = engram_cli.json("capture", CODEX, "--no-llm")
    assert report["assistant"] == "codex"
    assert report["session_id"] == "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
    assert report["new_offset"] == CODEX.stat().st_size and report["more"] is False
    assert [o["type"] for o in report["stored"]] == ["decision", "fix"]
    assert report["proposed"] == [] and report["redacted"] == {"count": 0, "kinds": {}}
    listed = engram_cli.json("list", "--limit", 10)["memories"]
    assert {m["id"] for m in listed} == {o["memory_id"] for o in report["stored"]}
    refused = engram_cli("config", "set", "capture.auto_accept", "fixes")
    assert refused.exit_code != 0 and "'fixes' not among" in refused.stderr


def test_a_dry_run_changes_nothing(engram_cli: EngramCli) -> None:
    result = engram_cli.ok("capture", CLAUDE, "--no-llm", "--dry-run")
    assert "would be proposed f-cap-" in result.stdout
    assert "engram rem review" not in result.stdout
    assert engram_cli.json("rem", "report")["pending"] == []
    assert engram_cli.json("list")["memories"] == []


def test_secrets_are_redacted_and_said(engram_cli: EngramCli, tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    record = {
        "type": "user",
        "message": {"role": "user", "content": f"MEMORY:fact:CI uses {token}"},
    }
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = engram_cli.ok("capture", path, "--no-llm", "--assistant", "codex")
    assert "1 secret redacted (github-token)" in result.stderr
    assert token not in result.stdout
    assert "codex session s, project none" in result.stdout  # the file's stem
    pending = engram_cli.json("rem", "report")["pending"]
    assert pending[0]["detail"]["memory"]["content"] == "CI uses [redacted:github-token]"


def test_bad_transcripts(engram_cli: EngramCli, tmp_path: Path) -> None:
    missing = engram_cli("capture", tmp_path / "gone.jsonl", "--no-llm")
    assert missing.exit_code != 0 and "cannot read the transcript" in missing.stderr
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\xff\xfe not json\n{}\n[]\n")
    result = engram_cli.ok("capture", junk, "--no-llm")
    assert "3 lines were not records of a known shape: skipped" in result.stdout
    assert "nothing to capture" in result.stdout
