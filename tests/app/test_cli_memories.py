"""`engram add | list | show | edit | delete` through the real CLI."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.cli.memories import relative_day
from services.vectors.embeddings.onnx_minilm import MODEL_ID
from services.vectors.index import VectorIndex
from tests.app.conftest import EngramCli, corpus_records, write_jsonl


def test_add_stores_every_option_and_show_returns_it(engram_cli: EngramCli) -> None:
    added = engram_cli.json(
        "add",
        "We deploy with blue-green releases. Rollback is a DNS switch.",
        "--type",
        "decision",
        "--title",
        "Blue-green deploys",
        "--tag",
        "deploy",
        "--tag",
        "ops",
        "--file-ref",
        "deploy/*.yml",
        "--confidence",
        "0.7",
        "--scope",
        "user-private",
        "--session",
        "s-1",
        "--project",
        "shop",
    )
    assert added["project"] == "shop"
    assert added["type"] == "decision"
    assert added["title"] == "Blue-green deploys"
    assert added["tags"] == ["deploy", "ops"]
    assert added["confidence"] == 0.7
    assert added["tier"] == "warm"
    assert added["id"].startswith("shop-")

    shown = engram_cli.json("show", added["id"])
    assert shown["content"] == "We deploy with blue-green releases. Rollback is a DNS switch."
    assert shown["file_refs"] == ["deploy/*.yml"]
    assert shown["scope"] == "user-private"
    assert shown["session_id"] == "s-1"
    assert shown["source"] == "explicit"
    assert shown["chunks"] == []

    plain = engram_cli.ok("show", added["id"]).stdout
    assert "Blue-green deploys" in plain
    assert "Rollback is a DNS switch." in plain
    assert "deploy, ops" in plain

    assert engram_cli.json("stats")["waiting_for_embedding"] == 0


def test_add_default_title_is_the_first_sentence(engram_cli: EngramCli) -> None:
    added = engram_cli.json("add", "Use UTC everywhere. Local times only in the UI.")
    assert added["title"] == "Use UTC everywhere."
    assert added["type"] == "fact"
    assert added["project"] is None
    plain = engram_cli.ok("add", "Plain output names the id.").stdout
    assert plain.startswith("stored mem-") and "Plain output names the id." in plain


def test_add_reads_content_from_stdin(engram_cli: EngramCli) -> None:
    text = "Line one from stdin: ünïcödé ✓\nline two\n"
    memory_id = engram_cli.add("-", "--project", "p", input=text.encode("utf-8"))
    assert engram_cli.json("show", memory_id)["content"] == text


def test_add_rejects_invalid_utf8_on_stdin_and_empty_content(engram_cli: EngramCli) -> None:
    bad = engram_cli("add", "-", input=b"caf\xe9 au lait")
    assert bad.exit_code == 2
    assert "not valid UTF-8" in bad.stderr
    empty = engram_cli("add", "   ")
    assert empty.exit_code == 2
    assert "'content' is missing or empty" in empty.stderr
    assert engram_cli.all_ids() == set()


def test_add_with_an_existing_id_is_refused(engram_cli: EngramCli) -> None:
    engram_cli.ok("add", "first", "--id", "fixed-1")
    again = engram_cli("add", "second", "--id", "fixed-1")
    assert again.exit_code == 2
    assert "already exists" in again.stderr
    assert engram_cli.json("show", "fixed-1")["content"] == "first"


def _expected(predicate: object) -> set[str]:
    return {r["id"] for r in corpus_records(30) if predicate(r)}  # type: ignore[operator]


def test_list_filters(corpus_cli: EngramCli) -> None:
    everything = corpus_cli.json("list", "--limit", 100)
    assert everything["total"] == 30
    assert {m["id"] for m in everything["memories"]} == _expected(lambda r: True)

    listed = corpus_cli.json("list", "--project", "shipit")
    assert listed["total"] == 15
    assert {m["id"] for m in listed["memories"]} == _expected(lambda r: r["project"] == "shipit")

    assert set(corpus_cli.ids("--type", "fix")) == _expected(lambda r: r["type"] == "fix")
    assert set(corpus_cli.ids("-t", "fix", "-t", "pitfall")) == _expected(
        lambda r: r["type"] in ("fix", "pitfall")
    )
    assert set(corpus_cli.ids("--tag", "deploy")) == _expected(lambda r: "deploy" in r["tags"])
    assert set(corpus_cli.ids("--project", "ledgerly", "--tag", "api")) == _expected(
        lambda r: r["project"] == "ledgerly" and "api" in r["tags"]
    )

    after = datetime(2026, 2, 4, tzinfo=UTC)
    before = datetime(2026, 2, 7, tzinfo=UTC)
    window = _expected(lambda r: after <= datetime.fromisoformat(r["created_at"]) < before)
    assert window and len(window) < 30
    assert set(corpus_cli.ids("--after", "2026-02-04", "--before", "2026-02-07")) == window


def test_list_is_newest_first_and_pages(corpus_cli: EngramCli) -> None:
    memories = corpus_cli.json("list", "--limit", 100)["memories"]
    times = [datetime.fromisoformat(m["created_at"]) for m in memories]
    assert times == sorted(times, reverse=True)
    page = corpus_cli.json("list", "--limit", 5, "--offset", 5)
    assert page["total"] == 30
    assert [m["id"] for m in page["memories"]] == [m["id"] for m in memories[5:10]]
    plain = corpus_cli.ok("list", "--limit", 3).stdout
    assert "3 of 30 memories" in plain


def test_list_mode_chooses_tiers(corpus_cli: EngramCli) -> None:
    corpus_cli.ok("edit", "shipit-m00001", "--tier", "archived")
    corpus_cli.ok("edit", "shipit-m00002", "--tier", "cold")
    corpus_cli.ok("edit", "shipit-m00003", "--tier", "hot")
    standard = set(corpus_cli.ids())
    assert "shipit-m00001" not in standard and "shipit-m00002" not in standard
    assert "shipit-m00003" in standard and len(standard) == 28
    assert set(corpus_cli.ids("--mode", "reflexive")) == {"shipit-m00003"}
    deep = set(corpus_cli.ids("--mode", "deep"))
    assert "shipit-m00002" in deep and "shipit-m00001" not in deep
    assert len(corpus_cli.ids("--mode", "exhaustive")) == 30
    footer = corpus_cli.ok("list", "--limit", 3).stdout.strip().splitlines()[-1]
    assert footer == "3 of 28 memories (2 more are cold, archived or replaced: --mode exhaustive)"
    assert (
        corpus_cli.ok("list", "--mode", "exhaustive", "-n", 3)
        .stdout.strip()
        .endswith("3 of 30 memories")
    )


def test_list_rejects_a_bad_date_and_a_window_that_nothing_can_match(
    corpus_cli: EngramCli,
) -> None:
    result = corpus_cli("list", "--after", "the day after the deploy")
    assert result.exit_code == 2
    assert "neither an ISO date" in result.stderr
    result = corpus_cli("search", "deploy", "--after", "2026-02-07", "--before", "2026-02-04")
    assert result.exit_code == 2
    assert "no memory can match" in result.stderr


def test_dates_take_relative_forms_people_write(corpus_cli: EngramCli) -> None:
    """The corpus was written in February 2026, long before any "last week"."""
    assert corpus_cli.ids("--after", "last week") == []
    assert len(corpus_cli.ids("--before", "yesterday", "--mode", "exhaustive")) == 30
    found = corpus_cli.json("search", "deploy", "--after", "3 days ago")
    assert found["results"] == []


@pytest.mark.parametrize(
    ("written", "day"),
    [
        ("yesterday", date(2026, 11, 26)),
        ("last week", date(2026, 11, 16)),
        ("  3 days   ago ", date(2026, 11, 24)),
        ("on March 3", date(2026, 3, 3)),
        ("March 3", date(2026, 3, 3)),  # refused before: only "on March 3" was read
        ("the 3rd", date(2026, 11, 3)),
        # a month alone (refused before): the latest one begun by today
        ("september", date(2026, 9, 1)),
        ("March", date(2026, 3, 1)),
        ("in Dec", date(2025, 12, 1)),
        ("May 2025", date(2025, 5, 1)),
    ],
)
def test_a_relative_date_stands_for_the_start_of_what_it_names(written: str, day: date) -> None:
    start = relative_day(written, today=date(2026, 11, 27))
    assert start is not None and start.date() == day and (start.hour, start.minute) == (0, 0)
    assert start.tzinfo is not None


@pytest.mark.parametrize(
    "written", ["", "2026", "last week or so", "deploy", "yesterday, 3pm", "Marchy", "on", "may be"]
)
def test_text_that_is_not_only_a_relative_date_is_none(written: str) -> None:
    assert relative_day(written, today=date(2026, 11, 27)) is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_after_or_before_value_is_a_midnight_or_refused(written: str) -> None:
    start = relative_day(written, today=date(2026, 11, 27))
    assert start is None or (start.hour, start.minute, start.second) == (0, 0, 0)


def test_edit_text_reembeds_and_search_finds_the_new_words(engram_cli: EngramCli) -> None:
    target = engram_cli.add(
        "We deploy with blue-green releases.", "-p", "p", "--title", "Operations note"
    )
    engram_cli.add("Postgres is our database because of JSONB support.", "-p", "p")
    engram_cli.add("Components load data through the useQuery hook.", "-p", "p")
    query = "kubernetes sidecar leaks memory and the pods restart at night"

    before = engram_cli.json("search", query, "-p", "p", "--retriever", "lexical")
    assert target not in [r["id"] for r in before["results"]]

    edited = engram_cli.json(
        "edit",
        target,
        "--content",
        "Kubernetes pods restart every night because the logging sidecar leaks memory.",
    )
    assert edited["id"] == target
    assert engram_cli.json("stats")["waiting_for_embedding"] == 0

    dense = engram_cli.json("search", query, "-p", "p", "--retriever", "dense")
    assert dense["results"][0]["id"] == target
    assert dense["results"][0]["breakdown"]["dense"] > 0.5
    lexical = engram_cli.json("search", query, "-p", "p", "--retriever", "lexical")
    assert lexical["results"][0]["id"] == target
    old_words = engram_cli.json("search", "blue-green", "-p", "p", "--retriever", "lexical")
    assert old_words["results"] == []


def test_edit_other_fields_keeps_the_text(engram_cli: EngramCli) -> None:
    memory_id = engram_cli.add("Retries use exponential backoff.", "-p", "p")
    engram_cli.ok(
        "edit",
        memory_id,
        "--title",
        "Backoff",
        "--type",
        "convention",
        "--tag",
        "http",
        "--confidence",
        "0.3",
        "--summary",
        "backoff",
    )
    shown = engram_cli.json("show", memory_id)
    assert (
        shown["title"],
        shown["type"],
        shown["tags"],
        shown["confidence"],
        shown["summary"],
    ) == ("Backoff", "convention", ["http"], 0.3, "backoff")
    assert shown["content"] == "Retries use exponential backoff."
    nothing = engram_cli("edit", memory_id)
    assert nothing.exit_code == 2
    assert "nothing to change" in nothing.stderr


def test_edit_long_to_short_leaves_no_stale_chunk_vectors(engram_cli: EngramCli) -> None:
    paragraphs = [
        f"Paragraph {i} explains how the zebra{i} migration moved the quokka{i} "
        "tables to the new cluster without downtime. " * 6
        for i in range(10)
    ]
    memory_id = engram_cli.add("\n\n".join(paragraphs), "-p", "p", "--title", "Long one")
    assert len(engram_cli.json("show", memory_id)["chunks"]) > 1

    engram_cli.ok("edit", memory_id, "--content", "Now short: penguins only.")
    assert engram_cli.json("show", memory_id)["chunks"] == []
    vectors = VectorIndex(path=engram_cli.data_dir / "chroma")
    assert vectors.count(MODEL_ID) == 1


def test_deleting_a_replacement_says_what_holds_again(engram_cli: EngramCli) -> None:
    old = engram_cli.add("The MSRV is 1.70.", "-p", "p", "-t", "constraint")
    new = engram_cli.add(
        "The MSRV is 1.80 now.", "-p", "p", "-t", "constraint", "--supersedes", old
    )
    said = engram_cli.ok("delete", new, "--yes").stdout
    assert f"what they had replaced holds again: {old}" in said
    assert engram_cli.json("show", old)["superseded_by"] is None
    found = engram_cli.json("search", "zebra3 quokka3 migration", "-p", "p", "--retriever", "dense")
    assert found["results"][0]["breakdown"]["best_chunk"] == -1


def test_edit_holds_again_undoes_a_replacement(engram_cli: EngramCli) -> None:
    old = engram_cli.add("The MSRV is 1.70.", "-p", "p", "-t", "constraint")
    new = engram_cli.add(
        "The MSRV is 1.80 now.", "-p", "p", "-t", "constraint", "--supersedes", old
    )
    said = engram_cli.ok("edit", old, "--holds-again").stdout
    assert f"{old} holds again beside {new}: both hold" in said
    assert engram_cli.json("show", old)["superseded_by"] is None
    assert engram_cli.json("show", new)["supersedes"] is None
    again = engram_cli("edit", old, "--holds-again")
    assert again.exit_code == 2 and "it holds already" in again.stderr


def test_edit_project_moves_the_vector(engram_cli: EngramCli) -> None:
    memory_id = engram_cli.add("Invoices are generated on the first of the month.", "-p", "a")
    stays = engram_cli.add("Penguins live in the south.", "-p", "a", "--no-check")
    engram_cli.ok("edit", memory_id, "--project", "b")
    query = "when are invoices generated"
    in_b = engram_cli.json("search", query, "-p", "b", "--retriever", "dense")
    assert [r["id"] for r in in_b["results"]] == [memory_id]
    in_a = engram_cli.json("search", query, "-p", "a", "--retriever", "dense")
    assert [r["id"] for r in in_a["results"]] == [stays]


def test_delete(engram_cli: EngramCli) -> None:
    keep = engram_cli.add("Keep this memory about caching.", "-p", "p")
    drop = engram_cli.add("Drop this memory about caching.", "-p", "p")
    assert engram_cli.json("delete", drop, "--yes") == {"deleted": [drop], "held_again": []}
    assert engram_cli.all_ids() == {keep}
    assert engram_cli("show", drop).exit_code == 2
    found = engram_cli.json("search", "memory about caching", "-p", "p")
    assert [r["id"] for r in found["results"]] == [keep]
    vectors = VectorIndex(path=engram_cli.data_dir / "chroma")
    assert vectors.count(MODEL_ID) == 1
    plain = engram_cli.ok("delete", "-y", keep).stdout
    assert "deleted 1 memory" in plain
    assert engram_cli.all_ids() == set()


def test_delete_with_one_unknown_id_deletes_nothing(engram_cli: EngramCli) -> None:
    first = engram_cli.add("one")
    second = engram_cli.add("two")
    result = engram_cli("delete", "--yes", first, "no-such-id", second)
    assert result.exit_code == 2
    assert "no-such-id" in result.stderr
    assert engram_cli.all_ids() == {first, second}


def test_json_output_is_a_single_parseable_document(corpus_cli: EngramCli) -> None:
    for args in (
        ["list"],
        ["show", "shipit-m00001"],
        ["stats"],
        ["search", "deploy"],
        ["config", "list"],
        ["cleanup"],
    ):
        stdout = corpus_cli.ok(*args, "--json").stdout
        assert stdout.count("\n") == 1, args
        json.loads(stdout)


def test_mark_records_usage_and_raises_confidence(engram_cli: EngramCli) -> None:
    used = engram_cli.add("Use the outbox for payments.", "--confidence", "0.5")
    cited = engram_cli.add("Cite the ADR for the queue.", "--confidence", "0.94")
    assert engram_cli.json("mark", "used", used, "--session", "s-1") == {
        "event": "used",
        "memories": [used],
    }
    assert "recorded cited for 1 memory" in engram_cli.ok("mark", "cited", cited).stdout
    engram_cli.ok("mark", "retrieved", used, cited)
    engram_cli.ok("mark", "ignored", cited)
    first, second = engram_cli.json("show", used), engram_cli.json("show", cited)
    assert (first["use_count"], first["retrieval_count"], first["confidence"]) == (1, 1, 0.52)
    assert first["last_accessed"] is not None
    assert (second["citation_count"], second["ignore_count"]) == (1, 1)
    assert second["confidence"] == 0.95

    missing = engram_cli("mark", "used", used, "nope")
    assert missing.exit_code == 2
    assert "no memory with id 'nope'" in missing.stderr
    assert engram_cli.json("show", used)["use_count"] == 1
    assert engram_cli("mark", "liked", used).exit_code == 2


def test_add_supersedes_declares_at_once_and_refuses_unknown_ids(engram_cli: Any) -> None:
    old = engram_cli.add("We support Python 3.8 and up.", "-p", "httpx", "-t", "constraint")
    result = engram_cli.json(
        "add", "3.8 is dropped; the floor is 3.9 now.", "-p", "httpx", "--supersedes", old
    )
    assert result["supersedes"] == [old]
    shown = engram_cli.json("show", old)
    assert shown["superseded_by"] == result["id"]
    before = engram_cli.all_ids()
    refused = engram_cli("add", "something else", "-p", "httpx", "--supersedes", "no-such-id")
    assert refused.exit_code == 2
    assert engram_cli.all_ids() == before  # nothing stored on a guess


# A note quoting the setting, then one passing on ("FYI") another value of it.
POOL_SETTING = (
    "The pool keeps `max_keepalive_connections = 20` (DEFAULT_LIMITS in _config.py).",
    "-p", "pool", "-t", "constraint", "--title", "keep-alive pool size",
)  # fmt: skip
POOL_HEARSAY = (
    "FYI the keep-alive pool size is 10 now.", "-p", "pool", "--title", "keep-alive pool size",
)  # fmt: skip


def test_add_says_what_the_new_memory_may_replace(engram_cli: Any) -> None:
    old = engram_cli.add(
        'We support Python 3.8 and up: `requires-python = ">=3.8"` in pyproject.toml.',
        "-p", "httpx", "-t", "constraint", "--title", "python floor = 3.8",
    )  # fmt: skip
    engram_cli.add("Tags have no v prefix; the publish script compares them.", "-p", "httpx")
    new = engram_cli.json(
        "add", "3.8 is dropped. `requires-python` is `>=3.9` now.", "-p", "httpx",
        "-t", "constraint", "--title", "3.8 dropped",
    )  # fmt: skip
    (candidate,) = new["may_replace"]
    assert candidate["id"] == old
    assert candidate["kind"] == "supersedes"
    assert "3.8 → 3.9" in candidate["reason"]
    assert 0.0 < candidate["score"] <= 1.0
    assert engram_cli.json("show", old)["superseded_by"] is None  # nothing applied
    # ... but kept as an open proposal: search ranks the new one first, the old one marked.
    (proposal,) = engram_cli.json("contradictions", "list")["contradictions"]
    # Added within one second: the pair's order is by id then; the holder is the new one.
    assert {proposal["a"], proposal["b"]} == {old, new["id"]} and proposal["holder"] == new["id"]
    found = engram_cli.json("search", "python floor 3.8", "-p", "httpx")["results"]
    ranked = [r["id"] for r in found]
    assert ranked.index(new["id"]) < ranked.index(old)
    assert next(r for r in found if r["id"] == old)["outdated_by"] == new["id"]
    assert next(r for r in found if r["id"] == new["id"])["replaces"] == [old]
    shown = engram_cli.ok("add", "3.8 is gone, 3.9 is the floor now.", "-p", "httpx").stdout
    assert f"this may replace {old}" in shown
    assert "--supersedes ID" in shown  # no terminal: the command to confirm it, no prompt
    assert "search ranks the new memory above what it may replace" in shown
    # Passed on ("FYI") against the note that quotes the setting: a contradiction, which
    # reranks nothing, and the hint says so.
    engram_cli.add(*POOL_SETTING)
    relayed = engram_cli.ok("add", *POOL_HEARSAY).stdout
    assert "this may contradict" in relayed and "search ranks" not in relayed
    assert "both are kept and marked as disagreeing" in relayed
    quiet = engram_cli.json("add", "3.8 is gone for good.", "-p", "httpx", "--no-check")
    assert quiet["may_replace"] == []


def test_notes_added_in_one_sitting_that_agree_are_not_offered_as_replacements(
    engram_cli: Any,
) -> None:
    """A new user's walkthrough (stop 35): a rule said again in other words a few seconds
    later was offered as a contradiction (0.99), and a second worker's shard as replacing
    the first's (1.00). A change said in one sitting is still offered."""
    money = engram_cli.add(
        "Money is stored as integer cents, never as floats.", "-p", "shop", "-t", "convention"
    )
    again = engram_cli.json(
        "add", "Store amounts in cents as integers; floats are not allowed for money.",
        "-p", "shop", "-t", "convention",
    )  # fmt: skip
    assert again["may_replace"] == []
    assert [r["id"] for r in again["may_repeat"]] == [money]
    engram_cli.add("Worker 1 owns shard 1.", "-p", "shop")
    second = engram_cli.json("add", "Worker 2 owns shard 2.", "-p", "shop")
    assert second["may_replace"] == [] and second["may_repeat"] == []
    assert engram_cli.json("contradictions", "list")["contradictions"] == []
    port = engram_cli.add("The billing service listens on port 8001.", "-p", "shop")
    moved = engram_cli.json(
        "add", "The billing service listens on port 8002 now, no longer 8001.", "-p", "shop"
    )
    assert [r["id"] for r in moved["may_replace"]] == [port]


