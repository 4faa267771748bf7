"""The four assistants' hook dialects: reading the JSON a hook gets on standard input
into a `HookCall`, and writing Engram's answer the way the assistant takes it. All
knowledge of their shapes lives here (where the hooks are installed, and which native
events call `engram hook EVENT`, is app/integrations/formats.py).

Sources (read 2026):

- Claude Code — code.claude.com/docs/en/hooks: every event gets `session_id`,
  `transcript_path`, `cwd`, `hook_event_name`; SessionStart adds `source` (startup,
  resume, clear, compact), UserPromptSubmit `prompt`, PostToolUse `tool_name` and
  `tool_input` (`file_path` for Read, Edit, MultiEdit and Write; `notebook_path` for
  NotebookEdit), PreCompact `trigger`. SessionStart, UserPromptSubmit and PostToolUse
  take `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`; Stop and
  PreCompact take no context (exit 0 with no output is success). Context is shown whole
  up to 10,000 characters (a 50,000-character one arrived as a preview).
- Codex — the JSON schemas in openai/codex codex-rs/hooks/schema/generated: Claude's
  input fields (`transcript_path` may be null) and output shape; SessionStart,
  UserPromptSubmit and PostToolUse take `hookSpecificOutput.additionalContext`,
  PreCompact and Stop only `continue`/`systemMessage`. It edits with `apply_patch`,
  whose patch text is `tool_input.command` ("*** Update File: path", "*** Add File:",
  "*** Move to:"; openai/codex#18391); it reads files through the shell, so there is
  no read to see.
- Gemini CLI — geminicli.com/docs/hooks/reference: the same base fields plus
  `timestamp`; SessionStart (`source`: startup, resume, clear), BeforeAgent (`prompt`),
  AfterTool (`tool_name`, `tool_input`) take `hookSpecificOutput.additionalContext`;
  PreCompress, SessionEnd and AfterAgent are advisory. stdout must be JSON: `{}` when
  there is nothing to say. Tools: `read_file` (`file_path`; `absolute_path` or `path`
  in older versions), `read_many_files` (`paths`), `write_file` and `replace`
  (`file_path`).
- Cursor — cursor.com/docs/agent/hooks: `conversation_id` (the session),
  `workspace_roots`, `hook_event_name`; sessionStart takes `{"additional_context"}`
  (the one event whose context reaches the model); beforeSubmitPrompt answers only
  `{"continue"}`, beforeReadFile only `{"permission"}`, afterFileEdit (`file_path`),
  preCompact and stop take `{}`. Cursor wants JSON on every path.

When Engram has nothing to give, it answers what the assistant takes for "go on".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from services.assistants.events import FileAction, FileTouch, HookCall, HookEvent

E = HookEvent
ASSISTANTS = ("claude", "codex", "gemini", "cursor")
DEFAULT_ASSISTANT = "claude"
MAX_FILES = 8  # files one tool call can name that become signals

_CLAUDE_EVENTS = {
    "SessionStart": E.SESSION_START,
    "UserPromptSubmit": E.PROMPT,
    "PostToolUse": E.TOOL_USE,
    "PreCompact": E.PRE_COMPACT,
    "Stop": E.STOP,
    "SessionEnd": E.STOP,
}
NATIVE_EVENTS: dict[str, dict[str, HookEvent]] = {
    "claude": _CLAUDE_EVENTS,
    "codex": _CLAUDE_EVENTS,
    "gemini": {
        "SessionStart": E.SESSION_START,
        "BeforeAgent": E.PROMPT,
        "AfterTool": E.TOOL_USE,
        "PreCompress": E.PRE_COMPACT,
        "AfterAgent": E.STOP,
        "SessionEnd": E.STOP,
    },
    "cursor": {
        "sessionStart": E.SESSION_START,
        "beforeSubmitPrompt": E.PROMPT,
        "beforeReadFile": E.TOOL_USE,
        "afterFileEdit": E.TOOL_USE,
        "postToolUse": E.TOOL_USE,
        "preCompact": E.PRE_COMPACT,
        "stop": E.STOP,
        "sessionEnd": E.STOP,
    },
}
# The native event an answer names when the input did not name one.
_DEFAULT_NATIVE = {
    assistant: {event: next(n for n, e in events.items() if e is event) for event in E}
    for assistant, events in NATIVE_EVENTS.items()
}
# The native events whose answer can carry context for the model.
TAKES_CONTEXT = {
    "claude": frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse"}),
    "codex": frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse"}),
    "gemini": frozenset({"SessionStart", "BeforeAgent", "AfterTool"}),
    "cursor": frozenset({"sessionStart"}),
}
_GEMINI_ONLY = frozenset({"BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "PreCompress"})
_GEMINI_ONLY |= {"BeforeModel", "AfterModel", "BeforeToolSelection"}
# Cursor's answer when there is nothing to add: what lets it go on.
_CURSOR_GO_ON: dict[str, dict[str, Any]] = {
    "beforeSubmitPrompt": {"continue": True},
    "beforeReadFile": {"permission": "allow"},
}

_READ_TOOLS = frozenset({"Read", "read_file", "read_many_files"})
_WRITE_TOOLS = frozenset(
    {"Edit", "MultiEdit", "Write", "NotebookEdit", "write_file", "replace", "edit"}
)
_PATH_KEYS = ("file_path", "absolute_path", "notebook_path", "path")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update File|Add File|Move to): (.+?)\s*$", re.M)


class HookInputError(Exception):
    """The hook's input cannot be answered (the reason is logged with -v only)."""


