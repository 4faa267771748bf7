"""The assembler the app builds: settings' budget and split, tier-1 contradiction
warnings, and the dates of relative phrases from the store."""

from __future__ import annotations

from datetime import UTC, datetime

from app.activity import build_assembler
from services.activity import ActivityKind
from services.prediction import Candidate, Prediction


def test_the_app_assembler_shows_stored_dates(engram: object) -> None:
    service = engram.service  # type: ignore[attr-defined]
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
    markdown = build_assembler(engram).assemble(prediction).markdown  # type: ignore[arg-type]
    assert "yesterday (2026-06-09)" in markdown