def test_an_incident_told_again_is_said_to_repeat_its_first_telling_not_to_replace_it(
    engram_cli: Any, tmp_path: Any
) -> None:
    """A lesson written a year after the pitfall, under its title, tells the same
    incident: the restatement scorer, reading the project's rare words, is surer of that
    than the conflict scorer is of a change, so `engram add` proposes no replacement and
    says what it may repeat."""
    first = {
        "id": "sleep-pitfall", "type": "pitfall", "project": "shop",
        "title": "sleeping in async code", "created_at": "2024-03-02T10:00:00Z",
        "content": "Calling `std::thread::sleep` inside an async fn blocks the whole "
        "worker thread: every other task on it stalls until it returns. Use "
        "`tokio::time::sleep(...).await`, or move blocking work into "
        "`tokio::task::spawn_blocking`.",
    }  # fmt: skip
    other = {"project": "shop", "type": "decision", "title": "payments"}
    notes = [first, {**other, "content": "Payments go through the Stripe webhook."}]
    engram_cli.ok("import", write_jsonl(tmp_path / "notes.jsonl", notes))
    lesson = engram_cli.json(
        "add", "Retro: the stalled websocket pings came from `std::thread::sleep` in a "
        "handler. It freezes the worker thread for every task. Use `tokio::time::sleep` "
        "or `spawn_blocking` for anything that blocks.",
        "-p", "shop", "-t", "lesson", "--title", "sleeping in async code",
    )  # fmt: skip
    assert lesson["may_replace"] == []
    assert engram_cli.json("contradictions", "list")["contradictions"] == []
    # ... and it is said to repeat it, for the duplicates review to merge
    (repeat,) = lesson["may_repeat"]
    assert repeat["id"] == "sleep-pitfall" and 0.5 < repeat["score"] <= 1.0
    # a pasted log around the same words is no restatement: no merge is offered
    log = "\n".join(f"2024-05-0{i % 9 + 1} WARN worker {i} stalled 1.2s" for i in range(150))
    pasted = engram_cli.json(
        "add", "Retro: `std::thread::sleep` in a handler froze the worker thread for every "
        "task; use `tokio::time::sleep` or `spawn_blocking`.\n```\n" + log + "\n```",
        "-p", "shop", "-t", "episode", "--title", "sleeping in async code",
    )  # fmt: skip
    assert pasted["may_repeat"] == []


