"""Retention, tiers, staleness and forgetting.

Retention is a memory's chance of being needed: it halves every `half_life_days`
(default 30) since its last use, or else since Engram got it (added, imported or edited;
a note dated later than that counts from its date), and each retrieval, citation or use adds
an activation boost (0.1). Tiers follow it — hot ≥ 0.6, warm ≥ 0.3, cold below — and are
applied automatically (they decide which searches see a memory). Pinned memories (the
`pinned` tag) stay hot; archived ones stay archived.

Staleness and forgetting only propose findings:
- stale: held for at least 30 days and never retrieved or cited (ignoring does not count);
  also retrieved often (≥ 5) but not changed for 6 months (worth refreshing);
- forget: superseded, or unused in 90 days held — archive it (never delete). A memory cited
  in the last 14 days, or used recently, is never proposed.
- unmatched: used before but not in the last 30 days, at least 30 days old, and none of
  its trigger words (title words, tags, code names that at most 5 % of its project's
  memories share; see `services.storage.query_terms`) came up
  in the searches that could have found it in the last 30 days — those of its project
  and those of all projects, at least 20 of them. Searches are known only as salted
  hashes of their words, counted per day and project by `services.storage.metrics`. A weak
  signal: proposed for review with "skip" recommended, so `--auto` never archives it.
One finding per memory: superseded, unused, stale, idle and refresh come first.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from services.memory import Memory, parse_time
from services.rem.results import TierMoves
from services.storage.findings import Finding, Option
from services.storage.memories import MemoryStore
from services.storage.metrics import SEARCHES_TERM
from services.storage.query_terms import (
    hash_term,
    stored_term_salt,
    term_counts,
    terms_by_project,
    trigger_word_forms,
)
from services.storage.usage import usage_events
from services.types import PINNED_TAG, Tier

MIN_RECENT_SEARCHES = 20  # fewer recorded searches say nothing about a memory's words
RECENT_SEARCH_DAYS = 30
SHOWN_WORDS = 8
DISTINCTIVE_SHARE = 0.05  # trigger words in at most 5 % of a project's memories…
DISTINCTIVE_MIN_MEMORIES = 3  # …or in 3, in a small project


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
    rows = usage_events(store, excluding=["ignored"])
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
    memory: Memory,
    usage: UsageSummary | None,
    now: datetime,
    policy: RetentionPolicy,
    written: str | None = None,
) -> float:
    """The memory's retention `now`, counted from its last use, or else from when Engram
    got it (`written`, its row's last write), or else from when it was written down."""
    anchor = known_since(memory, written, now)
    if usage is not None and usage.last_use is not None and usage.last_use > anchor:
        anchor = usage.last_use
    days = max(0.0, (now - anchor).total_seconds() / 86400)
    uses = usage.uses if usage is not None else 0
    uses = max(uses, memory.retrieval_count + memory.citation_count + memory.use_count)
    value = 0.5 ** (days / policy.half_life_days) + policy.activation_boost * uses
    return float(min(1.0, value))


def known_since(memory: Memory, written: str | None, now: datetime) -> datetime:
    """When Engram got the memory: its row's last write, or its `created_at` when that is
    later (a note dated ahead). An import of two-year-old notes is new to Engram: dating
    its retention from the notes' own dates sent most of them cold at the first cycle,
    out of every standard search, and proposed all of them as never used. A write after
    `now` (a cycle run as of an earlier day) says nothing about `now`."""
    created = parse_time(memory.created_at)
    if written is None:
        return created
    stored = parse_time(written)
    return created if stored > now else max(created, stored)


def tier_for(value: float, policy: RetentionPolicy) -> Tier:
    if value >= policy.hot:
        return Tier.HOT
    if value >= policy.warm:
        return Tier.WARM
    return Tier.COLD


def apply_tiers(
    store: MemoryStore,
    now: datetime | None = None,
    policy: RetentionPolicy = RetentionPolicy(),
    project: str | None = None,
) -> TierMoves:
    """Recompute every current memory's tier (of `project`, when given); returns how
    many moved to each tier."""
    now = now or datetime.now(UTC)
    usage = usage_by_memory(store, now)
    written = store.written_times()
    moves: dict[str, list[str]] = defaultdict(list)
    for memory in store.iter_all(project=project):
        if memory.tier is Tier.ARCHIVED:
            continue
        if PINNED_TAG in memory.tags:
            target = Tier.HOT
        else:
            value = retention(memory, usage.get(memory.id), now, policy, written.get(memory.id))
            target = tier_for(value, policy)
        if target is not memory.tier:
            moves[target.value].append(memory.id)
    store.set_tiers(moves)
    return TierMoves({tier: len(ids) for tier, ids in moves.items()})


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
    store: MemoryStore,
    now: datetime | None = None,
    policy: RetentionPolicy = RetentionPolicy(),
    project: str | None = None,
) -> list[Finding]:
    now = now or datetime.now(UTC)
    usage = usage_by_memory(store, now)
    written = store.written_times()
    findings: list[Finding] = []
    searches: RecentSearches | None = None
    for memory in store.iter_all(project=project):
        if memory.tier is Tier.ARCHIVED or parse_time(memory.created_at) > now:
            continue
        summary = usage.get(memory.id)
        if protected(summary, now, policy) or PINNED_TAG in memory.tags:
            continue
        age = (now - parse_time(memory.created_at)).days
        known = (now - known_since(memory, written.get(memory.id), now)).days  # days held
        used = summary is not None and summary.last_use is not None
        if memory.superseded:
            findings.append(_forget(memory, f"superseded by {memory.superseded_by}", "superseded"))
        elif not used and memory.retrieval_count + memory.citation_count == 0:
            reason = f"never retrieved or cited in {known} days; {age} days old"
            if known >= policy.forget_after_days:
                findings.append(_forget(memory, reason, "unused"))
            elif known >= policy.stale_after_days:  # flagged for review, not yet archived
                findings.append(_forget(memory, reason, "stale", recommended="skip"))
        else:
            idle_days = None
            if summary is not None and summary.last_use is not None:
                idle_days = (now - summary.last_use).days
            if idle_days is not None and idle_days >= policy.forget_after_days:
                findings.append(_forget(memory, f"not used for {idle_days} days", "idle"))
            elif (
                summary is not None
                and summary.uses >= policy.refresh_min_retrievals
                and age >= policy.refresh_after_days
            ):
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
            elif known >= policy.stale_after_days and not _accessed_recently(memory, now, policy):
                if searches is None:
                    searches = RecentSearches.load(store, now)
                finding = _unmatched(memory, searches, idle_days)
                if finding is not None:
                    findings.append(finding)
    return findings


