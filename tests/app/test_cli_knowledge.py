"""`engram project-context`, `engram context-history` and `engram lesson` through the
real CLI: saves with history, catalogue files and their errors, lessons with versions,
preference pairs as JSONL, the backfill."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import EngramCli, write_jsonl


def test_project_context_save_show_and_history(engram_cli: EngramCli, tmp_path: Path) -> None:
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(json.dumps({"db": "postgres", "cache": "redis"}), encoding="utf-8")
    first = engram_cli.json(
        "project-context",
        "save",
        "shop",
        "--notes",
        "Refunds in progress.",
        "--todo",
        "write the refund test",
        "--decision",
        "money as integer cents",
        "--active-file",
        "src/refunds.py",
        "--catalogue",
        catalogue,
    )
    assert first["snapshot"]["catalogue_delta"]["added"] == {"cache": "redis", "db": "postgres"}
    engram_cli.ok(
        "project-context",
        "save",
        "shop",
        "--todo",
        "ship refunds",
        "--catalogue",
        "-",
        input='{"db": "sqlite"}',
    )
    shown = engram_cli.json("project-context", "show", "shop")
    assert shown["todos"] == ["ship refunds"]
    assert shown["notes"] == "Refunds in progress."  # kept: not given
    assert shown["catalogue"] == {"db": "sqlite"}

    history = engram_cli.json("context-history", "shop", "--catalogue")
    assert history["catalogue_verified"] is True
    entries = history["entries"]
    assert [e["todos"] for e in entries] == [["write the refund test"], ["ship refunds"]]
    assert entries[1]["catalogue_delta"] == {
        "added": {},
        "removed": ["cache"],
        "changed": {"db": {"from": "postgres", "to": "sqlite"}},
    }
    assert [e["catalogue"] for e in entries] == [
        {"cache": "redis", "db": "postgres"},
        {"db": "sqlite"},
    ]
    assert len(engram_cli.json("context-history", "shop", "--limit", 1)["entries"]) == 1

    text = engram_cli.ok("context-history", "shop").stdout
    assert "+ todo: ship refunds" in text and "- todo: write the refund test" in text
    assert "2 of 2 snapshots; catalogue hashes verified" in text

    replaced = engram_cli.json("project-context", "save", "shop", "--replace", "--todo", "x")
    assert replaced["context"]["notes"] == "" and replaced["context"]["catalogue"] == {}


def test_project_context_input_errors_exit_2(engram_cli: EngramCli, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "db": "postgres",\n}\n', encoding="utf-8")
    result = engram_cli("project-context", "save", "shop", "--catalogue", broken)
    assert result.exit_code == 2
    assert f"{broken}:3:1: invalid JSON" in result.stderr

    array = tmp_path / "array.json"
    array.write_text("[1, 2]", encoding="utf-8")
    result = engram_cli("project-context", "save", "shop", "--catalogue", array)
    assert result.exit_code == 2 and "must be a JSON object" in result.stderr

    result = engram_cli("project-context", "save", "shop", "--catalogue", tmp_path / "no.json")
    assert result.exit_code == 2 and "no such file" in result.stderr

    for command in (("project-context", "show", "shop"), ("context-history", "shop")):
        result = engram_cli(*command)
        assert result.exit_code == 2 and "no saved context" in result.stderr


def test_lessons_add_refine_versions_and_pairs(engram_cli: EngramCli, tmp_path: Path) -> None:
    added = engram_cli.json(
        "lesson",
        "add",
        "--trigger",
        "deploying",
        "--action",
        "restart the workers",
        "--tag",
        "deploy",
        "--project",
        "shop",
    )
    lesson_id = added["memory_id"]
    assert added["version"] == 1 and added["tags"] == ["deploy"]
    shown = engram_cli.json("show", lesson_id)
    assert shown["type"] == "lesson" and shown["content"] == "When deploying: restart the workers."

    refined = engram_cli.json(
        "lesson",
        "refine",
        lesson_id,
        "--action",
        "run the migrations, then restart the workers",
        "--rationale",
        "old workers crash on the new schema",
        "--reason",
        "workers crashed",
        "--session",
        "s-2",
    )
    assert refined["version"] == 2
    found = engram_cli.json("search", "migrations schema", "--limit", 3)
    assert found["results"][0]["id"] == lesson_id

    history = engram_cli.json("lesson", "versions", lesson_id)["versions"]
    assert [(v["version"], v["reason"], v["current"]) for v in history] == [
        (1, "added", False),
        (2, "workers crashed", True),
    ]
    text = engram_cli.ok("lesson", "versions", lesson_id).stdout
    assert "v2 (current)" in text and "Why: old workers crash on the new schema." in text

    (pair,) = [
        json.loads(line) for line in engram_cli.ok("lesson", "export-pairs").stdout.splitlines()
    ]
    assert pair["prompt"] == "deploying" and pair["rejected"] == "restart the workers"
    assert pair["chosen"] == (
        "run the migrations, then restart the workers\nWhy: old workers crash on the new schema"
    )
    assert (pair["from_version"], pair["to_version"], pair["reason"]) == (1, 2, "workers crashed")

    out = tmp_path / "pairs.jsonl"
    assert engram_cli.json("lesson", "export-pairs", "--out", out) == {
        "exported": 1,
        "file": str(out),
    }
    assert [json.loads(line) for line in out.read_text().splitlines()] == [pair]

    result = engram_cli("lesson", "refine", lesson_id, "--reason", "nothing")
    assert result.exit_code == 2
    result = engram_cli("lesson", "refine", "missing-1", "--action", "x", "--reason", "r")
    assert result.exit_code == 2 and "no memory" in result.stderr


def test_lesson_backfill_of_imported_lessons(engram_cli: EngramCli, tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "lessons.jsonl",
        [
            {
                "id": "old-1",
                "type": "lesson",
                "content": "When parsing dates, keep the offset. [v1] drop the offset",
            },
            {
                "id": "old-2",
                "type": "lesson",
                "title": "Lesson: httpx",
                "content": "Name carefully.",
            },
        ],
    )
    engram_cli.ok("import", source)
    assert engram_cli("lesson", "versions", "old-1").exit_code == 2
    assert engram_cli.json("lesson", "backfill") == {"lessons": 2, "versions": 3}
    assert engram_cli.json("lesson", "backfill") == {"lessons": 0, "versions": 0}
    history = engram_cli.json("lesson", "versions", "old-1")["versions"]
    assert [(v["version"], v["action"]) for v in history] == [
        (1, "drop the offset"),
        (2, "keep the offset."),
    ]


def test_a_versioned_lesson_is_changed_by_refine_not_edit(engram_cli: EngramCli) -> None:
    added = engram_cli.json(
        "lesson", "add", "--trigger", "deploying", "--action", "run the migrations first"
    )
    lesson_id = added["memory_id"]
    refused = engram_cli("edit", lesson_id, "--content", "whatever")
    assert refused.exit_code == 2 and "engram lesson refine" in refused.stderr
    assert "run the migrations first" in engram_cli.json("show", lesson_id)["content"]
    engram_cli.ok("edit", lesson_id, "--tag", "deploy")  # tags may change freely
    assert "deploy" in engram_cli.json("show", lesson_id)["tags"]