def test_add_says_it_may_replace_a_note_whose_command_it_retires(
    engram_cli: Any, tmp_path: Any
) -> None:
    """What the pass run as the memory is embedded records (a later note retiring a
    name the earlier one relies on) is said at once, not left silent in the review."""
    checklist = {
        "id": "release-checklist", "type": "workflow", "project": "shop",
        "title": "Release checklist", "created_at": "2026-01-10T10:00:00Z",
        "content": "To release: run `make test`, bump the version in `pyproject.toml`, "
        "tag `vX.Y.Z`, then `make deploy`.",
    }  # fmt: skip
    engram_cli.ok("import", write_jsonl(tmp_path / "notes.jsonl", [checklist]))
    new = engram_cli.json(
        "add", "To release: `make release` runs the tests, bumps the version and tags it; "
        "CI deploys the tag. `make deploy` is gone.",
        "-p", "shop", "-t", "workflow", "--title", "Release with make release",
    )  # fmt: skip
    (candidate,) = new["may_replace"]
    assert candidate["id"] == "release-checklist" and candidate["kind"] == "supersedes"
    assert candidate["reason"] == "the new one retires make deploy"


def test_add_reads_a_newer_major_version_of_a_product_as_replacing(
    engram_cli: Any, tmp_path: Any
) -> None:
    """ "PostgreSQL 16" then "PostgreSQL 17", no change word: an upgrade written down, so
    the new note may replace the old one (it holds), not merely contradict it."""
    chosen = {
        "id": "pg", "type": "decision", "project": "shop", "title": "Postgres over MySQL",
        "created_at": "2026-03-02T10:00:00Z",
        "content": "We chose PostgreSQL 16 as the primary database because we rely on "
        "jsonb columns.",
    }  # fmt: skip
    engram_cli.ok("import", write_jsonl(tmp_path / "notes.jsonl", [chosen]))
    new = engram_cli.json(
        "add", "The primary database is PostgreSQL 17, for the jsonb columns.",
        "-p", "shop", "-t", "decision",
    )  # fmt: skip
    (candidate,) = new["may_replace"]
    assert candidate["id"] == "pg" and candidate["kind"] == "supersedes"
    assert candidate["reason"] == "version postgresql: 16 vs 17"


