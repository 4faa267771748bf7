"""`engram export | import | ingest` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.app.conftest import EngramCli, corpus_records, write_jsonl

FULL_RECORD: dict[str, Any] = {
    "id": "shop-full-1",
    "project": "shop",
    "type": "decision",
    "title": "Every field set",
    "content": "Payments go through the outbox table.\n\n```python\nsend(outbox)\n```\n",
    "summary": "outbox for payments",
    "compressed": "payments→outbox",
    "index_line": "decision: outbox",
    "tags": ["payments", "outbox"],
    "file_refs": ["src/pay/*.py"],
    "confidence": 0.66,
    "source": "imported",
    "session_id": "s-9",
    "task_id": "t-3",
    "role": "reviewer",
    "branch": "feature/outbox",
    "scope": "user-private",
    "created_at": "2026-03-01T10:00:00+02:00",
    "valid_from": "2026-03-01T00:00:00+00:00",
    "valid_to": "2027-01-01T00:00:00+00:00",
    "last_accessed": "2026-04-01T08:00:00+00:00",
    "retrieval_count": 4,
    "citation_count": 3,
    "ignore_count": 2,
    "use_count": 1,
    "supersedes": "shop-old-1",
    "superseded_by": "shop-new-1",
    "tier": "cold",
}


def _export(cli: EngramCli, *args: Any) -> dict[str, Any]:
    return json.loads(cli.ok("export", *args).stdout)


def test_export_json_document(corpus_cli: EngramCli) -> None:
    document = _export(corpus_cli)
    assert set(document) == {"version", "project", "exported_at", "memories", "contradictions"}
    assert document["contradictions"] == []
    assert document["version"] == 1
    assert document["project"] is None
    assert document["exported_at"].endswith("+00:00")
    assert len(document["memories"]) == 30
    by_id = {m["id"]: m for m in document["memories"]}
    for record in corpus_records(30):
        exported = by_id[record["id"]]
        for key, value in record.items():
            assert exported[key] == value, (record["id"], key)

    scoped = _export(corpus_cli, "--project", "ledgerly")
    assert scoped["project"] == "ledgerly"
    assert {m["project"] for m in scoped["memories"]} == {"ledgerly"}
    assert len(scoped["memories"]) == 8


def test_export_includes_every_tier(corpus_cli: EngramCli) -> None:
    corpus_cli.ok("edit", "shipit-m00001", "--tier", "archived")
    ids = {m["id"] for m in _export(corpus_cli)["memories"]}
    assert "shipit-m00001" in ids and len(ids) == 30


def test_export_of_an_unknown_project_is_refused_not_empty(
    corpus_cli: EngramCli, tmp_path: Path
) -> None:
    target = tmp_path / "typo.json"
    result = corpus_cli("export", "-p", "pinbord-ui", "-o", target)
    assert result.exit_code == 2
    assert "no project 'pinbord-ui' (did you mean 'pinboard-ui'?)" in result.stderr
    assert not target.exists()


def test_export_jsonl_and_to_a_file(corpus_cli: EngramCli, tmp_path: Path) -> None:
    lines = corpus_cli.ok("export", "--format", "jsonl", "-p", "pinboard-ui").stdout.splitlines()
    assert len(lines) == 7
    assert all(json.loads(line)["project"] == "pinboard-ui" for line in lines)

    target = tmp_path / "out" / "shop.json"
    target.parent.mkdir()
    report = corpus_cli.json("export", "-o", target)
    assert report == {"exported": 30, "file": str(target)}
    assert len(json.loads(target.read_text(encoding="utf-8"))["memories"]) == 30
    assert not list(target.parent.glob("*.part"))


@pytest.mark.parametrize("format_", ["json", "jsonl"])
def test_import_round_trip_keeps_every_field_and_id(tmp_path: Path, format_: str) -> None:
    source = EngramCli(tmp_path / "source")
    records = [FULL_RECORD, *corpus_records(12)]
    source.ok("import", write_jsonl(tmp_path / "in.jsonl", records))
    exported = tmp_path / f"export.{format_}"
    source.ok("export", "--format", format_, "-o", exported)

    fresh = EngramCli(tmp_path / "fresh")
    assert fresh.json("import", exported)["imported"] == 13
    again = tmp_path / f"again.{format_}"
    fresh.ok("export", "--format", format_, "-o", again)

    def memories(path: Path) -> dict[str, dict[str, Any]]:
        text = path.read_text(encoding="utf-8")
        items = (
            json.loads(text)["memories"]
            if format_ == "json"
            else [json.loads(line) for line in text.splitlines()]
        )
        return {m["id"]: m for m in items}

    first, second = memories(exported), memories(again)
    assert first == second
    assert first["shop-full-1"] == FULL_RECORD
    assert fresh.json("stats")["waiting_for_embedding"] == 0
    assert fresh.json("show", "shop-full-1")["content"] == FULL_RECORD["content"]


def test_import_corpus_keeps_branch_and_session(tmp_path: Path, engram_cli: EngramCli) -> None:
    records = corpus_records(5)
    engram_cli.ok("import", write_jsonl(tmp_path / "c.jsonl", records))
    for record in records:
        shown = engram_cli.json("show", record["id"])
        assert shown["branch"] == record.get("branch")
        assert shown["session_id"] == record["session_id"]
        assert shown["created_at"] == record["created_at"]


def test_import_project_option_is_the_default_project(
    tmp_path: Path, engram_cli: EngramCli
) -> None:
    source = write_jsonl(
        tmp_path / "m.jsonl",
        [{"content": "no project given"}, {"content": "has its own", "project": "mine"}],
    )
    engram_cli.ok("import", source, "--project", "given")
    assert engram_cli.json("list", "-p", "given")["total"] == 1
    assert engram_cli.json("list", "-p", "mine")["total"] == 1


def test_import_is_all_or_nothing(tmp_path: Path, corpus_cli: EngramCli) -> None:
    lines = [json.dumps({"id": f"new-{i}", "content": f"new memory {i}"}) for i in range(5)]
    lines[2] = '{"id": "new-2", "content": "broken'
    lines[4] = json.dumps({"id": "new-4", "content": "x", "type": "opinion"})
    source = tmp_path / "bad.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = corpus_cli("import", source)
    assert result.exit_code == 2
    assert f"{source}:3:28: invalid JSON (Unterminated string" in result.stderr
    assert f"{source}:5: unknown type 'opinion'" in result.stderr
    assert "nothing was imported" in result.stderr
    assert result.stdout == ""
    assert corpus_cli.json("list", "--limit", 100)["total"] == 30


def test_import_existing_ids(tmp_path: Path, corpus_cli: EngramCli) -> None:
    records = corpus_records(3)
    records[0] = {**records[0], "content": "replaced content about quasars"}
    records.append({"id": "brand-new", "content": "a new one", "project": "shipit"})
    source = write_jsonl(tmp_path / "dup.jsonl", records)

    refused = corpus_cli("import", source)
    assert refused.exit_code == 2
    assert "already exist" in refused.stderr and "--replace" in refused.stderr
    assert "brand-new" not in corpus_cli.all_ids()

    both = corpus_cli("import", source, "--replace", "--skip-existing")
    assert both.exit_code == 2

    skipped = corpus_cli.json("import", source, "--skip-existing")
    assert (skipped["imported"], skipped["skipped"]) == (1, 3)
    assert corpus_cli.json("show", records[0]["id"])["content"] != "replaced content about quasars"
    assert len(corpus_cli.all_ids()) == 31

    replaced = corpus_cli.json("import", source, "--replace")
    assert (replaced["imported"], replaced["skipped"]) == (4, 0)
    assert corpus_cli.json("show", records[0]["id"])["content"] == "replaced content about quasars"
    assert len(corpus_cli.all_ids()) == 31
    found = corpus_cli.json(
        "search", "quasars", "-p", records[0]["project"], "--retriever", "dense", "-n", 1
    )
    assert found["results"][0]["id"] == records[0]["id"]


def test_import_duplicate_ids_inside_one_file(tmp_path: Path, engram_cli: EngramCli) -> None:
    source = write_jsonl(
        tmp_path / "twice.jsonl", [{"id": "same", "content": "a"}, {"id": "same", "content": "b"}]
    )
    result = engram_cli("import", source)
    assert result.exit_code == 2
    assert f"{source}:2: duplicate id 'same' (first at {source}:1)" in result.stderr
    assert engram_cli.all_ids() == set()


def test_import_reports_many_problems_shortened(tmp_path: Path, engram_cli: EngramCli) -> None:
    source = tmp_path / "many.jsonl"
    source.write_text("not json\n" * 250, encoding="utf-8")
    result = engram_cli("import", source)
    assert result.exit_code == 2
    assert "250 problem(s)" in result.stderr
    assert f"{source}:200:1: invalid JSON" in result.stderr
    assert f"{source}:201:" not in result.stderr
    assert "and 50 more" in result.stderr


INGEST_TEXT = """Some answer from the assistant.
MEMORY:decision:We pin numpy below 3 until the wheels exist.
not a memory line
  # MEMORY:pitfall:Timezone-naive datetimes break the invoice cutoff.
