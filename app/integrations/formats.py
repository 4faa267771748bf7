"""Each assistant's configuration as Engram writes it: where the files are, which of its
events call which `engram hook EVENT`, and the shape of a hook entry and of the MCP
server registration. Everything that depends on an assistant's documentation lives
here, so a changed format is corrected in one place (docs/assistants.md names the
sources and what could not be confirmed).

Sources (read 2026):
- Claude Code: docs.claude.com/docs/claude-code/hooks (settings.json `hooks`, matcher
  groups, `timeout` in seconds) and /mcp (`.mcp.json` for a project, `mcpServers` at
  the top of ~/.claude.json for the user scope of `claude mcp add -s user`).
- Codex: developers.openai.com/codex/hooks and codex-rs/config/src/hook_config.rs
  (`hooks.json` beside each config layer, Claude's matcher-group shape, `timeout` in
  seconds; `apply_patch` also matches `Edit`/`Write`); config.toml `[mcp_servers.NAME]`.
- Gemini CLI: geminicli.com/docs/hooks/reference (settings.json `hooks`, matcher
  groups, `timeout` in milliseconds) and settings.json `mcpServers`.
- Cursor: cursor.com/docs/agent/hooks (hooks.json with `version: 1` and flat
  `{command, timeout}` entries per event) and mcp.json `mcpServers`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

ENGRAM_EVENTS = ("session-start", "prompt", "tool-use", "pre-compact", "stop")
MCP_SERVER_NAME = "engram"
ENGRAM_NAMES = frozenset({"engram", "engram.exe"})


class Scope(StrEnum):
    USER = "user"
    PROJECT = "project"


class HookStyle(StrEnum):
    MATCHER_GROUPS = "matcher-groups"  # {event: [{matcher?, hooks: [handler]}]}
    FLAT = "flat"  # {event: [handler]}


class TimeUnit(StrEnum):
    SECONDS = "s"
    MILLISECONDS = "ms"


class FileFormat(StrEnum):
    JSON = "json"
    TOML = "toml"


@dataclass(frozen=True)
class HookBinding:
    """One of the assistant's events and the Engram event it calls."""

    native: str
    event: str
    matcher: str | None = None


@dataclass(frozen=True)
class Assistant:
    name: str
    label: str
    style: HookStyle
    unit: TimeUnit
    bindings: tuple[HookBinding, ...]
    mcp_format: FileFormat
    hooks_version: int | None = None  # a top-level "version" the hooks file must carry
    names_handlers: bool = False  # a handler carries a "name" (Gemini CLI)
    typed_server: bool = False  # the MCP entry says "type": "stdio" (Claude Code)
    cannot: tuple[str, ...] = ()  # what this assistant cannot receive, for status/docs
    notes: tuple[str, ...] = ()  # what the user must do after installing

    @property
    def mcp_container(self) -> str:
        return "mcp_servers" if self.mcp_format is FileFormat.TOML else "mcpServers"

    def hooks_file(self, scope: Scope, home: Path, root: Path | None) -> Path:
        return self._folder(scope, home, root) / _HOOKS_FILE[self.name]

    def mcp_file(self, scope: Scope, home: Path, root: Path | None) -> Path:
        if self.name == "claude":  # the one assistant whose MCP file is not in its folder
            return (
                (_project(root) / ".mcp.json") if scope is Scope.PROJECT else home / ".claude.json"
            )
        return self._folder(scope, home, root) / _MCP_FILE[self.name]

    def _folder(self, scope: Scope, home: Path, root: Path | None) -> Path:
        if scope is Scope.PROJECT:
            return _project(root) / f".{self.name}"
        if self.name == "codex" and os.environ.get("CODEX_HOME"):
            return Path(os.environ["CODEX_HOME"]).expanduser()
        return home / f".{self.name}"


def _project(root: Path | None) -> Path:
    if root is None:
        raise ValueError("a project scope needs the repository root")
    return root