def test_the_same_text_is_stored_once_and_the_copy_gets_what_the_add_brought(
    engram_cli: Any,
) -> None:
    text = "Payments go through the Stripe webhook, never by polling the API."
    first = engram_cli.add(text, "-p", "shop")
    shown = engram_cli.ok("add", text, "-p", "shop", "--tag", "billing").stdout
    assert shown.startswith(f"already stored as {first}") and "billing" in shown
    again = engram_cli.json("add", text, "-p", "shop", "--file-ref", "billing/hooks.py")
    assert again["id"] == first and again["already_stored"] is True
    assert engram_cli.ids("-p", "shop") == [first]
    stored = engram_cli.json("show", first)
    assert stored["tags"] == ["billing"] and stored["file_refs"] == ["billing/hooks.py"]
    # Another project, or asked for: a second memory.
    assert engram_cli.add(text, "-p", "other") != first
    copy = engram_cli.json("add", text, "-p", "shop", "--allow-copy")
    assert copy["id"] != first and "already_stored" not in copy
    assert len(engram_cli.ids("-p", "shop")) == 2


def test_text_stored_again_after_its_copy_stopped_holding_is_a_new_memory(
    engram_cli: Any,
) -> None:
    """A superseded copy no longer holds: writing its text again says it holds again."""
    old = engram_cli.add("Builds run on Node 18.", "-p", "web")
    newer = engram_cli.add("Builds run on Node 20.", "-p", "web", "--supersedes", old)
    back = engram_cli.json("add", "Builds run on Node 18.", "-p", "web", "--supersedes", newer)
    assert back["id"] != old and back["supersedes"] == [newer]
    # ... and the --supersedes of an add that repeats a current memory applies to it.
    again = engram_cli.json("add", "Builds run on Node 18.", "-p", "web", "--supersedes", old)
    assert again["id"] == back["id"] and again["already_stored"] is True