def _accessed_recently(memory: Memory, now: datetime, policy: RetentionPolicy) -> bool:
    """The memory's own record of its last access (counters without logged events)."""
    if memory.last_accessed is None:
        return False
    return now - parse_time(memory.last_accessed) < timedelta(days=policy.stale_after_days)


@dataclass
class RecentSearches:
    """The searches of the last `RECENT_SEARCH_DAYS` up to `now`, per project ('' for
    searches of all projects): how many, and the hashes of their words."""

    salt: str | None
    counts: dict[str, int]
    terms: dict[str, set[str]]
    frequencies: dict[str, Counter[str]] = field(default_factory=dict)  # memories per word
    project_sizes: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, store: MemoryStore, now: datetime) -> RecentSearches:
        first = (now - timedelta(days=RECENT_SEARCH_DAYS)).date().isoformat()
        last = now.date().isoformat()
        salt = stored_term_salt()
        counts = term_counts(store, first, last, SEARCHES_TERM)
        terms: dict[str, set[str]] = {}
        if salt is not None and any(n >= MIN_RECENT_SEARCHES for n in cls._totals(counts)):
            terms = terms_by_project(store, first, last, excluding=SEARCHES_TERM)
        searches = cls(salt, counts, terms)
        if terms:
            searches.count_words(store)
        return searches

    def count_words(self, store: MemoryStore) -> None:
        """In how many current memories of each project each trigger word occurs."""
        self.frequencies = defaultdict(Counter)
        self.project_sizes = defaultdict(int)
        for memory in store.iter_all():
            if memory.tier is Tier.ARCHIVED or memory.superseded:
                continue
            project = memory.project or ""
            self.frequencies[project].update(trigger_word_forms(memory).keys())
            self.project_sizes[project] += 1

    @staticmethod
    def _totals(counts: dict[str, int]) -> list[int]:
        unscoped = counts.get("", 0)
        return [unscoped] + [n + unscoped for p, n in counts.items() if p]

    def reaching(self, project: str | None) -> tuple[int, int]:
        """Searches that could have found a memory of `project`: (of the project, of all
        projects)."""
        unscoped = self.counts.get("", 0)
        return (self.counts.get(project, 0) if project else 0), unscoped

    def distinctive(self, memory: Memory) -> dict[str, str]:
        """The memory's trigger words that few memories of its project share (a word in
        more than 5 % of them, like "api" or "test", comes up in almost any search and
        would keep every memory matched)."""
        forms = trigger_word_forms(memory)
        frequency = self.frequencies.get(memory.project or "")
        if frequency is None:
            return forms
        size = self.project_sizes.get(memory.project or "", 0)
        most = max(DISTINCTIVE_MIN_MEMORIES, DISTINCTIVE_SHARE * size)
        return {term: word for term, word in forms.items() if frequency[term] <= most}

    def matches(self, project: str | None, hashes: set[str]) -> bool:
        if hashes & self.terms.get("", set()):
            return True
        return bool(project) and bool(hashes & self.terms.get(project or "", set()))


def _unmatched(memory: Memory, searches: RecentSearches, idle_days: int | None) -> Finding | None:
    """Used before, but none of its words came up in enough recent searches."""
    in_project, unscoped = searches.reaching(memory.project)
    total = in_project + unscoped
    if searches.salt is None or total < MIN_RECENT_SEARCHES:
        return None
    forms = searches.distinctive(memory)
    if not forms:
        return None  # nothing distinctive to match: says nothing about the memory
    hashes = {hash_term(searches.salt, term) for term in forms}
    if searches.matches(memory.project, hashes):
        return None
    words = list(dict.fromkeys(forms.values()))
    shown = ", ".join(words[:SHOWN_WORDS]) + (", …" if len(words) > SHOWN_WORDS else "")
    if not memory.project:
        where = "all projects"
    elif unscoped:
        where = f"project {memory.project} or of all projects"
    else:
        where = f"project {memory.project}"
    days = RECENT_SEARCH_DAYS
    reason = (
        f"none of its words ({shown}) came up in the last {total} searches of {where} "
        f"({days} days); it may no longer be needed"
    )
    return Finding(
        op="staleness",
        kind="unmatched",
        summary=f"{memory.id} ({memory.title}): {reason}",
        memory_ids=[memory.id],
        options=ARCHIVE_OPTIONS,
        recommended="skip",
        detail={
            "reason": reason,
            "trigger_words": words,
            "searches": total,
            "searches_in_project": in_project,
            "searches_all_projects": unscoped,
            "days": days,
            "idle_days": idle_days,
        },
    )


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
