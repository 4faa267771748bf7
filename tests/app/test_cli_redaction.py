"""The CLI side of the incoming-text gate: add, edit, import and ingest say on stderr
how many secrets of which kinds were redacted and give it under "redacted" in --json;
the privacy.* settings switch redaction off, add patterns and allow literals (an invalid
pattern is refused naming the setting); store.max_memory_bytes refuses a memory, and a
whole import with the file:line of the record too large."""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.app.conftest import EngramCli, write_jsonl
from tests.services.text.fake_secrets import sample

RNG = random.Random(2026)
GITHUB = sample("github-token", RNG).secret
TEXT = f"the bot uses {GITHUB}; DB_PASSWORD=Sw0rdfish-42 on staging"


def test_add_says_what_was_redacted(engram_cli: EngramCli) -> None:
    result = engram_cli.ok("add", TEXT, "--no-check")
    assert "2 secrets redacted (github-token, password)" in result.stderr
    assert GITHUB not in result.stdout
    added = engram_cli.json("add", f"again {GITHUB}", "--no-check")
    assert added["redacted"] == {"count": 1, "kinds": {"github-token": 1}}
    shown = engram_cli.json("show", added["id"])
    assert shown["content"] == "again [redacted:github-token]"


def test_edit_says_what_was_redacted(engram_cli: EngramCli) -> None:
    memory_id = engram_cli.add("a plain note", "--no-check")
    edited = engram_cli.json("edit", memory_id, "--content", TEXT)
    assert edited["redacted"] == {"count": 2, "kinds": {"github-token": 1, "password": 1}}
    assert "redacted" not in engram_cli.ok("edit", memory_id, "--tag", "ci").stderr


def test_import_and_ingest_say_what_was_redacted(tmp_path: Path, engram_cli: EngramCli) -> None:
    source = write_jsonl(tmp_path / "m.jsonl", [{"id": "n-1", "content": TEXT}, {"content": "ok"}])
    result = engram_cli.ok("import", source)
    assert "2 secrets redacted (github-token, password)" in result.stderr
    ingested = engram_cli.json("ingest", input=f"MEMORY:fact:deploy token {GITHUB}\n")
    assert ingested["redacted"] == {"count": 1, "kinds": {"github-token": 1}}
    exported = engram_cli.ok("export", "--format", "jsonl").stdout
    assert GITHUB not in exported and "Sw0rdfish-42" not in exported


def test_an_import_with_a_record_too_large_is_refused_whole(
    tmp_path: Path, engram_cli: EngramCli
) -> None:
    engram_cli.ok("config", "set", "store.max_memory_bytes", "1000")
    source = write_jsonl(
        tmp_path / "big.jsonl", [{"content": "fine"}, {"content": "x" * 1_500}, {"content": "ok"}]
    )
    result = engram_cli("import", source)
    assert result.exit_code != 0
    assert f"{source}:2" in result.output and "store.max_memory_bytes" in result.output
    assert engram_cli.all_ids() == set()
    refused = engram_cli("add", "y" * 1_001, "--no-check")
    assert refused.exit_code != 0
    assert "the memory is 1,103 bytes (title and content, UTF-8)" in refused.output


def test_the_privacy_settings(engram_cli: EngramCli) -> None:
    engram_cli.ok("config", "set", "privacy.redact_patterns", r"ACME-\d{4}")
    engram_cli.ok("config", "set", "privacy.redact_allow", "Sw0rdfish-42")
    added = engram_cli.json("add", f"{TEXT}; ticket ACME-1234", "--no-check")
    assert added["redacted"]["kinds"] == {"github-token": 1, "custom": 1}
    assert "Sw0rdfish-42" in engram_cli.json("show", added["id"])["content"]
    engram_cli.ok("config", "set", "privacy.redact", "false")
    kept = engram_cli.json("add", TEXT, "--no-check")
    assert kept["redacted"]["count"] == 0
    assert GITHUB in engram_cli.json("show", kept["id"])["content"]


def test_an_invalid_pattern_is_refused_naming_the_setting(engram_cli: EngramCli) -> None:
    refused = engram_cli("config", "set", "privacy.redact_patterns", "ok (unclosed")
    assert refused.exit_code != 0
    assert "privacy.redact_patterns" in refused.output and "'(unclosed'" in refused.output
    from_env = engram_cli(
        "add", "note", "--no-check", env={"ENGRAM_PRIVACY_REDACT_PATTERNS": "[bad"}
    )
    assert from_env.exit_code != 0
    assert "privacy.redact_patterns" in from_env.output and "Traceback" not in from_env.output
    assert json.loads(engram_cli.ok("list", "--json").stdout)["total"] == 0
