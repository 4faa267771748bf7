"""Project context: saved and loaded per project; every save writes a snapshot with the
catalogue's SHA-256 and only its delta; replaying the deltas rebuilds every snapshot's
catalogue (hash checked); clear errors for bad catalogues; stale context todos become
REM todo findings that can be dropped."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.errors import NotFoundError, UserInputError
from services.knowledge.project_context import (
    MAX_CATALOGUE_BYTES,
    HistoryEntry,
    HistoryMismatch,
    apply_delta,
    catalogue_at,
    catalogue_delta,
    catalogue_sha256,
    history,
    load,
    parse_catalogue,
    read_catalogue_file,
    replay,
    save,
)
from services.rem.actions import answer
from services.rem.ops.extraction import extraction_findings
from services.storage.findings import FindingStore, Status
from services.storage.memories import MemoryStore
from tests.services.builders import make_memory


def test_an_unsaved_project_loads_empty(store: MemoryStore) -> None:
    context = load(store, "shop")
    assert context.updated_at is None and context.todos == [] and context.catalogue == {}
    assert history(store, "shop") == []


def test_save_and_load_round_trip(store: MemoryStore) -> None:
    saved, entry = save(
        store,
        "shop",
        notes="Refunds in progress.",
        active_files=["src/refunds.py", "src/refunds.py", " "],
        todos=["write the refund test", "  write   the refund test "],
        decisions=["money as integer cents"],
        catalogue={"db": "postgres", "queues": ["refunds"]},
    )
    loaded = load(store, "shop")
    assert loaded == saved
    assert loaded.active_files == ["src/refunds.py"]  # blank and repeated items go
    assert loaded.todos == ["write the refund test"]
    assert entry.todos == loaded.todos and entry.notes == "Refunds in progress."
    assert load(store, "other").updated_at is None


def test_every_save_writes_a_snapshot_with_the_hash_and_only_the_delta(
    store: MemoryStore,
) -> None:
    _, first = save(store, "shop", catalogue={"db": "postgres", "cache": "redis"})
    assert first.catalogue_delta == {
        "added": {"cache": "redis", "db": "postgres"},
        "removed": [],
        "changed": {},
    }
    canonical = '{"cache":"redis","db":"postgres"}'
    assert first.catalogue_sha256 == hashlib.sha256(canonical.encode()).hexdigest()

    _, second = save(store, "shop", catalogue={"db": "sqlite", "queue": {"name": "jobs"}})
    assert second.catalogue_delta == {
        "added": {"queue": {"name": "jobs"}},
        "removed": ["cache"],
        "changed": {"db": {"from": "postgres", "to": "sqlite"}},
    }
    # A save without a catalogue keeps it: the delta is empty, the hash the same.
    _, third = save(store, "shop", todos=["migrate the cache"])
    assert third.catalogue_delta == {"added": {}, "removed": [], "changed": {}}
    assert third.catalogue_sha256 == second.catalogue_sha256
    assert load(store, "shop").catalogue == {"db": "sqlite", "queue": {"name": "jobs"}}

    rows = store.database.execute_sql(
        "SELECT catalogue_delta FROM context_history WHERE project = 'shop' ORDER BY id"
    ).fetchall()
    assert [json.loads(r[0]) for r in rows] == [
        first.catalogue_delta,
        second.catalogue_delta,
        third.catalogue_delta,
    ]
    assert [e.id for e in history(store, "shop")] == [first.id, second.id, third.id]
    assert [e.id for e in history(store, "shop", limit=2)] == [second.id, third.id]


def test_nested_values_are_compared_whole_and_exactly(store: MemoryStore) -> None:
    save(store, "shop", catalogue={"a": {"x": [1, 2]}, "n": 1})
    _, entry = save(store, "shop", catalogue={"a": {"x": [1, 2, 3]}, "n": 1.0})
    assert entry.catalogue_delta["changed"] == {
        "a": {"from": {"x": [1, 2]}, "to": {"x": [1, 2, 3]}},
        "n": {"from": 1, "to": 1.0},  # 1 and 1.0 are different JSON
    }


def test_parts_left_out_are_kept_and_given_lists_replace(store: MemoryStore) -> None:
    save(store, "shop", notes="n1", todos=["a", "b"], decisions=["d"])
    context, _ = save(store, "shop", todos=["c"])
    assert context.notes == "n1" and context.todos == ["c"] and context.decisions == ["d"]


def test_replaying_deltas_rebuilds_every_snapshot_and_checks_its_hash(
    store: MemoryStore,
) -> None:
    catalogues: list[dict[str, Any]] = [
        {"db": "postgres"},
        {"db": "postgres", "cache": "redis"},
        {"cache": "memcached"},
        {},
        {"db": {"engine": "sqlite", "wal": True}},
    ]
    ids = [save(store, "shop", catalogue=c)[1].id for c in catalogues]
    save(store, "other", catalogue={"unrelated": 1})
    assert replay(history(store, "shop")) == catalogues
    for entry_id, catalogue in zip(ids, catalogues, strict=True):
        assert catalogue_at(store, "shop", entry_id) == catalogue
    with pytest.raises(NotFoundError):
        catalogue_at(store, "shop", 10_000)

    # A tampered delta no longer replays to the stored hash.
    store.database.execute_sql(
        "UPDATE context_history SET catalogue_delta = ? WHERE id = ?",
        [json.dumps({"added": {"db": "mysql"}, "removed": [], "changed": {}}), ids[0]],
    )
    with pytest.raises(HistoryMismatch, match="snapshot"):
        replay(history(store, "shop"))


def test_a_save_is_one_transaction(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    save(store, "shop", todos=["a"])
    original = store.database.execute_sql

    def failing(sql: str, params: Any = None) -> Any:
        if sql.startswith("INSERT INTO context_history"):
            raise RuntimeError("disk gone")
        return original(sql, params)

    monkeypatch.setattr(store.database, "execute_sql", failing)
    with pytest.raises(RuntimeError):
        save(store, "shop", todos=["b"])
    monkeypatch.undo()
    assert load(store, "shop").todos == ["a"]
    assert len(history(store, "shop")) == 1


# -- input validation -------------------------------------------------------------------


def test_a_catalogue_must_be_a_json_object(store: MemoryStore) -> None:
    with pytest.raises(UserInputError, match="must be a JSON object, got an array"):
        parse_catalogue("[1, 2]", "cat.json")
    with pytest.raises(UserInputError, match="must be a JSON object"):
        save(store, "shop", catalogue=[1])  # type: ignore[arg-type]


def test_malformed_json_names_file_line_and_column() -> None:
    text = '{\n  "db": "postgres",\n  "cache": \n}\n'
    with pytest.raises(UserInputError) as caught:
        parse_catalogue(text, "catalogue.json")
    assert str(caught.value).startswith("catalogue.json:4:1: invalid JSON")


def test_repeated_keys_nan_and_bad_encoding_are_refused() -> None:
    with pytest.raises(UserInputError, match="appears twice"):
        parse_catalogue('{"a": 1, "a": 2}', "c.json")
    with pytest.raises(UserInputError, match="NaN"):
        parse_catalogue('{"a": NaN}', "c.json")
    with pytest.raises(UserInputError, match="UTF-8"):
        read_catalogue_file(b'{"a": "\xff"}', "c.json")
    assert read_catalogue_file('\ufeff{"a": 1}'.encode(), "c.json") == {"a": 1}


def test_huge_inputs_are_refused(store: MemoryStore) -> None:
    with pytest.raises(UserInputError, match="larger than"):
        read_catalogue_file(b" " * (MAX_CATALOGUE_BYTES + 1), "big.json")
    with pytest.raises(UserInputError, match="nested"):
        parse_catalogue('{"a": ' + "[" * 100 + "]" * 100 + "}", "deep.json")
    with pytest.raises(UserInputError, match="at most 1000 todos"):
        save(store, "shop", todos=[f"todo {n}" for n in range(1001)])
    with pytest.raises(UserInputError, match="notes are longer"):
        save(store, "shop", notes="x" * 100_001)
    with pytest.raises(UserInputError, match="project name"):
        save(store, " ", notes="x")
    assert history(store, "shop") == []


# -- properties -------------------------------------------------------------------------

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)
_catalogues = st.dictionaries(st.sampled_from("abcdefg"), _json, max_size=6)


@given(st.lists(_catalogues, min_size=1, max_size=6))
def test_replaying_deltas_reproduces_every_catalogue_and_hash(
    catalogues: list[dict[str, Any]],
) -> None:
    entries = []
    before: dict[str, Any] = {}
    for number, catalogue in enumerate(catalogues):
        # Stored as canonical JSON and read back, as the history table does.
        delta = json.loads(json.dumps(catalogue_delta(before, catalogue)))
        assert apply_delta(before, delta) == json.loads(json.dumps(catalogue))
        entries.append(
            HistoryEntry(number, "p", "", catalogue_sha256(catalogue), delta, "", [], [], [])
        )
        before = catalogue
    rebuilt = replay(entries)
    assert [catalogue_sha256(c) for c in rebuilt] == [catalogue_sha256(c) for c in catalogues]


@given(_catalogues, _catalogues)
def test_a_delta_holds_only_what_changed(before: dict[str, Any], after: dict[str, Any]) -> None:
    delta = catalogue_delta(before, after)
    assert set(delta["added"]) == set(after) - set(before)
    assert delta["removed"] == sorted(set(before) - set(after))
    for key, change in delta["changed"].items():
        assert change == {"from": before[key], "to": after[key]}
    unchanged = set(before) & set(after) - set(delta["changed"])
    assert all(json.dumps(before[k]) == json.dumps(after[k]) for k in unchanged)
    assert catalogue_delta(after, after) == {"added": {}, "removed": [], "changed": {}}


# -- REM: todos that stay on the list ---------------------------------------------------

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def _at(session: int, minutes: int = 0) -> str:
    return (T0 + session * timedelta(hours=2) + timedelta(minutes=minutes)).isoformat()


def _work_sessions(store: MemoryStore, count: int) -> datetime:
    for n in range(count):
        store.add(make_memory(f"Standup notes {n}.", project="elsewhere", created_at=_at(n, 1)))
    return T0 + (count - 1) * timedelta(hours=2) + timedelta(minutes=10)


def test_a_context_todo_listed_for_5_work_sessions_is_a_todo_finding(
    store: MemoryStore,
) -> None:
    now = _work_sessions(store, 8)
    save(store, "shop", todos=["write the refund test", "flaky"], saved_at=_at(0, 2))
    save(store, "shop", todos=["write the refund test"], saved_at=_at(2, 2))
    save(store, "shop", todos=["write the refund test", "flaky"], saved_at=_at(3, 2))
    save(store, "shop", todos=["write the refund test", "flaky", "new"], saved_at=_at(6, 2))
    todos = [f for f in extraction_findings(store, now) if f.kind == "todo"]
    (finding,) = todos  # "flaky" left the list in session 2 and is back since session 3
    assert finding.memory_ids == [] and finding.recommended == "skip"
    assert [o.name for o in finding.options] == ["keep", "drop", "skip"]
    assert finding.detail["context_todo"] == "write the refund test"
    assert finding.detail["sessions_ago"] == 7 and finding.detail["snapshots"] == 4
    # As of session 4, it had been listed for 4 sessions only.
    assert not [
        f for f in extraction_findings(store, T0 + 4 * timedelta(hours=2)) if f.kind == "todo"
    ]

    findings = FindingStore(store)
    findings.save([finding])
    service: Any = SimpleNamespace(store=store)
    assert answer(service, findings, findings.get(finding.id), "drop") is True
    assert load(store, "shop").todos == ["flaky", "new"]
    assert history(store, "shop")[-1].todos == ["flaky", "new"]  # a new snapshot
    assert findings.get(finding.id).status is Status.APPLIED
    assert [f for f in extraction_findings(store, now) if f.kind == "todo"] == []


def test_keeping_a_context_todo_changes_nothing_and_asks_no_more(store: MemoryStore) -> None:
    now = _work_sessions(store, 7)
    save(store, "shop", todos=["write the refund test"], saved_at=_at(0, 2))
    (finding,) = extraction_findings(store, now)
    findings = FindingStore(store)
    findings.save([finding])
    service: Any = SimpleNamespace(store=store)
    assert answer(service, findings, findings.get(finding.id), "keep") is False
    assert load(store, "shop").todos == ["write the refund test"]
    assert len(history(store, "shop")) == 1
    assert extraction_findings(store, now) == []
