"""Errors through the real CLI: a clear message, the documented exit code (2 invalid
input, 3 environment, 70 bug) and the stored memories untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.conftest import EngramCli


@pytest.fixture
def two_memories(engram_cli: EngramCli) -> EngramCli:
    engram_cli.add("Caches are flushed on deploy.", "-p", "p", "--id", "keep-1")
    engram_cli.add("We use UUIDv7 for primary keys.", "-p", "p", "--id", "keep-2")
    return engram_cli


def _snapshot(cli: EngramCli) -> list[dict[str, object]]:
    memories = json.loads(cli.ok("export").stdout)["memories"]
    return sorted(memories, key=lambda m: str(m["id"]))


@pytest.mark.parametrize(
    "args",
    [
        ["show", "nope"],
        ["edit", "nope", "--title", "x"],
        ["delete", "--yes", "nope"],
    ],
)
def test_unknown_memory_id(two_memories: EngramCli, args: list[str]) -> None:
    before = _snapshot(two_memories)
    result = two_memories(*args)
    assert result.exit_code == 2
    assert result.stderr == "error: no memory with id 'nope'\n"
    assert result.stdout == ""
    assert _snapshot(two_memories) == before


@pytest.mark.parametrize("command", [["show"], ["edit", "--title", "x"], ["delete", "--yes"]])
def test_an_id_spelt_almost_like_a_stored_one_is_named(
    two_memories: EngramCli, command: list[str]
) -> None:
    """A copied id with a character missing: the error names the id it is closest to,
    and nothing changes."""
    before = _snapshot(two_memories)
    result = two_memories(command[0], "keep-", *command[1:])
    assert result.exit_code == 2
    assert "no memory with id 'keep-' (did you mean" in result.stderr
    typo = two_memories(command[0], "kep-1", *command[1:])
    assert "no memory with id 'kep-1' (did you mean 'keep-1'?)" in typo.stderr
    assert _snapshot(two_memories) == before


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    truncated = tmp_path / "truncated.json"
    truncated.write_text('{"version": 1,\n "memories": [\n  {"content": "x"\n', encoding="utf-8")
    array = tmp_path / "array.json"
    array.write_text('[{"content": "a"},\n {"content": ', encoding="utf-8")
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"content": "ok"}\n{"content": "caf\xe9"}\n')
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    scalar = tmp_path / "scalar.json"
    scalar.write_text("42\n", encoding="utf-8")
    return {
        "truncated JSON": (truncated, f"{truncated}:4:1: Expecting ',' delimiter"),  # one document
        "truncated array": (array, f"{array}:2:"),
        "invalid UTF-8": (latin1, f"{latin1}:2: invalid UTF-8 byte at offset"),
        "binary": (binary, "looks binary; nothing was imported"),
        "missing": (tmp_path / "missing.jsonl", f"{tmp_path / 'missing.jsonl'}: no such file"),
        "folder": (tmp_path, "is a directory"),
        "empty": (empty, f"{empty}: no memories found"),
        "scalar": (scalar, f"{scalar}:1: expected a JSON object, got int"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "truncated JSON",
        "truncated array",
        "invalid UTF-8",
        "binary",
        "missing",
        "folder",
        "empty",
        "scalar",
    ],
)
def test_import_of_a_bad_file_changes_nothing(
    two_memories: EngramCli, tmp_path: Path, case: str
) -> None:
    path, message = _bad_files(tmp_path)[case]
    before = _snapshot(two_memories)
    for options in ([], ["--replace"], ["--skip-existing"]):
        result = two_memories("import", path, *options)
        assert result.exit_code == 2, (case, result.stderr)
        assert message in result.stderr, (case, result.stderr)
        assert result.stdout == ""
        assert "bug" not in result.stderr
    assert _snapshot(two_memories) == before


def test_queries_file_errors(two_memories: EngramCli, tmp_path: Path) -> None:
    missing = two_memories("search", "--json", "--queries-file", tmp_path / "none.jsonl")
    assert missing.exit_code == 2
    assert "does not exist" in missing.stderr

    latin1 = tmp_path / "q.jsonl"
    latin1.write_bytes(b'{"query": "caf\xe9"}\n')
    bad = two_memories("search", "--json", "--queries-file", latin1)
    assert bad.exit_code == 2
    assert f"{latin1} is not valid UTF-8" in bad.stderr
    assert bad.stdout == ""

    binary = tmp_path / "q.bin"
    binary.write_bytes(b"\x00\x01\x02\xff\xfe")
    assert two_memories("search", "--json", "--queries-file", binary).exit_code == 2
    assert two_memories("search", "--json", "--queries-file", tmp_path).exit_code == 2


def test_ingest_of_a_missing_file_is_invalid_input(two_memories: EngramCli, tmp_path: Path) -> None:
    before = _snapshot(two_memories)
    result = two_memories("ingest", tmp_path / "notes.md")
    assert result.exit_code == 2
    assert str(tmp_path / "notes.md") in result.stderr
    assert "No such file" in result.stderr or "no such file" in result.stderr
    assert _snapshot(two_memories) == before


def test_ingest_of_invalid_utf8_warns_and_keeps_the_good_lines(
    two_memories: EngramCli, tmp_path: Path
) -> None:
    source = tmp_path / "notes.txt"
    source.write_bytes(b"MEMORY:fact:The caf\xe9 opens at nine.\nMEMORY:fact:plain ascii\n")
    result = two_memories("ingest", source, "--json")
    assert result.exit_code == 0
    assert f"warning: {source} is not valid UTF-8" in result.stderr
    assert len(json.loads(result.stdout)["stored"]) == 2


def test_usage_errors_exit_2(two_memories: EngramCli) -> None:
    for args in (
        ["add"],
        ["add", "x", "--type", "opinion"],
        ["add", "x", "--confidence", "2"],
        ["list", "--mode", "all"],
        ["search", "x", "--retriever", "sparse"],
        ["nosuchcommand"],
    ):
        result = two_memories(*args)
        assert result.exit_code == 2, args
        assert "Error" in result.stderr, args
    assert len(_snapshot(two_memories)) == 2


def test_data_dir_that_is_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "file"
    afile.write_text("x", encoding="utf-8")
    result = EngramCli(afile)("list")
    assert result.exit_code == 2
    assert "is a file" in result.stderr


def test_an_unexpected_error_is_reported_as_a_bug(
    two_memories: EngramCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.memories.service import MemoryService

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(MemoryService, "add", explode)
    result = two_memories("add", "this will fail")
    assert result.exit_code == 70
    assert "error: unexpected error: RuntimeError: boom" in result.stderr
    assert "This is a bug in Engram; your memories are intact." in result.stderr
    assert "Traceback" not in result.stderr
    assert len(_snapshot(two_memories)) == 2


def test_ctrl_c_ends_a_command_with_one_line_and_status_130(
    two_memories: EngramCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C had printed click's "Aborted!" and exited 1, the status the README keeps
    for partial; a question answered no ended the same way."""
    from services.memories.service import MemoryService

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(MemoryService, "add", interrupted)
    result = two_memories("add", "this is interrupted")
    assert result.exit_code == 130
    assert result.stderr.strip() == "interrupted; nothing more was changed"
    assert "Aborted" not in result.output and "Traceback" not in result.output

    monkeypatch.setattr("app.cli.memories.stdin_is_terminal", lambda: True)
    declined = two_memories("delete", "keep-1", input="n\n")
    assert declined.exit_code == 130
    assert "stopped; nothing more was changed" in declined.stderr
    assert "Aborted" not in declined.output
    assert len(_snapshot(two_memories)) == 2


