"""Import validation: every problem reported as file:line, nothing stored unless the
whole file is valid; exports round-trip exactly."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.errors import EngramError, UserInputError, ValidationFailed
from services.memories.transfer import export_document, parse_import, read_import_file
from services.memory import Memory, memory_from_dict
from services.types import MemoryType, Scope, Source, Tier
from tests.services.builders import full_memory, make_memory


def line(**fields: Any) -> str:
    return json.dumps({"content": "some content", **fields}, ensure_ascii=False)


def jsonl(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def problems_of(raw: bytes, where: str = "in.jsonl") -> list[tuple[str, str]]:
    with pytest.raises(ValidationFailed) as caught:
        parse_import(raw, where)
    return [(p.where, p.reason) for p in caught.value.problems]


def test_valid_jsonl() -> None:
    memories = parse_import(jsonl(line(id="a", type="decision"), "", line(id="b")), "f")
    assert [(m.id, m.type) for m in memories] == [
        ("a", MemoryType.DECISION),
        ("b", MemoryType.FACT),
    ]


def test_malformed_json_line_is_named() -> None:
    found = problems_of(jsonl(line(id="a"), '{"content": "x",', line(id="c"), "not json"))
    assert [where for where, _ in found] == ["in.jsonl:2:17", "in.jsonl:4:1"]  # line:column
    assert all(reason.startswith("invalid JSON") for _, reason in found)


def test_every_problem_of_every_line_is_listed() -> None:
    found = problems_of(
        jsonl(
            line(id="ok"),
            line(id="t", type="gossip"),
            json.dumps({"type": "fact"}),
            line(id="c", confidence=3),
            line(id="d", tags="not-a-list", created_at="yesterday"),
            json.dumps([1, 2]),
        )
    )
    assert found == [
        ("in.jsonl:2", found[0][1]),
        ("in.jsonl:3", "'content' is missing or empty"),
        ("in.jsonl:4", "'confidence' must be between 0 and 1, got 3"),
        ("in.jsonl:5", "'tags' must be a list of strings"),
        ("in.jsonl:5", "'created_at' is not an ISO-8601 time: 'yesterday'"),
        ("in.jsonl:6", "expected a JSON object, got list"),
    ]
    assert found[0][1].startswith("unknown type 'gossip' (choose from: fact, ")


def test_invalid_utf8_names_the_line() -> None:
    raw = jsonl(line(id="a"), line(id="b")) + b'{"content": "caf\xe9"}\n'
    with pytest.raises(ValidationFailed, match="not valid UTF-8") as caught:
        parse_import(raw, "in.jsonl")
    assert [p.where for p in caught.value.problems] == ["in.jsonl:3"]
    offset = raw.index(b"\xe9")
    assert f"offset {offset}" in caught.value.problems[0].reason


def test_invalid_utf8_after_a_byte_order_mark() -> None:
    raw = b"\xef\xbb\xbf" + jsonl(line(id="a"), line(id="b")) + b"\xff\n"
    with pytest.raises(ValidationFailed) as caught:
        parse_import(raw, "in.jsonl")
    (problem,) = caught.value.problems
    assert problem.where == "in.jsonl:3"
    offset = raw.index(b"\xff")
    assert problem.reason.endswith(f"offset {offset}")


def test_byte_order_mark_is_accepted() -> None:
    memories = parse_import(b"\xef\xbb\xbf" + jsonl(line(id="a"), line(id="b")), "f")
    assert [m.id for m in memories] == ["a", "b"]


@pytest.mark.parametrize(
    "raw",
    [
        b"\x00\x01\x02binary",
        b'{"content": "x"}\n\x00\n',
        '{"content": "x"}'.encode("utf-16"),
        bytes(range(256)) * 4,
    ],
)
def test_binary_is_rejected(raw: bytes) -> None:
    with pytest.raises(ValidationFailed, match=r"binary|UTF-8"):
        parse_import(raw, "blob.bin")


def test_duplicate_ids_inside_a_file() -> None:
    found = problems_of(jsonl(line(id="a"), line(id="b"), line(id="a", content="again")))
    assert found == [("in.jsonl:3", "duplicate id 'a' (first at in.jsonl:1)")]


def test_unknown_type() -> None:
    found = problems_of(jsonl(line(id="a", type="Rumour")))
    assert len(found) == 1 and found[0][0] == "in.jsonl:1"
    assert "unknown type 'Rumour'" in found[0][1]


def test_empty_input() -> None:
    for raw in (b"", b"\n\n  \n", b"\xef\xbb\xbf"):
        with pytest.raises(UserInputError, match="no memories"):
            parse_import(raw, "empty.jsonl")


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 100_000,
        jsonl(line(id="a"), "[" * 100_000),
        jsonl(line(id="a"), "1" * 5000),
        b"1" * 5000,
        b'{"memories": 5}',
        b'[{"content": "a"}, 7]',
        b"[1, 2",
        b'"a string"',
        jsonl(line(id="a", retrieval_count=10**30)),
    ],
)
def test_hostile_json_is_a_validation_error(raw: bytes) -> None:
    with pytest.raises(ValidationFailed):
        parse_import(raw, "x.json")


@given(st.binary(max_size=2000))
@settings(max_examples=300)
def test_random_bytes_never_crash(raw: bytes) -> None:
    try:
        memories = parse_import(raw, "junk")
    except EngramError:
        return
    assert memories and all(isinstance(m, Memory) for m in memories)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "content",
                    "type",
                    "tags",
                    "confidence",
                    "created_at",
                    "memories",
                    "project",
                    "title",
                    "use_count",
                    "tier",
                    "x",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@given(st.lists(json_values, min_size=1, max_size=6), st.booleans())
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
def test_random_json_never_crashes(values: list[Any], as_document: bool) -> None:
    raw = (
        json.dumps({"memories": values})
        if as_document
        else "\n".join(json.dumps(v) for v in values)
    ).encode()
    try:
        memories = parse_import(raw, "junk.jsonl")
    except EngramError:
        return
    for memory in memories:
        again, problems = memory_from_dict(memory.to_dict(), "again")
        assert again == memory, problems


# --- export round trip ------------------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60)
_STRIPPED = _TEXT.map(str.strip).filter(bool)
_ID = st.text(
    st.characters(blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=30
).filter(lambda s: s == "".join(s.split()))
_TIME = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.isoformat())


@st.composite
def memories(draw: st.DrawFn) -> Memory:
    optional = st.none() | _STRIPPED
    return Memory(
        id=draw(_ID),
        type=draw(st.sampled_from(list(MemoryType))),
        title=draw(_STRIPPED),
        content=draw(_TEXT.filter(str.strip)),
        project=draw(optional),
        summary=draw(optional),
        compressed=draw(optional),
        index_line=draw(optional),
        tags=draw(st.lists(_STRIPPED, max_size=3)),
        file_refs=draw(st.lists(_STRIPPED, max_size=3)),
        confidence=draw(st.floats(0, 1)),
        source=draw(st.sampled_from(list(Source))),
        session_id=draw(optional),
        task_id=draw(optional),
        role=draw(optional),
        branch=draw(optional),
        scope=draw(st.sampled_from(list(Scope))),
        created_at=draw(_TIME),
        valid_from=draw(st.none() | _TIME),
        valid_to=draw(st.none() | _TIME),
        last_accessed=draw(st.none() | _TIME),
        retrieval_count=draw(st.integers(0, 2**63 - 1)),
        citation_count=draw(st.integers(0, 10**6)),
        ignore_count=draw(st.integers(0, 10)),
        use_count=draw(st.integers(0, 10)),
        supersedes=draw(optional),
        superseded_by=draw(optional),
        tier=draw(st.sampled_from(list(Tier))),
    )


def _unique(items: list[Memory]) -> bool:
    return len({m.id for m in items}) == len(items)


@given(st.lists(memories(), min_size=1, max_size=5).filter(_unique))
@settings(max_examples=60)
def test_export_document_round_trips_every_field(items: list[Memory]) -> None:
    # an export of one project holds only that project's memories (else None)
    projects = {m.project for m in items}
    document = export_document(items, project=projects.pop() if len(projects) == 1 else None)
    raw = json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8")
    assert parse_import(raw, "export.json") == items


@given(st.lists(memories(), min_size=1, max_size=5).filter(_unique))
@settings(max_examples=60)
def test_jsonl_export_round_trips_every_field(items: list[Memory]) -> None:
    """The CLI's JSONL export: one `ensure_ascii=False` object per line, so U+2028 and
    friends appear raw inside strings."""
    raw = ("\n".join(json.dumps(m.to_dict(), ensure_ascii=False) for m in items) + "\n").encode(
        "utf-8"
    )
    assert parse_import(raw, "export.jsonl") == items


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_jsonl_with_unicode_line_separators_in_strings(separator: str) -> None:
    items = [make_memory(f"first{separator}second"), make_memory("other")]
    raw = "\n".join(json.dumps(m.to_dict(), ensure_ascii=False) for m in items).encode()
    assert parse_import(raw, "f.jsonl") == items


def test_export_document_shape() -> None:
    document = export_document([full_memory()], project="engram")
    assert document["version"] == 1 and document["project"] == "engram"
    assert datetime.fromisoformat(document["exported_at"]).tzinfo is not None
    assert document["memories"] == [full_memory().to_dict()]


def test_document_project_is_the_default_for_records_without_one() -> None:
    raw = json.dumps(
        {
            "version": 1,
            "project": "proj",
            "memories": [{"content": "a"}, {"content": "b", "project": "own"}],
        }
    ).encode()
    assert [m.project for m in parse_import(raw, "f.json")] == ["proj", "own"]
    assert [m.project for m in parse_import(raw, "f.json", default_project="cli")] == ["cli", "own"]


def test_document_problems_are_located_by_line_column_and_index() -> None:
    raw = json.dumps({"memories": [{"content": "a"}, {"content": ""}, {"content": 123}]}).encode()
    assert problems_of(raw, "f.json") == [
        ("f.json:1:33 (memories[1])", "'content' is missing or empty"),
        ("f.json:1:50 (memories[2])", "'content' must be a string, not int"),  # was "missing"
    ]
    listed = b'[{"content": "a"},\n {"content": ""}]'
    assert problems_of(listed, "f.json") == [("f.json:2:2 ([1])", "'content' is missing or empty")]


def test_a_malformed_document_is_one_problem_where_json_puts_it() -> None:
    """A JSON document missing a comma on line 3 had been read as JSONL: four problems,
    one a line, none with a column."""
    raw = b'{"version":1,"memories":[\n {"id":"x","type":"fact","content":"a"},\n'
    raw += b' {"id":"y" "type":"fact"}\n]}\n'
    assert problems_of(raw, "f.json") == [("f.json:3:12", "Expecting ',' delimiter")]
    broken_first_line = jsonl('{"content": "x",', line(id="b"))  # JSONL still, line by line
    assert [where for where, _ in problems_of(broken_first_line)] == ["in.jsonl:1:17"]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text("abc xyz", min_size=1, max_size=8).map("n".__add__), min_size=1, max_size=6),
    st.sampled_from([None, 1, 2, "\t"]),
    st.data(),
)
def test_a_record_of_a_document_is_located_at_its_opening_brace(
    contents: list[str], indent: int | str | None, data: st.DataObject
) -> None:
    """Whatever the layout, a bad record's problem names the line and column where the
    record starts, and a document broken anywhere names json's own line and column."""
    bad = data.draw(st.integers(0, len(contents) - 1), label="bad record")
    records: list[dict[str, Any]] = [{"content": c} for c in contents]
    records[bad] = {"content": 7}
    text = json.dumps({"version": 1, "memories": records}, indent=indent)
    ((where, _),) = problems_of(text.encode(), "f.json")
    line_number, column = map(int, where.removeprefix("f.json:").split(" ")[0].split(":"))
    offset = sum(len(t) + 1 for t in text.split("\n")[: line_number - 1]) + column - 1
    assert json.JSONDecoder().raw_decode(text, offset)[0] == {"content": 7}
    cut = data.draw(st.integers(1, len(text) - 1), label="cut at")
    broken = text[:cut]
    try:
        json.loads(broken)
    except json.JSONDecodeError as error:
        if _first_lines_parse(broken):
            return  # read as JSONL, line by line
        expected = (f"f.json:{error.lineno}:{error.colno}", error.msg)
        assert problems_of(broken.encode(), "f.json") == [expected]


