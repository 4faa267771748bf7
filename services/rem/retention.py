"""Retention, tiers, staleness and forgetting.

Retention is a memory's chance of being needed: it halves every `half_life_days`
(default 30) since its last use (or creation), and each retrieval, citation or use adds
an activation boost (0.1). Tiers follow it — hot ≥ 0.6, warm ≥ 0.3, cold below — and are
applied automatically (they decide which searches see a memory). Pinned memories (the
`pinned` tag) stay hot; archived ones stay archived.

Staleness and forgetting only propose findings:
- stale: at least 30 days old and never retrieved or cited (ignoring does not count);
  also retrieved often (≥ 5) but not changed for 6 months (worth refreshing);
- forget: superseded, or unused for 90 days — archive it (never delete). A memory cited
  in the last 14 days, or used recently, is never proposed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from services.memory import Memory, parse_time
from services.rem.findings import Finding, Option
from services.store import MemoryStore
from services.types import Tier

PINNED_TAG = "pinned"


@dataclass(frozen=True)
class RetentionPolicy:
    half_life_days: float = 30.0
    activation_boost: float = 0.1
    hot: float = 0.6
    warm: float = 0.3
    stale_after_days: int = 30
    refresh_after_days: int = 180
    refresh_min_retrievals: int = 5
    forget_after_days: int = 90
    keep_if_cited_within_days: int = 14


@dataclass(frozen=True)
class UsageSummary:
    last_use: datetime | None  # retrieved, cited or used
    last_cited: datetime | None
    uses: int  # retrieved + cited + used events


def usage_by_memory(store: MemoryStore, until: datetime) -> dict[str, UsageSummary]:
    """What the usage log says about each memory, up to `until` (ignores don't count)."""
    rows = store.database.execute_sql(
        "SELECT memory_id, event, at FROM usage_event WHERE event != 'ignored'"
    ).fetchall()
    last: dict[str, datetime] = {}
    cited: dict[str, datetime] = {}
    count: dict[str, int] = defaultdict(int)
    for memory_id, event, at in rows:
        when = parse_time(at)
        if when > until:
            continue
        count[memory_id] += 1
        if memory_id not in last or when > last[memory_id]:
            last[memory_id] = when
        if event == "cited" and (memory_id not in cited or when > cited[memory_id]):
            cited[memory_id] = when
    return {m: UsageSummary(last.get(m), cited.get(m), count[m]) for m in set(last) | set(count)}


def retention(
    memory: Memory, usage: UsageSummary | None, now: datetime, policy: RetentionPolicy
) -> float:
    anchor = parse_time(memory.created_at)
    if usage is not None and usage.last_use is not None and usage.last_use > anchor:
        anchor = usage.last_use
    days = max(0.0, (now - anchor).total_seconds() / 86400)
    uses = usage.uses if usage is not None else 0
    uses = max(uses, memory.retrieval_count + memory.citation_count + memory.use_count)
    value = 0.5 ** (days / policy.half_life_days) + policy.activation_boost * uses
    return float(min(1.0, value))


def tier_for(value: float, policy: RetentionPolicy) -> Tier:
    if value >= policy.hot:
        return Tier.HOT
    if value >= policy.warm:
        return Tier.WARM
    return Tier.COLD


def apply_tiers(
    store: MemoryStore, now: datetime | None = None, policy: RetentionPolicy = RetentionPolicy()
) -> dict[str, int]:
    """Recompute every current memory's tier; returns how many moved to each tier."""
    now = now or datetime.now(UTC)
    usage = usage_by_memory(store, now)
    moves: dict[str, list[str]] = defaultdict(list)
    for memory in store.iter_all():
        if memory.tier is Tier.ARCHIVED:
            continue
        if PINNED_TAG in memory.tags:
            target = Tier.HOT
        else:
            target = tier_for(retention(memory, usage.get(memory.id), now, policy), policy)
        if target is not memory.tier:
            moves[target.value].append(memory.id)
    with store.writing():
        for tier, ids in moves.items():
            for start in range(0, len(ids), 500):
                batch = ids[start : start + 500]
                marks = ", ".join("?" for _ in batch)
                store.database.execute_sql(
                    f"UPDATE memory SET tier = ? WHERE id IN ({marks})", [tier, *batch]
                )
    return {tier: len(ids) for tier, ids in moves.items()}


ARCHIVE_OPTIONS = [
    Option(
        "archive", "Archive", "move it to the archived tier (searchable with --mode exhaustive)"
    ),
    Option("keep", "Keep", "it is still right; do not propose it again"),
    Option("skip", "Skip", "decide later"),
]
REFRESH_OPTIONS = [
    Option("keep", "Still right", "nothing to change; do not propose it again"),
    Option("archive", "Archive", "it is out of date; archive it"),
    Option("skip", "Skip", "decide later"),
]


def protected(usage: UsageSummary | None, now: datetime, policy: RetentionPolicy) -> bool:
    """Cited within the keep window, or used recently: never proposed for forgetting."""
    if usage is None:
        return False
    keep = timedelta(days=policy.keep_if_cited_within_days)
    if usage.last_cited is not None and now - usage.last_cited <= keep:
        return True
    recent = timedelta(days=policy.stale_after_days)
    return usage.last_use is not None and now - usage.last_use <= recent


def staleness_findings(
    store: MemoryStore, now: datetime | None = None, policy: RetentionPolicy = RetentionPolicy()
) -> list[Finding]:
    now = now or datetime.now(UTC)
    usage = usage_by_memory(store, now)
    findings: list[Finding] = []
    for memory in store.iter_all():
        if memory.tier is Tier.ARCHIVED or parse_time(memory.created_at) > now:
            continue
        summary = usage.get(memory.id)
        if protected(summary, now, policy) or PINNED_TAG in memory.tags:
            continue
        age = (now - parse_time(memory.created_at)).days
        used = summary is not None and summary.last_use is not None
        if memory.superseded:
            findings.append(_forget(memory, f"superseded by {memory.superseded_by}", "superseded"))
        elif not used and memory.retrieval_count + memory.citation_count == 0:
            reason = f"never retrieved or cited; {age} days old"
            if age >= policy.forget_after_days:
                findings.append(_forget(memory, reason, "unused"))
            elif age >= policy.stale_after_days:  # flagged for review, not yet archived
                findings.append(_forget(memory, reason, "stale", recommended="skip"))
        elif summary is not None and summary.last_use is not None:
            idle_days = (now - summary.last_use).days
            if idle_days >= policy.forget_after_days:
                findings.append(_forget(memory, f"not used for {idle_days} days", "idle"))
            elif summary.uses >= policy.refresh_min_retrievals and age >= policy.refresh_after_days:
                findings.append(
                    Finding(
                        op="staleness",
                        kind="refresh",
                        summary=f"{memory.id} ({memory.title}) is used often but is "
                        f"{age} days old: still right?",
                        memory_ids=[memory.id],
                        options=REFRESH_OPTIONS,
                        recommended="keep",
                        detail={"age_days": age, "uses": summary.uses},
                    )
                )
    return findings


def _forget(memory: Memory, reason: str, kind: str, recommended: str = "archive") -> Finding:
    return Finding(
        op="staleness",
        kind=kind,
        summary=f"{memory.id} ({memory.title}): {reason}",
        memory_ids=[memory.id],
        options=ARCHIVE_OPTIONS,
        recommended=recommended,
        detail={"reason": reason},
    )
