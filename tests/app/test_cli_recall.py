"""`engram recall` and the dates shown by `engram show`, through the real CLI, with no
usable language model (provider gguf without a file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.conftest import EngramCli, write_jsonl

RECORDS = [
    {
        "id": "shop-hotfix",
        "type": "episode",
        "project": "shop",
        "content": "Hotfix 1.2.12 shipped this morning to fix the refund rounding bug (SHOP-1011).",
        "created_at": "2026-05-11T09:30:00+02:00",
    },
    {
        "id": "shop-rollback",
        "type": "episode",
        "project": "shop",
        # 00:20 in Kolkata: UTC is still the day before; "yesterday" is the 9th.
        "content": "Yesterday we rolled back release 3.2.10 after `charge_card` timed out.",
        "created_at": "2026-06-10T00:20:00+05:30",
    },
    {
        "id": "shop-demo",
        "type": "fact",
        "project": "shop",
        "content": "The demo of the billing changes is scheduled for next Monday (SHOP-1012).",
        "created_at": "2026-08-16T18:00:00-07:00",  # a Sunday
    },
    {
        "id": "shop-cents",
        "type": "convention",
        "project": "shop",
        "content": "Money is stored as integer cents; never floats.",
        "created_at": "2026-01-05T10:00:00+00:00",
    },
]


@pytest.fixture
def dated(engram_cli: EngramCli, tmp_path: Path) -> EngramCli:
    engram_cli.ok("config", "set", "llm.provider", "gguf")  # no model file: no LLM
    engram_cli.ok("import", write_jsonl(tmp_path / "dated.jsonl", RECORDS))
    return engram_cli


def test_recall_answers_from_the_resolved_dates(dated: EngramCli) -> None:
    answer = dated.json("recall", "When did hotfix 1.2.12 ship?")
    assert answer["temporal_question"] is True
    assert answer["date"] == "2026-05-11"
    assert answer["sources"] == ["shop-hotfix"]
    assert answer["inference_needed"] is False and answer["used_llm"] is False
    assert answer["resolutions"][0] == {
        "memory_id": "shop-hotfix",
        "phrase": "this morning",
        "start": 22,
        "resolved": "2026-05-11",
        "resolved_end": None,
        "granularity": "day",
        "inferred": False,
    }
    assert 0 < answer["confidence"] <= 1
    assert answer["reasoning"]


def test_recall_uses_the_local_date_and_weekday_rules(dated: EngramCli) -> None:
    rollback = dated.json("recall", "On what date was release 3.2.10 rolled back?")
    assert rollback["date"] == "2026-06-09"
    demo = dated.json("recall", "When is the SHOP-1012 demo?")
    assert demo["date"] == "2026-08-17"  # the Monday right after that Sunday


def test_how_long_ago_counts_days_to_as_of(dated: EngramCli) -> None:
    answer = dated.json(
        "recall", "How long ago was release 3.2.10 rolled back?", "--as-of", "2026-06-19"
    )
    assert answer["kind"] == "how_long"
    assert answer["answer"].startswith("10 days ago")


def test_plain_output_shows_the_date_next_to_the_phrase_and_the_reasoning(
    dated: EngramCli,
) -> None:
    out = dated.ok("recall", "When did hotfix 1.2.12 ship?", "--reason").stdout
    assert "2026-05-11 (Monday)" in out
    assert "this morning (2026-05-11)" in out
    assert "reasoning:" in out


def test_a_question_not_about_time(dated: EngramCli) -> None:
    answer = dated.json("recall", "How do we store money?")
    assert answer["temporal_question"] is False
    assert answer["date"] is None
    assert "shop-cents" in answer["sources"]
    assert "not a question about time" in dated.ok("recall", "How do we store money?").stdout


def test_without_dates_it_still_answers_and_says_no_model_helped(dated: EngramCli) -> None:
    answer = dated.json("recall", "When did we decide to store money as integer cents?")
    assert answer["inference_needed"] is True
    assert answer["used_llm"] is False
    # No date is written: `date` stays empty (a script must not take a guess for an
    # answer); when the closest memory was recorded is given apart, with low confidence.
    assert answer["date"] is None
    assert answer["recorded_on"] == "2026-01-05"
    assert answer["confidence"] < 0.5
    assert any("no language model" in step for step in answer["reasoning"])


def test_batch_questions(dated: EngramCli, tmp_path: Path) -> None:
    queries = write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"id": "a", "query": "When did hotfix 1.2.12 ship?", "project": "shop"},
            {"id": "b", "query": "When is the SHOP-1012 demo?"},
        ],
    )
    lines = dated.ok("recall", "--no-llm", "--queries-file", queries).stdout.splitlines()
    answers = [json.loads(line) for line in lines]
    assert [(a["id"], a["date"]) for a in answers] == [("a", "2026-05-11"), ("b", "2026-08-17")]


def test_show_puts_the_dates_next_to_the_phrases(dated: EngramCli) -> None:
    assert "Yesterday (2026-06-09) we rolled back" in dated.ok("show", "shop-rollback").stdout
    shown = dated.json("show", "shop-rollback")
    assert shown["times"] == [
        {
            "start": 0,
            "phrase": "Yesterday",
            "resolved": "2026-06-09",
            "resolved_end": None,
            "granularity": "day",
        }
    ]


def test_edit_and_delete_keep_the_dates_in_step(dated: EngramCli) -> None:
    dated.ok("edit", "shop-rollback", "--content", "We rolled back release 3.2.10 2 days ago.")
    assert dated.json("show", "shop-rollback")["times"][0]["resolved"] == "2026-06-08"
    assert dated.json("recall", "When was release 3.2.10 rolled back?")["date"] == "2026-06-08"
    dated.ok("delete", "--yes", "shop-rollback")
    answer = dated.json("recall", "When was release 3.2.10 rolled back?")
    assert "shop-rollback" not in answer["sources"]


def test_recall_needs_a_question(dated: EngramCli) -> None:
    assert dated("recall").exit_code == 2
    assert dated("recall", "when?", "--as-of", "June").exit_code == 2


def test_an_empty_question_is_refused(engram_cli: EngramCli) -> None:
    result = engram_cli("recall", "   ")
    assert result.exit_code == 2 and "QUESTION is empty" in result.stderr


def test_a_replaced_note_still_answers_when_its_change_happened(
    engram_cli: EngramCli, tmp_path: Path
) -> None:
    """ "When did we move the test runner to nox?" is about history: the note that says so
    answers it after a later note replaced it ("we dropped nox"); recall searched only
    what holds now and answered with the replacement's date."""
    engram_cli.ok("config", "set", "llm.provider", "gguf")
    records = [
        {
            "id": "to-nox",
            "type": "workflow",
            "project": "shop",
            "content": "We moved the test runner to nox yesterday; tox.ini is deleted.",
            "created_at": "2026-05-08T10:00:00+00:00",
        },
        {
            "id": "to-uv",
            "type": "workflow",
            "project": "shop",
            "content": "Tests run with `uv run pytest` now; the noxfile is gone.",
            "created_at": "2026-11-02T10:00:00+00:00",
            "supersedes": "to-nox",
        },
    ]
    engram_cli.ok("import", write_jsonl(tmp_path / "runner.jsonl", records))
    assert engram_cli.json("show", "to-nox")["superseded_by"] == "to-uv"
    answer = engram_cli.json("recall", "When did we move the test runner to nox?")
    assert answer["date"] == "2026-05-07" and answer["sources"][0] == "to-nox"
