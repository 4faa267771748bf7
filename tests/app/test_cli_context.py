"""`engram context` and `engram predict --replay` through the real CLI."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.tokens import count_tokens
from tests.app.conftest import EngramCli, write_jsonl

REFUNDS_PY = """from ledgerly.ledger.accounts import settle_ledger_account


def issue_refund(invoice):
    return settle_ledger_account(invoice)
"""


def make_repo(root: Path) -> Path:
    repo = root / "ledgerly"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "refunds.py").write_text(REFUNDS_PY, encoding="utf-8")
    (repo / ".env").write_text("STRIPE_KEY=sk_live_do_not_leak_1234\n", encoding="utf-8")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=repo, check=True)
    subprocess.run([*git, "checkout", "-q", "-b", "feature/refund-limits"], cwd=repo, check=True)
    return repo


def watch_file(data_dir: Path, repo: Path) -> None:
    """Save the activity `engram watch` would after opening src/refunds.py."""
    from app.activity import file_signal, save_state
    from app.composition import open_engram
    from services.activity.prediction import PredictiveEngine
    from services.activity.signals import SignalKind

    engram = open_engram(data_dir)
    try:
        engine = PredictiveEngine(engram.store)
        engine.observe(
            file_signal(SignalKind.FILE_OPENED, repo / "src" / "refunds.py", (), "ledgerly")
        )
        save_state(engram, engine, repo)
    finally:
        engram.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.fixture
def seeded(engram_cli: EngramCli) -> EngramCli:
    engram_cli.add("`issue_refund` must be idempotent.", "--project", "ledgerly", "--id", "m-def")
    engram_cli.add(
        "We decided `issue_refund` never runs as admin.",
        "--project",
        "ledgerly",
        "--type",
        "decision",
        "--id",
        "m-decision",
    )
    engram_cli.add(
        "Limits are per merchant.",
        "--project",
        "ledgerly",
        "--tag",
        "refund-limits",
        "--id",
        "m-branch",
    )
    engram_cli.add(
        "`ValueError: negative amount` means the refund exceeds the charge; clamp it.",
        "--project",
        "ledgerly",
        "--type",
        "fix",
        "--id",
        "m-fix",
    )
    engram_cli.add("`issue_refund` in another project.", "--project", "shipit", "--id", "m-other")
    return engram_cli


def test_context_for_a_file_reads_branch_and_explains(seeded: EngramCli, repo: Path) -> None:
    data = seeded.json("context", "--file", repo / "src" / "refunds.py")
    tiers = {t["tier"]: t for t in data["tiers"]}
    critical = [m["id"] for m in tiers[1]["memories"]]
    assert set(critical) == {"m-decision", "m-def"}  # both about what the file defines
    relevant = [m["id"] for m in tiers[2]["memories"]]
    assert "m-branch" in relevant  # branch read from the repository
    assert "m-other" not in json.dumps(data)
    assert data["project"] == "ledgerly"
    why = tiers[1]["memories"][critical.index("m-def")]["why"]
    assert why[0]["signal"].startswith("defines: issue_refund")
    assert count_tokens(data["markdown"]) == data["tokens"] <= data["budget"] == 8000
    assert "`src/refunds.py`" in data["markdown"]


def test_context_markdown_respects_budget_and_is_stable(seeded: EngramCli, repo: Path) -> None:
    file = repo / "src" / "refunds.py"
    first = seeded.ok("context", "--file", file, "--budget", 120).stdout
    assert count_tokens(first.strip()) <= 120
    assert first.startswith("<engram-context version=")
    again = seeded.ok("context", "--file", file, "--budget", 120).stdout
    version = first.split('"')[1]
    assert version == again.split('"')[1]


def test_error_from_stdin_puts_the_fix_in_tier_one(seeded: EngramCli, repo: Path) -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "src/refunds.py", line 5, in issue_refund\n'
        "ValueError: negative amount\n"
    )
    data = seeded.json("context", "--project", "ledgerly", "--error", "-", input=trace)
    tier1 = [m["id"] for m in data["tiers"][0]["memories"]]
    assert tier1 == ["m-fix"]
    assert data["activity"] == "debugging"


def test_activity_option_and_invalid_budget(seeded: EngramCli, repo: Path) -> None:
    data = seeded.json("context", "--file", repo / "src" / "refunds.py", "--activity", "review")
    assert data["activity"] == "review"
    result = seeded("context", "--file", repo / "src" / "refunds.py", "--budget", 10)
    assert result.exit_code == 2
    assert "at least 120 tokens" in result.stderr


def test_secret_file_is_never_read(seeded: EngramCli, repo: Path) -> None:
    data = seeded.json("context", "--file", repo / ".env")
    assert "sk_live" not in json.dumps(data)
    assert data["project"] == "ledgerly"


def test_missing_file_is_a_clear_error(seeded: EngramCli, repo: Path) -> None:
    result = seeded("context", "--file", repo / "nope.py")
    assert result.exit_code == 2
    assert "nope.py: no such file" in result.stderr


def test_context_without_flags_uses_the_watched_activity(
    seeded: EngramCli, repo: Path, data_dir: Path
) -> None:
    watch_file(data_dir, repo)
    data = seeded.json("context")
    assert "m-def" in [m["id"] for t in data["tiers"][:2] for m in t["memories"]]
    assert "refunds.py" in data["markdown"]


def test_copy_without_a_clipboard_tool_says_what_to_install(
    seeded: EngramCli, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    result = seeded("context", "--file", repo / "src" / "refunds.py", "--copy")
    assert result.exit_code == 3
    assert "xclip" in result.stderr


def test_profile_needs_consent(seeded: EngramCli, repo: Path, data_dir: Path) -> None:
    file = repo / "src" / "refunds.py"
    refused = seeded("profile", "set", "style", "Prefers tabs over spaces.")
    assert refused.exit_code == 2 and "consent" in refused.stderr  # nothing kept without it
    seeded.ok("profile", "consent", "on")
    seeded.ok("profile", "set", "style", "Prefers tabs over spaces.")
    assert "Coding style: Prefers tabs" in seeded.ok("context", "--file", file).stdout
    seeded.ok("config", "set", "profile.consent", "false")  # consent off: not used
    assert "Prefers tabs" not in seeded.ok("context", "--file", file).stdout
    seeded.ok("profile", "consent", "on")
    seeded.ok("profile", "consent", "off", "--yes")
    assert seeded.json("profile", "show") == {"consent": False, "fields": {}}


def test_profile_consent_off_without_a_terminal_needs_yes(seeded: EngramCli) -> None:
    """Like `delete` and `restore`: piped, it refuses (exit 2) and keeps the profile; it
    had printed the question, then "Aborted!", and exited 1."""
    seeded.ok("profile", "consent", "on")
    seeded.ok("profile", "set", "style", "Prefers tabs over spaces.")
    refused = seeded("profile", "consent", "off", input="y\n")
    assert refused.exit_code == 2
    assert "not on a terminal, so the profile was kept: add --yes" in refused.stderr
    assert "Aborted" not in refused.output
    kept = seeded.json("profile", "show")
    assert kept["consent"] is True and kept["fields"]["style"] == "Prefers tabs over spaces."


def _event(t: str, event: str, needed: list[str], **fields: str) -> dict[str, object]:
    return {"t": t, "project": "ledgerly", "event": event, "needed": needed, **fields}


def test_predict_replay_reports_hit_rate_and_events(
    seeded: EngramCli, repo: Path, tmp_path: Path
) -> None:
    now = datetime.now(UTC).isoformat()
    log = write_jsonl(
        tmp_path / "activity.jsonl",
        [
            _event(now, "file_opened", ["m-def"], path="src/refunds.py"),
            _event(now, "branch_checkout", ["m-branch"], branch="feature/refund-limits"),
            _event(now, "error_seen", ["m-fix"], error="ValueError: negative amount"),
        ],
    )
    report = seeded.json("predict", "--replay", log, "--source-root", repo.parent)
    assert report["hit_rate"] == 1.0
    assert set(report["by_event"]) == {"file_opened", "branch_checkout", "error_seen"}
    assert report["p95_ms"] >= 0
    assert [e["event"] for e in report["events"]] == [
        "file_opened",
        "branch_checkout",
        "error_seen",
    ]
    assert report["events"][2]["tier1"][0] == "m-fix"  # the file's decision stays too

    stripped = [json.loads(line) for line in log.read_text().splitlines()]
    for line in stripped:
        line.pop("needed")
    bare = seeded.json(
        "predict",
        "--replay",
        write_jsonl(tmp_path / "bare.jsonl", stripped),
        "--source-root",
        repo.parent,
    )
    assert bare["hit_rate"] is None
    assert [(e["tier1"], e["tier2"]) for e in bare["events"]] == [
        (e["tier1"], e["tier2"]) for e in report["events"]
    ]


def test_predict_replay_is_as_of_each_event(seeded: EngramCli, tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "old.jsonl",
        [
            _event(
                "2001-01-01T00:00:00+00:00", "error_seen", [], error="ValueError: negative amount"
            )
        ],
    )
    report = seeded.json("predict", "--replay", log)
    assert report["events"][0]["tier1"] == []  # the fix did not exist in 2001


def test_predict_rejects_a_bad_log_with_positions(engram_cli: EngramCli, tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text(
        '{"t": "2026-01-01T00:00:00Z", "event": "file_opened", "path": "a.py"}\n'
        "not json\n"
        '{"t": "yesterday", "event": "file_opened", "path": "a.py"}\n'
        '{"t": "2026-01-01T00:00:00Z", "event": "teleported"}\n',
        encoding="utf-8",
    )
    result = engram_cli("predict", "--replay", log)
    assert result.exit_code == 2
    assert "bad.jsonl:2" in result.stderr and "bad.jsonl:3" in result.stderr
    assert "bad.jsonl:4" in result.stderr and "bad.jsonl:1" not in result.stderr
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    result = engram_cli("predict", "--replay", binary)
    assert result.exit_code == 2
    assert "not UTF-8" in result.stderr


def test_citing_teaches_prediction_for_the_watched_file(
    seeded: EngramCli, repo: Path, data_dir: Path
) -> None:
    seeded.add("Run `make migrate` first.", "--project", "ledgerly", "--id", "m-habit")
    watch_file(data_dir, repo)
    before = seeded.json("context")
    assert "m-habit" not in [m["id"] for m in before["tiers"][1]["memories"]]
    seeded.ok("mark", "cited", "m-habit")
    after = seeded.json("context")
    relevant = after["tiers"][1]["memories"]
    habit = next(m for m in relevant if m["id"] == "m-habit")
    assert any("cited after this" in why["signal"] for why in habit["why"])


def test_a_watch_line_names_memories_by_title_with_their_ids() -> None:
    from app.cli.context import _watch_line

    tier2 = [f"shop-{n:012x}" for n in range(11)]
    line = {
        "t": "2026-11-24T14:02:11+00:00",
        "event": "file_saved",
        "project": "shop",
        "path": "src/refunds.py",
        "activity": "debugging",
        "tier1": ["shop-aaaaaaaaaaaa"],
        "tier2": tier2,
        "titles": {
            "shop-aaaaaaaaaaaa": "Refunds are idempotent: " + "keyed on the order id " * 5,
            **{memory_id: f"Note {n}" for n, memory_id in enumerate(tier2)},
        },
        "ms": 3.2,
    }
    text = _watch_line(line)
    first, tier1 = text.splitlines()[:2]
    assert first == "14:02:11 file_saved shop: src/refunds.py [debugging] (3.2 ms)"
    assert tier1.startswith("  tier 1: Refunds are idempotent: keyed on the order id")
    assert tier1.endswith("…  shop-aaaaaaaaaaaa") and len(tier1) < 100
    assert "Note 7  shop-000000000007" in text and "Note 8" not in text
    assert text.endswith("… and 3 more")


def test_a_budget_too_small_for_any_memory_still_prints_a_block(
    seeded: EngramCli, repo: Path
) -> None:
    block = seeded.ok("context", "--file", repo / "src" / "refunds.py", "--budget", 120).stdout
    assert block.startswith("<engram-context ") and block.rstrip().endswith("</engram-context>")
    assert "nothing fits in 120 tokens" in block and "raise the budget" in block


def test_a_note_the_open_manifest_contradicts_is_left_out_with_a_reason(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    repo = tmp_path / "webpack"
    (repo / ".git").mkdir(parents=True)
    (repo / "package.json").write_text(
        '{"name": "webpack", "engines": {"node": ">=10.13.0"}}\n', encoding="utf-8"
    )
    for memory_id, content in (
        ("m-right", 'webpack 5 declares `"engines": {"node": ">=10.13.0"}` in every minor.'),
        ("m-wrong", "webpack 5 needs Node 18+ now, so the old build agents are out."),
    ):
        engram_cli.add(
            content, "--project", "webpack", "--file-ref", "package.json", "--id", memory_id
        )
    data = engram_cli.json("context", "--file", repo / "package.json")
    placed = {m["id"] for tier in data["tiers"] for m in tier["memories"]}
    assert "m-right" in placed and "m-wrong" not in placed
    assert "⚠ left out m-wrong" in data["markdown"]
    assert "package.json declares `engines.node` >=10.13.0" in data["markdown"]


def test_the_nearest_manifest_above_the_open_file_is_its_truth_too(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    repo = tmp_path / "jest"
    (repo / ".git").mkdir(parents=True)
    (repo / "package.json").write_text('{"private": true, "engines": {"node": ">=22"}}\n')
    package = repo / "packages" / "jest-config"
    (package / "src").mkdir(parents=True)
    (package / "package.json").write_text(
        '{"name": "jest-config", "engines": {"node": "^18.14.0 || >=20.0.0"}}\n'
    )
    (package / "src" / "index.ts").write_text("export const defaults = {};\n")
    engram_cli.add(
        "jest 30 still runs on Node 16 as long as it's 16.10+.",
        *("--project", "jest", "--file-ref", "packages/jest-config/src/index.ts"),
        *("--id", "m-wrong"),
    )
    engram_cli.add(
        "jest-config supports Node ^18.14.0 and every later even major.",
        *("--project", "jest", "--file-ref", "packages/jest-config/src/index.ts"),
        *("--id", "m-right"),
    )
    data = engram_cli.json("context", "--file", package / "src" / "index.ts")
    placed = {m["id"] for tier in data["tiers"] for m in tier["memories"]}
    assert placed == {"m-right"}
    # The package's own manifest governs, not the repository root's.
    assert "packages/jest-config/package.json declares `engines.node`" in data["markdown"]
