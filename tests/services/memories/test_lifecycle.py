"""Usage and lifecycle: counters and confidence follow use, unused memories decay once
per interval down to a floor, and cleanup archives (never deletes) what nobody needs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.composition import lifecycle_policy
from app.settings import Settings
from services.filters import MemoryFilter
from services.memories.lifecycle import LAST_DECAY_KEY, Lifecycle
from services.storage.database import UsageEventRow
from services.storage.memories import MemoryStore
from services.types import Tier, UsageEvent
from tests.services.builders import make_memory

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat()


@pytest.fixture
def lifecycle(store: MemoryStore, tmp_path: Path) -> Lifecycle:
    """The lifecycle of the default settings (the schema holds the defaults)."""
    return Lifecycle(store, lifecycle_policy(Settings(tmp_path / "settings.json", {})))


@pytest.mark.parametrize(
    ("event", "counter", "boost", "touches"),
    [
        (UsageEvent.USED, "use_count", 0.02, True),
        (UsageEvent.CITED, "citation_count", 0.02, True),
        (UsageEvent.RETRIEVED, "retrieval_count", 0.0, True),
        (UsageEvent.IGNORED, "ignore_count", 0.0, False),
    ],
)
def test_record_usage(
    store: MemoryStore,
    lifecycle: Lifecycle,
    event: UsageEvent,
    counter: str,
    boost: float,
    touches: bool,
) -> None:
    a = store.add(make_memory("a", confidence=0.5))
    b = store.add(make_memory("b", confidence=0.5))
    untouched = store.add(make_memory("c", confidence=0.5))
    lifecycle.record([a.id, b.id], event, session_id="s-1")
    lifecycle.record([a.id], event)
    after_a, after_b = store.get(a.id), store.get(b.id)
    assert getattr(after_a, counter) == 2 and getattr(after_b, counter) == 1
    assert after_a.confidence == pytest.approx(0.5 + 2 * boost)
    assert after_b.confidence == pytest.approx(0.5 + boost)
    assert (after_a.last_accessed is not None) is touches
    others = {"use_count", "citation_count", "retrieval_count", "ignore_count"} - {counter}
    assert all(getattr(after_a, name) == 0 for name in others)
    assert store.get(untouched.id) == untouched
    events = [(r.memory_id, r.event, r.session_id) for r in UsageEventRow.select()]
    assert sorted(events, key=str) == sorted(
        [(a.id, event.value, "s-1"), (b.id, event.value, "s-1"), (a.id, event.value, None)], key=str
    )


def test_confidence_is_capped(store: MemoryStore, lifecycle: Lifecycle) -> None:
    near = store.add(make_memory("near the cap", confidence=0.94))
    above = store.add(make_memory("set high by hand", confidence=0.99))
    for _ in range(3):
        lifecycle.record([near.id, above.id], UsageEvent.USED)
    assert store.get(near.id).confidence == pytest.approx(0.95)
    assert store.get(above.id).confidence == pytest.approx(0.99)  # use never lowers it
    assert store.get(above.id).use_count == 3


def test_recording_nothing_is_a_no_op(store: MemoryStore, lifecycle: Lifecycle) -> None:
    lifecycle.record([], UsageEvent.USED)
    assert UsageEventRow.select().count() == 0


def test_decay(store: MemoryStore, lifecycle: Lifecycle) -> None:
    memories = {
        "never-used": make_memory("a", confidence=0.5),
        "used-long-ago": make_memory("b", confidence=0.5, last_accessed=ago(30)),
        "used-recently": make_memory("c", confidence=0.5, last_accessed=ago(2)),
        "at-floor": make_memory("d", confidence=0.1),
        "near-floor": make_memory("e", confidence=0.11),
        "archived": make_memory("f", confidence=0.5, tier="archived"),
    }
    ids = {name: store.add(m).id for name, m in memories.items()}

    def confidences() -> dict[str, float]:
        return {name: store.get(i).confidence for name, i in ids.items()}

    assert lifecycle.decay(NOW) == 3
    assert confidences() == pytest.approx(
        {
            "never-used": 0.48,
            "used-long-ago": 0.48,
            "used-recently": 0.5,
            "at-floor": 0.1,
            "near-floor": 0.1,
            "archived": 0.5,
        }
    )
    assert store.meta_get(LAST_DECAY_KEY) == NOW.isoformat()

    # at most once per interval
    assert lifecycle.decay(NOW + timedelta(days=3)) is None
    assert lifecycle.decay(NOW + timedelta(days=6, hours=23)) is None
    assert confidences()["never-used"] == pytest.approx(0.48)

    assert lifecycle.decay(NOW + timedelta(days=7)) == 3  # used-recently is stale by now
    assert confidences() == pytest.approx(
        {
            "never-used": 0.46,
            "used-long-ago": 0.46,
            "used-recently": 0.48,
            "at-floor": 0.1,
            "near-floor": 0.1,
            "archived": 0.5,
        }
    )
    assert lifecycle.decay(NOW + timedelta(days=8), force=True) == 3


def test_decay_never_goes_below_the_floor(store: MemoryStore, lifecycle: Lifecycle) -> None:
    memory = store.add(make_memory("x", confidence=0.2))
    for week in range(10):
        lifecycle.decay(NOW + timedelta(weeks=week))
    assert store.get(memory.id).confidence == pytest.approx(0.1)


def test_cleanup_archives_but_never_deletes(store: MemoryStore, lifecycle: Lifecycle) -> None:
    old = NOW - timedelta(days=40)
    cases = {
        "archive-me": make_memory("a", confidence=0.12, created_at=old.isoformat()),
        "too-young": make_memory("b", confidence=0.12, created_at=ago(10)),
        "was-used": make_memory("c", confidence=0.12, created_at=old.isoformat(), use_count=1),
        "was-cited": make_memory(
            "d", confidence=0.12, created_at=old.isoformat(), citation_count=1
        ),
        "confident": make_memory("e", confidence=0.5, created_at=old.isoformat()),
        "only-retrieved": make_memory(
            "f", confidence=0.05, created_at=old.isoformat(), retrieval_count=9
        ),
    }
    ids = {name: store.add(m).id for name, m in cases.items()}
    report = lifecycle.cleanup(NOW)
    assert report.decay_ran and report.decayed == len(cases) - 1  # 0.05 is under the floor
    assert report.archived == 2
    tiers = {name: store.get(i).tier for name, i in ids.items()}
    assert tiers == {
        "archive-me": Tier.ARCHIVED,
        "too-young": Tier.WARM,
        "was-used": Tier.WARM,
        "was-cited": Tier.WARM,
        "confident": Tier.WARM,
        "only-retrieved": Tier.ARCHIVED,
    }
    assert store.count() == len(cases)  # nothing deleted
    visible = {m.id for m in store.query(MemoryFilter())}
    assert ids["archive-me"] not in visible
    assert ids["archive-me"] in {m.id for m in store.query(MemoryFilter.everything())}

    again = lifecycle.cleanup(NOW + timedelta(days=1))
    assert not again.decay_ran and again.decayed == 0 and again.archived == 0


def test_cleanup_archives_after_decay_brings_confidence_low(
    store: MemoryStore, lifecycle: Lifecycle
) -> None:
    memory = store.add(
        make_memory("fading", confidence=0.16, created_at=(NOW - timedelta(days=60)).isoformat())
    )
    first = lifecycle.cleanup(NOW)  # 0.16 -> 0.14, then archived
    assert first.decayed == 1 and first.archived == 1
    assert store.get(memory.id).tier is Tier.ARCHIVED
    assert store.get(memory.id).confidence == pytest.approx(0.14)
