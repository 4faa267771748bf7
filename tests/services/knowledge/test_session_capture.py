"""Capture from assistant sessions: a transcript's MEMORY lines, fixes and stated
decisions are proposed in the review (or stored, for the kinds accepted without review),
with the session's id, redacted, once; reading is incremental (a fix is seen across
calls), bounded (a giant line is skipped, never held), and a shorter file is read again
from the start without capturing anything twice; the model's words are kept only when
grounded in the session."""

from __future__ import annotations

import itertools
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.composition import Engram
from services.errors import UserInputError
from services.filters import MemoryFilter
from services.knowledge.session_capture import (
    LOOKBACK_BYTES,
    CaptureReport,
    auto_accept_kinds,
    capture_session,
    read_window,
)
from services.llm.base import LLMUnavailable
from services.rem.actions import answer
from services.storage.findings import FindingStore, Status
from services.types import MemoryType, RetrievalMode
from tests.fakes import ScriptedLLM
from tests.services.text.fake_secrets import sample

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude_fix_session.jsonl"
CODEX = FIXTURES / "codex_rollout.jsonl"
SESSION = "5f1c2a9e-7b3d-4c1e-9a2f-0d6b8e4c3a11"


def capture(engram: Engram, path: Path, offset: int = 0, **options: Any) -> CaptureReport:
    given: dict[str, Any] = {"session_id": SESSION, "project": "shop", "assistant": "claude"}
    return capture_session(engram.service, path, offset, **{**given, **options})


def user_line(text: str) -> bytes:
    record = {"type": "user", "sessionId": "s-1", "message": {"role": "user", "content": text}}
    return json.dumps(record).encode() + b"\n"


def assistant_line(*blocks: dict[str, object]) -> bytes:
    record = {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}}
    return json.dumps(record).encode() + b"\n"


def result_line(call_id: str, text: str, is_error: bool = False) -> bytes:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}
    record = {"type": "user", "message": {"role": "user", "content": [block]}}
    return json.dumps(record).encode() + b"\n"


def all_memories(engram: Engram) -> list[object]:
    return engram.store.query(MemoryFilter(mode=RetrievalMode.EXHAUSTIVE))


def test_a_session_is_proposed_for_review(engram: Engram) -> None:
    report = capture(engram, CLAUDE)
    assert report.new_offset == CLAUDE.stat().st_size and not report.more
    assert report.records == 21 and report.unreadable_lines == 0
    assert report.session_id == SESSION
    assert report.stored == [] and report.skipped == []
    assert [(o.origin, o.type) for o in report.proposed] == [
        ("decision", MemoryType.DECISION),
        ("fix", MemoryType.FIX),
        ("memory-line", MemoryType.PITFALL),
        ("decision", MemoryType.CONVENTION),
    ]
    decision, fix, pitfall, convention = report.proposed
    assert decision.content == "Let's use the csv module instead of splitting on commas."
    assert fix.title == "Fix: tests/test_ingest.py::test_quoted_comma failed (AssertionError)"
    assert fix.file_refs == ("src/ingest.py",)  # relative to the session's folder
    assert "`python -m pytest -q tests/test_ingest.py` failed with: FAILED" in fix.content
    assert "Fixed by changing src/ingest.py" in fix.content
    assert "Switching parse_row to csv.reader" in fix.content  # the assistant's words
    assert pitfall.content.startswith("ingest.parse_row must read rows with csv.reader")
    assert convention.content.startswith("From now on, always add a regression test")
    pending = FindingStore(engram.store).pending("capture")
    assert {f.id for f in pending} == {o.finding_id for o in report.proposed}
    for finding in pending:
        assert finding.kind.startswith("captured_") and finding.recommended == "store"
        assert finding.detail["memory"]["session_id"] == SESSION
        assert finding.detail["memory"]["tags"] == ["captured", "claude"]
        assert finding.proposal() is not None
    assert all_memories(engram) == []


def test_capturing_again_creates_nothing(engram: Engram) -> None:
    first = capture(engram, CLAUDE)
    again = capture(engram, CLAUDE)
    assert again.proposed == [] and again.stored == []
    assert [o.reason for o in again.skipped] == [
        f"already proposed ({o.finding_id})" for o in first.proposed
    ]
    other_session = capture(engram, CLAUDE, session_id="another")
    assert other_session.proposed == []  # the same things said in another session
    assert len(FindingStore(engram.store).all()) == 4


