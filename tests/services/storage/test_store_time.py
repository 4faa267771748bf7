"""`memory_time` stays in step with the records: add, import (add_many), edit and delete
write or remove the resolved dates in the same transaction; the backfill fills older
databases once; a reindex re-resolves."""

from __future__ import annotations

from typing import Any

import pytest

import services.storage.memories as store_module
from services.storage.memories import MemoryStore
from services.storage.time_index import BACKFILL_META_KEY, backfill, load_times
from services.text.dates import RULES_VERSION
from tests.services.builders import make_memory

CREATED = "2026-06-10T00:20:00+05:30"  # local Wednesday 10 June (UTC still the 9th)


def rows(store: MemoryStore, memory_id: str | None = None) -> list[tuple[Any, ...]]:
    sql = "SELECT memory_id, start, phrase, resolved, resolved_end, granularity FROM memory_time"
    params: list[str] = []
    if memory_id is not None:
        sql += " WHERE memory_id = ?"
        params.append(memory_id)
    return [tuple(r) for r in store.database.connection().execute(sql + " ORDER BY 1, 2", params)]


def test_add_stores_the_resolved_dates(store: MemoryStore) -> None:
    memory = make_memory("Broke yesterday; the fix ships next week.", created_at=CREATED)
    store.add(memory)
    assert rows(store) == [
        (memory.id, 6, "yesterday", "2026-06-09", None, "day"),
        (memory.id, 31, "next week", "2026-06-15", "2026-06-21", "week"),
    ]
    loaded = load_times(store.database.connection(), [memory.id])[memory.id]
    assert [r.kind for r in loaded] == ["yesterday", "next week"]


def test_a_memory_without_phrases_has_no_rows(store: MemoryStore) -> None:
    store.add(make_memory("Money is integer cents.", created_at=CREATED))
    assert rows(store) == []


def test_add_many_stores_and_replaces(store: MemoryStore) -> None:
    first = make_memory("Deployed today.", id="a", created_at=CREATED)
    second = make_memory("Rolled back 3 days ago.", id="b", created_at=CREATED)
    store.add_many([first, second])
    assert [(r[0], r[3]) for r in rows(store)] == [("a", "2026-06-10"), ("b", "2026-06-07")]
    replacement = make_memory("Nothing dated here.", id="a", created_at=CREATED)
    store.add_many([replacement], replace=True)
    assert [r[0] for r in rows(store)] == ["b"]


def test_add_many_is_one_transaction_with_the_dates(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = [make_memory(f"Fixed yesterday, number {i}.", created_at=CREATED) for i in range(3)]
    real = store_module.chunk_content
    calls: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:  # after the second memory's dates were written
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)

    monkeypatch.setattr(store_module, "chunk_content", failing)
    with pytest.raises(RuntimeError):
        store.add_many(memories)
    assert store.count() == 0
    assert rows(store) == []


def test_edit_re_resolves_when_the_content_or_the_creation_time_changes(
    store: MemoryStore,
) -> None:
    memory = make_memory("Broke yesterday.", created_at=CREATED)
    store.add(memory)
    store.update(memory.id, {"content": "Broke the day before yesterday."})
    assert [(r[2], r[3]) for r in rows(store)] == [("the day before yesterday", "2026-06-08")]
    store.update(memory.id, {"created_at": "2026-03-01T09:00:00+00:00"})
    assert [(r[2], r[3]) for r in rows(store)] == [("the day before yesterday", "2026-02-27")]
    store.update(memory.id, {"tags": ["x"]})  # other fields: unchanged
    assert [(r[2], r[3]) for r in rows(store)] == [("the day before yesterday", "2026-02-27")]
    store.update(memory.id, {"content": "No dates any more."})
    assert rows(store) == []


def test_delete_removes_the_dates(store: MemoryStore) -> None:
    keep = make_memory("Shipped today.", created_at=CREATED)
    gone = make_memory("Shipped yesterday.", created_at=CREATED)
    store.add_many([keep, gone])
    store.delete(gone.id)
    assert [r[0] for r in rows(store)] == [keep.id]


def test_backfill_fills_older_databases_once(store: MemoryStore) -> None:
    dated = make_memory("Rotated the keys last Tuesday.", created_at=CREATED)
    store.add_many([dated, make_memory("Undated.", created_at=CREATED)])
    expected = rows(store)
    connection = store.database.connection()
    connection.execute("DELETE FROM memory_time")  # as written before the table existed
    assert backfill(store) == 1
    vague = (dated.id, 17, "last Tuesday", "2026-06-02", "2026-06-09", "vague")  # its week's
    assert rows(store) == expected == [vague]
    assert store.meta_get(BACKFILL_META_KEY) == RULES_VERSION
    connection.execute("DELETE FROM memory_time")
    assert backfill(store) == 0  # done once; writes keep it current since
    assert backfill(store, force=True) == 1
    assert backfill(store, force=True) == 0  # idempotent: rows already there
    assert rows(store) == expected


def test_new_date_rules_resolve_every_memory_again(store: MemoryStore) -> None:
    """A database resolved by older rules (which read "the end of last month" as the
    whole month) is resolved again once, by the current rules."""
    memory = make_memory("Cut the release at the end of last month.", created_at=CREATED)
    store.add(memory)
    expected = rows(store)
    assert expected[0][2:] == ("the end of last month", "2026-05-25", "2026-05-31", "vague")
    connection = store.database.connection()
    connection.execute("UPDATE memory_time SET phrase = 'last month', resolved = '2026-05-01'")
    store.meta_set(BACKFILL_META_KEY, "1")  # written by the first rules
    assert backfill(store) == 1
    assert rows(store) == expected
    assert backfill(store) == 0


def test_rebuild_re_resolves(store: MemoryStore) -> None:
    memory = make_memory("Merged tomorrow? No: merged today.", created_at=CREATED)
    store.add(memory)
    expected = rows(store)
    store.database.connection().execute("UPDATE memory_time SET resolved = '1999-01-01'")
    store.rebuild_fts()
    assert rows(store) == expected