MEMORY:opinion:This type does not exist.
MEMORY:fix:
MEMORY:FIX:Clear the cache after a schema change.
"""


def test_ingest_from_stdin(engram_cli: EngramCli) -> None:
    result = engram_cli(
        "ingest", "--project", "shop", "--session", "s-7", "--json", input=INGEST_TEXT
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert len(report["stored"]) == 3
    assert report["problems"] == [
        "<stdin>:5: unknown type 'opinion' (choose from: "
        + ", ".join(
            [
                "fact",
                "episode",
                "pattern",
                "workflow",
                "architecture",
                "dependency",
                "decision",
                "constraint",
                "convention",
                "pitfall",
                "fix",
                "lesson",
            ]
        )
        + ")",
        "<stdin>:6: no content after the type",
    ]
    shown = [engram_cli.json("show", memory_id) for memory_id in report["stored"]]
    assert [(m["type"], m["content"]) for m in shown] == [
        ("decision", "We pin numpy below 3 until the wheels exist."),
        ("pitfall", "Timezone-naive datetimes break the invoice cutoff."),
        ("fix", "Clear the cache after a schema change."),
    ]
    assert all(
        m["project"] == "shop" and m["session_id"] == "s-7" and m["source"] == "automatic"
        for m in shown
    )
    assert engram_cli.json("stats")["waiting_for_embedding"] == 0


def test_ingest_from_a_file_plain_output(tmp_path: Path, engram_cli: EngramCli) -> None:
    source = tmp_path / "notes.md"
    source.write_text(INGEST_TEXT, encoding="utf-8")
    result = engram_cli("ingest", source)
    assert result.exit_code == 1
    assert "stored 3 memories" in result.stdout
    assert f"{source}:5: unknown type 'opinion'" in result.stderr
    good = tmp_path / "good.md"
    good.write_text("MEMORY:fact:Only good lines here.\n", encoding="utf-8")
    assert engram_cli("ingest", good).exit_code == 0
    assert len(engram_cli.all_ids()) == 4


def test_ingest_of_a_binary_file_is_refused(tmp_path: Path, engram_cli: EngramCli) -> None:
    """It printed "stored 0 memories" and exited 0, as if the file had been read."""
    blob = tmp_path / "photo.png"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00MEMORY:fact:not a note\n")
    result = engram_cli("ingest", blob)
    assert result.exit_code == 2
    assert "looks binary; nothing was stored" in result.stderr
    assert engram_cli.all_ids() == set()


def test_ingest_without_memory_lines_stores_nothing(engram_cli: EngramCli) -> None:
    result = engram_cli("ingest", "--json", input="just prose\nno markers\n")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "stored": [],
        "already_stored": [],
        "problems": [],
        "redacted": {"count": 0, "kinds": {}},
    }


def test_a_line_told_again_is_stored_once(engram_cli: EngramCli) -> None:
    """An assistant that writes the same MEMORY line in two sessions (or twice in one)
    adds one memory; the line's project decides what counts as the same."""
    line = "MEMORY:convention:Tests live next to the code they test.\n"
    first = engram_cli.json("ingest", "-p", "shop", input=line * 2)
    assert len(first["stored"]) == 1 and first["already_stored"] == first["stored"]
    again = engram_cli.ok("ingest", "-p", "shop", input=line + "MEMORY:fact:CI runs on push.\n")
    assert "stored 1 memory (1 already stored, not stored again)" in again.stdout
    assert len(engram_cli.ids("-p", "shop")) == 2
    elsewhere = engram_cli.json("ingest", "-p", "web", input=line)
    assert len(elsewhere["stored"]) == 1 and elsewhere["already_stored"] == []