def test_kinds_accepted_without_review_are_stored(engram: Engram) -> None:
    kinds = auto_accept_kinds("fix, pitfall")
    report = capture(engram, CLAUDE, auto_accept=kinds)
    assert sorted(o.type for o in report.stored) == [MemoryType.FIX, MemoryType.PITFALL]
    assert sorted(o.type for o in report.proposed) == [
        MemoryType.CONVENTION,
        MemoryType.DECISION,
    ]
    fix = engram.store.get(next(o.memory_id for o in report.stored if o.origin == "fix"))
    assert fix.session_id == SESSION and fix.project == "shop"
    assert fix.tags == ["captured", "claude"] and fix.file_refs == ["src/ingest.py"]
    assert fix.source.value == "automatic" and fix.type is MemoryType.FIX
    # The hooks leave a session's own memories out of what they give it.
    others = engram.store.query(MemoryFilter(exclude_session=SESSION))
    assert fix.id not in {m.id for m in others}
    again = capture(engram, CLAUDE, auto_accept=kinds)
    assert again.stored == [] and {o.reason.split(" as ")[0] for o in again.skipped} >= {
        "already stored"
    }


def test_auto_accept_kinds_are_checked() -> None:
    assert auto_accept_kinds("") == frozenset()
    assert auto_accept_kinds("Decision,fix,") == {MemoryType.DECISION, MemoryType.FIX}
    with pytest.raises(UserInputError, match="unknown memory type 'fixes'"):
        auto_accept_kinds("fixes")


def test_answering_in_the_review(engram: Engram) -> None:
    report = capture(engram, CLAUDE)
    findings = FindingStore(engram.store)
    decision, fix = report.proposed[0], report.proposed[1]
    assert answer(engram.service, findings, findings.get(fix.finding_id or ""), "store")
    stored = engram.store.get(fix.memory_id)
    assert stored.title == fix.title and stored.session_id == SESSION
    assert stored.file_refs == ["src/ingest.py"] and "captured" in stored.tags
    assert not answer(engram.service, findings, findings.get(decision.finding_id or ""), "dismiss")
    assert findings.get(decision.finding_id or "").status is Status.DISMISSED
    again = capture(engram, CLAUDE)
    reasons = {o.memory_id: o.reason for o in again.skipped}
    assert reasons[decision.memory_id].startswith("dismissed in the review")
    assert reasons[fix.memory_id] == f"already stored as {fix.memory_id}"


def test_a_codex_session(engram: Engram) -> None:
    report = capture(engram, CODEX, session_id="codex-1", project="tally", assistant="codex")
    assert [(o.type, o.title) for o in report.proposed] == [
        (MemoryType.DECISION, "We'll stick with rust_decimal for money, never f64."),
        (MemoryType.FIX, "Fix: error[E0308]: mismatched types"),
    ]
    fix = report.proposed[1]
    assert fix.file_refs == ("src/totals.rs",)
    assert "I'll sum Decimal values instead." in fix.content


def test_reading_turn_by_turn_finds_what_one_pass_finds(engram: Engram, tmp_path: Path) -> None:
    """The hooks read after each turn: a fix whose failure was read by an earlier call
    is still seen, through the lookback."""
    data = CLAUDE.read_bytes()
    whole = {o.memory_id.split("-cap-")[1] for o in capture(engram, CLAUDE, project="a").proposed}
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"")
    rng = random.Random(7)
    line_ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    cuts = sorted({*line_ends, *(rng.randrange(len(data)) for _ in range(15)), len(data)})
    offset, found = 0, set()
    for cut in cuts:
        growing.write_bytes(data[:cut])
        report = capture(engram, growing, offset, project="b")
        assert offset <= report.new_offset <= cut
        assert report.new_offset == 0 or data[report.new_offset - 1] == ord("\n")
        offset = report.new_offset
        found |= {o.memory_id.split("-cap-")[1] for o in report.proposed}
        assert not report.skipped  # nothing seen twice
    assert offset == len(data)
    assert len(found) == len(whole) == 4


