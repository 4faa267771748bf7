"""Fuzzing the import: any bytes give memories or a clear error naming file:line, and a
file with one bad record anywhere stores nothing (real SQLite store, the CLI's path:
parse, then `MemoryService.import_memories`)."""

from __future__ import annotations

import json
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.composition import Engram
from services.errors import EngramError, UserInputError, ValidationFailed
from services.memories.transfer import parse_import
from services.memory import Memory

WHERE = "fuzz.jsonl"
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


def _records(count: int, prefix: str) -> list[bytes]:
    return [
        json.dumps({"id": f"{prefix}-{n}", "content": f"note {n} of {prefix}"}).encode()
        for n in range(count)
    ]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_any_bytes_give_memories_or_problems_that_name_the_file(raw: bytes) -> None:
    try:
        memories = parse_import(raw, WHERE)
    except ValidationFailed as error:
        assert error.problems
        assert all(problem.where.startswith(WHERE) for problem in error.problems)
        return
    except UserInputError as error:
        assert str(error)
        return
    assert memories and all(isinstance(memory, Memory) for memory in memories)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 12),
    st.data(),
    st.binary(min_size=1, max_size=8).filter(lambda b: _invalid_utf8_in_a_line(b)),
)
def test_invalid_utf8_on_any_line_is_named_by_its_line(
    count: int, data: st.DataObject, junk: bytes
) -> None:
    lines = _records(count, "u")
    bad = data.draw(st.integers(0, count - 1), label="bad line")
    lines[bad] = lines[bad][:-2] + junk + b'"}'  # inside the content string
    try:
        parse_import(b"\n".join(lines) + b"\n", WHERE)
    except ValidationFailed as error:
        assert [problem.where for problem in error.problems] == [f"{WHERE}:{bad + 1}"]
    else:
        raise AssertionError("invalid UTF-8 was imported")


def _invalid_utf8_in_a_line(raw: bytes) -> bool:
    """Not UTF-8, and none of NUL (the whole file is then "binary") or line breaks."""
    if any(byte in raw for byte in b"\x00\n\r"):
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _bad_record(kind: str, prefix: str, existing_id: str, text: str) -> bytes:
    bad: dict[str, object] = {"id": f"{prefix}-bad", "content": text}
    if kind == "json":
        return b'{"id": "' + prefix.encode() + b'-bad", "content": '
    if kind == "utf8":
        return b'{"content": "caf\xe9 \xff"}'
    if kind == "type":
        bad["type"] = "rumour"
    elif kind == "empty":
        bad["content"] = "   "
    elif kind == "confidence":
        bad["confidence"] = 7
    elif kind == "repeated":
        bad["id"] = f"{prefix}-0"
    elif kind == "exists":
        bad["id"] = existing_id
    return json.dumps(bad).encode()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    count=st.integers(1, 15),
    kind=st.sampled_from(["json", "utf8", "type", "empty", "confidence", "repeated", "exists"]),
    data=st.data(),
    text=_TEXT.filter(str.strip),
)
def test_one_bad_record_anywhere_stores_nothing(
    engram: Engram, count: int, kind: str, data: st.DataObject, text: str
) -> None:
    if not engram.store.count():
        engram.service.add({"id": "kept", "content": "already here"}, embed=False)
    before = engram.store.count()
    prefix = uuid.uuid4().hex[:8]
    lines = _records(count, prefix)
    position = data.draw(st.integers(1 if kind == "repeated" else 0, count), label="position")
    lines.insert(position, _bad_record(kind, prefix, "kept", text))
    try:
        memories = parse_import(b"\n".join(lines) + b"\n", WHERE, gate=engram.service.incoming)
        engram.service.import_memories(memories, embed=False)
    except EngramError as error:
        if isinstance(error, ValidationFailed) and kind not in ("repeated", "exists"):
            line = f"{WHERE}:{position + 1}"
            assert any(p.where == line or p.where.startswith(f"{line}:") for p in error.problems)
    else:
        raise AssertionError(f"a file with a bad record ({kind}) was imported")
    assert engram.store.count() == before
    assert not engram.store.existing_ids([f"{prefix}-{n}" for n in range(count)])
