"""The assistants' hook dialects (app/hook_formats.py): real-shaped inputs of Claude
Code, Codex, Gemini CLI and Cursor read into one call, and answers in each one's shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.hook_formats import (
    HookInputError,
    answer,
    parse_call,
    takes_context,
)
from services.assistants.events import FileAction, FileTouch, HookEvent

BASE = {
    "session_id": "0c772589-6645-42a0-aed4-441a3cfd5665",
    "transcript_path": "/home/dev/.claude/projects/-work-shop/0c772589.jsonl",
    "cwd": "/work/shop",
    "permission_mode": "default",
}


def claude(event: str, **fields: Any) -> dict[str, Any]:
    return {**BASE, "hook_event_name": event, **fields}


def test_claude_session_start_and_its_answer() -> None:
    call = parse_call(claude("SessionStart", source="compact"), "session-start", "claude")
    assert call.event is HookEvent.SESSION_START
    assert call.session_id == BASE["session_id"]
    assert call.cwd == Path("/work/shop")
    assert call.transcript_path == BASE["transcript_path"]
    assert call.source == "compact" and call.forgets_context
    assert answer(call, "<engram-context>…</engram-context>") == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "<engram-context>…</engram-context>",
        }
    }
    assert answer(call, None) is None  # nothing to add: no output at all


def test_claude_prompt_and_tool_use() -> None:
    prompt = parse_call(claude("UserPromptSubmit", prompt="why refunds?"), "prompt", "claude")
    assert prompt.event is HookEvent.PROMPT and prompt.prompt == "why refunds?"
    read = claude("PostToolUse", tool_name="Read", tool_input={"file_path": "/work/shop/a.py"})
    call = parse_call(read, "tool-use", "claude")
    assert call.files == (FileTouch(Path("/work/shop/a.py"), FileAction.OPENED),)
    assert answer(call, "ctx")["hookSpecificOutput"]["hookEventName"] == "PostToolUse"  # type: ignore[index]
    for tool in ("Edit", "Write", "MultiEdit"):
        edit = claude("PostToolUse", tool_name=tool, tool_input={"file_path": "src/b.py"})
        assert parse_call(edit, "tool-use", "claude").files == (
            FileTouch(Path("/work/shop/src/b.py"), FileAction.SAVED),
        )
    bash = claude("PostToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert parse_call(bash, "tool-use", "claude").files == ()


def test_claude_stop_and_pre_compact_take_no_context() -> None:
    for native, event in (("Stop", "stop"), ("PreCompact", "pre-compact")):
        call = parse_call(claude(native, trigger="auto"), event, "claude")
        assert not takes_context(call)
        assert answer(call, "anything") is None


def test_codex_apply_patch_names_the_files_it_writes() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/a.py\n@@\n+x = 1\n"
        "*** Add File: /work/shop/new.py\n+y = 2\n*** Delete File: old.py\n"
        "*** Update File: src/c.py\n*** Move to: src/d.py\n*** End Patch\n"
    )
    data = claude(
        "PostToolUse",
        tool_name="apply_patch",
        tool_input={"command": patch},
        tool_response="Success",
        turn_id="t1",
        model="gpt-5",
        tool_use_id="call_1",
    )
    call = parse_call(data, "tool-use", "codex")
    assert [(t.path, t.action) for t in call.files] == [
        (Path("/work/shop/src/a.py"), FileAction.SAVED),
        (Path("/work/shop/new.py"), FileAction.SAVED),
        (Path("/work/shop/src/c.py"), FileAction.SAVED),
        (Path("/work/shop/src/d.py"), FileAction.SAVED),
    ]
    codex_start = parse_call(
        {**claude("SessionStart", source="startup"), "transcript_path": None},
        "session-start",
        "codex",
    )
    assert codex_start.transcript_path is None
    assert answer(codex_start, "ctx") == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"}
    }


def test_gemini_events_and_answers() -> None:
    base = {**BASE, "timestamp": "2026-03-01T10:00:00Z"}
    agent = parse_call({**base, "hook_event_name": "BeforeAgent", "prompt": "p q"}, "prompt")
    assert agent.assistant == "gemini" and agent.event is HookEvent.PROMPT
    assert answer(agent, "ctx") == {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "ctx"}
    }
    assert answer(agent, None) == {}  # Gemini wants JSON on stdout
    for key in ("file_path", "absolute_path", "path"):
        read = {**base, "hook_event_name": "AfterTool", "tool_name": "read_file"}
        read["tool_input"] = {key: "/work/shop/a.py"}
        call = parse_call(read, "tool-use", "gemini")
        assert call.files == (FileTouch(Path("/work/shop/a.py"), FileAction.OPENED),)
    many = {**base, "hook_event_name": "AfterTool", "tool_name": "read_many_files"}
    many["tool_input"] = {"paths": ["src/a.py", "src/**/*.ts"]}
    assert [t.path for t in parse_call(many, "tool-use", "gemini").files] == [
        Path("/work/shop/src/a.py")
    ]
    replace = {**base, "hook_event_name": "AfterTool", "tool_name": "replace"}
    replace["tool_input"] = {"file_path": "/work/shop/a.py", "old_string": "a"}
    assert parse_call(replace, "tool-use", "gemini").files[0].action is FileAction.SAVED
    compress = parse_call({**base, "hook_event_name": "PreCompress", "trigger": "auto"})
    assert compress.event is HookEvent.PRE_COMPACT and answer(compress, "ctx") == {}


def test_cursor_conversation_workspace_and_answers() -> None:
    base = {
        "conversation_id": "conv-123",
        "generation_id": "gen-456",
        "workspace_roots": ["/work/shop"],
        "cursor_version": "2.0.77",
    }
    start = parse_call({**base, "hook_event_name": "sessionStart"}, "session-start")
    assert start.assistant == "cursor" and start.session_id == "conv-123"
    assert start.cwd == Path("/work/shop")
    assert answer(start, "ctx") == {"additional_context": "ctx"}
    assert answer(start, None) == {}
    prompt = parse_call({**base, "hook_event_name": "beforeSubmitPrompt", "prompt": "x y"})
    assert not takes_context(prompt)
    assert answer(prompt, "ctx") == {"continue": True}  # it cannot add context
    edit = {**base, "hook_event_name": "afterFileEdit", "file_path": "/work/shop/a.ts"}
    edit["edits"] = [{"old_string": "a", "new_string": "b"}]
    call = parse_call(edit, "tool-use", "cursor")
    assert call.files == (FileTouch(Path("/work/shop/a.ts"), FileAction.SAVED),)
    assert answer(call, None) == {}
    read = parse_call({**base, "hook_event_name": "beforeReadFile", "file_path": "/w/a.ts"})
    assert read.files[0].action is FileAction.OPENED
    assert answer(read, "ctx") == {"permission": "allow"}
    stop = parse_call({**base, "hook_event_name": "stop", "status": "completed"}, "stop")
    assert answer(stop, None) == {}


def test_the_input_names_the_event_when_the_command_line_disagrees() -> None:
    data = claude("SessionStart", source="startup")
    call = parse_call(data, "prompt", "claude")
    assert call.event is HookEvent.SESSION_START and call.native_event == "SessionStart"
    assert parse_call(data).event is HookEvent.SESSION_START  # no EVENT, no --for
    bare = {k: v for k, v in data.items() if k != "hook_event_name"}
    assert parse_call(bare, "session-start").native_event == "SessionStart"
    assert parse_call(bare, "UserPromptSubmit").event is HookEvent.PROMPT  # a native EVENT
    with pytest.raises(HookInputError):
        parse_call(bare)  # nothing says which event
    # An event Engram does not answer, named by the input: EVENT decides, and the
    # answer (named as the input named it) carries no context.
    pre = parse_call(claude("PreToolUse", tool_name="Read"), "tool-use", "claude")
    assert pre.event is HookEvent.TOOL_USE and pre.native_event == "PreToolUse"
    assert answer(pre, "ctx") is None


@pytest.mark.parametrize(
    "data",
    [
        [],
        "text",
        None,
        {"hook_event_name": "SessionStart"},  # no session
        {"session_id": 7, "hook_event_name": "SessionStart"},
        {"session_id": "x" * 600, "hook_event_name": "SessionStart"},
    ],
)
def test_inputs_that_cannot_be_answered_say_why(data: Any) -> None:
    with pytest.raises(HookInputError):
        parse_call(data, "session-start", "claude")


def test_an_unknown_assistant_is_refused() -> None:
    with pytest.raises(HookInputError, match="unknown assistant"):
        parse_call(claude("Stop"), "stop", "copilot")


def test_a_relative_cwd_or_strange_paths_are_not_trusted() -> None:
    call = parse_call({**claude("SessionStart"), "cwd": "relative/dir"}, "session-start")
    assert call.cwd is None
    tool = claude("PostToolUse", tool_name="Read", tool_input={"file_path": "a\x00b"})
    assert parse_call(tool, "tool-use").files == ()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    [
        "session_id",
        "conversation_id",
        "hook_event_name",
        "cwd",
        "workspace_roots",
        "transcript_path",
        "prompt",
        "source",
        "tool_name",
        "tool_input",
        "file_path",
    ]
)


@given(
    st.dictionaries(KEYS, JSON, max_size=8) | JSON,
    st.sampled_from([None, "session-start", "prompt", "tool-use", "stop", "Stop", "??"]),
    st.sampled_from([None, "claude", "codex", "gemini", "cursor"]),
)
def test_any_input_is_read_or_refused_with_a_reason(data: Any, event: Any, who: Any) -> None:
    try:
        call = parse_call(data, event, who)
    except HookInputError:
        return
    reply = answer(call, "ctx")
    assert reply is None or isinstance(reply, dict)
    assert all(touch.path.is_absolute() for touch in call.files)
