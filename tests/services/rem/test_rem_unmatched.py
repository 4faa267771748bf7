"""The "unmatched" staleness rule: a memory used before but idle, none of whose trigger
words came up in the recent searches that could have found it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from services.filters import MemoryFilter
from services.rem.cycle import RemContext, run_operations
from services.rem.ops.retention import (
    ARCHIVE_OPTIONS,
    MIN_RECENT_SEARCHES,
    staleness_findings,
)
from services.storage.memories import MemoryStore
from services.storage.query_terms import hash_term, query_terms, term_salt
from services.types import PINNED_TAG, Tier
from tests.services.builders import make_memory

NOW = datetime(2026, 10, 31, 23, 59, tzinfo=UTC)
UNRELATED = ["deploy to staging", "blue-green router switch", "smoke tests flaky", "WAL mode"]


def days_ago(days: float, now: datetime = NOW) -> str:
    return (now - timedelta(days=days)).isoformat()


def use(store: MemoryStore, memory_id: str, days: float, now: datetime = NOW) -> None:
    store.database.execute_sql(
        "INSERT INTO usage_event (memory_id, event, session_id, at) VALUES (?, 'retrieved', "
        "NULL, ?)",
        [memory_id, days_ago(days, now)],
    )


def searched(store: MemoryStore, project: str, queries: list[str], days: float = 3) -> None:
    """Record searches as `SearchMetricsLog` does, on a day `days` before NOW."""
    day = (NOW - timedelta(days=days)).date().isoformat()
    salt = term_salt()
    rows = [("*", len(queries))]
    counts: dict[str, int] = {}
    for query in queries:
        for term in query_terms(query):
            counts[term] = counts.get(term, 0) + 1
    rows.extend((hash_term(salt, term), n) for term, n in counts.items())
    for term, count in rows:
        store.database.execute_sql(
            "INSERT INTO query_term (day, project, term, count) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (day, project, term) DO UPDATE SET count = count + excluded.count",
            [day, project, term, count],
        )


def unrelated(count: int) -> list[str]:
    return [UNRELATED[i % len(UNRELATED)] for i in range(count)]


def idle_memory(store: MemoryStore, memory_id: str = "celery", **fields: Any) -> None:
    fields.setdefault("project", "shop")
    fields.setdefault("created_at", days_ago(120))
    fields.setdefault("title", "Celery retries failed refunds")
    store.add(make_memory("Wrap `issue_refund` in a task; it is retried.", id=memory_id, **fields))
    use(store, memory_id, 40)


def kinds(store: MemoryStore, now: datetime = NOW) -> dict[str, str]:
    return {f.memory_ids[0]: f.kind for f in staleness_findings(store, now)}


def test_fires_when_recent_searches_never_touch_its_words(store: MemoryStore) -> None:
    idle_memory(store)
    searched(store, "shop", unrelated(25))
    (finding,) = staleness_findings(store, NOW)
    assert finding.kind == "unmatched" and finding.memory_ids == ["celery"]
    assert finding.recommended == "skip" and finding.options == ARCHIVE_OPTIONS
    assert "none of its words (celery, retries, failed, refunds" in finding.summary
    assert "the last 25 searches of project shop" in finding.summary
    assert finding.detail["searches"] == 25 and finding.detail["idle_days"] == 40
    assert {"celery", "retries", "refunds", "issue_refund"} <= set(finding.detail["trigger_words"])


@pytest.mark.parametrize(
    "query",
    ["why does celery", "Retrying a task", "REFUND", "issue_refund()", "issueRefund", "failing"],
)
def test_one_search_touching_its_words_is_enough(store: MemoryStore, query: str) -> None:
    idle_memory(store)
    searched(store, "shop", [*unrelated(30), query], days=20)
    assert kinds(store) == {}


def test_not_below_the_minimum_of_searches(store: MemoryStore) -> None:
    idle_memory(store)
    searched(store, "shop", unrelated(MIN_RECENT_SEARCHES - 1))
    assert kinds(store) == {}
    searched(store, "shop", unrelated(1))
    assert kinds(store) == {"celery": "unmatched"}


def test_searches_of_all_projects_count_and_match_other_projects_do_not(
    store: MemoryStore,
) -> None:
    idle_memory(store)
    searched(store, "ops", unrelated(40))  # could never find a shop memory
    assert kinds(store) == {}
    searched(store, "shop", unrelated(10))
    searched(store, "", unrelated(10))
    (finding,) = staleness_findings(store, NOW)
    assert "the last 20 searches of project shop or of all projects" in finding.summary
    assert finding.detail["searches_in_project"] == finding.detail["searches_all_projects"] == 10
    searched(store, "", ["celery beat"])
    assert kinds(store) == {}
    # A memory without a project: only the 21 searches of all projects reach it.
    store.add(make_memory("x", id="loose", title="Kombu chords", created_at=days_ago(120)))
    use(store, "loose", 40)
    searched(store, "ops", ["kombu chords"])
    searched(store, "shop", ["kombu chords"])
    searched(store, "", unrelated(10))
    (finding,) = staleness_findings(store, NOW)
    assert finding.memory_ids == ["loose"]
    assert "the last 21 searches of all projects" in finding.summary


def test_only_searches_of_the_last_30_days_up_to_now_count(store: MemoryStore) -> None:
    idle_memory(store)
    searched(store, "shop", unrelated(25))
    searched(store, "shop", ["celery"], days=45)  # too old to say anything
    searched(store, "shop", ["celery"], days=-3)  # after the cycle's "now" (a replay)
    assert kinds(store) == {"celery": "unmatched"}


def test_never_used_memories_are_stale_instead_and_others_are_left_alone(
    store: MemoryStore,
) -> None:
    searched(store, "shop", unrelated(25))
    store.add(make_memory("a", id="never", project="shop", created_at=days_ago(45)))
    idle_memory(store, "recent")
    use(store, "recent", 5)  # used within 30 days: protected
    idle_memory(store, "idle")
    store.database.execute_sql("DELETE FROM usage_event WHERE memory_id = 'idle'")
    use(store, "idle", 100)  # 90+ days: idle, archived by --auto
    idle_memory(store, "pinned", tags=[PINNED_TAG])
    idle_memory(store, "archived", tier="archived")
    idle_memory(store, "young", created_at=days_ago(20))
    # Counters but no logged use (its own title: the words the others share are not
    # distinctive).
    idle_memory(store, "counted", retrieval_count=3, title="Flower watches the worker pool")
    store.database.execute_sql("DELETE FROM usage_event WHERE memory_id = 'counted'")
    idle_memory(store, "accessed", retrieval_count=3, last_accessed=days_ago(2))
    store.database.execute_sql("DELETE FROM usage_event WHERE memory_id = 'accessed'")
    assert kinds(store) == {"never": "stale", "idle": "idle", "counted": "unmatched"}


def test_a_real_store_records_searches_and_auto_never_archives(engram: Any) -> None:
    service = engram.service
    now = datetime.now(UTC)
    service.store.add(
        make_memory(
            "Wrap `issue_refund` in a task.",
            id="celery",
            project="shop",
            title="Celery retries failed refunds",
            created_at=days_ago(120, now),
        )
    )
    service.store.database.execute_sql(  # stored when it was written, not today
        "UPDATE memory SET updated_at = ? WHERE id = 'celery'", [days_ago(120, now)]
    )
    use(service.store, "celery", 40, now)
    for query in unrelated(MIN_RECENT_SEARCHES):
        service.search(query, MemoryFilter(project="shop"))
    engram.metrics.flush()
    context = RemContext(service, engram.vectors, engram.embedder.model_id, now=now)
    (report,) = run_operations(context, ["staleness"], auto=True)
    assert [f.kind for f in report.findings] == ["unmatched"] and report.applied == 0
    assert service.store.get("celery").tier is not Tier.ARCHIVED
    service.search("celery", MemoryFilter(project="shop"))
    engram.metrics.flush()
    assert kinds(service.store, now) == {}


def test_words_most_memories_share_do_not_count_as_a_match(store: MemoryStore) -> None:
    """A word in more than 5 % of a project's memories ("api") comes up in almost any
    search; matching it says nothing about this memory."""
    for n in range(40):
        store.add(make_memory(f"note {n}", id=f"api{n}", project="shop", title=f"API note {n}"))
    idle_memory(store, title="API refunds through Celery")
    searched(store, "shop", ["api errors"] * 25)
    (finding,) = [f for f in staleness_findings(store, NOW) if f.kind == "unmatched"]
    assert finding.memory_ids == ["celery"]
    assert "api" not in finding.detail["trigger_words"]
    searched(store, "shop", ["celery api"])
    assert "celery" not in kinds(store)
