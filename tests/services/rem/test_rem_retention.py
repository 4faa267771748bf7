"""Retention tiers, staleness and forgetting, with planted dates and usage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.composition import Engram
from services.rem.actions import answer
from services.rem.ops.retention import (
    PINNED_TAG,
    RetentionPolicy,
    UsageSummary,
    apply_tiers,
    retention,
    staleness_findings,
)
from services.rem.results import TierMoves
from services.storage.findings import FindingStore
from services.storage.memories import MemoryStore
from services.types import Tier
from tests.services.builders import make_memory

NOW = datetime(2026, 10, 31, 23, 59, tzinfo=UTC)


def days_ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat()


def use(store: MemoryStore, memory_id: str, event: str, days: float) -> None:
    store.database.execute_sql(
        "INSERT INTO usage_event (memory_id, event, session_id, at) VALUES (?, ?, NULL, ?)",
        [memory_id, event, days_ago(days)],
    )


def test_retention_halves_every_half_life_and_use_boosts_it() -> None:
    policy = RetentionPolicy()
    memory = make_memory("x", created_at=days_ago(30))
    assert retention(memory, None, NOW, policy) == pytest.approx(0.5, abs=1e-3)
    assert retention(make_memory("x", created_at=days_ago(60)), None, NOW, policy) == (
        pytest.approx(0.25, abs=1e-3)
    )
    used = UsageSummary(last_use=NOW - timedelta(days=30), last_cited=None, uses=2)
    assert retention(make_memory("x", created_at=days_ago(200)), used, NOW, policy) == (
        pytest.approx(0.7, abs=1e-3)
    )


def test_tiers_follow_retention_pins_stay_hot_archived_stay(store: MemoryStore) -> None:
    store.add(make_memory("new", id="new", created_at=days_ago(1)))
    store.add(make_memory("month", id="month", created_at=days_ago(30)))
    store.add(make_memory("old", id="old", created_at=days_ago(120)))
    store.add(make_memory("pin", id="pin", created_at=days_ago(300), tags=[PINNED_TAG]))
    store.add(make_memory("gone", id="gone", created_at=days_ago(1), tier="archived"))
    store.add(make_memory("used", id="used", created_at=days_ago(300)))
    use(store, "used", "retrieved", 2)
    moved = apply_tiers(store, NOW)
    tiers = {m: store.get(m).tier for m in ("new", "month", "old", "pin", "gone", "used")}
    assert tiers == {
        "new": Tier.HOT,
        "month": Tier.WARM,
        "old": Tier.COLD,
        "pin": Tier.HOT,
        "gone": Tier.ARCHIVED,
        "used": Tier.HOT,
    }
    assert sum(moved.moved.values()) == 4  # new, pin and used were warm → hot; old → cold
    assert apply_tiers(store, NOW) == TierMoves({})  # applied once, nothing moves again


def test_staleness_flags_and_never_forgets_cited(store: MemoryStore) -> None:
    store.add(make_memory("a", id="young-unused", created_at=days_ago(10)))
    store.add(make_memory("a", id="stale", created_at=days_ago(45)))
    store.add(make_memory("a", id="unused", created_at=days_ago(200)))
    store.add(make_memory("a", id="ignored-only", created_at=days_ago(200)))
    use(store, "ignored-only", "ignored", 5)
    store.add(make_memory("a", id="cited", created_at=days_ago(400)))
    use(store, "cited", "cited", 3)
    store.add(make_memory("a", id="idle", created_at=days_ago(400)))
    use(store, "idle", "retrieved", 120)
    store.add(make_memory("a", id="old-news", created_at=days_ago(50), superseded_by="cited"))
    findings = staleness_findings(store, NOW)
    kinds = {f.memory_ids[0]: (f.kind, f.recommended) for f in findings}
    assert kinds == {
        "stale": ("stale", "skip"),
        "unused": ("unused", "archive"),
        "ignored-only": ("unused", "archive"),
        "idle": ("idle", "archive"),
        "old-news": ("superseded", "archive"),
    }


def test_archiving_goes_through_an_accepted_finding(engram: Engram) -> None:
    service = engram.service
    service.store.add(make_memory("a", id="unused", created_at=days_ago(200)))
    (finding,) = staleness_findings(service.store, NOW)
    assert service.store.get("unused").tier is not Tier.ARCHIVED  # proposing changes nothing
    findings = FindingStore(service.store)
    findings.save([finding])
    assert answer(service, findings, finding, "archive")
    assert service.store.get("unused").tier is Tier.ARCHIVED  # archived, not deleted


def test_old_notes_imported_today_count_from_the_import(store: MemoryStore) -> None:
    """Notes written two years ago and imported today are new to Engram: the first cycle
    keeps them in the tiers standard searches read and proposes none as never used; 100
    days later, still unused, they are cold and proposed like any other."""
    now = datetime.now(UTC)
    for number in range(3):
        store.add(make_memory(f"note {number}", id=f"n{number}", created_at=days_ago(700)))
    apply_tiers(store, now + timedelta(days=1))
    assert {store.get(f"n{n}").tier for n in range(3)} == {Tier.HOT}
    assert staleness_findings(store, now + timedelta(days=1)) == []
    later = now + timedelta(days=100)
    apply_tiers(store, later)
    assert {store.get(f"n{n}").tier for n in range(3)} == {Tier.COLD}
    assert {f.kind for f in staleness_findings(store, later)} == {"unused"}
    # Replayed as of an earlier day (before the import), the notes' own dates count.
    apply_tiers(store, NOW)
    assert {store.get(f"n{n}").tier for n in range(3)} == {Tier.COLD}
