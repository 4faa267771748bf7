"""The memories written right before and after others: the search's neighbours in time
(`written_around`) and the answer after a question (`written_next`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from services.storage.memories import MemoryStore
from tests.services.builders import make_memory


def _add(store: MemoryStore, memory_id: str, at: str, project: str | None = "chat") -> None:
    store.add(make_memory(id=memory_id, project=project, created_at=at))


def test_neighbours_are_the_adjacent_memories_of_the_same_project_within_the_window(
    store: MemoryStore,
) -> None:
    _add(store, "a", "2024-03-01T10:00:00+00:00")
    _add(store, "other", "2024-03-01T10:00:01+00:00", project="elsewhere")
    _add(store, "b", "2024-03-01T10:00:02+00:00")
    _add(store, "c", "2024-03-01T10:00:02+00:00")  # same second: order of writing decides
    _add(store, "d", "2024-03-01T10:20:00+00:00")  # 20 minutes later
    around = store.written_around(["a", "b", "c", "d", "missing"], within_s=600)
    assert around["a"] == ("b",)  # the other project's memory is not a neighbour
    assert around["b"] == ("a", "c")
    assert around["c"] == ("b",)  # d is beyond the window
    assert "d" not in around and "missing" not in around
    assert store.written_around([], within_s=600) == {}
    assert store.written_next(["a", "b", "c", "d"], 600) == {"a": "b", "b": "c"}


def test_an_offset_in_the_timestamp_is_the_same_instant(store: MemoryStore) -> None:
    _add(store, "utc", "2024-03-01T10:00:00+00:00")
    _add(store, "cet", "2024-03-01T11:00:30+01:00")  # 30 s later, written in another zone
    assert store.written_around(["utc"], within_s=60) == {"utc": ("cet",)}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=12))
def test_neighbours_agree_with_sorting_every_memory_by_time(seconds: list[int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore(Path(folder) / "engram.sqlite3")
        try:
            ids = [f"m{i}" for i in range(len(seconds))]
            for memory_id, second in zip(ids, seconds, strict=True):
                minute, rest = divmod(second, 60)
                hour, minute = divmod(minute, 60)
                _add(store, memory_id, f"2024-03-01T{10 + hour:02d}:{minute:02d}:{rest:02d}+00:00")
            order = sorted(range(len(ids)), key=lambda i: (seconds[i], i))
            expected: dict[str, tuple[str, ...]] = {}
            for place, index in enumerate(order):
                near = tuple(
                    ids[order[other]]
                    for other in (place - 1, place + 1)
                    if 0 <= other < len(order)
                    and abs(seconds[order[other]] - seconds[index]) <= 300
                )
                if near:
                    expected[ids[index]] = near
            assert store.written_around(ids, within_s=300) == expected
        finally:
            store.close()
