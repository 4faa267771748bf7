"""`engram rem`: run (JSON contract, dry run, auto), report and review."""

from __future__ import annotations

import time

import click
import pytest

import app.cli.rem
from tests.app.conftest import EngramCli


def seed(cli: EngramCli) -> None:
    for memory_id in ("d1", "d2"):
        cli.add("Deploys happen on Tuesdays.", "--project", "shop", "--id", memory_id)
    cli.add("Money is stored in cents.", "--project", "shop", "--id", "other")


def test_run_json_contract_and_review(engram_cli: EngramCli) -> None:
    seed(engram_cli)
    dry = engram_cli.json("rem", "run", "--dry-run")
    by_op = {o["op"]: o for o in dry["operations"]}
    assert list(by_op) == [
        "retention",
        "staleness",
        "duplicates",
        "facts",
        "contradictions",
        "links",
        "clusters",
        "communities",
        "episodes",
        "extraction",
    ]
    assert all(o["error"] is None for o in by_op.values())
    operation = by_op["duplicates"]
    assert operation["seconds"] >= 0 and by_op["staleness"]["findings"] == []  # all new
    (finding,) = operation["findings"]
    assert finding["memory_ids"] == ["d1", "d2"] and finding["recommended"] == "merge"
    assert engram_cli.json("rem", "report")["pending"] == []  # dry run stored nothing

    run = engram_cli.json("rem", "run", "--op", "duplicates")
    finding_id = run["operations"][0]["findings"][0]["id"]
    report = engram_cli.json("rem", "report")
    assert [f["id"] for f in report["pending"]] == [finding_id]
    assert report["last_runs"]["duplicates"]["findings"] == 1

    result = engram_cli.ok("rem", "review", "--answer", f"{finding_id}=merge")
    assert "(applied)" in result.stdout
    shown = [engram_cli.json("show", m) for m in ("d1", "d2")]
    assert sum(1 for m in shown if m.get("superseded_by")) == 1
    assert engram_cli.json("rem", "report")["pending"] == []


def test_interactive_review_takes_the_recommended_default(
    engram_cli: EngramCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app.cli.rem, "stdin_is_terminal", lambda: True)
    seed(engram_cli)
    engram_cli.ok("rem", "run", "--op", "duplicates")
    result = engram_cli.ok("rem", "review", input="\n")
    assert "merge (recommended)" in result.stdout and "(applied)" in result.stdout


def test_piped_review_applies_only_what_is_named(engram_cli: EngramCli) -> None:
    """Read from a pipe, a blank line is no decision (skip), never the recommendation;
    an option can be named by a start only it has."""
    seed(engram_cli)
    engram_cli.ok("rem", "run", "--op", "duplicates")
    blank = engram_cli.ok("rem", "review", input="\n")
    assert "(applied)" not in blank.stdout and ": skip" in blank.stdout
    assert not any(engram_cli.json("show", m).get("superseded_by") for m in ("d1", "d2"))
    names = ["merge", "keep_both", "skip"]
    assert app.cli.rem._option_named("me", names) == "merge"
    assert app.cli.rem._option_named(" Skip ", names) == "skip"
    for unclear in ("", "x", "mergex"):
        with pytest.raises(click.BadParameter):
            app.cli.rem._option_named(unclear, names)


def test_auto_applies_and_unknown_op_is_refused(engram_cli: EngramCli) -> None:
    seed(engram_cli)
    auto = engram_cli.json("rem", "run", "--auto")
    by_op = {o["op"]: o for o in auto["operations"]}
    assert by_op["duplicates"]["applied"] == 1
    bad = engram_cli("rem", "run", "--op", "nap")
    assert bad.exit_code == 2 and "unknown operation" in bad.stderr


def test_status_says_what_is_due(engram_cli: EngramCli) -> None:
    seed(engram_cli)
    before = {o["op"]: o for o in engram_cli.json("rem", "status")["operations"]}
    assert before["duplicates"]["due"] and before["duplicates"]["reason"] == "never ran"
    engram_cli.ok("rem", "run", "--due")
    after = {o["op"]: o for o in engram_cli.json("rem", "status")["operations"]}
    assert not any(o["due"] for o in after.values())
    assert engram_cli.json("rem", "run", "--due")["operations"] == []


def test_schedules_are_settings(engram_cli: EngramCli) -> None:
    seed(engram_cli)
    assert engram_cli.ok("config", "get", "rem.schedule.duplicates").stdout.strip() == (
        "linear 10 24h"
    )
    ran = engram_cli.json("rem", "run", "--op", "duplicates", "--op", "staleness")
    assert [o["error"] for o in ran["operations"]] == [None, None], ran
    engram_cli.ok("config", "set", "rem.schedule.duplicates", "interval 0.0001h")
    time.sleep(0.5)  # 0.0001 h = 0.36 s since the last run
    by_op = {o["op"]: o for o in engram_cli.json("rem", "status")["operations"]}
    assert by_op["duplicates"]["due"], by_op["duplicates"]
    assert not by_op["staleness"]["due"], by_op["staleness"]
    bad = engram_cli("config", "set", "rem.schedule.duplicates", "weekly")
    assert bad.exit_code == 2 and "rem.schedule.duplicates" in bad.stderr
    assert "not a schedule" in bad.stderr