def test_search_marks_memories_that_disagree_until_it_is_decided(engram_cli: Any) -> None:
    """A "may contradict" proposal names no holder: search reranks nothing but says, on
    each side, which memory it disagrees with, until the user resolves it."""
    old = engram_cli.add(*POOL_SETTING)
    new = engram_cli.json("add", *POOL_HEARSAY)
    assert [c["kind"] for c in new["may_replace"]] == ["contradiction"]
    found = engram_cli.json("search", "keep-alive pool size", "-p", "pool")["results"]
    marks = {r["id"]: r["disagrees_with"] for r in found}
    assert marks == {old: [new["id"]], new["id"]: [old]}
    assert all(r["outdated_by"] is None for r in found)
    shown = engram_cli.ok("search", "keep-alive pool size", "-p", "pool").stdout
    assert f"disagrees with {new['id']}" in shown
    (conflict,) = engram_cli.json("contradictions", "list")["contradictions"]
    engram_cli.ok("contradictions", "resolve", str(conflict["id"]), "-r", "both_valid")
    found = engram_cli.json("search", "keep-alive pool size", "-p", "pool")["results"]
    assert all(r["disagrees_with"] == [] for r in found)


def test_delete_without_a_terminal_needs_yes_whatever_the_input(engram_cli: Any) -> None:
    kept = engram_cli.add("Keep me.", "--no-check")
    for answer in ("n\n", "y\n", ""):
        refused = engram_cli("delete", kept, input=answer)
        assert refused.exit_code == 2
        assert "--yes" in refused.stderr
    assert kept in engram_cli.all_ids()


