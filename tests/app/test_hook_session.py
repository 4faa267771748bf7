"""A scripted Claude Code session, end to end: the hooks installed into a temporary home
by `engram hooks install`, then each installed command fed real-shaped hook JSON for
start → prompt → Read → Edit → stop (and a compaction), through the real CLI with the
real embedding model, a real git repository and a real transcript."""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from app.cli.common import cli
from services.tokens import count_tokens
from tests.app.conftest import EngramCli
from tests.app.test_cli_context import make_repo

SESSION = "0c772589-6645-42a0-aed4-441a3cfd5665"
CAPTURED = "Refund webhooks are retried at most 3 times by the payment provider."


class Session:
    """Runs the commands `engram hooks install --for claude` wrote, as Claude Code would."""

    def __init__(self, cli_runner: EngramCli, home: Path, repo: Path, transcript: Path) -> None:
        settings = json.loads((home / ".claude" / "settings.json").read_text("utf-8"))
        self.commands = {
            native: shlex.split(groups[0]["hooks"][0]["command"])
            for native, groups in settings["hooks"].items()
        }
        self.matchers = {
            native: groups[0].get("matcher") for native, groups in settings["hooks"].items()
        }
        self.runner = cli_runner.runner
        self.repo = repo
        self.transcript = transcript
        self.given: list[str] = []  # every additionalContext, in order

    def __call__(self, native: str, **fields: Any) -> dict[str, Any] | None:
        data = {
            "session_id": SESSION,
            "transcript_path": str(self.transcript),
            "cwd": str(self.repo),
            "permission_mode": "default",
            "hook_event_name": native,
            **fields,
        }
        words = self.commands[native]
        result = self.runner.invoke(cli, words[1:], input=json.dumps(data))
        assert result.exit_code == 0, result.output
        if not result.stdout.strip():
            return None
        reply: dict[str, Any] = json.loads(result.stdout)
        assert reply["hookSpecificOutput"]["hookEventName"] == native
        self.given.append(reply["hookSpecificOutput"]["additionalContext"])
        return reply

    def tool(self, name: str, path: Path, **tool_input: Any) -> dict[str, Any] | None:
        assert re.fullmatch(self.matchers["PostToolUse"], name)  # the installed matcher
        return self(
            "PostToolUse",
            tool_name=name,
            tool_input={"file_path": str(path), **tool_input},
            tool_response={"filePath": str(path), "success": True},
            tool_use_id="toolu_01",
        )


def context_of(reply: dict[str, Any] | None) -> str:
    assert reply is not None
    return str(reply["hookSpecificOutput"]["additionalContext"])


def given_ids(text: str) -> set[str]:
    """The memories a block gives (each rendering names its id after "type · ")."""
    return set(re.findall(r"· ([\w.-]+)(?:\)|:)", text))


