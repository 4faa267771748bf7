"""MemoryStore: records round-trip, writes are atomic, filters select exactly what they
say, and the FTS5 index stays in step with the records."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.errors import NotFoundError, StoreUnavailable, UserInputError
from services.filters import MemoryFilter
from services.memory import Memory
from services.storage.memories import MemoryStore, fts_query
from services.types import MemoryType, RetrievalMode, Scope, Source, Tier
from tests.services.builders import full_memory, make_memory

# --- round trips ----------------------------------------------------------------------------


def test_every_field_round_trips(store: MemoryStore) -> None:
    memory = full_memory()
    assert store.add(memory) is memory
    loaded = store.get("full-1")
    assert loaded == memory
    assert loaded.to_dict() == memory.to_dict()
    # no field was left at its default by the builder, so each one really travelled
    defaults = Memory(id="x", type=MemoryType.FACT, title="t", content="c")
    same = [k for k, v in defaults.to_dict().items() if memory.to_dict()[k] == v]
    assert same == []


def test_update_changes_every_field_and_keeps_the_id(store: MemoryStore) -> None:
    store.add(full_memory())
    changes: dict[str, Any] = {
        "type": "pitfall",
        "title": "New title",
        "content": "New content about locks.",
        "project": "other",
        "summary": "s2",
        "compressed": "c2",
        "index_line": "i2",
        "tags": ["t2"],
        "file_refs": ["a/b.py"],
        "confidence": 0.25,
        "source": "automatic",
        "session_id": "s-2",
        "task_id": "t-2",
        "role": "r2",
        "branch": "dev",
        "scope": "system",
        "created_at": "2023-01-01T00:00:00+00:00",
        "valid_from": "2023-01-02T00:00:00+00:00",
        "valid_to": "2023-01-03T00:00:00+00:00",
        "last_accessed": "2023-01-04T00:00:00+00:00",
        "retrieval_count": 50,
        "citation_count": 40,
        "ignore_count": 30,
        "use_count": 20,
        "supersedes": "s-old",
        "superseded_by": "s-new",
        "tier": "cold",
    }
    updated = store.update("full-1", changes)
    loaded = store.get("full-1")
    assert loaded == updated
    assert loaded.id == "full-1"
    for name, value in changes.items():
        got = getattr(loaded, name)
        assert (got.value if hasattr(got, "value") else got) == value, name
    assert store.count() == 1


def test_update_rejects_invalid_changes_and_keeps_the_record(store: MemoryStore) -> None:
    memory = store.add(make_memory("original"))
    with pytest.raises(UserInputError, match="confidence"):
        store.update(memory.id, {"confidence": 7})
    with pytest.raises(UserInputError, match="unknown type"):
        store.update(memory.id, {"type": "gossip"})
    assert store.get(memory.id) == memory
    with pytest.raises(NotFoundError):
        store.update("missing", {"content": "x"})


def test_the_current_memories_with_a_text_are_those_a_new_copy_would_repeat(
    store: MemoryStore,
) -> None:
    text = "Releases are cut from main on Tuesdays."
    kept = store.add(make_memory(text, id="kept", project="p"))
    store.add(make_memory(text, id="elsewhere", project="q"))
    store.add(make_memory(text, id="old", project="p", superseded_by="kept"))
    store.add(make_memory(text, id="archived", project="p", tier=Tier.ARCHIVED))
    store.add(make_memory(text + " Or Wednesdays.", id="longer", project="p"))
    store.add(make_memory(f"\n{text}\n", id="newline", project="p"))
    assert [m.id for m in store.current_with_text("p", text)] == [kept.id, "newline"]
    assert [m.id for m in store.current_with_text("p", f"  {text}\n")] == [kept.id, "newline"]
    assert [m.id for m in store.current_with_text("q", text)] == ["elsewhere"]
    assert store.current_with_text(None, text) == []
    store.add(make_memory(text, id="nowhere", project=None))
    assert [m.id for m in store.current_with_text(None, text)] == ["nowhere"]


def test_a_copy_is_found_by_its_opening_words_or_by_reading_every_memory(
    store: MemoryStore,
) -> None:
    """The keyword index narrows the look-up to memories holding the text's opening words
    in order; a long memory (stored in chunks) and a text of no words are found too."""
    long_text = "Release notes. " + " ".join(f"step {n} of the rollout" for n in range(900))
    store.add(make_memory(long_text, id="long", project="p"))
    store.add(make_memory("!!! ???", id="marks", project="p"))
    store.add(make_memory("Release notes. step 0 of the rollout", id="short", project="p"))
    assert [m.id for m in store.current_with_text("p", long_text)] == ["long"]
    assert [m.id for m in store.current_with_text("p", "!!! ???")] == ["marks"]
    assert store.current_with_text("p", "Release notes.") == []


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Use tabs.", "Use tabs. Always.", " Use tabs.\n", "tabs use", "…"]),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["Use tabs.", "tabs use", "Always.", "…"]),
)
def test_the_index_look_up_finds_what_reading_everything_finds(
    texts: list[str], asked: str
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore(Path(folder) / "engram.sqlite3")
        try:
            for n, text in enumerate(texts):
                store.add(make_memory(text, id=f"m{n}", project="p"))
            read_all = [m.id for m in store._current_with_text_scan("p", asked)]
            assert [m.id for m in store.current_with_text("p", asked)] == read_all
        finally:
            store.close()


def test_delete(store: MemoryStore) -> None:
    keep = store.add(make_memory("keep this refund note"))
    gone = store.add(make_memory("delete this refund note " + "filler words " * 400))
    assert store.chunks(gone.id)
    store.delete(gone.id)
    with pytest.raises(NotFoundError):
        store.get(gone.id)
    with pytest.raises(NotFoundError):
        store.delete(gone.id)
    assert store.chunks(gone.id) == []
    assert [h.memory_id for h in store.lexical("refund", 10)] == [keep.id]
    assert fts_rows(store, gone.id) == 0
    assert store.count() == 1


def test_deleting_the_middle_of_a_chain_passes_what_it_replaced_to_its_replacement(
    store: MemoryStore,
) -> None:
    """Node 16 → 18 → 20, 18 deleted: 16 had come back holding beside 20."""
    oldest = store.add(make_memory("Node 16 is the minimum."))
    middle = store.add(make_memory("Node 18 is the minimum now."))
    newest = store.add(make_memory("Node 20 is the minimum now."))
    store.update(oldest.id, {"superseded_by": middle.id, "valid_to": middle.created_at})
    store.update(middle.id, {"supersedes": oldest.id, "superseded_by": newest.id})
    store.update(newest.id, {"supersedes": middle.id})
    assert store.delete(middle.id) == []
    assert store.get(oldest.id).superseded_by == newest.id
    assert store.get(newest.id).supersedes == oldest.id
    # the end of a chain: what it replaced holds again
    assert store.delete(newest.id) == [oldest.id]
    released = store.get(oldest.id)
    assert (released.superseded_by, released.valid_to) == (None, None)


def test_duplicate_id_is_an_error_and_keeps_the_original(store: MemoryStore) -> None:
    first = store.add(make_memory("first", id="same"))
    with pytest.raises(UserInputError, match="already exists"):
        store.add(make_memory("second", id="same"))
    assert store.get("same") == first
    assert fts_rows(store, "same") == 1
    assert [h.memory_id for h in store.lexical("second", 5)] == []


_TEXT = st.characters(blacklist_categories=("Cs",))


def test_arbitrary_records_round_trip(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "hypothesis.sqlite3")

    @given(
        text=st.text(_TEXT, min_size=1, max_size=300).filter(lambda s: s.strip()),
        words=st.lists(
            st.text(_TEXT, min_size=1, max_size=20).filter(lambda s: s.strip() == s and s),
            max_size=4,
        ),
        confidence=st.floats(0, 1),
        count=st.integers(0, 2**63 - 1),
        when=st.datetimes(
            min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
        ),
    )
    @settings(max_examples=60)
    def check(text: str, words: list[str], confidence: float, count: int, when: datetime) -> None:
        memory = make_memory(
            text,
            title=text.strip()[:100],
            tags=words,
            file_refs=words,
            confidence=confidence,
            use_count=count,
            summary=text.strip(),
            created_at=when.isoformat(),
            project=words[0] if words else None,
        )
        store.add(memory)
        assert store.get(memory.id) == memory

    try:
        check()
    finally:
        store.close()


# --- add_many ---------------------------------------------------------------------------------


def test_add_many_stores_all(store: MemoryStore) -> None:
    memories = [make_memory(f"note number {i}") for i in range(30)]
    stored, skipped = store.add_many(memories)
    assert stored == memories and skipped == []
    assert store.count() == 30
    assert store.fts_row_count() == 30


@pytest.mark.parametrize(
    "error", [sqlite3.OperationalError("disk I/O error"), RuntimeError("bug in the middle")]
)
def test_add_many_is_all_or_nothing(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    before = store.add(make_memory("already here"))
    memories = [make_memory(f"batch note {i} " + "padding " * (300 * (i == 1))) for i in range(5)]
    real = store._index_text
    calls = []

    def failing(memory: Memory) -> None:
        calls.append(memory.id)
        if len(calls) == 4:
            raise error
        real(memory)

    monkeypatch.setattr(store, "_index_text", failing)
    expected = StoreUnavailable if isinstance(error, sqlite3.Error) else type(error)
    with pytest.raises(expected):
        store.add_many(memories)
    assert len(calls) == 4  # the failure really happened after three writes
    monkeypatch.undo()
    assert store.all_ids() == {before.id}
    assert store.fts_row_count() == 1
    assert store.chunks(memories[1].id) == []
    assert store.database.execute_sql("SELECT count(*) FROM chunk").fetchone()[0] == 0
    assert [h.memory_id for h in store.lexical("batch", 10)] == []


def test_add_many_rejects_existing_ids_without_a_choice(store: MemoryStore) -> None:
    old = store.add(make_memory("old text", id="a"))
    batch = [make_memory("new text", id="a"), make_memory("other", id="b")]
    with pytest.raises(UserInputError, match="already exist"):
        store.add_many(batch)
    assert store.all_ids() == {"a"}
    assert store.get("a") == old


def test_add_many_rejects_an_id_repeated_in_the_batch(store: MemoryStore) -> None:
    batch = [make_memory("one", id="twin"), make_memory("two"), make_memory("three", id="twin")]
    with pytest.raises(UserInputError, match="twin"):
        store.add_many(batch)
    assert store.count() == 0
    assert store.fts_row_count() == 0


def test_add_many_replace(store: MemoryStore) -> None:
    store.add(make_memory("the old zebra text " + "padding " * 600, id="a"))
    assert store.chunks("a")
    new = make_memory("the new giraffe text", id="a", tags=["fresh"])
    stored, skipped = store.add_many([new, make_memory("b text", id="b")], replace=True)
    assert [m.id for m in stored] == ["a", "b"] and skipped == []
    assert store.get("a") == new
    assert store.chunks("a") == []
    assert store.lexical("zebra", 5) == []
    assert [h.memory_id for h in store.lexical("giraffe", 5)] == ["a"]
    assert store.fts_row_count() == store.count() == 2


def test_add_many_skip_existing(store: MemoryStore) -> None:
    old = store.add(make_memory("old zebra", id="a"))
    stored, skipped = store.add_many(
        [make_memory("new giraffe", id="a"), make_memory("b", id="b")], skip_existing=True
    )
    assert [m.id for m in stored] == ["b"] and skipped == ["a"]
    assert store.get("a") == old
    assert store.lexical("giraffe", 5) == []


# --- filters ----------------------------------------------------------------------------------


def _day(day: int) -> str:
    return datetime(2024, 1, day, 12, tzinfo=UTC).isoformat()


@pytest.fixture
def population(store: MemoryStore) -> dict[str, Memory]:
    specs: list[dict[str, Any]] = [
        dict(
            id="hot-a",
            project="a",
            type="fact",
            tags=["db"],
            created_at=_day(1),
            tier="hot",
            confidence=0.9,
            session_id="s1",
        ),
        dict(
            id="warm-a",
            project="a",
            type="decision",
            tags=["db", "perf"],
            created_at=_day(2),
            tier="warm",
            confidence=0.5,
            session_id="s2",
        ),
        dict(
            id="cold-a",
            project="a",
            type="pitfall",
            tags=["perf"],
            created_at=_day(3),
            tier="cold",
            confidence=0.3,
        ),
        dict(
            id="arch-b",
            project="b",
            type="fact",
            tags=[],
            created_at=_day(4),
            tier="archived",
            confidence=0.1,
            session_id="s1",
        ),
        dict(
            id="warm-b",
            project="b",
            type="fix",
            tags=["ui"],
            created_at=_day(5),
            tier="warm",
            confidence=0.7,
        ),
        dict(
            id="super-a",
            project="a",
            type="fact",
            tags=["db"],
            created_at=_day(6),
            tier="warm",
            confidence=0.6,
            superseded_by="warm-a",
        ),
        dict(
            id="none",
            project=None,
            type="lesson",
            tags=["db"],
            created_at=_day(7),
            tier="hot",
            confidence=0.2,
            session_id="s2",
        ),
    ]
    memories = {s["id"]: make_memory(f"content of {s['id']}", **s) for s in specs}
    store.add_many(list(memories.values()))
    return memories


FILTER_CASES: list[tuple[str, MemoryFilter, set[str]]] = [
    ("standard-default", MemoryFilter(), {"hot-a", "warm-a", "warm-b", "none"}),
    ("reflexive", MemoryFilter(mode=RetrievalMode.REFLEXIVE), {"hot-a", "none"}),
    (
        "deep",
        MemoryFilter(mode=RetrievalMode.DEEP),
        {"hot-a", "warm-a", "cold-a", "warm-b", "super-a", "none"},
    ),
    (
        "exhaustive",
        MemoryFilter(mode=RetrievalMode.EXHAUSTIVE),
        {"hot-a", "warm-a", "cold-a", "arch-b", "warm-b", "super-a", "none"},
    ),
    (
        "everything",
        MemoryFilter.everything(),
        {"hot-a", "warm-a", "cold-a", "arch-b", "warm-b", "super-a", "none"},
    ),
    (
        "project",
        MemoryFilter(project="a", mode=RetrievalMode.EXHAUSTIVE),
        {"hot-a", "warm-a", "cold-a", "super-a"},
    ),
    (
        "types",
        MemoryFilter(types=(MemoryType.FACT, MemoryType.FIX), mode=RetrievalMode.EXHAUSTIVE),
        {"hot-a", "arch-b", "warm-b", "super-a"},
    ),
    (
        "tags-any",
        MemoryFilter(tags=("perf", "ui"), mode=RetrievalMode.EXHAUSTIVE),
        {"warm-a", "cold-a", "warm-b"},
    ),
    (
        "created-after",
        MemoryFilter(
            created_after=datetime(2024, 1, 5, 12, tzinfo=UTC), mode=RetrievalMode.EXHAUSTIVE
        ),
        {"warm-b", "super-a", "none"},
    ),
    (
        "created-before",
        MemoryFilter(
            created_before=datetime(2024, 1, 3, 12, tzinfo=UTC), mode=RetrievalMode.EXHAUSTIVE
        ),
        {"hot-a", "warm-a"},
    ),
    (
        "window",
        MemoryFilter(
            created_after=datetime(2024, 1, 2, tzinfo=UTC),
            created_before=datetime(2024, 1, 4, tzinfo=UTC),
            mode=RetrievalMode.EXHAUSTIVE,
        ),
        {"warm-a", "cold-a"},
    ),
    (
        "exclude-session",
        MemoryFilter(exclude_session="s1", mode=RetrievalMode.EXHAUSTIVE),
        {"warm-a", "cold-a", "warm-b", "super-a", "none"},
    ),
    (
        "min-confidence",
        MemoryFilter(min_confidence=0.6, mode=RetrievalMode.EXHAUSTIVE),
        {"hot-a", "warm-b", "super-a"},
    ),
    ("ids", MemoryFilter(ids=("hot-a", "arch-b", "nope")), {"hot-a"}),
    (
        "combined",
        MemoryFilter(project="a", tags=("db",), min_confidence=0.55, mode=RetrievalMode.DEEP),
        {"hot-a", "super-a"},
    ),
]


@pytest.mark.parametrize(
    ("name", "flt", "expected"), FILTER_CASES, ids=[case[0] for case in FILTER_CASES]
)
def test_filters(
    store: MemoryStore,
    population: dict[str, Memory],
    name: str,
    flt: MemoryFilter,
    expected: set[str],
) -> None:
    assert {m.id for m in store.query(flt)} == expected
    assert store.count(flt) == len(expected)
    assert set(store.filter_ids(list(population), flt)) == expected
    assert set(store.filter_ids(["hot-a", "warm-b"], flt)) == expected & {"hot-a", "warm-b"}


def test_filters_with_a_large_id_list(store: MemoryStore, population: dict[str, Memory]) -> None:
    ids = [f"missing-{i}" for i in range(1200)] + ["warm-b"]
    assert set(store.filter_ids(ids, MemoryFilter())) == {"warm-b"}


def test_query_order_limit_offset(store: MemoryStore, population: dict[str, Memory]) -> None:
    flt = MemoryFilter.everything()
    newest = [m.id for m in store.query(flt)]
    assert newest == ["none", "super-a", "warm-b", "arch-b", "cold-a", "warm-a", "hot-a"]
    assert [m.id for m in store.query(flt, newest_first=False)] == newest[::-1]
    assert [m.id for m in store.query(flt, limit=2, offset=2)] == newest[2:4]


def test_iter_all_reads_everything_in_batches(store: MemoryStore) -> None:
    memories = [make_memory(f"n{i}", created_at=_day(1 + i % 3)) for i in range(25)]
    store.add_many(memories)
    seen = [m.id for m in store.iter_all(batch_size=4)]
    assert sorted(seen) == sorted(m.id for m in memories)
    assert len(seen) == len(set(seen))


# --- the lexical index ------------------------------------------------------------------------


def fts_rows(store: MemoryStore, memory_id: str) -> int:
    row = store.database.execute_sql(
        "SELECT count(*) FROM memory_fts WHERE memory_id = ?", (memory_id,)
    ).fetchone()
    return int(row[0])


@pytest.mark.parametrize(
    ("field", "value", "query"),
    [
        ("title", "Kangaroo deployment", "kangaroo"),
        ("content", "the kangaroo service restarts nightly", "kangaroo"),
        ("tags", ["kangaroo"], "kangaroo"),
        ("file_refs", ["src/kangaroo/boot.py"], "kangaroo"),
        ("content", "calls refund_payment_now when asked", "payment"),
        ("content", "Retrying payments", "retried payment"),  # porter stemming
    ],
)
def test_lexical_finds_by_each_text_field(
    store: MemoryStore, field: str, value: Any, query: str
) -> None:
    store.add(make_memory("an unrelated note about weather", id="other"))
    fields = {"content": "plain words"} | {field: value}
    target = store.add(make_memory(id="target", **fields))
    hits = store.lexical(query, 10)
    assert [h.memory_id for h in hits] == [target.id]
    assert hits[0].score > 0


def test_lexical_ranks_and_limits(store: MemoryStore) -> None:
    store.add(make_memory("refund refund refund policy", id="strong", title="Refund policy"))
    store.add(make_memory("a note that mentions a refund once among many other words", id="weak"))
    hits = store.lexical("refund policy", 10)
    assert [h.memory_id for h in hits] == ["strong", "weak"]
    assert hits[0].score > hits[1].score
    assert len(store.lexical("refund", 1)) == 1


def test_lexical_by_project(store: MemoryStore) -> None:
    store.add(make_memory("walrus facts", id="a1", project="a"))
    store.add(make_memory("walrus notes", id="b1", project="b"))
    assert {h.memory_id for h in store.lexical("walrus", 10)} == {"a1", "b1"}
    assert [h.memory_id for h in store.lexical("walrus", 10, project="b")] == ["b1"]


def test_lexical_ignores_stopwords_and_empty_queries(store: MemoryStore) -> None:
    store.add(make_memory("the what and how of it"))
    assert store.lexical("", 5) == []
    assert store.lexical("what is the", 5) == []
    assert store.lexical("!!! ???", 5) == []


def test_fts_query() -> None:
    assert fts_query("") is None
    assert fts_query("how is the") is None
    assert fts_query('What does refund_payment "do"?') == '"refund" OR "payment"'
    assert fts_query("Alpha alpha ALPHA beta") == '"alpha" OR "beta"'
    assert fts_query(" ".join(f"w{i}" for i in range(100))).count(" OR ") == 63


def test_a_long_memory_does_not_crowd_others_out_of_lexical_hits(store: MemoryStore) -> None:
    """A pasted log says "timeout" in every chunk; the notes that say it once still come
    back (the walkthrough's 2 MB log had left keyword search one result)."""
    log = "\n\n".join(
        f"[{i}] WORKER TIMEOUT (pid:{i}) timeout timeout " + "filler " * 120 for i in range(40)
    )
    store.add(make_memory(log, id="log", type="episode"))
    assert len(store.chunks("log")) > 20
    for i in range(12):
        store.add(make_memory(f"note {i}: the timeout of service {i} is {i} seconds", id=f"n{i}"))
    hits = store.lexical("timeout", 10)
    assert len(hits) == 10
    assert len({h.memory_id for h in hits}) == 10
    assert {h.memory_id for h in store.lexical("timeout", 20)} >= {f"n{i}" for i in range(12)}


def test_long_memory_is_chunked_and_each_chunk_is_searchable(store: MemoryStore) -> None:
    body = "\n\n".join(
        f"Paragraph {i} talks about topic{i} in detail. " + "filler " * 120 for i in range(12)
    )
    memory = store.add(make_memory(body, id="long"))
    chunks = store.chunks("long")
    assert len(chunks) > 1
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(c.token_count <= store.max_chunk_tokens for c in chunks)
    assert fts_rows(store, "long") == 1 + len(chunks)
    hit = store.lexical("topic11", 5)[0]
    assert hit.memory_id == memory.id
    assert hit.chunk_index >= 0 and "topic11" in chunks[hit.chunk_index].text
    assert store.fts_row_count() == 1  # whole-memory rows only


def test_fts_follows_updates(store: MemoryStore) -> None:
    memory = store.add(make_memory("the zebra crossing", title="Animals", tags=["stripes"]))
    store.update(memory.id, {"content": "the giraffe neck", "tags": ["tall"]})
    assert store.lexical("zebra", 5) == [] and store.lexical("stripes", 5) == []
    assert [h.memory_id for h in store.lexical("giraffe tall", 5)] == [memory.id]
    store.update(memory.id, {"file_refs": ["lib/okapi.rs"]})
    assert [h.memory_id for h in store.lexical("okapi", 5)] == [memory.id]
    store.update(memory.id, {"title": "Savanna"})
    assert [h.memory_id for h in store.lexical("savanna", 5)] == [memory.id]
    assert fts_rows(store, memory.id) == 1
    store.update(memory.id, {"confidence": 0.9})  # no text change: index untouched
    assert fts_rows(store, memory.id) == 1
    # growing into a long memory creates chunks, shrinking removes them
    store.update(memory.id, {"content": "long " * 3000})
    assert len(store.chunks(memory.id)) > 1
    store.update(memory.id, {"content": "short again"})
    assert store.chunks(memory.id) == []
    assert fts_rows(store, memory.id) == 1


def test_rebuild_fts_recreates_the_index_and_chunks(store: MemoryStore) -> None:
    store.add(make_memory("ocelot note", id="a"))
    store.add(make_memory("lynx note " + "cat " * 1500, id="b"))
    chunk_count = len(store.chunks("b"))
    store.database.execute_sql("DROP TABLE memory_fts")
    store.database.execute_sql("DELETE FROM chunk")
    assert not store.fts_available()
    assert store.lexical("ocelot", 5) == []
    assert store.rebuild_fts() == 2
    assert store.fts_available()
    assert [h.memory_id for h in store.lexical("ocelot", 5)] == ["a"]
    assert [h.memory_id for h in store.lexical("lynx", 5)] == ["b"]
    assert len(store.chunks("b")) == chunk_count
    assert store.fts_row_count() == 2


def test_writes_without_fts_still_store_records(store: MemoryStore) -> None:
    store.database.execute_sql("DROP TABLE memory_fts")
    memory = store.add(make_memory("stored without the lexical index"))
    store.update(memory.id, {"content": "changed without the lexical index"})
    assert store.get(memory.id).content == "changed without the lexical index"
    store.rebuild_fts()
    assert [h.memory_id for h in store.lexical("changed", 5)] == [memory.id]


def test_phrase_candidates(store: MemoryStore) -> None:
    store.add(make_memory("we call refund_payment here", id="exact", project="p"))
    store.add(make_memory("payment of a refund", id="reversed", project="p"))
    store.add(make_memory("refund payment in q", id="other-project", project="q"))
    assert set(store.phrase_candidates("refund_payment", 10, None)) == {"exact", "other-project"}
    assert store.phrase_candidates("refund_payment", 10, "p") == ["exact"]
    assert store.phrase_candidates("___", 10, None) == []


# --- bookkeeping ------------------------------------------------------------------------------


def test_embedding_bookkeeping(store: MemoryStore) -> None:
    a, b = store.add(make_memory("a")), store.add(make_memory("b " * 2000))
    assert store.pending_count("m1") == 2
    store.mark_embedded([a.id], "m1")
    assert [m.id for m in store.pending_embedding("m1", 10)] == [b.id]
    assert store.embedded_ids("m1") == {a.id}
    assert store.expected_vector_count("m1") == 1
    store.mark_embedded([b.id], "m1")
    assert store.expected_vector_count("m1") == 2 + len(store.chunks(b.id))
    # text changes re-queue, other changes do not
    store.update(a.id, {"confidence": 0.8})
    assert store.pending_count("m1") == 0
    store.update(a.id, {"content": "a changed"})
    assert store.pending_count("m1") == 1
    store.mark_embedded([a.id], "m1")
    store.update(a.id, {"project": "moved"})  # vectors live per project
    assert [m.id for m in store.pending_embedding("m1", 10)] == [a.id]
    store.clear_embedded()
    assert store.pending_count("m1") == 2


def test_staging_for_a_model_change(store: MemoryStore) -> None:
    a, b = store.add(make_memory("a")), store.add(make_memory("b"))
    store.mark_embedded([a.id, b.id], "old")
    store.mark_staged([a.id], "new")
    assert store.unstaged_count("new") == 1
    assert [m.id for m in store.unstaged("new", 5)] == [b.id]
    store.mark_staged([b.id], "new")
    store.promote_staged("new")
    assert store.embedded_ids("new") == {a.id, b.id}
    assert store.unstaged_count("new") == 2  # staging marks are cleared


def test_meta(store: MemoryStore) -> None:
    assert store.meta_get("k") is None
    store.meta_set("k", "1")
    store.meta_set("k", "2")
    assert store.meta_get("k") == "2"


def test_wal_mode_is_on(store: MemoryStore) -> None:
    assert store.database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    other = sqlite3.connect(store.path)
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent
    finally:
        other.close()


def test_enums_come_back_as_enums(store: MemoryStore) -> None:
    memory = store.get(store.add(full_memory()).id)
    assert isinstance(memory.type, MemoryType) and isinstance(memory.tier, Tier)
    assert isinstance(memory.source, Source) and isinstance(memory.scope, Scope)


# --- two stores in one process ------------------------------------------------------------


def test_two_stores_in_one_process_each_read_and_write_their_own_file(tmp_path: Path) -> None:
    first = MemoryStore(tmp_path / "one" / "engram.sqlite3")
    first.add(make_memory("Only in the first folder.", id="first-1"))
    second = MemoryStore(tmp_path / "two" / "engram.sqlite3")  # the models' proxy moves here
    second.add(make_memory("Only in the second folder.", id="second-1"))

    assert first.get("first-1").content == "Only in the first folder."
    assert set(first.get_many(["first-1", "second-1"])) == {"first-1"}
    first.add(make_memory("Added after the second store opened.", id="first-2"))
    assert {m.id for m in first.query(MemoryFilter())} == {"first-1", "first-2"}
    assert [m.id for m in second.query(MemoryFilter())] == ["second-1"]
    with pytest.raises(NotFoundError):
        second.get("first-2")


def test_replacing_a_memory_with_the_same_text_keeps_its_vectors(store: MemoryStore) -> None:
    """Re-importing an export (`import --replace`) must not send every memory back to
    the embedder; a changed text or a move to another project must."""
    same = make_memory("Refunds over 100 need approval.", id="same", project="shop")
    edited = make_memory("Invoices are exported as CSV.", id="edited", project="shop")
    moved = make_memory("Deploys run on Tuesdays.", id="moved", project="shop")
    store.add_many([same, edited, moved])
    store.mark_embedded(["same", "edited", "moved"], "minilm")
    store.add_many(
        [
            same,
            make_memory("Invoices are exported as JSON.", id="edited", project="shop"),
            make_memory("Deploys run on Tuesdays.", id="moved", project="infra"),
        ],
        replace=True,
    )
    assert store.embedded_ids("minilm") == {"same"}
