"""Conflict records read from an export: every shape a hand-edited file may hold gives
records or named problems, never an exception; restored records follow the memories
an import stored as copies the store already held."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from services.knowledge.conflict_transfer import exported, read_section, restore
from services.storage import contradictions as table
from services.storage.memories import MemoryStore
from tests.services.builders import make_memory

GOOD = {
    "a": "old",
    "b": "new",
    "kind": "supersedes",
    "holder": "new",
    "detected_at": "2026-05-01T10:00:00+00:00",
    "evidence": {"hash": "abc"},
    "resolved_at": "2026-05-02T10:00:00+00:00",
    "resolution": "both_valid",
    "note": "two jobs",
}


def _nothing_stored(ids: Any) -> set[str]:
    return set()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
fields = st.fixed_dictionaries(
    {},
    optional={
        **{name: json_values | st.just(value) for name, value in GOOD.items()},
    },
)


@settings(max_examples=300, deadline=None)
@given(section=json_values | st.lists(fields | json_values, max_size=4))
def test_any_section_gives_records_or_problems(section: Any) -> None:
    records, problems = read_section(section, "f.json", {"old", "new"}, _nothing_stored)
    if section is None:
        assert records == [] and problems == []
    elif not isinstance(section, list):
        assert records == [] and len(problems) == 1
    else:
        assert len(records) <= len(section)
        bad = {p.where for p in problems}
        assert len(records) + len(bad) == len(section)  # each item is one or the other
        for record in records:
            assert {record.a, record.b} <= {"old", "new"} and record.a != record.b


def test_a_memory_of_the_store_counts_and_an_unknown_one_is_named() -> None:
    asked: list[list[str]] = []

    def stored(ids: Any) -> set[str]:
        asked.append(list(ids))
        return {"kept"} & set(asked[-1])

    section = [{**GOOD, "a": "kept"}, {**GOOD, "a": "gone"}]
    records, problems = read_section(section, "f.json", {"new"}, stored)
    assert [r.a for r in records] == ["kept"]
    assert asked == [["gone", "kept"]]  # one lookup for every id the file does not hold
    (problem,) = problems
    assert problem.where == "f.json: contradictions[1]" and "'gone'" in problem.reason


def test_restore_follows_a_record_stored_as_an_existing_copy(store: MemoryStore) -> None:
    store.add(make_memory("`settle_batch` times out after 5 s.", id="here", project="shop"))
    store.add(make_memory("The timeout is 30 s now.", id="new", project="shop"))
    (record,), _ = read_section([GOOD], "f.json", {"old", "new"}, _nothing_stored)
    assert restore(store, [record], {"old": "here"}) == 1
    row = table.row_for_pair(store, "here", "new")
    assert row is not None and row[8] == "both_valid" and row[4] == "new"
    assert restore(store, [record], {"old": "here"}) == 0  # settled here: kept as is
    memories = [store.get("here"), store.get("new")]
    (carried,) = exported(store, [m for m in memories if m is not None])
    assert carried["a"] == "here" and carried["resolution"] == "both_valid"
    assert exported(store, [m for m in memories[:1] if m is not None]) == []