def transcript_lines(*texts: tuple[str, str]) -> str:
    lines = []
    for number, (role, text) in enumerate(texts):
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(
            {
                "type": role,
                "uuid": f"u{number}",
                "sessionId": SESSION,
                "message": {"role": role, "content": content},
            }
        )
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.fixture
def session(engram_cli: EngramCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    repo = make_repo(tmp_path)  # ledgerly, on the branch feature/refund-limits
    add = engram_cli.add
    add("`issue_refund` must be idempotent.", "-p", "ledgerly", "--id", "m-def")
    add(
        "We decided `issue_refund` never runs as admin.",
        *("-p", "ledgerly", "--type", "decision", "--id", "m-decision"),
    )
    add("Limits are per merchant.", "-p", "ledgerly", "--tag", "refund-limits", "--id", "m-branch")
    add(
        "Stripe webhooks are verified with the endpoint's signing secret before the ledger "
        "changes.",
        *("-p", "ledgerly", "--type", "fact", "--id", "m-webhook"),
    )
    add("`issue_refund` in another project.", "-p", "shipit", "--id", "m-other")
    engram_cli.ok("config", "set", "capture.auto_accept", "decision")
    engram_cli.ok("hooks", "install", "--for", "claude", "--executable", sys.executable)
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("", "utf-8")
    return Session(engram_cli, home, repo, transcript)


def ledger(data_dir: Path) -> set[str]:
    with sqlite3.connect(data_dir / "engram.sqlite3") as connection:
        rows = connection.execute(
            "SELECT memory_id FROM session_injection WHERE session_id = ?", [SESSION]
        ).fetchall()
    return {row[0] for row in rows}


def test_a_scripted_claude_session(session: Session, engram_cli: EngramCli) -> None:
    installed = {n: words[words.index("hook") :] for n, words in session.commands.items()}
    assert installed["SessionStart"] == ["hook", "session-start", "--for", "claude"]
    assert installed["PostToolUse"] == ["hook", "tool-use", "--for", "claude"]

    # Start: exactly one block, within its budget and the 10,000-character cap.
    block = context_of(session("SessionStart", source="startup", model="claude-sonnet-4-6"))
    assert len(re.findall(r"<engram-context\b", block)) == 1 == block.count("</engram-context>")
    assert 'project="ledgerly"' in block and 'budget="2000"' in block
    assert count_tokens(block) <= 2000 and len(block) <= 10_000
    assert "branch `feature/refund-limits`" in block
    assert "m-decision" in given_ids(block) and "m-other" not in block
    assert "m-webhook" not in given_ids(block)
    # The same start told again (resume, or Claude Code's duplicate): no second block.
    assert session("SessionStart", source="resume") is None

    # Prompts: what the prompt needs, once; chat gets nothing.
    webhook = "are stripe webhooks verified with the signing secret before the ledger changes?"
    memories = context_of(session("UserPromptSubmit", prompt=webhook))
    assert given_ids(memories) == {"m-webhook"}
    assert session("UserPromptSubmit", prompt=webhook) is None
    assert session("UserPromptSubmit", prompt="thanks!") is None
    assert session("UserPromptSubmit", prompt="run the tests") is None

    # Read: the file's critical notes not given yet; Edit: a signal, nothing to say.
    refunds = session.repo / "src" / "refunds.py"
    read = context_of(session.tool("Read", refunds))
    assert "`src/refunds.py`" in read and given_ids(read) == {"m-def"}
    assert session.tool("Read", refunds) is None
    assert session.tool("Edit", refunds, old_string="return", new_string="return") is None
    context = engram_cli.json("context", "--no-record")
    assert context["project"] == "ledgerly"
    assert "file `src/refunds.py`" in context["markdown"]  # the signal reached prediction
    assert "branch `feature/refund-limits`" in context["markdown"]

    # No memory was given twice, and the ledger holds exactly what was given.
    counts = Counter(memory_id for text in session.given for memory_id in given_ids(text))
    assert counts and max(counts.values()) == 1
    assert ledger(engram_cli.data_dir) == set(counts)

    # Stop: the transcript is captured from where it was last read.
    session.transcript.write_text(
        transcript_lines(
            ("user", "how often are webhooks retried?"),
            ("assistant", f"Checked the provider docs.\nMEMORY:decision: {CAPTURED}"),
        ),
        "utf-8",
    )
    assert session("Stop", stop_hook_active=False) is None
    captured = [
        m for m in engram_cli.json("list", "-p", "ledgerly")["memories"] if "cap" in m["id"]
    ]
    assert [m["type"] for m in captured] == ["decision"]
    shown = engram_cli.json("show", captured[0]["id"])
    assert shown["content"] == CAPTURED and shown["session_id"] == SESSION
    assert session("Stop", stop_hook_active=False) is None  # read on from the offset
    assert len([m for m in engram_cli.ids("-p", "ledgerly") if "cap" in m]) == 1

    # A compaction: the ledger starts again and the session gets one fresh block.
    assert session("PreCompact", trigger="auto", custom_instructions="") is None
    assert ledger(engram_cli.data_dir) == set()
    fresh = context_of(session("SessionStart", source="compact"))
    assert len(re.findall(r"<engram-context\b", fresh)) == 1
    assert captured[0]["id"] not in fresh  # the session's own memory is not given back
