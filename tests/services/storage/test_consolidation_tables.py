"""The owners of the consolidation tables: links (added once, the related ones replaced,
those of a deleted memory removed), communities (replaced per project), runs (the latest
of each operation, the last completed one) and bulk tier moves."""

from __future__ import annotations

from dataclasses import replace

from services.storage import links
from services.storage.communities import (
    CommunityRow,
    project_communities,
    replace_communities,
    stored_communities,
)
from services.storage.memories import MemoryStore
from services.storage.rem_runs import RemRun, last_done, latest_runs, record_run
from services.storage.usage import activity_times, usage_events
from services.types import Tier, UsageEvent
from tests.services.builders import make_memory

AT = "2026-05-01T10:00:00+00:00"


def test_links_are_added_once_and_removed_by_kind_or_memory(store: MemoryStore) -> None:
    links.add_links(store, [("a", "b", "related", AT), ("a", "c", "related", AT)])
    links.add_links(store, [("a", "b", "related", AT), ("b", "c", "supersedes", AT)])
    links.add_link(store, "c", "a", "consolidates")
    links.add_link(store, "c", "a", "consolidates")
    assert links.all_links(store) == [
        ("a", "b", "related"),
        ("a", "c", "related"),
        ("b", "c", "supersedes"),
        ("c", "a", "consolidates"),
    ]
    assert links.related_pairs(store) == {("a", "b"), ("a", "c")}
    links.remove_related(store, [("a", "b"), ("b", "c")])  # b → c is not a related link
    assert links.related_pairs(store) == {("a", "c")}
    links.remove_links_of(store, "a")
    assert links.all_links(store) == [("b", "c", "supersedes")]


def test_memories_linked_to_lessons(store: MemoryStore) -> None:
    store.add(make_memory("A lesson.", id="lesson", type="lesson"))
    for memory_id in ("decision", "fix", "other"):
        store.add(make_memory(f"The {memory_id}.", id=memory_id))
    links.add_link(store, "lesson", "decision", "related")
    links.add_link(store, "fix", "lesson", "consolidates")
    links.add_link(store, "other", "decision", "related")
    assert links.linked_to_lessons(store) == {"decision", "fix"}


def test_communities_are_replaced_per_project(store: MemoryStore) -> None:
    first = CommunityRow("c-1", "p", ["a", "b", "c"], "`x`", "About x.", AT, AT)
    other = CommunityRow("c-2", None, ["d", "e", "f", "g"], "`y`", "About y.", AT, AT)
    replace_communities(store, "p", [first])
    replace_communities(store, None, [other])
    assert project_communities(store, "p") == [first]
    assert project_communities(store, None) == [other]
    assert [c["id"] for c in stored_communities(store)] == ["c-2", "c-1"]  # largest first
    assert stored_communities(store, "p")[0] == {
        "id": "c-1",
        "project": "p",
        "size": 3,
        "label": "`x`",
        "summary": "About x.",
        "members": ["a", "b", "c"],
    }
    replace_communities(store, "p", [])
    assert project_communities(store, "p") == [] and len(stored_communities(store)) == 1


def test_runs_the_latest_of_each_and_the_last_completed(store: MemoryStore) -> None:
    record_run(store, RemRun("links", "2026-05-01T10:00:00", 0.5, 0, "done", None, {"related": 2}))
    record_run(store, RemRun("links", "2026-05-02T10:00:00", 0.1, 0, "failed", "boom"))
    record_run(store, RemRun("facts", "2026-05-01T11:00:00", 1.0, 3, "cancelled"))
    latest = {run.op: run for run in latest_runs(store)}
    assert latest["links"].status == "failed" and latest["links"].result == {}
    assert latest["facts"].findings == 3
    assert last_done(store) == {"links": "2026-05-01T10:00:00"}


def test_tiers_move_in_bulk(store: MemoryStore) -> None:
    for n in range(3):
        store.add(make_memory(f"Memory {n}.", id=f"m{n}"))
    before = store.get("m0")
    store.set_tiers({"hot": ["m0", "m1"], "cold": ["m2"]})
    assert [store.get(f"m{n}").tier for n in range(3)] == [Tier.HOT, Tier.HOT, Tier.COLD]
    assert store.get("m0") == replace(before, tier=Tier.HOT)  # nothing else changes


def test_usage_reads_for_consolidation(store: MemoryStore) -> None:
    store.add(make_memory("Memory.", id="m", created_at=AT))
    store.record_usage(["m"], UsageEvent.RETRIEVED)
    store.record_usage(["m"], UsageEvent.IGNORED)
    store.record_usage(["m"], UsageEvent.CITED)

    def kinds(rows: list[tuple[str, str, str]]) -> list[str]:
        return sorted(event for _, event, _ in rows)

    assert kinds(usage_events(store)) == ["cited", "ignored", "retrieved"]
    assert kinds(usage_events(store, excluding=["ignored"])) == ["cited", "retrieved"]
    assert kinds(usage_events(store, only=["cited", "used"])) == ["cited"]
    times = activity_times(store)
    assert len(times) == 4 and AT in times  # the memory's creation and three events