def test_a_misspelt_project_is_named_not_answered_with_nothing(engram_cli: EngramCli) -> None:
    engram_cli.add("Click groups need invoke_without_command.", "-p", "click", "--no-check")
    engram_cli.add("Ruff reads pyproject.toml.", "-p", "ruff", "--no-check")
    for command in (["search", "groups"], ["list"], ["context", "--error", "boom"]):
        result = engram_cli(*command, "-p", "klick")
        assert result.exit_code == 2, command
        assert "no project 'klick' (did you mean 'click'?); known: click, ruff" in result.stderr
    assert "Click groups" in engram_cli.ok("search", "groups", "-p", "click").stdout


def test_reading_counts_as_use_unless_told_not_to(engram_cli: EngramCli, tmp_path: Any) -> None:
    memory_id = engram_cli.add("Ruff reads pyproject.toml first.", "-p", "ruff", "--no-check")

    def reads() -> tuple[int, Any]:
        data = engram_cli.json("show", memory_id, "--no-record")
        return data["retrieval_count"], data["last_accessed"]

    assert reads() == (0, None)
    engram_cli.ok("search", "ruff pyproject", "-p", "ruff", "--no-record")
    assert reads()[0] == 0
    engram_cli.ok("search", "ruff pyproject", "-p", "ruff")
    engram_cli.ok("show", memory_id)
    count, last = reads()
    assert count == 2 and last is not None
    source = tmp_path / "pyproject.toml"
    source.write_text("[tool.ruff]\n", encoding="utf-8")
    engram_cli.ok(
        "add", "Ruff config lives here.", "-p", "ruff", "--file-ref", "pyproject.toml", "--no-check"
    )
    engram_cli.ok("context", "-p", "ruff", "--file", source, "--no-record")
    assert reads()[0] == 2


