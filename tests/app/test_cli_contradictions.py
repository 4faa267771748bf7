"""`engram contradictions list|resolve`, and contradictions in `engram rem review`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.app.conftest import EngramCli

NO_MODEL = {"ENGRAM_LLM_PROVIDER": "gguf"}  # no GGUF file set: the cues decide alone


def seed(cli: EngramCli) -> None:
    cli.add("`settle_batch` times out after 5 seconds.", "--project", "shop", "--id", "old")
    cli.add(
        "We changed the timeout of `settle_batch` from 5s to 30s.",
        "--project", "shop", "--id", "new",
    )  # fmt: skip
    cli.add("Money is stored in cents.", "--project", "shop", "--id", "other")


def test_list_and_resolve(engram_cli: EngramCli) -> None:
    seed(engram_cli)
    # Judged by the cues as each note got its vector: listed before any cycle runs,
    # and the cycle does not judge the pair again.
    listed = engram_cli.json("contradictions", "list")
    run = engram_cli.json("rem", "run", "--op", "contradictions", env=NO_MODEL)
    (operation,) = run["operations"]
    assert operation["error"] is None and operation["changes"]["supersedes"] == 0
    assert engram_cli.json("contradictions", "list") == listed
    (record,) = listed["contradictions"]
    # Added within one second: the order of the pair is by id then; the holder is not.
    assert {record["a"], record["b"]} == {"old", "new"} and record["kind"] == "supersedes"
    assert record["holder"] == "new" and record["resolution"] is None
    new_wins = "a_wins" if record["a"] == "new" else "b_wins"
    text = engram_cli.ok("contradictions", "list").stdout
    assert f"#{record['id']} supersedes, new holds" in text and "timeout: " in text

    bad = engram_cli("contradictions", "resolve", str(record["id"]), "--resolution", "maybe")
    assert bad.exit_code == 2
    done = engram_cli.ok(
        "contradictions", "resolve", str(record["id"]), "-r", new_wins, "--note", "rolled out"
    )
    assert "old is superseded by it" in done.stdout
    assert engram_cli.json("show", "old")["superseded_by"] == "new"
    assert "old" not in engram_cli.ids()  # hidden from the standard listing
    assert "old" in engram_cli.ids("--mode", "deep")  # kept, found in deep mode
    assert engram_cli.json("contradictions", "list")["contradictions"] == []
    (resolved,) = engram_cli.json("contradictions", "list", "--all")["contradictions"]
    assert resolved["resolution"] == new_wins and resolved["note"] == "rolled out"
    assert engram_cli.json("rem", "report")["pending"] == []  # its finding was answered
    again = engram_cli("contradictions", "resolve", str(record["id"]), "-r", "a_wins")
    assert again.exit_code != 0 and "already resolved" in again.stderr


def test_review_resolves_a_contradiction(engram_cli: EngramCli) -> None:
    seed(engram_cli)
    run = engram_cli.json("rem", "run", "--op", "contradictions", env=NO_MODEL)
    (finding,) = run["operations"][0]["findings"]
    assert finding["recommended"] == ("a_wins" if finding["memory_ids"][0] == "new" else "b_wins")
    result = engram_cli.ok("rem", "review", "--answer", f"{finding['id']}=both_valid")
    assert "both_valid" in result.stdout
    (record,) = engram_cli.json("contradictions", "list", "--all")["contradictions"]
    assert record["resolution"] == "both_valid"
    assert engram_cli.json("show", "old").get("superseded_by") is None
    text = engram_cli.ok("contradictions", "list", "--all").stdout
    assert "holds" not in text.splitlines()[0]  # both hold: nobody is named the holder
    assert "resolved both_valid" in text


def test_list_says_the_reason_a_pair_was_flagged_when_added(engram_cli: EngramCli) -> None:
    """The JSON had the reason a pair was flagged as it was written; the text said none."""
    engram_cli.add("`server.port` defaults to 5173.", "--project", "web", "--id", "port")
    flagged = engram_cli.json(
        "add", "Heads-up: `server.port` defaults to 3000, not 5173.", "--project", "web"
    )
    assert flagged["may_replace"]
    text = engram_cli.ok("contradictions", "list").stdout
    (record,) = engram_cli.json("contradictions", "list")["contradictions"]
    reason = record["evidence"].get("reason")
    assert reason and reason in text


def test_a_merge_says_which_memories_it_replaced(engram_cli: EngramCli) -> None:
    seed(engram_cli)
    (record,) = engram_cli.json("contradictions", "list")["contradictions"]
    engram_cli.add(
        "`settle_batch` times out after 30 s (it was 5 s).", "--project", "shop", "--id", "both"
    )
    done = engram_cli.ok(
        "contradictions", "resolve", str(record["id"]), "-r", "merged", "--into", "both"
    )
    pair = f"{record['a']}, {record['b']}"
    assert f"merged into both; {pair} are superseded by it" in done.stdout, done.stdout
    assert {engram_cli.json("show", m)["superseded_by"] for m in ("old", "new")} == {"both"}


def test_show_says_what_an_open_conflict_says_of_the_memory(engram_cli: EngramCli) -> None:
    """`show` had said nothing of an open proposal that the memory may be outdated."""
    seed(engram_cli)
    assert "may be outdated — see new" in engram_cli.ok("show", "old").stdout
    shown = engram_cli.json("show", "old")
    assert (shown["outdated_by"], shown["disagrees_with"]) == ("new", [])
    assert engram_cli.json("show", "new")["outdated_by"] is None
    assert "may be outdated" not in engram_cli.ok("show", "other").stdout


def test_a_conflict_about_a_note_that_no_longer_holds_is_not_listed_as_open(
    engram_cli: EngramCli,
) -> None:
    """A new user answered the review and two conflicts stayed "unresolved" in the list
    though the notes they asked about were replaced since: nothing was left to decide."""
    seed(engram_cli)
    (record,) = engram_cli.json("contradictions", "list")["contradictions"]
    assert record["moot"] is False
    engram_cli.add(
        "`settle_batch` times out after 60 s since the queue moved.",
        "--project", "shop", "--id", "newest", "--supersedes", "old",
    )  # fmt: skip
    listed = engram_cli.json("contradictions", "list")["contradictions"]
    (still,) = [r for r in listed if r["id"] == record["id"]]
    assert still["moot"] is True  # `old` no longer holds: the question is answered
    text = engram_cli.ok("contradictions", "list").stdout
    assert f"#{record['id']} " not in text and "1 open conflict about notes" in text
    assert f"#{record['id']} " in engram_cli.ok("contradictions", "list", "--all").stdout


CHAIN = [
    ("py39", "2026-01-10", "Minimum supported Python is 3.9 for the library; CI runs 3.9-3.12."),
    ("py310", "2026-04-10", "Bumped the minimum Python to 3.10; CI matrix now 3.10-3.13."),
    ("py311", "2026-08-10", "Python floor is now 3.11, no longer 3.10. CI runs 3.11-3.13."),
]


def _import_chain(cli: EngramCli, tmp_path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The three floor notes, and the contradictions between them by (older, newer)."""
    lines = [
        json.dumps({"id": i, "project": "lib", "type": "decision", "content": text,
                    "created_at": f"{day}T10:00:00+00:00"})
        for i, day, text in CHAIN
    ]  # fmt: skip
    (tmp_path / "chain.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli.ok("import", str(tmp_path / "chain.jsonl"))
    cli.json("rem", "run", "--op", "contradictions", env=NO_MODEL)
    records = cli.json("contradictions", "list")["contradictions"]
    order = [memory_id for memory_id, _, _ in CHAIN]
    return {tuple(sorted((r["a"], r["b"]), key=order.index)): r for r in records}


def _newer_wins(record: dict[str, Any], newer: str) -> str:
    return "a_wins" if record["a"] == newer else "b_wins"


@pytest.mark.parametrize("way", ["resolve", "review"])
@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
def test_a_chain_of_replacements_keeps_its_history_in_any_order(
    engram_cli: EngramCli, tmp_path: Path, order: tuple[int, ...], way: str
) -> None:
    """3.9 → 3.10 → 3.11. Answering "3.10 replaces 3.9" after "3.11 replaces 3.10" was
    dismissed as out of date in the review; answering "3.11 replaces 3.9" after "3.10
    replaces 3.9" moved the 3.9 note's end from April to August, so the store said both
    floors held in between. Each note ends when the first of its replacements began."""
    records = _import_chain(engram_cli, tmp_path)
    pairs = [("py39", "py310"), ("py310", "py311"), ("py39", "py311")]
    assert set(pairs) <= set(records)
    pending = {f["memory_ids"][0] + f["memory_ids"][1]: f["id"]
               for f in engram_cli.json("rem", "report")["pending"]}  # fmt: skip
    for index in order:
        older, newer = pairs[index]
        record = records[(older, newer)]
        answer = _newer_wins(record, newer)
        if way == "resolve":
            engram_cli.ok("contradictions", "resolve", str(record["id"]), "-r", answer)
        else:
            finding = pending[record["a"] + record["b"]]
            result = engram_cli.ok("rem", "review", "--answer", f"{finding}={answer}")
            assert "out of date" not in result.stderr
    first, second, third = (engram_cli.json("show", i) for i in ("py39", "py310", "py311"))
    assert (first["superseded_by"], first["valid_to"][:10]) == ("py310", "2026-04-10")
    assert (second["superseded_by"], second["valid_to"][:10]) == ("py311", "2026-08-10")
    assert third.get("superseded_by") is None
    assert engram_cli.json("contradictions", "list")["contradictions"] == []
    assert engram_cli.json("rem", "report")["pending"] == []


def test_saying_an_older_note_holds_over_a_replaced_one_keeps_the_history(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    """Once 3.11 replaced 3.10, "3.9 holds over 3.10" must not rewrite when 3.10 ended."""
    records = _import_chain(engram_cli, tmp_path)
    later = records[("py310", "py311")]
    engram_cli.ok("contradictions", "resolve", str(later["id"]), "-r", _newer_wins(later, "py311"))
    middle = records[("py39", "py310")]
    older_wins = "b_wins" if _newer_wins(middle, "py310") == "a_wins" else "a_wins"
    result = engram_cli.ok("contradictions", "resolve", str(middle["id"]), "-r", older_wins)
    assert "py310 no longer held already (superseded by py311)" in result.stdout
    second = engram_cli.json("show", "py310")
    assert (second["superseded_by"], second["valid_to"][:10]) == ("py311", "2026-08-10")


def test_a_conflict_is_resolved_by_its_number_or_its_review_finding(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    """`rem report` names a conflict by its finding (f-…), `contradictions list` by its
    number; resolve refused the finding id ("not a valid integer")."""
    records = _import_chain(engram_cli, tmp_path)
    pending = {tuple(f["memory_ids"]): f["id"] for f in engram_cli.json("rem", "report")["pending"]}
    first, second = records[("py39", "py310")], records[("py310", "py311")]
    by_finding = pending[(first["a"], first["b"])]
    engram_cli.ok("contradictions", "resolve", by_finding, "-r", "both_valid")
    engram_cli.ok("contradictions", "resolve", f"#{second['id']}", "-r", "both_valid")
    resolved = {
        r["id"]: r["resolution"]
        for r in engram_cli.json("contradictions", "list", "--all")["contradictions"]
    }
    assert resolved[first["id"]] == resolved[second["id"]] == "both_valid"
    wrong = engram_cli("contradictions", "resolve", "f-000000000000", "-r", "both_valid")
    assert wrong.exit_code != 0 and "no finding with id 'f-000000000000'" in wrong.stderr
    bad = engram_cli("contradictions", "resolve", "soon", "-r", "both_valid")
    assert bad.exit_code == 2 and "#3" in bad.stderr
