"""`engram hook EVENT` through the real CLI: it never fails a session, answers in the
assistant's format, and prompts about nothing stored get nothing (real MiniLM)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import app.cli.hook
from tests.app.conftest import EngramCli
from tests.app.test_cli_context import make_repo


def hook_json(cli: EngramCli, *args: Any, data: Any, verbose: bool = False) -> Any:
    """Run `engram [-v] hook ARGS` with `data` on stdin; the parsed stdout (None when
    it printed nothing). A hook always exits 0."""
    stdin = data if isinstance(data, str | bytes) else json.dumps(data)
    result = cli(*(["-v"] if verbose else []), "hook", *args, input=stdin)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if result.stdout.strip() else None


def claude(event: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": "sess-1",
        "transcript_path": str(cwd / "no-transcript.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": event,
        **fields,
    }


@pytest.mark.parametrize(
    "stdin",
    ["", "not json", "[1, 2]", '{"hook_event_name": "SessionStart"}', b"\xff\xfe{"],
)
def test_bad_input_exits_0_with_nothing_and_says_why_only_with_v(
    engram_cli: EngramCli, stdin: str | bytes
) -> None:
    quiet = engram_cli("hook", "session-start", "--for", "claude", input=stdin)
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, "", "")
    loud = engram_cli("-v", "hook", "session-start", "--for", "claude", input=stdin)
    assert loud.exit_code == 0 and loud.stdout == ""
    assert "engram hook: nothing answered:" in loud.stderr


def test_input_over_the_limit_is_refused(
    engram_cli: EngramCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app.cli.hook, "MAX_HOOK_INPUT", 200)
    data = claude("UserPromptSubmit", tmp_path, prompt="x" * 500)
    result = engram_cli("-v", "hook", "prompt", input=json.dumps(data))
    assert result.exit_code == 0 and result.stdout == ""
    assert "over 200 bytes" in result.stderr


def test_a_broken_data_folder_answers_nothing(tmp_path: Path) -> None:
    damaged = tmp_path / "data"
    damaged.mkdir()
    (damaged / "engram.sqlite3").write_bytes(b"this is not a database" * 100)
    cli = EngramCli(damaged)
    data = claude("SessionStart", tmp_path, source="startup")
    result = cli("hook", "session-start", "--for", "claude", input=json.dumps(data))
    assert (result.exit_code, result.stdout) == (0, "")


def test_unknown_options_and_assistants_never_fail(engram_cli: EngramCli, tmp_path: Path) -> None:
    data = claude("Stop", tmp_path)
    result = engram_cli("hook", "stop", "--for", "claude", "--future-flag", input=json.dumps(data))
    assert (result.exit_code, result.stdout) == (0, "")
    result = engram_cli("hook", "stop", "--for", "copilot", input=json.dumps(data))
    assert (result.exit_code, result.stdout) == (0, "")


def test_nothing_to_give_is_answered_in_each_dialect(engram_cli: EngramCli, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    start = claude("SessionStart", repo, source="startup")
    assert hook_json(engram_cli, "session-start", "--for", "claude", data=start) is None
    assert hook_json(engram_cli, "session-start", "--for", "gemini", data=start) == {}
    cursor = {"conversation_id": "c1", "workspace_roots": [str(repo)]}
    prompt = {**cursor, "hook_event_name": "beforeSubmitPrompt", "prompt": "refund limits?"}
    assert hook_json(engram_cli, "prompt", "--for", "cursor", data=prompt) == {"continue": True}
    stop = {**cursor, "hook_event_name": "stop", "status": "completed"}
    assert hook_json(engram_cli, "stop", "--for", "cursor", data=stop) == {}


def test_prompts_about_nothing_stored_get_nothing(corpus_cli: EngramCli, tmp_path: Path) -> None:
    """The 30 corpus memories, embedded with the real model; a session in a repository
    of the corpus's `ledgerly` project."""
    repo = make_repo(tmp_path)  # a folder named ledgerly: its project is ledgerly
    for prompt in (
        "thanks!",
        "run the tests",
        "commit this please",
        "now update the readme",
        "why is this slow",
        "ok, go on",
    ):
        data = claude("UserPromptSubmit", repo, prompt=prompt)
        assert hook_json(corpus_cli, "prompt", "--for", "claude", data=data) is None, prompt
    asked = claude(
        "UserPromptSubmit", repo, prompt="how many retries does emit_batched_session make?"
    )
    reply = hook_json(corpus_cli, "prompt", "--for", "claude", data=asked)
    assert reply is not None
    context = reply["hookSpecificOutput"]["additionalContext"]
    assert reply["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "ledgerly-m00001" in context and "up to 5 retries" in context
    assert context.startswith('<engram-memories project="ledgerly" for="prompt"')
    # Asked again in the same session: given already.
    assert hook_json(corpus_cli, "prompt", "--for", "claude", data=asked) is None


def last_activity(cli: EngramCli) -> Any:
    with sqlite3.connect(cli.data_dir / "engram.sqlite3") as connection:
        row = connection.execute("SELECT value FROM meta WHERE key = 'activity.last'").fetchone()
    return json.loads(row[0]) if row else None


def test_only_what_engram_watch_counts_becomes_activity(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    (repo / "node_modules").mkdir()
    (repo / "node_modules" / "lib.js").write_text("module.exports = 1\n")
    engram_cli.add("`issue_refund` must be idempotent.", "-p", "ledgerly", "--id", "m-def")

    def read(path: Path) -> Any:
        data = claude("PostToolUse", repo, tool_name="Read", tool_input={"file_path": str(path)})
        return hook_json(engram_cli, "tool-use", "--for", "claude", data=data)

    assert read(repo / "node_modules" / "lib.js") is None
    assert read(repo / "missing.py") is None
    assert last_activity(engram_cli) is None
    reply = read(repo / ".env")  # a secret file: activity, but never read
    assert reply is None and "sk_live" not in json.dumps(last_activity(engram_cli))
    assert last_activity(engram_cli)["file"] == ".env"
    reply = read(repo / "src" / "refunds.py")
    assert "m-def" in reply["hookSpecificOutput"]["additionalContext"]
    assert last_activity(engram_cli)["file"] == "src/refunds.py"
    assert last_activity(engram_cli)["branch"] == "feature/refund-limits"


def test_each_assistant_gets_the_session_block_in_its_own_shape(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    engram_cli.add(
        "We decided `issue_refund` never runs as admin.", "-p", "ledgerly", "--type", "decision"
    )
    start = {"cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    for assistant in ("claude", "codex", "gemini"):
        data = {**start, "session_id": f"s-{assistant}"}
        reply = hook_json(engram_cli, "session-start", "--for", assistant, data=data)
        assert reply["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        assert "never runs as admin" in reply["hookSpecificOutput"]["additionalContext"]
    cursor = {"conversation_id": "c-1", "workspace_roots": [str(repo)]}
    reply = hook_json(
        engram_cli, "session-start", data={**cursor, "hook_event_name": "sessionStart"}
    )  # no --for: Cursor's dialect is recognised
    assert set(reply) == {"additional_context"}
    assert reply["additional_context"].startswith("<engram-context ")


def test_a_codex_patch_is_a_save(engram_cli: EngramCli, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    patch = "*** Begin Patch\n*** Update File: src/refunds.py\n@@\n-a\n+b\n*** End Patch\n"
    data = claude("PostToolUse", repo, tool_name="apply_patch", tool_input={"command": patch})
    assert hook_json(engram_cli, "tool-use", "--for", "codex", data=data) is None
    assert last_activity(engram_cli)["file"] == "src/refunds.py"