def test_add_inside_a_repository_takes_its_project(
    engram_cli: EngramCli, tmp_path: Any, monkeypatch: Any
) -> None:
    clone = tmp_path / "repo"
    (clone / ".git").mkdir(parents=True)
    (clone / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = git@github.com:pallets/click.git\n', encoding="utf-8"
    )
    (clone / "src").mkdir()
    monkeypatch.chdir(clone / "src")
    added = engram_cli.json("add", "Groups need invoke_without_command.", "--no-check")
    assert added["project"] == "click"
    elsewhere = tmp_path / "notes"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert engram_cli.json("add", "A loose note.", "--no-check")["project"] is None
    assert engram_cli.json("add", "Pinned.", "-p", "ruff", "--no-check")["project"] == "ruff"


def test_list_keeps_one_line_per_memory_at_80_columns(engram_cli: EngramCli) -> None:
    title = "Refund webhooks are retried with exponential backoff up to six times " * 2
    memory_id = engram_cli.add("Backoff doubles each time.", "--title", title, "-p", "shop")
    lines = engram_cli.ok("list", "-p", "shop", env={"COLUMNS": "80"}).stdout.splitlines()
    row = next(line for line in lines if memory_id in line)
    assert len(row) <= 80 and row.rstrip().endswith("…")
    assert "Refund webhooks are retried" in row
    assert "project" not in lines[0]  # one project listed: no column for it


def test_add_to_a_misspelt_project_stores_it_and_says_so(engram_cli: Any) -> None:
    engram_cli.add("Money is kept in cents.", "-p", "repo")
    typo = engram_cli.ok("add", "Refunds go through issue_refund.", "-p", "rpeo", "--no-check")
    assert "'rpeo' is a new project (did you mean 'repo'?)" in typo.stderr
    assert len(engram_cli.all_ids()) == 2  # stored all the same: a new project is allowed
    other = engram_cli.ok("add", "Deploys run from CI.", "-p", "infra", "--no-check")
    assert "new project" not in other.stderr  # nothing close: no note


def test_deep_listings_say_which_memories_no_longer_hold(engram_cli: Any) -> None:
    old = engram_cli.add("We support Python 3.8 and up.", "-p", "httpx", "--no-check")
    new = engram_cli.add("The floor is 3.9 now.", "-p", "httpx", "--supersedes", old)
    listed = engram_cli.ok("list", "--mode", "deep").stdout
    assert f"[replaced by {new}] We support Python" in listed
    found = engram_cli.ok("search", "python 3.8 support", "--mode", "deep").stdout
    assert f"no longer holds: replaced by {new}" in found
    hits = engram_cli.json("search", "python 3.8 support", "--mode", "deep")["results"]
    assert {r["id"]: r["superseded_by"] for r in hits}[old] == new