def assistant_of(given: str | None, data: Mapping[str, Any]) -> str:
    """The assistant named by --for; else the one whose dialect the input is in
    (Cursor's camelCase events and `conversation_id`, Gemini's own event names);
    else Claude Code."""
    if given:
        name = given.strip().lower()
        if name not in ASSISTANTS:
            raise HookInputError(f"unknown assistant {given!r} (one of {', '.join(ASSISTANTS)})")
        return name
    native = data.get("hook_event_name")
    if isinstance(native, str) and native in NATIVE_EVENTS["cursor"]:
        return "cursor"
    if "conversation_id" in data and "session_id" not in data:
        return "cursor"
    if isinstance(native, str) and native in _GEMINI_ONLY:
        return "gemini"
    return DEFAULT_ASSISTANT


def event_of(given: str | None, assistant: str, data: Mapping[str, Any]) -> tuple[HookEvent, str]:
    """The event and its native name. The input's `hook_event_name` wins over the
    command line when it names an event Engram answers (it says what happened, and the
    answer must name it); else the command line's EVENT (Engram's name or a native
    one) is taken, answered under the input's name if it had one."""
    native = data.get("hook_event_name")
    native = native if isinstance(native, str) and native else None
    if native is not None and native in NATIVE_EVENTS[assistant]:
        return NATIVE_EVENTS[assistant][native], native
    event = _parse_event(given, assistant)
    if event is None:
        where = f"{native!r}" if native else "no hook_event_name"
        raise HookInputError(f"no event to answer (EVENT {given!r}, input {where})")
    return event, native or _DEFAULT_NATIVE[assistant][event]


def _parse_event(given: str | None, assistant: str) -> HookEvent | None:
    if not given:
        return None
    try:
        return HookEvent(given.strip().lower())
    except ValueError:
        return NATIVE_EVENTS[assistant].get(given.strip())


def _text(data: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _cwd(data: Mapping[str, Any]) -> Path | None:
    found = _text(data, "cwd")
    roots = data.get("workspace_roots")
    if found is None and isinstance(roots, list):
        found = next((r for r in roots if isinstance(r, str) and r.strip()), None)
    if found is None or "\x00" in found or not Path(found).is_absolute():
        return None
    return Path(found)


def _absolute(path: str, cwd: Path | None) -> Path | None:
    if not path.strip() or "\x00" in path or len(path) > 4096:
        return None
    candidate = Path(path.strip()).expanduser()
    if candidate.is_absolute():
        return candidate
    return cwd / candidate if cwd is not None else None


def files_of(data: Mapping[str, Any], native: str, cwd: Path | None) -> tuple[FileTouch, ...]:
    """The files a tool call read or wrote, absolute, at most MAX_FILES."""
    tool = data.get("tool_name")
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, Mapping):
        tool_input = {}
    names: list[str] = []
    if native in ("beforeReadFile", "afterFileEdit"):  # Cursor names the file itself
        action = FileAction.OPENED if native == "beforeReadFile" else FileAction.SAVED
        names = [p for p in [_text(data, "file_path")] if p]
    elif tool in _READ_TOOLS or tool in _WRITE_TOOLS:
        action = FileAction.OPENED if tool in _READ_TOOLS else FileAction.SAVED
        named = _text(tool_input, *_PATH_KEYS)
        names = [named] if named else []
        listed = tool_input.get("paths")
        if not names and isinstance(listed, list):
            names = [p for p in listed if isinstance(p, str) and not any(c in p for c in "*?[")]
    elif tool == "apply_patch":
        action = FileAction.SAVED
        command = _text(tool_input, "command", "patch", "input")
        names = _PATCH_FILE.findall(command[:1_000_000]) if command else []
    else:
        return ()
    touched: dict[Path, FileTouch] = {}
    for name in names:
        path = _absolute(name, cwd)
        if path is not None and path not in touched:
            touched[path] = FileTouch(path, action)
    return tuple(touched.values())[:MAX_FILES]


def parse_call(data: Any, event: str | None = None, assistant: str | None = None) -> HookCall:
    """The hook call `data` (the decoded standard input) describes, with the command
    line's EVENT and --for; HookInputError when it cannot be answered."""
    if not isinstance(data, Mapping):
        raise HookInputError(f"the input is a JSON {type(data).__name__}, not an object")
    name = assistant_of(assistant, data)
    hook_event, native = event_of(event, name, data)
    session = _text(data, "session_id", "conversation_id", "sessionId")
    if session is None or len(session) > 500:
        raise HookInputError("the input names no session (session_id)")
    cwd = _cwd(data)
    transcript = _text(data, "transcript_path")
    return HookCall(
        event=hook_event,
        assistant=name,
        session_id=session.strip(),
        native_event=native,
        cwd=cwd,
        transcript_path=transcript if transcript and len(transcript) <= 4096 else None,
        source=_text(data, "source", "trigger") if hook_event is E.SESSION_START else None,
        prompt=_text(data, "prompt") if hook_event is E.PROMPT else None,
        files=files_of(data, native, cwd) if hook_event is E.TOOL_USE else (),
    )


def takes_context(call: HookCall) -> bool:
    """Whether the assistant passes context from this event's answer to its model."""
    return call.native_event in TAKES_CONTEXT[call.assistant]


def answer(call: HookCall, context: str | None) -> dict[str, Any] | None:
    """What to print for `call` (None: print nothing), with `context` for the model
    when there is some and the event takes it."""
    if context and takes_context(call):
        if call.assistant == "cursor":
            return {"additional_context": context}
        return {
            "hookSpecificOutput": {"hookEventName": call.native_event, "additionalContext": context}
        }
    if call.assistant == "cursor":
        return dict(_CURSOR_GO_ON.get(call.native_event, {}))
    if call.assistant == "gemini":
        return {}
    return None
