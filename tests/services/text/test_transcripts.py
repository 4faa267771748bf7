"""Transcripts of Claude Code and Codex read into neutral turns: who spoke, what they said,
the tools called (name, files, command) and what the tools answered (error or not, exit
code); harness wrappers, thinking, display events and unknown records left out; any
bytes read without raising, with every turn at the offset of its own line."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from services.text.transcripts import (
    Speaker,
    Turn,
    complete_end,
    is_json_object,
    parse_transcript,
    patch_paths,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"


def lines(*records: object) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def said(turns: list[Turn], speaker: Speaker) -> list[str]:
    return [turn.text for turn in turns if turn.speaker is speaker and turn.text]


def test_a_claude_code_session() -> None:
    transcript = parse_transcript((FIXTURES / "claude_fix_session.jsonl").read_bytes())
    assert transcript.formats == {"claude"}
    assert transcript.session_id == "5f1c2a9e-7b3d-4c1e-9a2f-0d6b8e4c3a11"
    assert transcript.cwd == "/home/dev/shop"
    assert transcript.unreadable == 0
    people = said(transcript.turns, Speaker.USER)
    # The local-command caveat, /clear's wrapper and its empty output are not words.
    assert len(people) == 2
    assert people[0].startswith("The product import in src/ingest.py breaks")
    assert people[1].startswith("Great, thanks. From now on")
    assistant = said(transcript.turns, Speaker.ASSISTANT)
    assert "I should read the parser first." not in " ".join(assistant)  # thinking
    assert assistant[0] == "Let me look at the parser first."
    calls = [call for turn in transcript.turns for call in turn.calls]
    assert [(c.name, c.command, c.paths, c.writes) for c in calls] == [
        ("Read", None, ("/home/dev/shop/src/ingest.py",), False),
        ("Bash", "python -m pytest -q tests/test_ingest.py", (), False),
        ("Edit", None, ("/home/dev/shop/src/ingest.py",), True),
        ("Bash", "python -m pytest -q tests/test_ingest.py", (), False),
    ]
    results = {r.call_id: r for turn in transcript.turns for r in turn.results}
    failed = results["toolu_02Test"]
    assert failed.is_error and failed.exit_code == 1 and failed.failed
    assert "FAILED tests/test_ingest.py::test_quoted_comma" in failed.text
    passed = results["toolu_04Test"]
    assert not passed.failed and passed.exit_code is None and "2 passed" in passed.text
    assert all(turn.speaker is Speaker.TOOL for turn in transcript.turns if turn.results)


def test_a_codex_rollout() -> None:
    transcript = parse_transcript((FIXTURES / "codex_rollout.jsonl").read_bytes())
    assert transcript.formats == {"codex"}
    assert transcript.session_id == "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
    assert transcript.cwd == "/home/dev/tally"
    # The environment context is the harness's; event_msg repeats the message.
    assert said(transcript.turns, Speaker.USER) == [
        "cargo test fails after the refactor of the totals. Please fix it. We'll stick "
        "with rust_decimal for money, never f64."
    ]
    assert said(transcript.turns, Speaker.ASSISTANT) == [
        "The refactor left `total()` summing into an f64. I'll sum Decimal values instead.",
        "Fixed: `total()` sums `Decimal` again and all 12 tests pass.",
    ]
    calls = [call for turn in transcript.turns for call in turn.calls]
    assert [(c.call_id, c.name, c.command, c.paths, c.writes) for c in calls] == [
        ("call_q1", "shell", "cargo test", (), False),  # ["bash", "-lc", …] unwrapped
        ("call_p2", "apply_patch", None, ("src/totals.rs",), True),
        ("call_q3", "shell_command", "cargo test", (), False),
    ]
    results = [r for turn in transcript.turns for r in turn.results]
    assert [(r.call_id, r.exit_code, r.failed) for r in results] == [
        ("call_q1", 101, True),  # {"output", "metadata": {"exit_code"}}
        ("call_p2", 0, False),
        ("call_q3", 0, False),  # "Exit code: 0 … Output:" text
    ]
    assert results[0].text.startswith("   Compiling tally")
    assert results[2].text.startswith("   Compiling tally")  # the header is not output


def test_an_older_codex_rollout() -> None:
    transcript = parse_transcript((FIXTURES / "codex_legacy_rollout.jsonl").read_bytes())
    assert transcript.formats == {"codex"}
    assert transcript.session_id == "3c4e9c2a-2b8f-4f1c-8e7d-5a6b7c8d9e0f"
    assert transcript.unreadable == 0
    assert said(transcript.turns, Speaker.USER) == [
        "MEMORY:convention:Run `make lint` before every commit in this repository."
    ]
    (result,) = [r for turn in transcript.turns for r in turn.results]
    assert result.is_error and result.text.startswith("ruff: error")


def test_codex_tool_shapes() -> None:
    patch = "*** Begin Patch\n*** Add File: docs/a.md\n+x\n*** Update File: src/b.py\n"
    patch += "*** Move to: src/c.py\n*** Delete File: old.txt\n*** End Patch\n"
    records = [
        {"type": "local_shell_call", "call_id": "c1", "status": "completed",
         "action": {"type": "exec", "command": ["npm", "test", "--", "--ci"]}},
        {"type": "function_call", "name": "exec_command", "call_id": "c2",
         "arguments": json.dumps({"cmd": "go test ./...", "yield_time_ms": 1000})},
        {"type": "function_call", "name": "shell", "call_id": "c3",
         "arguments": json.dumps({"command": ["apply_patch", patch]})},
        {"type": "function_call", "name": "apply_patch", "call_id": "c4",
         "arguments": json.dumps({"input": patch})},
        {"type": "function_call", "name": "shell", "call_id": "c5", "arguments": "not json"},
        {"type": "function_call_output", "call_id": "c2",
         "output": "Chunk ID: 1\nWall time: 0.4 seconds\nProcess exited with code 2\nOutput:\n"
                   "--- FAIL: TestTotals (0.00s)"},
        {"type": "function_call_output", "call_id": "c1",
         "output": [{"type": "input_text", "text": "ok"}]},
    ]  # fmt: skip
    transcript = parse_transcript(
        lines(*({"type": "response_item", "payload": r} for r in records))
    )
    calls = [call for turn in transcript.turns for call in turn.calls]
    assert [(c.name, c.command, c.paths, c.writes) for c in calls] == [
        ("local_shell", "npm test -- --ci", (), False),
        ("exec_command", "go test ./...", (), False),
        ("apply_patch", None, ("docs/a.md", "src/b.py", "src/c.py", "old.txt"), True),
        ("apply_patch", None, ("docs/a.md", "src/b.py", "src/c.py", "old.txt"), True),
        ("shell", None, (), False),
    ]
    results = [r for turn in transcript.turns for r in turn.results]
    assert (results[0].exit_code, results[0].text) == (2, "--- FAIL: TestTotals (0.00s)")
    assert (results[1].exit_code, results[1].text, results[1].failed) == (None, "ok", False)


def test_claude_tool_results_as_blocks_and_reminders() -> None:
    reminder = "<system-reminder>Files changed: x</system-reminder>"
    data = lines(
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": [
            {"type": "text", "text": f"Fix the build.{reminder}"},
            {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
        ]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
             "content": [{"type": "text", "text": "Exit code 2\nmake: *** [test] Error 2"}]},
        ]}},
        {"type": "assistant", "isSidechain": True, "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Write",
             "input": {"file_path": "/w/new.py", "content": "MEMORY:fact:not said"}},
            {"type": "tool_use", "id": "t3", "name": "Grep", "input": {"pattern": "x"}},
            {"type": "tool_use", "id": "t4"},
        ]}},
    )  # fmt: skip
    transcript = parse_transcript(data)
    assert said(transcript.turns, Speaker.USER) == ["Fix the build."]
    (result,) = [r for turn in transcript.turns for r in turn.results]
    assert (result.exit_code, result.is_error) == (2, True)
    calls = [(c.name, c.paths, c.writes) for turn in transcript.turns for c in turn.calls]
    assert calls == [("Write", ("/w/new.py",), True), ("Grep", (), False)]
    # What a tool writes is not something anyone said.
    assert said(transcript.turns, Speaker.ASSISTANT) == []


def test_bad_lines_are_counted_and_skipped() -> None:
    data = (
        b"not json\n"
        + lines({"type": "mystery", "value": 1})
        + b"[1, 2]\n\xff\xfe{broken\n\n"
        + lines({"type": "user", "message": {"role": "user", "content": "still read"}})
        + lines({"type": "user", "message": {"role": "user", "content": 42}})
    )
    transcript = parse_transcript(data)
    assert transcript.unreadable == 4
    assert transcript.records == 2
    assert said(transcript.turns, Speaker.USER) == ["still read"]


def test_turns_carry_the_offset_of_their_line() -> None:
    first = lines({"type": "user", "message": {"role": "user", "content": "one"}})
    second = lines({"type": "user", "message": {"role": "user", "content": "two"}})
    transcript = parse_transcript(first + second, base_offset=1000)
    assert [(t.text, t.offset) for t in transcript.turns] == [
        ("one", 1000),
        ("two", 1000 + len(first)),
    ]


def test_whole_lines_and_a_last_record_without_newline() -> None:
    record = json.dumps({"type": "user", "message": {"role": "user", "content": "x"}}).encode()
    assert complete_end(record + b"\n" + record[:10]) == len(record) + 1
    assert complete_end(record) == 0
    assert is_json_object(record) and not is_json_object(record[:-1])
    assert not is_json_object(b"[1]")
    assert said(parse_transcript(record).turns, Speaker.USER) == ["x"]


def test_patch_paths() -> None:
    assert patch_paths("*** Update File: a b.py\n*** Update File: a b.py\nnoise") == ("a b.py",)
    assert patch_paths("") == ()


_KEYS = st.sampled_from(
    ["type", "message", "content", "payload", "role", "text", "name", "input", "arguments",
     "output", "call_id", "tool_use_id", "is_error", "command", "file_path", "id", "cwd",
     "sessionId", "isMeta", "metadata", "exit_code", "action", "record_type", "timestamp"]
)  # fmt: skip
_VALUES = st.sampled_from(
    ["user", "assistant", "tool_use", "tool_result", "text", "message", "response_item",
     "session_meta", "function_call", "function_call_output", "custom_tool_call",
     "local_shell_call", "apply_patch", "shell", "Bash", "Edit", "exec", "state", "event_msg"]
)  # fmt: skip
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | _VALUES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=25,
)


@given(st.binary(max_size=3000), st.integers(min_value=0, max_value=10**9))
def test_any_bytes_are_read_without_raising(data: bytes, base: int) -> None:
    transcript = parse_transcript(data, base)
    assert transcript.records + transcript.unreadable <= data.count(b"\n") + 1
    for turn in transcript.turns:
        assert base <= turn.offset < base + len(data)


@given(st.lists(st.dictionaries(_KEYS, _JSONISH, max_size=6), max_size=8))
def test_records_of_any_shape_are_read_without_raising(records: list[dict[str, object]]) -> None:
    data = lines(*records)
    transcript = parse_transcript(data)
    assert transcript.records + transcript.unreadable == len(records)
    starts = {0} | {i + 1 for i, byte in enumerate(data) if byte == ord("\n")}
    assert all(turn.offset in starts for turn in transcript.turns)


def test_a_sub_agents_prompt_and_engrams_own_context_are_not_the_persons_words() -> None:
    block = '<engram-context project="shop" budget="2000">\nDecision: use httpx.\n</engram-context>'
    data = lines(
        {"type": "user", "isSidechain": True,
         "message": {"role": "user", "content": "Let's use grep to find every caller."}},
        {"type": "user", "message": {"role": "user", "content": f"{block}\nFix the login bug."}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "<engram-memories count=\"1\">x</engram-memories>"}]}},
    )  # fmt: skip
    transcript = parse_transcript(data)
    assert said(transcript.turns, Speaker.USER) == ["Fix the login bug."]
    assert said(transcript.turns, Speaker.ASSISTANT) == ["Let's use grep to find every caller."]