@pytest.mark.parametrize("answers", ["y\n", "n\nn\n", "", "\n\n"])
def test_answers_at_the_terminal_apply_and_an_ended_input_keeps_proposals(
    engram_cli: Any, monkeypatch: pytest.MonkeyPatch, answers: str
) -> None:
    """Two notes the new one may replace. A yes applies at once; a no settles the pair
    (both hold, not proposed again, nothing marked outdated); a question the input ended
    before, or answered with Enter alone (a new user's Enter had settled a 1.00
    replacement for good), keeps its pair as an open proposal, and the command does not
    abort."""
    import app.cli.memories

    floor = engram_cli.add(
        'We support Python 3.8 and up: `requires-python = ">=3.8"` in pyproject.toml.',
        "-p", "httpx", "-t", "constraint", "--title", "python floor = 3.8",
    )  # fmt: skip
    again = engram_cli.add(
        "Python 3.8 is the floor, `requires-python` says `>=3.8`.",
        "-p", "httpx", "-t", "constraint", "--title", "floor 3.8", "--allow-copy",
    )  # fmt: skip
    monkeypatch.setattr(app.cli.memories, "stdin_is_terminal", lambda: True)
    monkeypatch.setattr(app.cli.memories, "stdout_is_terminal", lambda: True)
    added = engram_cli(
        "add", "3.8 is dropped. `requires-python` is `>=3.9` now.",
        "-p", "httpx", "-t", "constraint", "--title", "3.8 dropped", input=answers,
    )  # fmt: skip
    assert added.exit_code == 0, added.stderr
    asked = [line for line in added.stdout.splitlines() if "this may replace" in line]
    assert len(asked) == 2
    new = added.stdout.split("stored ", 1)[1].split(":", 1)[0]
    first = next(i for i in (floor, again) if f"this may replace {i}" in asked[0])
    second = ({floor, again} - {first}).pop()
    shown = {i: engram_cli.json("show", i) for i in (floor, again)}
    open_pairs = {
        frozenset((c["a"], c["b"]))
        for c in engram_cli.json("contradictions", "list")["contradictions"]
        if new in (c["a"], c["b"])
    }
    if answers == "y\n":
        assert shown[first]["superseded_by"] == new
        assert shown[second]["superseded_by"] is None
        assert open_pairs == {frozenset((second, new))}
        assert "no answer for 1" in added.stdout
    elif answers == "n\nn\n":
        assert all(shown[i]["superseded_by"] is None for i in (floor, again))
        assert open_pairs == set()
        found = engram_cli.json("search", "python floor 3.8", "-p", "httpx")["results"]
        assert all(r["outdated_by"] is None for r in found)
    else:
        assert all(shown[i]["superseded_by"] is None for i in (floor, again))
        assert open_pairs == {frozenset((floor, new)), frozenset((again, new))}


def test_the_hint_after_add_says_search_reranks_when_a_holder_was_guessed(
    engram_cli: EngramCli,
) -> None:
    """The pass run as the memory is embedded may record a contradiction with the new
    memory as holder; search then ranks it first, and the hint had said "both are kept
    and marked as disagreeing"."""
    old = engram_cli.add("Production log level is DEBUG.", "-p", "logs", "-t", "convention")
    shown = engram_cli.ok(
        "add", "Production log level is WARNING.", "-p", "logs", "-t", "convention"
    ).stdout
    (record,) = engram_cli.json("contradictions", "list")["contradictions"]
    assert f"this may contradict {old}" in shown
    assert record["kind"] == "contradiction" and record["holder"] not in (None, old)
    assert "search ranks the new memory above what it may replace" in shown
    assert "both are kept" not in shown


def test_a_note_giving_the_versions_ci_tests_now_may_replace_the_last_matrix(
    engram_cli: Any,
) -> None:
    """CI matrices move on and share versions (1.21/1.22 → 1.22/1.23): the later note
    is offered as replacing the earlier, the reason naming both sets."""
    old = engram_cli.add(
        "go.yml tests the two supported Go releases, 1.21.x and 1.22.x.", "-p", "z"
    )
    new = engram_cli.json("add", 'CI matrix is now ["1.22.x", "1.23.x"] (#1464).', "-p", "z")
    (candidate,) = new["may_replace"]
    assert candidate["id"] == old and candidate["kind"] == "supersedes"
    assert "go in CI: 1.21, 1.22 → 1.22, 1.23" in candidate["reason"]
    listed = engram_cli.ok("contradictions", "list").stdout
    assert "go in CI: 1.21, 1.22 → 1.22, 1.23" in listed


def test_a_blank_project_is_refused_not_stored_under_none(engram_cli: EngramCli) -> None:
    """`-p "$PROJECT"` with the variable unset had stored a memory under no project."""
    for command in (("add", "Deploys happen on Tuesdays."), ("search", "deploys"), ("list",)):
        result = engram_cli(*command, "-p", " ")
        assert result.exit_code == 2 and "'-p': is empty" in result.stderr, command
    assert engram_cli.json("list")["total"] == 0