def test_a_half_written_line_waits_for_its_end(engram: Engram, tmp_path: Path) -> None:
    line = user_line("MEMORY:decision:Deploys go out on Tuesdays only.")
    path = tmp_path / "t.jsonl"
    path.write_bytes(user_line("hello") + line[:20])
    first = capture(engram, path)
    assert first.new_offset == len(user_line("hello")) and first.proposed == []
    path.write_bytes(user_line("hello") + line)
    second = capture(engram, path, first.new_offset)
    assert [o.content for o in second.proposed] == ["Deploys go out on Tuesdays only."]
    assert second.new_offset == path.stat().st_size


def test_a_last_record_without_newline_is_read(engram: Engram, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(user_line("MEMORY:fact:The API listens on port 8443.").rstrip(b"\n"))
    report = capture(engram, path)
    assert [o.content for o in report.proposed] == ["The API listens on port 8443."]
    assert report.new_offset == path.stat().st_size


def test_a_shorter_file_is_read_again_without_duplicates(engram: Engram, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(CLAUDE, path)
    first = capture(engram, path)
    rotated = user_line("Let's use httpx for the API client.") + CLAUDE.read_bytes()[:1515]
    path.write_bytes(rotated)
    assert len(rotated) < first.new_offset
    report = capture(engram, path, first.new_offset)
    assert report.restarted and report.start_offset == 0
    assert report.new_offset == len(rotated)
    assert [o.content for o in report.proposed] == ["Let's use httpx for the API client."]
    assert len(FindingStore(engram.store).all()) == 5


def test_reading_is_bounded(engram: Engram, tmp_path: Path) -> None:
    giant = result_line("t0", "x" * 60_000)
    data = (
        b"".join(user_line(f"MEMORY:fact:Service {i} runs on port {8000 + i}.") for i in range(40))
        + giant
        + user_line("MEMORY:fact:The giant line above is skipped, not this one.")
    )
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    cap = 4096
    window = read_window(path, 0, cap, LOOKBACK_BYTES)
    assert window.end <= cap and len(window.data) <= cap
    offset, calls, contents, unreadable = 0, 0, [], 0
    while True:
        report = capture(engram, path, offset, max_bytes=cap)
        calls += 1
        assert offset < report.new_offset <= offset + cap
        offset = report.new_offset
        contents += [o.content for o in report.proposed]
        unreadable += report.unreadable_lines
        if not report.more:
            break
        assert calls < 100
    assert offset == len(data)
    assert len(contents) == 41 and contents[-1].startswith("The giant line above")
    assert unreadable >= 1


def test_secrets_never_reach_the_database(engram: Engram, tmp_path: Path) -> None:
    rng = random.Random(16)
    aws = sample("aws-access-key", rng).secret
    github = sample("github-token", rng).secret
    password = "Sw0rdfish-42-staging"
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make deploy"}}
    again = {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "make deploy"}}
    edit = {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "/w/deploy.sh"}}
    error = (
        "Exit code 2\nbotocore.exceptions.ClientError: An error occurred (InvalidAccessKeyId) "
        f"when calling PutObject with key {aws}"
    )
    data = b"".join(
        [
            user_line(f"MEMORY:fact:The release bot authenticates with {github}."),
            user_line(f"Let's use DB_PASSWORD={password} on staging for now."),
            assistant_line(call),
            result_line("t1", error, is_error=True),
            assistant_line({"type": "text", "text": f"The key {aws} is an old one."}, edit),
            result_line("t2", "The file /w/deploy.sh has been updated."),
            assistant_line(again),
            result_line("t3", "deployed"),
        ]
    )
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    report = capture(engram, path, auto_accept=frozenset({MemoryType.FACT}))
    assert [o.type for o in report.stored] == [MemoryType.FACT]
    assert sorted(o.type for o in report.proposed) == [MemoryType.DECISION, MemoryType.FIX]
    assert set(report.redacted) >= {"aws-access-key", "github-token", "password"}
    for outcome in report.stored + report.proposed:
        text = f"{outcome.title} {outcome.content}"
        assert aws not in text and github not in text and password not in text
    findings = FindingStore(engram.store)
    for finding in findings.pending():
        answer(engram.service, findings, finding, "store")
    assert len(all_memories(engram)) == 3
    data_dir = engram.data_dir
    engram.close()
    for file in (p for p in data_dir.rglob("*") if p.is_file()):
        stored = file.read_bytes()
        for secret in (aws, github, password):
            assert secret.encode() not in stored, f"{secret} in {file.name}"