def test_import_reports_what_still_waits_for_embedding(
    tmp_path: Path, engram_cli: EngramCli
) -> None:
    from app.background import embedding_lock

    source = write_jsonl(tmp_path / "four.jsonl", corpus_records(4))
    with embedding_lock(engram_cli.data_dir) as held:
        assert held
        report = engram_cli.json("import", source)
    assert report == {
        "imported": 4,
        "skipped": 0,
        "queued_for_embedding": 4,
        "superseded": [],
        "contradictions_restored": 0,
        "already_stored": [],
        "redacted": {"count": 0, "kinds": {}},
    }
    assert engram_cli.json("stats")["waiting_for_embedding"] == 4
    engram_cli.ok("search", "anything")
    assert engram_cli.json("stats")["waiting_for_embedding"] == 0


def test_import_replace_leaves_no_stale_vectors(tmp_path: Path, engram_cli: EngramCli) -> None:
    from services.vectors.embeddings.onnx_minilm import MODEL_ID
    from services.vectors.index import VectorIndex, collection_name

    long = "\n\n".join(
        f"Paragraph {i} explains the zebra{i} and quokka{i} migrations in detail. " * 12
        for i in range(8)
    )
    first = write_jsonl(tmp_path / "a.jsonl", [{"id": "m1", "content": long, "project": "p"}])
    engram_cli.ok("import", first)
    assert len(engram_cli.json("show", "m1")["chunks"]) > 1

    short = write_jsonl(tmp_path / "b.jsonl", [{"id": "m1", "content": "penguins", "project": "p"}])
    engram_cli.ok("import", short, "--replace")
    vectors = VectorIndex(path=engram_cli.data_dir / "chroma")
    assert vectors.count(MODEL_ID) == 1
    found = engram_cli.json("search", "zebra3 quokka3 migrations", "--retriever", "dense")
    assert found["results"][0]["breakdown"]["best_chunk"] == -1

    moved = write_jsonl(tmp_path / "c.jsonl", [{"id": "m1", "content": "penguins", "project": "q"}])
    engram_cli.ok("import", moved, "--replace")
    vectors.forget_cache()
    in_index = {name: ids for name, ids in vectors.memory_ids(MODEL_ID).items() if ids}
    assert in_index == {collection_name(MODEL_ID, "q"): {"m1"}}
    gone = engram_cli("search", "penguins", "-p", "p", "--retriever", "dense")
    assert gone.exit_code == 2 and "no project 'p'; known: q" in gone.stderr


