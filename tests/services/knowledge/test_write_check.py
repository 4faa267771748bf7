"""The reason `engram add` gives for "this may replace X"."""

from __future__ import annotations

from services.knowledge.conflict_records import reading_of
from services.knowledge.cues import compare
from services.knowledge.pair_features import read_pair_text
from services.knowledge.write_check import why
from tests.services.builders import make_memory


def _why(first: str, second: str) -> str:
    earlier = make_memory(first, title="upgrade", created_at="2025-01-01T10:00:00+00:00")
    later = make_memory(second, title="upgrade", created_at="2025-06-01T10:00:00+00:00")
    cues = compare(reading_of(earlier), reading_of(later))
    return why(read_pair_text(earlier), read_pair_text(later), cues)


def test_a_version_step_names_the_old_and_the_new_version() -> None:
    assert "1.4 → 1.9" in _why("We pin pool-lib 1.4 for now.", "pool-lib 1.9 is required now.")


def test_two_products_versions_are_not_read_as_one_step() -> None:
    """Flask-SQLAlchemy 2.5 beside SQLAlchemy 1.4.49, then SQLAlchemy 2.0.25: "2.5 →
    2.0.25" would pair the two products' versions."""
    said = _why(
        "We run Flask-SQLAlchemy 2.5 with SQLAlchemy 1.4.49.",
        "Upgraded: SQLAlchemy 2.0.25 everywhere now.",
    )
    assert "2.5 → 2.0.25" not in said