class GroundedLLM(ScriptedLLM):
    def __init__(self, reply: dict[str, str] | BaseException) -> None:
        text = reply if isinstance(reply, BaseException) else json.dumps(reply)
        super().__init__(default=text)


def test_the_model_words_a_fix_when_its_words_are_the_sessions(engram: Engram) -> None:
    llm = GroundedLLM(
        {
            "title": "parse_row split quoted fields",
            "content": "split cut the quoted field in two; parse_row now uses csv.reader, "
            "which honours the quotes.",
        }
    )
    report = capture(engram, CLAUDE, llm=llm)
    fix = next(o for o in report.proposed if o.origin == "fix")
    assert fix.title == "parse_row split quoted fields"
    assert fix.content.splitlines() == [
        fix.content.splitlines()[0],
        "Fixed by changing src/ingest.py; the same command passed afterwards.",
        "split cut the quoted field in two; parse_row now uses csv.reader, which honours "
        "the quotes.",
    ]
    assert fix.file_refs == ("src/ingest.py",)
    assert report.model == "scripted"
    memory_line = next(o for o in report.proposed if o.origin == "memory-line")
    assert memory_line.content.startswith("ingest.parse_row must read rows")  # as written
    decision = next(o for o in report.proposed if o.type is MemoryType.DECISION)
    assert decision.content == "Let's use the csv module instead of splitting on commas."


@pytest.mark.parametrize(
    "reply",
    [
        {"title": "parse_row fixed", "content": "Fixed by editing src/parser/rows.py today."},
        {"title": "The csv module", "content": "The csv module is a data science tool for "
         "data analysis. The csv module is a data science tool for data analysis."},
        {"title": "test", "content": "The test failed."},
        LLMUnavailable("no model here"),
    ],
)  # fmt: skip
def test_the_rules_stand_when_the_model_invents_or_fails(
    engram: Engram, reply: dict[str, str] | BaseException
) -> None:
    rules = capture(engram, CLAUDE, project="rules", llm=None)
    worded = capture(engram, CLAUDE, project="model", llm=GroundedLLM(reply))
    assert [(o.title, o.content) for o in worded.proposed] == [
        (o.title, o.content) for o in rules.proposed
    ]
    assert worded.model is None


def test_a_dry_run_changes_nothing(engram: Engram) -> None:
    report = capture(engram, CLAUDE, dry_run=True, auto_accept=frozenset({MemoryType.FIX}))
    assert report.dry_run and len(report.stored) == 1 and len(report.proposed) == 3
    assert FindingStore(engram.store).all() == [] and all_memories(engram) == []


def test_refused_memory_lines_are_reported(engram: Engram, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(user_line("MEMORY:wish:a pony\nMEMORY:fact:"))
    report = capture(engram, path)
    assert report.proposed == []
    assert len(report.problems) == 2 and "unknown type 'wish'" in report.problems[0]


def test_a_missing_transcript_is_a_clear_error(engram: Engram, tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="cannot read the transcript"):
        capture(engram, tmp_path / "gone.jsonl")


_counter = itertools.count()

_LINES = st.one_of(
    st.binary(max_size=80),
    st.sampled_from(
        [
            user_line("MEMORY:fact:The queue holds 500 jobs."),
            user_line("Let's use uv for the virtualenvs."),
            assistant_line({"type": "text", "text": "We decided to keep the cache."}),
            b'{"type": "summary", "summary": "x"}\n',
            b"\xff\xfe\n",
            b"\n",
        ]
    ),
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_LINES, max_size=12), st.lists(st.integers(0, 400), max_size=6))
def test_offsets_only_move_forward_within_the_file(
    engram: Engram, tmp_path: Path, pieces: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(pieces)
    path = tmp_path / f"t{next(_counter)}.jsonl"
    offset = 0
    for cut in [*sorted(min(c, len(data)) for c in cuts), len(data)]:
        path.write_bytes(data[: max(cut, offset)])
        size = path.stat().st_size
        report = capture(engram, path, offset, max_bytes=256)
        assert not report.restarted
        assert offset <= report.new_offset <= size
        offset = report.new_offset
    while True:  # what is left, in bounded calls
        report = capture(engram, path, offset, max_bytes=256)
        assert offset <= report.new_offset <= len(data)
        if report.new_offset == offset:
            break
        offset = report.new_offset
    tail = data[offset:]
    assert b"\n" not in tail  # only a last line without its newline may wait
