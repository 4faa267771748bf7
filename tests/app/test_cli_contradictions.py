"""`engram contradictions list|resolve`, and contradictions in `engram rem review`."""

from __future__ import annotations

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
