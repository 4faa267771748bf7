"""Usage and lifecycle: record retrieved / cited / ignored / used, raise confidence on
use, decay unused memories weekly, archive (never delete) the ones nobody needs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from services.storage.memories import MemoryStore
from services.types import UsageEvent

LAST_DECAY_KEY = "lifecycle.last_decay"


@dataclass(frozen=True)
class LifecyclePolicy:
    """The `lifecycle.*` settings (their defaults are in the settings schema)."""

    use_boost: float
    confidence_max: float
    decay_step: float
    decay_floor: float
    decay_interval_days: int
    archive_below: float
    archive_min_age_days: int


@dataclass(frozen=True)
class CleanupReport:
    decayed: int
    archived: int
    decay_ran: bool


class Lifecycle:
    def __init__(self, store: MemoryStore, policy: LifecyclePolicy) -> None:
        self.store = store
        self.policy = policy

    def record(
        self, memory_ids: Sequence[str], event: UsageEvent, session_id: str | None = None
    ) -> None:
        boost = self.policy.use_boost if event in (UsageEvent.USED, UsageEvent.CITED) else 0.0
        self.store.record_usage(memory_ids, event, session_id, boost, self.policy.confidence_max)

    def decay(self, now: datetime | None = None, force: bool = False) -> int | None:
        """Lower unused memories once per interval; None when it is not due yet."""
        now = now or datetime.now(UTC)
        last = self.store.meta_get(LAST_DECAY_KEY)
        interval = timedelta(days=self.policy.decay_interval_days)
        if not force and last and now - datetime.fromisoformat(last) < interval:
            return None
        since = (now - interval).isoformat()
        changed = self.store.decay_unused(since, self.policy.decay_step, self.policy.decay_floor)
        self.store.meta_set(LAST_DECAY_KEY, now.isoformat())
        return changed

    def archive_unneeded(self, now: datetime | None = None) -> int:
        now = now or datetime.now(UTC)
        cutoff = (now - timedelta(days=self.policy.archive_min_age_days)).timestamp()
        return self.store.archive_unused(self.policy.archive_below, cutoff)

    def cleanup(self, now: datetime | None = None, force_decay: bool = False) -> CleanupReport:
        decayed = self.decay(now, force=force_decay)
        archived = self.archive_unneeded(now)
        return CleanupReport(decayed or 0, archived, decayed is not None)
