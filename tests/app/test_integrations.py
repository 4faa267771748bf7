"""`engram hooks install | uninstall | status` for each assistant, with HOME in a
temporary folder: the files and shapes written, a second run changing nothing,
backups, broken files refused, --project, the round trip and a stale install."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.app.conftest import EngramCli

EVENTS = ["session-start", "prompt", "tool-use", "pre-compact", "stop"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return folder


@pytest.fixture
def program(tmp_path: Path) -> Path:
    """A stand-in engram executable (the path written into the entries)."""
    path = tmp_path / "venv" / "bin" / "engram"
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\n", "utf-8")
    path.chmod(0o755)
    return path


def _install(cli: EngramCli, program: Path, *args: Any) -> dict[str, Any]:
    result = cli.json("hooks", "install", "--executable", program, *args)
    assert isinstance(result, dict)
    return result


def _read(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def _commands(entries: list[dict[str, Any]]) -> list[str]:
    return [h["command"] for group in entries for h in group["hooks"]]


def test_claude_user_install_writes_settings_and_claude_json(
    engram_cli: EngramCli, home: Path, program: Path, data_dir: Path
) -> None:
    report = _install(engram_cli, program, "--for", "claude")
    assert report["executable"] == str(program) and report["found_by"] == "--executable"
    assert [f["action"] for f in report["files"]] == ["create", "create"]

    hooks = _read(home / ".claude" / "settings.json")["hooks"]
    assert list(hooks) == ["SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop"]
    assert hooks["PostToolUse"][0]["matcher"] == "Read|Edit|Write|MultiEdit"
    assert "matcher" not in hooks["SessionStart"][0]
    handler = hooks["SessionStart"][0]["hooks"][0]
    assert handler == {
        "type": "command",
        "command": f"{program} --data-dir {data_dir} hook session-start --for claude",
        "timeout": 2,  # seconds: a little above hooks.timeout_ms (1000)
    }
    server = _read(home / ".claude.json")["mcpServers"]["engram"]
    assert server == {
        "type": "stdio",
        "command": str(program),
        "args": ["--data-dir", str(data_dir), "mcp"],
    }


def test_codex_writes_hooks_json_and_config_toml(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    _install(engram_cli, program, "--for", "codex")
    hooks = _read(home / ".codex" / "hooks.json")["hooks"]
    assert list(hooks) == ["SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop"]
    assert hooks["PostToolUse"][0]["matcher"] == "apply_patch|Edit|Write"
    assert hooks["Stop"][0]["hooks"][0]["timeout"] == 2
    config = tomllib.loads((home / ".codex" / "config.toml").read_text("utf-8"))
    assert config["mcp_servers"]["engram"]["command"] == str(program)
    assert config["mcp_servers"]["engram"]["args"][-1] == "mcp"


def test_codex_home_is_honoured(
    engram_cli: EngramCli,
    home: Path,
    program: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    _install(engram_cli, program, "--for", "codex")
    assert (tmp_path / "codex-home" / "hooks.json").is_file()
    assert not (home / ".codex").exists()


def test_gemini_counts_milliseconds_and_shares_one_file(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    report = _install(engram_cli, program, "--for", "gemini")
    assert [f["path"] for f in report["files"]] == [str(home / ".gemini" / "settings.json")]
    settings = _read(home / ".gemini" / "settings.json")
    hooks = settings["hooks"]
    assert list(hooks) == ["SessionStart", "BeforeAgent", "AfterTool", "PreCompress", "AfterAgent"]
    handler = hooks["AfterAgent"][0]["hooks"][0]
    assert handler["timeout"] == 1500 and handler["name"] == "engram-stop"
    assert hooks["AfterTool"][0]["matcher"] == "^(read_file|read_many_files|write_file|replace)$"
    assert settings["mcpServers"]["engram"]["command"] == str(program)


def test_cursor_has_a_version_and_flat_entries(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    _install(engram_cli, program, "--for", "cursor")
    document = _read(home / ".cursor" / "hooks.json")
    assert document["version"] == 1
    assert list(document["hooks"]) == [
        "sessionStart",
        "beforeSubmitPrompt",
        "afterFileEdit",
        "preCompact",
        "stop",
    ]
    entry = document["hooks"]["afterFileEdit"][0]
    assert set(entry) == {"command", "timeout"} and entry["command"].endswith(
        "tool-use --for cursor"
    )
    assert _read(home / ".cursor" / "mcp.json")["mcpServers"]["engram"]["args"][-1] == "mcp"


def test_the_timeout_follows_the_hooks_setting(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    engram_cli.ok("config", "set", "hooks.timeout_ms", "3000")
    _install(engram_cli, program, "--for", "claude")
    _install(engram_cli, program, "--for", "gemini")
    claude = _read(home / ".claude" / "settings.json")["hooks"]["Stop"][0]["hooks"][0]
    gemini = _read(home / ".gemini" / "settings.json")["hooks"]["AfterAgent"][0]["hooks"][0]
    assert (claude["timeout"], gemini["timeout"]) == (4, 3500)


@pytest.mark.parametrize("assistant", ["claude", "codex", "gemini", "cursor"])
def test_a_second_install_changes_nothing(
    engram_cli: EngramCli, home: Path, program: Path, assistant: str
) -> None:
    _install(engram_cli, program, "--for", assistant)
    files = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    result = engram_cli.ok("hooks", "install", "--executable", program, "--for", assistant)
    assert "already installed" in result.stdout
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == files  # no backups


def test_other_entries_stay_in_order_and_a_backup_is_kept(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = {
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
        },
        "permissions": {"allow": ["Bash(ls:*)"]},
    }
    text = json.dumps(original, indent=4)
    settings.write_text(text, "utf-8")
    settings.chmod(0o640)

    report = _install(engram_cli, program, "--for", "claude")
    backup = Path(report["files"][0]["backup"])
    assert backup.name.startswith("settings.json.engram-backup-")
    assert backup.read_text("utf-8") == text
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640  # the file keeps its permissions

    installed = _read(settings)
    assert installed["model"] == "opus" and installed["permissions"] == original["permissions"]
    assert installed["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    stop = _commands(installed["hooks"]["Stop"])
    assert stop[0] == "notify-send done" and stop[1].endswith("hook stop --for claude")
    assert settings.read_text("utf-8").startswith('{\n    "model"')  # its indentation kept


def test_uninstall_gives_the_original_back(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    original = {
        "theme": "GitHub",
        "hooks": {
            "AfterTool": [
                {
                    "matcher": "run_shell_command",
                    "hooks": [{"type": "command", "command": "audit", "timeout": 5000}],
                }
            ]
        },
        "mcpServers": {"github": {"command": "npx", "args": ["-y", "server-github"]}},
    }
    settings.write_text(json.dumps(original), "utf-8")
    _install(engram_cli, program, "--for", "gemini")
    report = engram_cli.json("hooks", "uninstall", "--for", "gemini")
    assert report["changed"] is True
    assert "MCP server 'engram'" in report["files"][0]["removed"]
    assert _read(settings) == original
    backups = sorted(settings.parent.glob("settings.json.engram-backup-*"))
    assert len(backups) == 2  # one before install, one before uninstall

    again = engram_cli.ok("hooks", "uninstall", "--for", "gemini")
    assert "nothing of Engram's to remove" in again.stdout
    assert len(sorted(settings.parent.glob("settings.json.engram-backup-*"))) == 2


def test_uninstall_with_nothing_installed_creates_nothing(
    engram_cli: EngramCli, home: Path
) -> None:
    report = engram_cli.json("hooks", "uninstall", "--for", "cursor")
    assert report == {
        "assistant": "cursor",
        "scope": "user",
        "dry_run": False,
        "changed": False,
        "files": [],
    }
    assert list(home.iterdir()) == []


def test_a_broken_json_file_is_refused_with_its_line_and_nothing_is_written(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    claude_json = home / ".claude.json"
    broken = '{\n  "numStartups": 3,\n  "mcpServers": {\n    "x": {"command": "y",}\n  }\n}\n'
    claude_json.write_text(broken, "utf-8")
    result = engram_cli("hooks", "install", "--executable", program, "--for", "claude")
    assert result.exit_code == 2
    assert f"{claude_json}:4:" in result.stderr and "not valid JSON" in result.stderr
    assert claude_json.read_text("utf-8") == broken
    assert not (home / ".claude").exists()  # the other file was not written either
    assert list(home.glob("*backup*")) == []


def test_a_broken_toml_file_is_refused_with_its_line(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n[mcp_servers.x\ncommand = "y"\n', "utf-8")
    result = engram_cli("hooks", "install", "--executable", program, "--for", "codex")
    assert result.exit_code == 2
    assert f"{config}:2:" in result.stderr and "not valid TOML" in result.stderr
    assert not (home / ".codex" / "hooks.json").exists()


def test_a_hooks_value_of_the_wrong_shape_is_refused(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"Stop": {"command": "x"}}}', "utf-8")
    result = engram_cli("hooks", "install", "--executable", program, "--for", "claude")
    assert result.exit_code == 2
    assert '"hooks.Stop" is an object, expected a list' in result.stderr
    assert settings.read_text("utf-8") == '{"hooks": {"Stop": {"command": "x"}}}'


def test_a_foreign_server_named_engram_is_not_overwritten(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    mcp = home / ".cursor" / "mcp.json"
    mcp.parent.mkdir()
    mcp.write_text('{"mcpServers": {"engram": {"command": "node", "args": ["other.js"]}}}', "utf-8")
    result = engram_cli("hooks", "install", "--executable", program, "--for", "cursor")
    assert result.exit_code == 2 and "does not run `engram mcp`" in result.stderr
    assert not (home / ".cursor" / "hooks.json").exists()


def test_project_scope_writes_into_the_repository(
    engram_cli: EngramCli,
    home: Path,
    program: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repository = tmp_path / "shop"
    (repository / ".git").mkdir(parents=True)
    (repository / "src").mkdir()
    monkeypatch.chdir(repository / "src")
    report = _install(engram_cli, program, "--for", "claude", "--project")
    assert report["scope"] == "project"
    assert [f["path"] for f in report["files"]] == [
        str(repository / ".claude" / "settings.json"),
        str(repository / ".mcp.json"),
    ]
    assert "engram" in _read(repository / ".mcp.json")["mcpServers"]
    assert not (home / ".claude").exists()

    status = engram_cli.json("hooks", "status")
    rows = {(r["assistant"], r["scope"]): r for r in status["assistants"]}
    assert status["repository"] == str(repository)
    assert rows[("claude", "project")]["state"] == "installed"
    assert rows[("claude", "user")]["state"] == "not installed"


def test_project_scope_outside_a_repository_is_refused(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    result = engram_cli("hooks", "install", "--executable", program, "--for", "codex", "--project")
    assert result.exit_code == 2 and "not inside a git repository" in result.stderr
    assert not (Path.cwd() / ".codex").exists()


def test_dry_run_shows_the_change_and_writes_nothing(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    result = engram_cli.ok(
        "hooks", "install", "--executable", program, "--for", "codex", "--dry-run"
    )
    assert "would create" in result.stdout and "+[mcp_servers.engram]" in result.stdout
    assert list(home.iterdir()) == []
    report = engram_cli.json(
        "hooks", "install", "--executable", program, "--for", "codex", "--dry-run"
    )
    assert report["dry_run"] is True and "hook stop --for codex" in report["files"][0]["diff"]


def test_status_names_events_files_and_a_stale_program(
    engram_cli: EngramCli, home: Path, program: Path
) -> None:
    _install(engram_cli, program, "--for", "cursor")
    rows = {
        (r["assistant"], r["scope"]): r for r in engram_cli.json("hooks", "status")["assistants"]
    }
    cursor = rows[("cursor", "user")]
    assert cursor["state"] == "installed" and cursor["hooks"]["events"] == EVENTS
    assert cursor["mcp"] == {"path": str(home / ".cursor" / "mcp.json"), "installed": True}
    assert cursor["programs"] == [{"path": str(program), "exists": True}]
    assert ("cursor", "project") not in rows  # not inside a repository

    program.unlink()  # the virtual environment moved
    result = engram_cli.ok("hooks", "status")
    assert f"{program} no longer exists" in result.stderr
    rows = {
        (r["assistant"], r["scope"]): r for r in engram_cli.json("hooks", "status")["assistants"]
    }
    assert rows[("cursor", "user")]["state"] == "stale"


def test_status_reports_a_broken_file_instead_of_failing(engram_cli: EngramCli, home: Path) -> None:
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text("{ // comment\n}", "utf-8")
    rows = {
        (r["assistant"], r["scope"]): r for r in engram_cli.json("hooks", "status")["assistants"]
    }
    assert rows[("gemini", "user")]["state"] == "unreadable"
    assert "settings.json:1:" in rows[("gemini", "user")]["problems"][0]


def test_a_symlinked_settings_file_is_changed_where_it_points(
    engram_cli: EngramCli, home: Path, program: Path, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}', "utf-8")
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(dotfiles)
    _install(engram_cli, program, "--for", "claude")
    assert (home / ".claude" / "settings.json").is_symlink()
    assert "hooks" in _read(dotfiles)


def test_without_executable_the_running_engram_is_written(
    engram_cli: EngramCli, home: Path
) -> None:
    report = engram_cli.json("hooks", "install", "--for", "claude")
    assert os.path.isabs(report["executable"]) and Path(report["executable"]).name == "engram"
    command = _read(home / ".claude" / "settings.json")["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.startswith(report["executable"])


def test_status_says_whether_the_service_answers_the_hooks(
    engram_cli: EngramCli, home: Path, data_dir: Path
) -> None:
    from app.cli.common import CliState
    from app.service import EngramService

    alone = engram_cli.json("hooks", "status")["service"]
    assert alone == {"running": False, "pid": None}
    assert "no Engram service runs" in engram_cli.ok("hooks", "status").stdout
    state = CliState(str(data_dir), verbose=False)
    service = EngramService(data_dir, state.engram())
    service.start()
    try:
        assert engram_cli.json("hooks", "status")["service"] == {
            "running": True,
            "pid": os.getpid(),
        }
        assert "hooks are answered from it" in engram_cli.ok("hooks", "status").stdout
    finally:
        service.stop()
        state.engram().close()