def test_a_replacement_imported_before_what_it_replaces_applies_when_that_arrives(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    """An export of part of a store names a memory left out; imported later, it had held
    beside the memory declaring it replaced."""
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text(
        json.dumps({"id": "floor-39", "project": "httpx", "type": "constraint",
                    "content": "3.8 is dropped; the floor is 3.9.", "supersedes": "floor-38"})
        + "\n",
        encoding="utf-8",
    )  # fmt: skip
    assert engram_cli.json("import", str(first))["superseded"] == []
    second.write_text(
        json.dumps({"id": "floor-38", "project": "httpx", "type": "constraint",
                    "content": "We support Python 3.8 and up."}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    assert engram_cli.json("import", str(second))["superseded"] == ["floor-38"]
    assert engram_cli.json("show", "floor-38")["superseded_by"] == "floor-39"


def test_import_applies_supersedes_and_refuses_other_projects(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    old = engram_cli.add("We support Python 3.8 and up.", "-p", "httpx", "--no-check")
    good = tmp_path / "good.jsonl"
    good.write_text(
        json.dumps(
            {"id": "floor-39", "project": "httpx", "type": "constraint",
             "content": "3.8 is dropped; the floor is 3.9.", "supersedes": old}
        ) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    result = engram_cli.json("import", str(good))
    assert result["superseded"] == [old]
    assert engram_cli.json("show", old)["superseded_by"] == "floor-39"
    bad = tmp_path / "bad.jsonl"
    other = engram_cli.add("Pydantic supports 3.8.", "-p", "pydantic", "--no-check")
    bad.write_text(
        json.dumps({"id": "x1", "project": "httpx", "content": "x", "supersedes": other}) + "\n",
        encoding="utf-8",
    )
    before = engram_cli.all_ids()
    refused = engram_cli("import", str(bad))
    assert refused.exit_code == 2
    assert "another project" in refused.stderr
    assert engram_cli.all_ids() == before  # all or nothing


def test_import_of_a_text_already_stored_stores_it_once(
    tmp_path: Path, engram_cli: EngramCli
) -> None:
    """`engram add` says "already stored as" for a text stored before; an import had
    stored a second copy, which then filled the context twice."""
    text = "Money is stored as integer cents everywhere; never use floats for amounts."
    stored = engram_cli.add(text, "-p", "shop", "-t", "convention")
    source = write_jsonl(
        tmp_path / "again.jsonl",
        [
            {"id": "imp-1", "content": text, "project": "shop", "tags": ["money"]},
            {"id": "imp-2", "content": "Refunds go through the ledger.", "project": "shop"},
        ],
    )
    result = engram_cli.json("import", source)
    assert result["imported"] == 1
    assert result["already_stored"] == [{"id": "imp-1", "stored_as": stored}]
    assert engram_cli.all_ids() == {stored, "imp-2"}
    assert "money" in engram_cli.json("show", stored)["tags"]  # what the record brought
    again = engram_cli.ok("import", write_jsonl(tmp_path / "once.jsonl", [
        {"id": "imp-3", "content": text, "project": "shop"}
    ]))  # fmt: skip
    assert "imported 0 memories; 1 already stored, not stored again" in again.stdout
    assert f"imp-3: already stored as {stored}" in again.stdout
    assert engram_cli.all_ids() == {stored, "imp-2"}


def test_records_dated_in_the_future_are_imported_and_said(
    tmp_path: Path, engram_cli: EngramCli
) -> None:
    """A mistyped year (2030 for 2023) had been imported without a word."""
    source = write_jsonl(
        tmp_path / "m.jsonl",
        [
            {
                "id": "ahead",
                "content": "From the future.",
                "created_at": "2030-01-01T10:00:00+00:00",
            },
            {"id": "past", "content": "Last year.", "created_at": "2025-01-01T10:00:00+00:00"},
        ],
    )
    result = engram_cli.ok("import", source)
    assert "note: 1 memory dated after today (latest 2030-01-01: ahead)" in result.stderr
    assert engram_cli.all_ids() == {"ahead", "past"}
    quiet = engram_cli.ok("import", write_jsonl(tmp_path / "q.jsonl", [{"content": "Now."}]))
    assert "dated after today" not in quiet.stderr


def _settled_pair(cli: EngramCli) -> dict[str, Any]:
    """Two notes the cues flag as a replacement, settled by the user as both valid."""
    cli.add("`settle_batch` times out after 5 seconds.", "--project", "shop", "--id", "old")
    cli.add(
        "We changed the timeout of `settle_batch` from 5s to 30s.",
        "--project", "shop", "--id", "new",
    )  # fmt: skip
    (record,) = cli.json("contradictions", "list")["contradictions"]
    cli.ok("contradictions", "resolve", str(record["id"]), "-r", "both_valid", "--note", "two jobs")
    (settled,) = cli.json("contradictions", "list", "--all")["contradictions"]
    return settled


def test_what_the_user_settled_travels_with_an_export(
    tmp_path: Path, engram_cli: EngramCli
) -> None:
    """A pair settled as both valid was lost on export and import: the next cycle on the
    new machine asked about it again."""
    settled = _settled_pair(engram_cli)
    exported = tmp_path / "shop.json"
    engram_cli.ok("export", "-o", exported)
    (carried,) = json.loads(exported.read_text(encoding="utf-8"))["contradictions"]
    assert carried["resolution"] == "both_valid" and "id" not in carried

    fresh = EngramCli(tmp_path / "fresh")
    report = fresh.json("import", exported)
    assert report["imported"] == 2 and report["contradictions_restored"] == 1
    (restored,) = fresh.json("contradictions", "list", "--all")["contradictions"]
    assert {k: v for k, v in restored.items() if k != "id"} == {
        k: v for k, v in settled.items() if k != "id"
    }
    fresh.ok("rem", "run", "--op", "contradictions", env={"ENGRAM_LLM_PROVIDER": "gguf"})
    assert fresh.json("contradictions", "list")["contradictions"] == []  # not asked again
    # Imported again into a store that knows the pair, nothing is written twice.
    assert fresh.json("import", exported, "--skip-existing")["contradictions_restored"] == 0


def test_an_open_pair_takes_the_settled_answer_a_settled_one_keeps_its_own(
    tmp_path: Path, engram_cli: EngramCli
) -> None:
    settled = _settled_pair(engram_cli)
    exported = tmp_path / "shop.json"
    engram_cli.ok("export", "-o", exported)
    document = json.loads(exported.read_text(encoding="utf-8"))

    other = EngramCli(tmp_path / "other")
    other.ok("import", write_jsonl(tmp_path / "m.jsonl", document["memories"]))
    (open_here,) = other.json("contradictions", "list")["contradictions"]  # flagged anew
    assert open_here["resolution"] is None
    assert other.json("import", exported, "--skip-existing")["contradictions_restored"] == 1
    (now,) = other.json("contradictions", "list", "--all")["contradictions"]
    assert now["id"] == open_here["id"] and now["resolution"] == "both_valid"

    document["contradictions"][0]["resolution"] = "a_wins"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(document), encoding="utf-8")
    assert other.json("import", changed, "--skip-existing")["contradictions_restored"] == 0
    (kept,) = other.json("contradictions", "list", "--all")["contradictions"]
    assert kept["resolution"] == settled["resolution"] == "both_valid"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"a": "nobody"}, "'a' 'nobody' is no memory of the file or the store"),
        ({"resolution": "maybe"}, "'resolution' must be one of"),
        ({"resolved_at": None}, "'resolution' and 'resolved_at' go together"),
        ({"holder": "someone-else"}, "'holder' must be the memory in 'a' or in 'b', or null"),
        ({"kind": "feud"}, "'kind' must be one of"),
        ({"detected_at": "last tuesday"}, "'detected_at' must be an ISO-8601 time"),
        ({"b": "old"}, "'a' and 'b' are the same memory"),
    ],
)
def test_a_bad_conflict_record_imports_nothing(
    tmp_path: Path, engram_cli: EngramCli, change: dict[str, Any], problem: str
) -> None:
    _settled_pair(engram_cli)
    exported = tmp_path / "shop.json"
    engram_cli.ok("export", "-o", exported)
    document = json.loads(exported.read_text(encoding="utf-8"))
    record = document["contradictions"][0]
    if change.get("b") == "old":
        record["a"] = "old"
    record.update(change)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document), encoding="utf-8")

    fresh = EngramCli(tmp_path / "fresh")
    result = fresh("import", broken)
    assert result.exit_code == 2, result.stderr
    assert "contradictions[0]" in result.stderr and problem in result.stderr
    assert fresh.all_ids() == set()  # all or nothing: the memories were not stored either


def test_a_jsonl_export_says_what_it_leaves_out(tmp_path: Path, engram_cli: EngramCli) -> None:
    _settled_pair(engram_cli)
    result = engram_cli.ok("export", "--format", "jsonl", "-o", tmp_path / "shop.jsonl")
    assert "leaves out 1 conflict record" in result.stderr and "--format json" in result.stderr
