"""`engram facts`: set by hand, list (with --at), delete, and clear errors."""

from __future__ import annotations

from tests.app.conftest import EngramCli


def test_set_list_at_and_delete(engram_cli: EngramCli) -> None:
    memory = engram_cli.add("Errors are values in TypeScript.", "--type", "convention")
    fact = engram_cli.json(
        "facts", "set", memory, "--key", "Error handling", "--value", "Result<T,E>",
        "--scope", "typescript",
    )["fact"]  # fmt: skip
    assert (fact["key"], fact["extracted_by"], fact["confidence"]) == ("error_handling", "user", 1)
    listed = engram_cli.json("facts", "list", "--key", "error_handling")["facts"]
    assert [f["value"] for f in listed] == ["Result<T,E>"]
    assert engram_cli.json("facts", "list", "--at", "2001-01-01")["facts"] == []
    text = engram_cli.ok("facts", "list").stdout
    assert "error_handling = Result<T,E> (typescript)" in text and "→ now" in text
    assert (
        engram_cli.json("show", memory)["compressed"] == "error_handling = Result<T,E> (typescript)"
    )
    engram_cli.ok("facts", "delete", memory)
    assert engram_cli.json("facts", "list")["facts"] == []
    again = engram_cli("facts", "delete", memory)
    assert again.exit_code == 2 and "has no fact" in again.stderr


def test_unknown_memory_and_empty_value_are_refused(engram_cli: EngramCli) -> None:
    unknown = engram_cli("facts", "set", "nope", "--key", "k", "--value", "v")
    assert unknown.exit_code == 2 and "nope" in unknown.stderr
    memory = engram_cli.add("Something.")
    empty = engram_cli("facts", "set", memory, "--key", "k", "--value", "  ")
    assert empty.exit_code == 2 and "--value" in empty.stderr