def test_an_id_one_slip_away_is_suggested(engram_cli: EngramCli) -> None:
    """A new user's `show scr-2l` (for scr-21) and `show SCR-12` got no suggestion:
    one wrong key in a short id is under difflib's bar, and the prefix was matched by
    case."""
    for memory_id in ("scr-12", "scr-21"):
        engram_cli.add(f"note {memory_id}", "--project", "scr", "--id", memory_id)
    for typed, meant in (("scr-2l", "scr-21"), ("SCR-12", "scr-12"), ("scr-211", "scr-21")):
        result = engram_cli("show", typed)
        assert result.exit_code == 2
        assert f"no memory with id {typed!r} (did you mean {meant!r}?)" in result.stderr


def test_an_id_written_without_its_zero_padding_is_suggested(engram_cli: EngramCli) -> None:
    """`show jinja-n3` suggested jinja-n39 (one digit more) over jinja-n03."""
    for memory_id in ("jinja-n03", "jinja-n30", "jinja-n39", "jinja-n41"):
        engram_cli.add(f"note {memory_id}", "--project", "jinja", "--id", memory_id)
    for typed, meant in (("jinja-n3", "jinja-n03"), ("jinja-n041", "jinja-n41")):
        result = engram_cli("show", typed)
        assert f"(did you mean {meant!r}?)" in result.stderr, result.stderr
