"""Assistant session transcripts read into one neutral sequence of turns: who spoke, what
they said, which tools they called (name, files, command) and what the tools answered
(an error or not, the text).

Two formats, both JSON Lines that the assistant appends to while a session runs:

- **Claude Code** (`~/.claude/projects/<folder>/<session>.jsonl`, the hooks'
  `transcript_path`): records of `type` "user" or "assistant" with `message.content` a
  string or a list of blocks — `text`, `thinking`, `tool_use` `{id, name, input}` and,
  in user records, `tool_result` `{tool_use_id, content, is_error}` whose content is a
  string or a list of text blocks (a failed Bash run reads "Exit code N" first). Other
  record types (summary, system, file-history-snapshot, …) say nothing to capture.
- **Codex** (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): `{timestamp, type,
  payload}` lines of type session_meta (`payload.id`, `payload.cwd`), response_item,
  event_msg, turn_context and compacted; the response items are `message` (role,
  `input_text`/`output_text` blocks), `function_call` (name, `arguments` as a JSON
  string, call_id), `function_call_output` (call_id, `output`: a string — either
  `{"output", "metadata": {"exit_code"}}` as JSON or "Exit code: N … Output:" text — or
  a list of content items), `custom_tool_call` (apply_patch's patch as `input`),
  `custom_tool_call_output` and `local_shell_call`. event_msg lines repeat the
  messages for display and are left out. Older rollouts wrote the response items
  bare, one a line, after a first line of session metadata; they are read too.

Pure: bytes in, turns out. Reading a file incrementally and within bounds is the
caller's (`services.knowledge.session_capture`). A line that is not JSON, or a record of
no known shape, is counted and skipped; nothing here raises for bad input.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

MAX_TEXT_CHARS = 8_000  # of one message: a longer one is mostly pasted material
RESULT_HEAD_CHARS = 2_500  # of a tool's output: its start and end carry the error
RESULT_TAIL_CHARS = 2_500


class Speaker(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"  # what a tool answered


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    command: str | None = None  # a shell command the tool runs
    paths: tuple[str, ...] = ()  # files it reads or writes
    writes: bool = False  # it edits or creates `paths`


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    text: str
    is_error: bool = False
    exit_code: int | None = None

    @property
    def failed(self) -> bool:
        return self.is_error or (self.exit_code is not None and self.exit_code != 0)


@dataclass(frozen=True)
class Turn:
    speaker: Speaker
    offset: int  # where its record starts in the file (bytes)
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolResult, ...] = ()


@dataclass
class Transcript:
    turns: list[Turn] = field(default_factory=list)
    records: int = 0  # lines read as records of a known shape
    unreadable: int = 0  # lines that are not JSON objects, or of no known shape
    session_id: str | None = None
    cwd: str | None = None
    formats: set[str] = field(default_factory=set)  # "claude", "codex"


def complete_end(data: bytes) -> int:
    """How many bytes of `data` are whole lines (up to and including the last newline)."""
    return data.rfind(b"\n") + 1


def is_json_object(line: bytes) -> bool:
    """Whether `line` (without its newline) is one whole JSON object: a last line a
    writer finished without a newline."""
    return _record(line) is not None


def parse_transcript(data: bytes, base_offset: int = 0) -> Transcript:
    """The turns of the whole lines in `data`, which starts at `base_offset` of its file.
    A last line without a newline is read when it is a whole JSON object."""
    transcript = Transcript()
    position = 0
    for raw in data.split(b"\n"):
        offset = base_offset + position
        position += len(raw) + 1
        if not raw.strip():
            continue
        record = _record(raw)
        if record is None:
            transcript.unreadable += 1
            continue
        turns = _read_record(record, offset, transcript)
        if turns is None:
            transcript.unreadable += 1
            continue
        transcript.records += 1
        transcript.turns.extend(turns)
    return transcript


def _record(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


# --- records --------------------------------------------------------------------------------

_CLAUDE_QUIET = frozenset(
    {"summary", "system", "file-history-snapshot", "queue-operation", "progress", "result"}
)
_CODEX_ENVELOPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CODEX_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
    }
)


def _read_record(record: dict[str, Any], offset: int, transcript: Transcript) -> list[Turn] | None:
    """The turns of one record; [] for a known record that says nothing to capture, None
    for one of no known shape."""
    kind = record.get("type") if isinstance(record.get("type"), str) else None
    if kind in ("user", "assistant") and isinstance(record.get("message"), dict):
        transcript.formats.add("claude")
        _note_identity(transcript, record.get("sessionId"), record.get("cwd"))
        if record.get("isMeta") is True:
            return []
        # A sub-agent's "user" is the assistant that started it, not the person.
        speaker = kind if record.get("isSidechain") is not True else "assistant"
        return _claude_message(speaker, record["message"], offset)
    if kind in _CLAUDE_QUIET and "payload" not in record:
        transcript.formats.add("claude")
        return []
    if kind in _CODEX_ENVELOPES and isinstance(record.get("payload"), dict):
        transcript.formats.add("codex")
        payload = record["payload"]
        if kind == "session_meta":
            _note_identity(transcript, payload.get("id"), payload.get("cwd"))
        return _codex_item(payload, offset) if kind == "response_item" else []
    if kind in _CODEX_ITEMS:  # an older rollout: the items bare
        transcript.formats.add("codex")
        return _codex_item(record, offset)
    if record.get("record_type") == "state":
        return []
    if kind is None and isinstance(record.get("id"), str) and "timestamp" in record:
        transcript.formats.add("codex")  # an older rollout's first line
        _note_identity(transcript, record.get("id"), None)
        return []
    return None


def _note_identity(transcript: Transcript, session_id: Any, cwd: Any) -> None:
    if transcript.session_id is None and isinstance(session_id, str) and session_id.strip():
        transcript.session_id = session_id.strip()
    if transcript.cwd is None and isinstance(cwd, str) and cwd.strip():
        transcript.cwd = cwd.strip()


# --- Claude Code ----------------------------------------------------------------------------------


def _claude_message(said_by: str, message: dict[str, Any], offset: int) -> list[Turn]:
    content = message.get("content")
    speaker = Speaker.USER if said_by == "user" else Speaker.ASSISTANT
    if isinstance(content, str):
        text = _spoken(content)
        return [Turn(speaker, offset, text)] if text else []
    if not isinstance(content, list):
        return []
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        if block_type == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block_type == "tool_use" and message.get("role") != "user":
            call = _claude_call(block)
            if call is not None:
                calls.append(call)
        elif block_type == "tool_result":
            results.append(_claude_result(block))
    turns = []
    text = _spoken("\n\n".join(texts))
    if text or calls:
        turns.append(Turn(speaker, offset, text, tuple(calls)))
    if results:
        turns.append(Turn(Speaker.TOOL, offset, results=tuple(results)))
    return turns


_CLAUDE_WRITERS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})


def _claude_call(block: dict[str, Any]) -> ToolCall | None:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        return None
    call_id = _text(block.get("id"))
    arguments = block.get("input")
    arguments = arguments if isinstance(arguments, dict) else {}
    paths = tuple(
        value.strip()
        for key in ("file_path", "notebook_path")
        if isinstance(value := arguments.get(key), str) and value.strip()
    )
    command = arguments.get("command") if name == "Bash" else None
    return ToolCall(
        call_id,
        name,
        command.strip() if isinstance(command, str) and command.strip() else None,
        paths,
        writes=name in _CLAUDE_WRITERS and bool(paths),
    )


_CLAUDE_EXIT = re.compile(r"\AExit code (-?\d+)\b")


def _claude_result(block: dict[str, Any]) -> ToolResult:
    text = _content_text(block.get("content"))
    exit_match = _CLAUDE_EXIT.match(text)
    return ToolResult(
        _text(block.get("tool_use_id")),
        _clipped_result(text),
        is_error=block.get("is_error") is True,
        exit_code=int(exit_match.group(1)) if exit_match else None,
    )


# --- Codex ------------------------------------------------------------------------------------


def _codex_item(item: dict[str, Any], offset: int) -> list[Turn]:
    kind = item.get("type") if isinstance(item.get("type"), str) else None
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant"):
            return []  # developer and system messages are the harness's
        text = _spoken(_content_text(item.get("content")))
        speaker = Speaker.USER if role == "user" else Speaker.ASSISTANT
        return [Turn(speaker, offset, text)] if text else []
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call = _codex_call(item)
        return [Turn(Speaker.ASSISTANT, offset, calls=(call,))] if call else []
    if kind in ("function_call_output", "custom_tool_call_output"):
        return [Turn(Speaker.TOOL, offset, results=(_codex_result(item),))]
    return []


_SHELLS = frozenset({"bash", "sh", "zsh", "fish", "dash", "/bin/bash", "/bin/sh", "/bin/zsh"})
_PATCH_FILE = re.compile(
    r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$"
)


def _codex_call(item: dict[str, Any]) -> ToolCall | None:
    call_id = _text(item.get("call_id")) or _text(item.get("id"))
    if item.get("type") == "local_shell_call":
        action = item.get("action")
        argv = action.get("command") if isinstance(action, dict) else None
        return _shell_call(call_id, "local_shell", argv)
    name = item.get("name")
    if not isinstance(name, str) or not name:
        return None
    if item.get("type") == "custom_tool_call":
        raw_input = _text(item.get("input"))
        if name == "apply_patch":
            return ToolCall(call_id, name, paths=patch_paths(raw_input), writes=True)
        return ToolCall(call_id, name)
    arguments = _json_object(item.get("arguments"))
    if name == "apply_patch":
        patch = _text(arguments.get("input") or arguments.get("patch"))
        return ToolCall(call_id, name, paths=patch_paths(patch), writes=True)
    command = arguments.get("command", arguments.get("cmd"))
    if command is not None:
        return _shell_call(call_id, name, command)
    paths = tuple(
        value.strip()
        for key in ("path", "file_path")
        if isinstance(value := arguments.get(key), str) and value.strip()
    )
    return ToolCall(call_id, name, paths=paths)


def _shell_call(call_id: str, name: str, command: Any) -> ToolCall | None:
    if isinstance(command, str):
        text = command.strip()
    elif isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        if command[0] == "apply_patch" and len(command) > 1:  # older Codex: the patch as argv
            return ToolCall(call_id, "apply_patch", paths=patch_paths(command[1]), writes=True)
        if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-c", "-lc", "-l"):
            text = command[2].strip()
        else:
            text = shlex.join(command)
    else:
        return None
    if text.startswith("apply_patch") and "*** Begin Patch" in text:
        return ToolCall(call_id, "apply_patch", paths=patch_paths(text), writes=True)
    return ToolCall(call_id, name, command=text or None)


def patch_paths(patch: str) -> tuple[str, ...]:
    """The files an apply_patch patch adds, updates, deletes or moves to, in order."""
    found: list[str] = []
    for line in patch.splitlines():
        match = _PATCH_FILE.match(line)
        if match:
            path = (match.group(1) or match.group(2)).strip()
            if path and path not in found:
                found.append(path)
    return tuple(found)


_FREEFORM_EXIT = re.compile(r"^(?:Exit code:|Process exited with code) (-?\d+)\b", re.MULTILINE)
_OUTPUT_HEADER = re.compile(r"^Output:\n", re.MULTILINE)


def _codex_result(item: dict[str, Any]) -> ToolResult:
    call_id = _text(item.get("call_id"))
    output = item.get("output")
    is_error = False
    if isinstance(output, dict):  # an older serialisation: {content, success}
        is_error = output.get("success") is False
        output = output.get("content")
    if isinstance(output, list):
        return ToolResult(call_id, _clipped_result(_content_text(output)), is_error)
    text = _text(output)
    structured = _json_object(text) if text.lstrip().startswith("{") else {}
    metadata = structured.get("metadata")
    if isinstance(structured.get("output"), str) and isinstance(metadata, dict):
        code = metadata.get("exit_code")
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        return ToolResult(call_id, _clipped_result(structured["output"]), is_error, exit_code)
    exit_match = _FREEFORM_EXIT.search(text[:500])
    if exit_match:
        body = _OUTPUT_HEADER.search(text)
        shown = text[body.end() :] if body else text
        return ToolResult(call_id, _clipped_result(shown), is_error, int(exit_match.group(1)))
    return ToolResult(call_id, _clipped_result(text), is_error)


# --- text -------------------------------------------------------------------------------------

# What the assistants wrap around the person's words (slash commands, reminders, the
# environment and instructions they inject, the context Engram's hooks give): not said
# by anyone, and Engram's own memories must not come back as new ones.
_HARNESS_TAGS = (
    "engram-context",
    "engram-memories",
    "user-prompt-submit-hook",
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "environment_context",
    "user_instructions",
    "user_shell_command",
    "turn_aborted",
    "permissions instructions",
)
_HARNESS_BLOCK = re.compile(
    "|".join(rf"<{re.escape(tag)}\b[^>]*>.*?(?:</{re.escape(tag)}>|\Z)" for tag in _HARNESS_TAGS),
    re.DOTALL,
)
_HARNESS_PREFIXES = (
    "Caveat: The messages below were generated by the user while running local commands",
    "# AGENTS.md instructions for",
    "This session is being continued from a previous conversation",
    "[Request interrupted by user",
)


def _spoken(text: str) -> str:
    """What a person or the model said in `text`: harness wrappers removed, cut to
    `MAX_TEXT_CHARS`."""
    text = _HARNESS_BLOCK.sub("", text).strip()
    if not text or text.startswith(_HARNESS_PREFIXES):
        return ""
    return text[:MAX_TEXT_CHARS]


def _content_text(content: Any) -> str:
    """The text of a string, or of a list of text blocks (`text`, `input_text`,
    `output_text`); images and other blocks are left out."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") in ("text", "input_text", "output_text")
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


def _clipped_result(text: str) -> str:
    if len(text) <= RESULT_HEAD_CHARS + RESULT_TAIL_CHARS:
        return text
    return f"{text[:RESULT_HEAD_CHARS]}\n…\n{text[-RESULT_TAIL_CHARS:]}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _json_object(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return {}
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}