def test_report_shows_communities_and_what_ran(engram_cli: EngramCli) -> None:
    for n in range(3):
        engram_cli.add(f"Step {n}: `issue_refund` checks the ledger.", "--project", "shop")
    engram_cli.ok("rem", "run", "--op", "links", "--op", "communities")
    text = engram_cli.ok("rem", "report").stdout
    assert "1 communities: 1 new, 0 merged, 0 split, 0 gone; 0 orphans" in text
    assert "`issue_refund`" in text
    (community,) = engram_cli.json("rem", "report")["communities"]
    assert community["size"] == 3 and community["project"] == "shop"


def test_review_stops_cleanly_at_end_of_input(engram_cli: EngramCli) -> None:
    seed(engram_cli)
    engram_cli.add("Money is kept in cents.", "--project", "shop", "--id", "c1")
    engram_cli.add("Money is kept in cents.", "--project", "shop", "--id", "c2")
    engram_cli.ok("rem", "run", "--op", "duplicates")
    result = engram_cli.ok("rem", "review", input="merge\n")  # answers one, then end of input
    assert "(applied)" in result.stdout and "stopped; 1 finding still waits" in result.stdout
    assert len(engram_cli.json("rem", "report")["pending"]) == 1


def test_a_finding_whose_memories_changed_since_is_dismissed_not_applied(
    engram_cli: EngramCli,
) -> None:
    """A merge proposed before one of the two notes was replaced would bring the replaced
    text back as current; answering it says so and changes nothing."""
    seed(engram_cli)
    run = engram_cli.json("rem", "run", "--op", "duplicates")
    finding_id = run["operations"][0]["findings"][0]["id"]
    newer = engram_cli.add("Money is kept in integer cents, never floats.", "--project", "shop")
    engram_cli.ok("edit", newer, "--supersedes", "d1")
    result = engram_cli("rem", "review", "--answer", f"{finding_id}=merge")
    assert "out of date: d1 no longer holds (replaced by" in result.stderr
    assert result.exit_code == 1  # a script sees that the answer did not apply
    assert "(applied)" not in result.stdout
    assert engram_cli.json("show", "d2").get("superseded_by") is None  # nothing merged
    assert engram_cli.json("rem", "report")["pending"] == []  # dismissed, not left waiting


def test_review_refuses_an_answer_it_cannot_place(engram_cli: EngramCli) -> None:
    """An unknown finding id, or an answer without "=", had been passed over in silence
    and the command had exited 0."""
    seed(engram_cli)
    finding_id = engram_cli.json("rem", "run", "--op", "duplicates")["operations"][0]["findings"][
        0
    ]["id"]
    unknown = engram_cli("rem", "review", "--answer", "f-000000000000=merge")
    assert unknown.exit_code != 0 and "no waiting finding with id f-000000000000" in unknown.stderr
    malformed = engram_cli("rem", "review", "--answer", finding_id)
    assert malformed.exit_code != 0 and "--answer takes ID=OPTION" in malformed.stderr
    wrong = engram_cli("rem", "review", "--answer", f"{finding_id}=zzz")
    assert wrong.exit_code == 2  # invalid input (the README's table), not 1 "partial"
    assert "has no option 'zzz'" in wrong.stderr and "nothing was answered" in wrong.stderr
    assert [f["id"] for f in engram_cli.json("rem", "report")["pending"]] == [finding_id]


def test_a_project_run_reads_and_changes_only_that_project(engram_cli: EngramCli) -> None:
    """`rem run -p shop` had proposed facts and staleness for every project (and --auto
    archived another project's memory); a misspelt project ran on everything."""
    for project in ("shop", "blog"):
        for n, text in enumerate(("The API request timeout is 30 seconds.", "Retries: 3.")):
            engram_cli.add(text, "--project", project, "--id", f"{project}{n}", "--type", "fact")
    later = "2030-01-01T00:00:00+00:00"  # every memory old and unused: staleness proposes
    run = engram_cli.json("rem", "run", "-p", "shop", "--dry-run", "--as-of", later)
    named = {i for o in run["operations"] for f in o["findings"] for i in f["memory_ids"]}
    assert named and all(i.startswith("shop") for i in named), named
    everywhere = engram_cli.json("rem", "run", "--dry-run", "--as-of", later)
    assert any(
        i.startswith("blog") for o in everywhere["operations"] for f in o["findings"]
        for i in f["memory_ids"]
    )  # fmt: skip
    engram_cli.ok("rem", "run", "-p", "shop", "--op", "retention", "--as-of", later)
    assert {engram_cli.json("show", f"blog{n}")["tier"] for n in (0, 1)} == {"warm"}
    misspelt = engram_cli("rem", "run", "-p", "shopp", "--dry-run")
    assert misspelt.exit_code == 2 and "no project 'shopp' (did you mean 'shop'?)" in (
        misspelt.stderr
    )
