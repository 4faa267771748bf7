"""The assembler the app builds: settings' budget and split, tier-1 contradiction
warnings, and the dates of relative phrases from the store."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from app.composition import Engram
from app.desktop import Desktop
from services.activity.prediction import Candidate, Prediction
from services.activity.signals import ActivityKind


def test_the_app_assembler_shows_stored_dates(engram: Engram) -> None:
    service = engram.service
    memory = service.add(
        {
            "id": "rollback",
            "project": "p",
            "content": "We rolled back the payout job yesterday.",
            "created_at": "2026-06-10T09:00:00+02:00",
        }
    )
    prediction = Prediction(
        project="p",
        at=datetime(2026, 6, 20, tzinfo=UTC),
        activity=ActivityKind.GENERAL,
        critical=[],
        relevant=[Candidate(memory, 0.9)],
        background=[],
        topics=[],
        current_file=None,
        branch=None,
    )
    markdown = engram.assembler().assemble(prediction).markdown
    assert "yesterday (2026-06-09)" in markdown


def test_popup_results_show_dates_and_copying_does_not_date_twice(
    engram: Engram, data_dir: Path
) -> None:
    service = engram.service
    service.add(
        {
            "id": "rollback",
            "content": "We rolled back the payout job yesterday.",
            "created_at": "2026-06-10T09:00:00+02:00",
        }
    )
    desktop = Desktop(data_dir, engram)
    answer = desktop.search("rolled back payout job")
    (first, *_) = answer.results
    assert first.memory.content == "We rolled back the payout job yesterday (2026-06-09)."
    assert service.store.get("rollback").content.endswith("job yesterday.")  # not stored
    assembled = desktop.context_for("rolled back payout job", answer.results)
    copied = assembled.markdown
    assert copied.count("(2026-06-09)") == 1
    # The copy is about the query: it names it, and its results lead tier 1.
    assert "query “rolled back payout job”" in copied and assembled.query
    assert assembled.ids(1)[0] == "rollback"