_HOOKS_FILE = {
    "claude": "settings.json",
    "codex": "hooks.json",
    "gemini": "settings.json",
    "cursor": "hooks.json",
}
_MCP_FILE = {"codex": "config.toml", "gemini": "settings.json", "cursor": "mcp.json"}

CLAUDE = Assistant(
    name="claude",
    label="Claude Code",
    style=HookStyle.MATCHER_GROUPS,
    unit=TimeUnit.SECONDS,
    bindings=(
        HookBinding("SessionStart", "session-start"),
        HookBinding("UserPromptSubmit", "prompt"),
        HookBinding("PostToolUse", "tool-use", "Read|Edit|Write|MultiEdit"),
        HookBinding("PreCompact", "pre-compact"),
        HookBinding("Stop", "stop"),
    ),
    mcp_format=FileFormat.JSON,
    typed_server=True,
    notes=(
        "Claude Code rewrites ~/.claude.json while it runs: install while it is closed, "
        "or start a new session afterwards.",
        "A project's .mcp.json server is used once you approve it in Claude Code.",
    ),
)
CODEX = Assistant(
    name="codex",
    label="Codex CLI",
    style=HookStyle.MATCHER_GROUPS,
    unit=TimeUnit.SECONDS,
    bindings=(
        HookBinding("SessionStart", "session-start"),
        HookBinding("UserPromptSubmit", "prompt"),
        # Codex edits files with apply_patch (matched as Edit/Write too); it has no
        # file-reading tool (it reads through the shell), so no read signal.
        HookBinding("PostToolUse", "tool-use", "apply_patch|Edit|Write"),
        HookBinding("PreCompact", "pre-compact"),
        HookBinding("Stop", "stop"),
    ),
    mcp_format=FileFormat.TOML,
    cannot=("file reads (Codex reads files through the shell)",),
    notes=(
        "Codex runs a new hook only after you review and trust it (/hooks); versions "
        "before hooks were on by default also need `[features] hooks = true` "
        "(formerly `codex_hooks`) in config.toml.",
        "A project's .codex/ files are read only when the project is trusted.",
    ),
)
GEMINI = Assistant(
    name="gemini",
    label="Gemini CLI",
    style=HookStyle.MATCHER_GROUPS,
    unit=TimeUnit.MILLISECONDS,
    bindings=(
        HookBinding("SessionStart", "session-start"),
        HookBinding("BeforeAgent", "prompt"),
        HookBinding("AfterTool", "tool-use", "^(read_file|read_many_files|write_file|replace)$"),
        HookBinding("PreCompress", "pre-compact"),
        HookBinding("AfterAgent", "stop"),
    ),
    mcp_format=FileFormat.JSON,
    names_handlers=True,
    notes=(
        "Gemini CLI reads a project's .gemini/settings.json only in a trusted folder, and "
        "runs no hooks when `hooksConfig.enabled` is false.",
    ),
)
CURSOR = Assistant(
    name="cursor",
    label="Cursor",
    style=HookStyle.FLAT,
    unit=TimeUnit.SECONDS,
    bindings=(
        HookBinding("sessionStart", "session-start"),
        HookBinding("beforeSubmitPrompt", "prompt"),
        HookBinding("afterFileEdit", "tool-use"),
        HookBinding("preCompact", "pre-compact"),
        HookBinding("stop", "stop"),
    ),
    mcp_format=FileFormat.JSON,
    hooks_version=1,
    cannot=(
        "memories at prompt time (beforeSubmitPrompt cannot add context)",
        "file reads (beforeReadFile is a permission gate, not a signal)",
    ),
    notes=(
        "Cursor may also run Claude Code's hooks (Settings → third-party configs): with "
        "both installed, turn that off or install Engram for one of them only.",
    ),
)

ASSISTANTS: dict[str, Assistant] = {a.name: a for a in (CLAUDE, CODEX, GEMINI, CURSOR)}


def entry_timeout(assistant: Assistant, timeout_ms: int) -> int:
    """The time limit written into an entry: a little above Engram's own
    (`hooks.timeout_ms`), so Engram gives up first and the assistant never has to."""
    if assistant.unit is TimeUnit.MILLISECONDS:
        return timeout_ms + 500
    return math.ceil(timeout_ms / 1000) + 1