def _first_lines_parse(text: str) -> bool:
    for piece in [p for p in text.splitlines() if p.strip()][:2]:
        try:
            json.loads(piece)
        except ValueError:
            continue
        return True
    return False


def test_an_empty_project_is_no_project() -> None:
    raw = jsonl(line(id="a"), line(id="b", project=""))
    assert [m.project for m in parse_import(raw, "in.jsonl", default_project="")] == [None, None]
    assert [m.project for m in parse_import(raw, "in.jsonl", default_project=" ")] == [None, None]


def test_read_import_file(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(jsonl(line(id="a")))
    assert [m.id for m in read_import_file(path).memories] == ["a"]
    with pytest.raises(UserInputError, match="no such file"):
        read_import_file(tmp_path / "missing.jsonl")
    with pytest.raises(UserInputError, match="folder"):
        read_import_file(tmp_path)


# --- all or nothing through the service ---------------------------------------------------------


def test_a_file_with_one_bad_line_stores_nothing(engram: Any, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    good = [line(id=f"good-{i}", content=f"good memory {i}") for i in range(20)]
    path.write_bytes(jsonl(*good[:10], line(id="bad", type="gossip"), *good[10:]))
    with pytest.raises(ValidationFailed) as caught:
        engram.service.import_memories(read_import_file(path).memories)
    assert [p.where for p in caught.value.problems] == [f"{path}:11"]
    assert engram.store.count() == 0
    assert engram.store.fts_row_count() == 0
    assert engram.vectors.count(engram.embedder.model_id) == 0

    path.write_bytes(jsonl(*good))
    report = engram.service.import_memories(read_import_file(path).memories)
    assert (report.imported, report.skipped, report.embedded) == (20, 0, 20)
    assert engram.store.count() == 20


def test_import_of_existing_ids_stores_nothing_unless_asked(engram: Any) -> None:
    engram.service.add({"id": "a", "content": "original"})
    batch = parse_import(jsonl(line(id="a", content="replacement"), line(id="b")), "f")
    with pytest.raises(UserInputError, match="already exist"):
        engram.service.import_memories(batch)
    assert engram.store.all_ids() == {"a"}
    report = engram.service.import_memories(batch, skip_existing=True)
    assert (report.imported, report.skipped) == (1, 1)
    assert engram.store.get("a").content == "original"
    engram.service.import_memories(batch, replace=True)
    assert engram.store.get("a").content == "replacement"
    assert engram.store.count() == 2


@pytest.mark.parametrize(
    "bad_id", ["a b", "trailing\n", "\tlead", "nul\x00", "", "x" * 201, 7, ["a"]]
)
def test_ids_must_be_plain_non_empty_strings(bad_id: Any) -> None:
    found = problems_of(jsonl(line(id="fine"), line(id=bad_id)))
    assert len(found) == 1 and found[0][0] == "in.jsonl:2"
    assert "'id'" in found[0][1]


def test_counts_must_fit_in_the_database() -> None:
    assert parse_import(jsonl(line(use_count=2**63 - 1)), "f")[0].use_count == 2**63 - 1
    found = problems_of(jsonl(line(use_count=2**63)))
    assert found == [("in.jsonl:1", found[0][1])] and "'use_count'" in found[0][1]


def test_records_whose_text_is_stored_are_left_out_with_their_copy() -> None:
    """An import had stored a second copy of a text `engram add` would have called
    already stored; a record naming a left-out one as replaced names its copy."""
    from services.memories.transfer import without_stored_copies

    stored = make_memory("Money is kept in integer cents.", id="kept-1", project="shop")
    copy = make_memory("Money is kept in integer cents.", id="imp-1", project="shop")
    newer = make_memory("Money is kept in cents, as int64.", id="imp-2", project="shop")
    newer.supersedes = "imp-1"
    own = make_memory("Money is kept in integer cents.", id="kept-1", project="shop")
    history = make_memory("Money is kept in integer cents.", id="imp-3", project="shop")
    history.superseded_by = "imp-2"

    def stored_copy(memory: Memory) -> Memory | None:
        same = (memory.project, memory.content) == (stored.project, stored.content)
        return stored if same else None

    kept, copies = without_stored_copies([copy, newer, history], stored_copy, set())
    assert [m.id for m in kept] == ["imp-2", "imp-3"] and copies == {"imp-1": stored}
    assert kept[0].supersedes == "kept-1"
    replaced, none = without_stored_copies([own], stored_copy, {"kept-1"})  # --replace decides
    assert [m.id for m in replaced] == ["kept-1"] and none == {}


def test_notes_in_markdown_are_pointed_to_ingest() -> None:
    """A Markdown file given to import had got one "invalid JSON" line per line."""
    markdown = b"# Notes\n\n- --timeout defaults to 30 s\n- use gevent\n"
    with pytest.raises(ValidationFailed) as raised:
        parse_import(markdown, "notes.md")
    assert "engram ingest" in str(raised.value) and "nothing was imported" in str(raised.value)
    assert len(raised.value.problems) == 3
    broken_jsonl = b'{"content": "ok", "type": "fact"}\nnot json\n'
    with pytest.raises(ValidationFailed) as mixed:
        parse_import(broken_jsonl, "notes.jsonl")
    assert "engram ingest" not in str(mixed.value)  # a JSONL file with a broken line


@settings(max_examples=200, deadline=None)
@given(
    st.datetimes(
        min_value=datetime(1971, 1, 1), max_value=datetime(2999, 12, 31), timezones=st.just(UTC)
    ),
    st.sampled_from(["%Y%m%d", "%Y%m%dT%H%M%S", "%Y%m%dT%H%M%S%z", "%G-W%V-%u"]),
)
def test_a_time_in_iso_basic_or_week_form_is_stored_written_out(
    moment: datetime, form: str
) -> None:
    """`created_at: "20260304"` was accepted and then shown and exported as "20260304"
    (dates are shown as a time's first ten characters)."""
    written = moment.strftime(form)
    memory, problems = memory_from_dict({"content": "x", "created_at": written}, "in.jsonl")
    assert memory is not None and not problems
    stored = memory.created_at
    assert stored[4] == "-" and stored[7] == "-"
    expected = datetime.fromisoformat(written)
    expected = expected if expected.tzinfo else expected.replace(tzinfo=UTC)
    assert datetime.fromisoformat(stored) == expected