def hook_command(executable: list[str], event: str, assistant: Assistant) -> str:
    """The shell command of a hook entry; `executable` is the engram program and any
    global options (e.g. --data-dir), already absolute."""
    import shlex

    return " ".join(
        shlex.quote(word) for word in [*executable, "hook", event, "--for", assistant.name]
    )


def hook_handler(assistant: Assistant, command: str, event: str, timeout: int) -> dict[str, object]:
    """One handler: what runs (Claude/Codex/Gemini put it in a matcher group, Cursor
    lists it under the event directly)."""
    if assistant.style is HookStyle.FLAT:
        return {"command": command, "timeout": timeout}
    handler: dict[str, object] = {}
    if assistant.names_handlers:
        handler["name"] = f"engram-{event}"
    handler.update({"type": "command", "command": command, "timeout": timeout})
    return handler


def hook_entry(
    assistant: Assistant, binding: HookBinding, command: str, timeout: int
) -> dict[str, object]:
    """What goes in the event's list: a matcher group, or Cursor's bare handler."""
    handler = hook_handler(assistant, command, binding.event, timeout)
    if assistant.style is HookStyle.FLAT:
        return handler
    group: dict[str, object] = {}
    if binding.matcher is not None:
        group["matcher"] = binding.matcher
    group["hooks"] = [handler]
    return group


def mcp_entry(assistant: Assistant, executable: list[str]) -> dict[str, object]:
    """The MCP server registration: `engram mcp` over stdio."""
    entry: dict[str, object] = {}
    if assistant.typed_server:
        entry["type"] = "stdio"
    entry["command"] = executable[0]
    entry["args"] = [*executable[1:], "mcp"]
    return entry


def engram_subcommand(words: list[str]) -> str | None:
    """The engram subcommand a command line runs (`hook`, `mcp`, …), or None when it
    does not run engram. Global options between the program and the subcommand
    (`--data-dir DIR`, `-v`) are skipped."""
    index = _subcommand_index(words)
    return None if index is None else words[index]


def _subcommand_index(words: list[str]) -> int | None:
    for start, word in enumerate(words):
        if Path(word).name not in ENGRAM_NAMES:
            continue
        index = start + 1
        while index < len(words):
            token = words[index]
            if token == "--data-dir":
                index += 2
            elif token.startswith("-"):
                index += 1
            else:
                return index
        return None
    return None


def engram_program(words: list[str]) -> str | None:
    """The engram executable a command line names, as written."""
    return next((word for word in words if Path(word).name in ENGRAM_NAMES), None)


def command_words(command: object) -> list[str]:
    """A command string split as a shell would (a string that does not split — an
    unmatched quote — is split on spaces)."""
    import shlex

    if not isinstance(command, str):
        return []
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def is_engram_handler(handler: object) -> bool:
    """A hook handler Engram wrote: its command runs `engram hook`."""
    if not isinstance(handler, dict):
        return False
    return engram_subcommand(command_words(handler.get("command"))) == "hook"


def server_words(entry: object) -> list[str]:
    """An MCP server entry's command line: its `command` is a program (a path that may
    hold spaces) unless it is not engram's, then it is read as a shell line."""
    if not isinstance(entry, dict):
        return []
    args = entry.get("args")
    extra = [str(arg) for arg in args] if isinstance(args, list) else []
    command = entry.get("command")
    if isinstance(command, str) and Path(command).name in ENGRAM_NAMES:
        return [command, *extra]
    return [*command_words(command), *extra]


def is_engram_server(entry: object) -> bool:
    """An MCP server registration that runs `engram mcp`."""
    return engram_subcommand(server_words(entry)) == "mcp"


def engram_event_of(command: object) -> str | None:
    """The Engram event a hook command calls (`engram hook EVENT …`)."""
    words = command_words(command)
    index = _subcommand_index(words)
    if index is None or words[index] != "hook" or index + 1 >= len(words):
        return None
    return words[index + 1]
