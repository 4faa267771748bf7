"""The vector index follows SQLite: reconcile repairs drift both ways, a lost Chroma
folder is rebuilt without losing a memory, reindex starts over, long memories get chunk
vectors, and a change of embedding model keeps serving until it is complete."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from app.composition import open_engram
from services.filters import MemoryFilter
from services.search.retrieval import RetrieverKind
from services.vectors.index import VectorItem, collection_name
from services.vectors.indexing import ACTIVE_MODEL_KEY, Indexer, ModelChange, memory_embedding_text
from tests.fakes import BrokenEmbedder, HashEmbedder

TOPICS = [
    "alpaca wool",
    "basalt columns",
    "cobalt glaze",
    "dahlia bulbs",
    "ember glow",
    "fjord ferries",
    "granite quarry",
    "harbor cranes",
]


def add_topics(engram: Any, project: str | None = "p") -> list[str]:
    return [
        engram.service.add(
            {"content": f"Notes about {topic} and nothing else.", "project": project}
        ).id
        for topic in TOPICS
    ]


def dense_ids(engram: Any, query: str, limit: int = 3) -> list[str]:
    response = engram.service.search(query, limit=limit, kind=RetrieverKind.DENSE)
    return [r.memory.id for r in response.results]


def assert_all_findable(engram: Any, ids: list[str]) -> None:
    for topic, memory_id in zip(TOPICS, ids, strict=True):
        assert dense_ids(engram, topic, 1) == [memory_id], topic


def in_step(engram: Any) -> bool:
    model = engram.embedder.model_id
    return engram.vectors.count(model) == engram.store.expected_vector_count(model)


def test_added_memories_are_indexed(engram: Any) -> None:
    ids = add_topics(engram)
    assert engram.store.pending_count(engram.embedder.model_id) == 0
    assert engram.vectors.count(engram.embedder.model_id) == len(ids)
    assert_all_findable(engram, ids)
    assert engram.start_up().queued == 0


def test_reconcile_queues_a_record_whose_vector_is_missing(engram: Any) -> None:
    ids = add_topics(engram)
    model = engram.embedder.model_id
    engram.vectors.delete_memories(model, "p", [ids[2]])
    assert dense_ids(engram, TOPICS[2], 1) != [ids[2]]
    report = engram.start_up()
    assert (report.queued, report.orphans_removed) == (1, 0)
    assert [m.id for m in engram.store.pending_embedding(model, 10)] == [ids[2]]
    assert engram.indexer.process_pending() == 1
    assert in_step(engram)
    assert_all_findable(engram, ids)
    assert engram.start_up().queued == 0


def test_reconcile_removes_an_orphan_vector(engram: Any) -> None:
    ids = add_topics(engram)
    model = engram.embedder.model_id
    vector = HashEmbedder().embed(["alpaca wool ghost"])[0].tolist()
    engram.vectors.upsert(
        model, "p", [VectorItem("ghost", -1, vector), VectorItem("ghost", 0, vector)]
    )
    engram.vectors.upsert(model, "elsewhere", [VectorItem("ghost-2", -1, vector)])
    assert engram.vectors.count(model) == len(ids) + 3
    report = engram.start_up()
    assert (report.queued, report.orphans_removed) == (0, 2)
    assert engram.vectors.count(model) == len(ids)
    every = set().union(*engram.vectors.memory_ids(model).values())
    assert every == set(ids)
    assert engram.store.count() == len(ids)


def test_reconcile_rebuilds_a_drifted_lexical_index(engram: Any) -> None:
    ids = add_topics(engram)
    engram.store.database.execute_sql("DELETE FROM memory_fts WHERE memory_id = ?", (ids[0],))
    assert engram.store.lexical("alpaca", 5) == []
    assert engram.start_up().fts_rebuilt
    assert [h.memory_id for h in engram.store.lexical("alpaca", 5)] == [ids[0]]
    assert not engram.start_up().fts_rebuilt


def test_lost_chroma_folder_is_rebuilt_without_losing_memories(data_dir: Path) -> None:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    ids = add_topics(engram)
    long_id = engram.service.add(
        {
            "content": "\n\n".join(
                f"Chapter {i} about lighthouses. " + "lighthouse " * 200 for i in range(6)
            )
        }
    ).id
    records = {m.id: m for m in engram.store.iter_all()}
    engram.close()

    shutil.rmtree(data_dir / "chroma")

    engram = open_engram(data_dir, embedder=HashEmbedder())
    try:
        model = engram.embedder.model_id
        assert engram.vectors.count(model) == 0
        assert dense_ids(engram, TOPICS[0]) == []
        report = engram.start_up()
        assert report.queued == len(ids) + 1
        assert engram.indexer.process_pending() == len(ids) + 1
        assert in_step(engram)
        assert {m.id: m for m in engram.store.iter_all()} == records
        assert_all_findable(engram, ids)
        assert dense_ids(engram, "lighthouse", 1) == [long_id]
        assert engram.start_up().queued == 0
    finally:
        engram.close()


def test_reindex_rebuilds_everything(engram: Any) -> None:
    ids = add_topics(engram)
    model = engram.embedder.model_id
    engram.vectors.delete_memories(model, "p", ids[:3])
    engram.store.database.execute_sql("DELETE FROM memory_fts")
    assert engram.indexer.reindex() == len(ids)
    assert in_step(engram)
    assert engram.store.fts_row_count() == len(ids)
    assert_all_findable(engram, ids)
    assert [h.memory_id for h in engram.store.lexical("cobalt", 5)] == [ids[2]]


def test_long_memory_gets_chunk_vectors(engram: Any) -> None:
    sections = [
        f"Section {i} covers the {topic} in depth. " + f"{topic} " * 150
        for i, topic in enumerate(TOPICS)
    ]
    memory = engram.service.add(
        {"content": "\n\n".join(sections), "title": "Handbook", "project": "p"}
    )
    chunks = engram.store.chunks(memory.id)
    assert len(chunks) >= len(TOPICS)
    model = engram.embedder.model_id
    assert engram.vectors.count(model) == 1 + len(chunks)
    assert in_step(engram)
    query = engram.embedder.embed(["harbor cranes"])[0]
    hits = engram.vectors.query(model, query, 3, ["p"])
    assert hits[0].memory_id == memory.id and hits[0].chunk_index >= 0
    assert "harbor cranes" in chunks[hits[0].chunk_index].text
    # editing the text replaces all of them
    engram.service.edit(memory.id, {"content": "Now a short note about harbor cranes."})
    assert engram.vectors.count(model) == 1
    assert in_step(engram)
    # deleting removes the rest
    engram.service.delete(memory.id)
    assert engram.vectors.count(model) == 0


def test_moving_a_memory_to_another_project_moves_its_vector(engram: Any) -> None:
    ids = add_topics(engram)
    engram.service.edit(ids[0], {"project": "q"})
    response = engram.service.search(TOPICS[0], MemoryFilter(project="q"), kind=RetrieverKind.DENSE)
    assert [r.memory.id for r in response.results] == [ids[0]]
    hits = engram.service.search(
        TOPICS[0], MemoryFilter(project="p"), limit=20, kind=RetrieverKind.DENSE
    )
    assert ids[0] not in [r.memory.id for r in hits.results]
    assert in_step(engram)


def test_edit_without_embedding_leaves_a_project_move_queued(engram: Any) -> None:
    ids = add_topics(engram)
    engram.service.edit(ids[1], {"project": "q"}, embed=False)
    assert [m.id for m in engram.store.pending_embedding(engram.embedder.model_id, 9)] == [ids[1]]
    engram.start_up()
    engram.indexer.process_pending()
    response = engram.service.search(TOPICS[1], MemoryFilter(project="q"), kind=RetrieverKind.DENSE)
    assert [r.memory.id for r in response.results] == [ids[1]]
    assert in_step(engram)


def test_failing_embedder_keeps_records_queued(engram: Any) -> None:
    indexer = Indexer(engram.store, engram.vectors, BrokenEmbedder())
    memory = engram.service.add({"content": "Queued while broken."}, embed=False)
    assert indexer.index([memory]) == 0
    assert indexer.process_pending() == 0
    assert engram.store.pending_count("test-hash") == 1
    assert engram.indexer.process_pending() == 1
    assert engram.store.pending_count("test-hash") == 0


def test_process_pending_respects_the_limit(engram: Any) -> None:
    for topic in TOPICS:
        engram.service.add({"content": topic}, embed=False)
    assert engram.indexer.process_pending(limit=3, batch_size=2) == 3
    assert engram.store.pending_count("test-hash") == len(TOPICS) - 3
    assert engram.indexer.process_pending() == len(TOPICS) - 3


def test_model_change_serves_old_vectors_until_complete(data_dir: Path) -> None:
    old = HashEmbedder(dimension=64, model_id="hash-a")
    new = HashEmbedder(dimension=32, model_id="hash-b")
    engram = open_engram(data_dir, embedder=old)
    ids = add_topics(engram, project="p")
    ids += [engram.service.add({"content": "Unfiled note on quartz sand", "project": None}).id]
    long_id = engram.service.add(
        {
            "content": "\n\n".join(f"Part {i} on volcanoes. " + "lava " * 200 for i in range(5)),
            "project": "p",
        }
    ).id
    engram.close()

    engram = open_engram(data_dir, embedder=new, serving=old)
    try:
        assert engram.embedder.model_id == "hash-a"  # old vectors keep serving
        change = engram.model_change()
        assert isinstance(change, ModelChange)
        total = len(ids) + 1
        assert change.remaining() == total
        assert change.step(batch_size=3) == total - 3
        assert change.remaining() == total - 3
        assert engram.store.meta_get(ACTIVE_MODEL_KEY) == "hash-a"
        assert engram.vectors.count("hash-a") == engram.store.expected_vector_count("hash-a")
        assert_all_findable(engram, ids[: len(TOPICS)])
        # a memory added meanwhile is served now and re-embedded by the change
        late = engram.service.add({"content": "Late note on zeppelin hangars", "project": "p"})
        assert dense_ids(engram, "zeppelin hangars", 1) == [late.id]
        change.run(batch_size=3)
        assert change.remaining() == 0
        assert engram.store.meta_get(ACTIVE_MODEL_KEY) == "hash-b"
        assert engram.vectors.count("hash-a") == 0
        assert engram.vectors._model_collections("hash-a") == []
        names = {
            c if isinstance(c, str) else c.name
            for c in engram.vectors._connect().list_collections()
        }
        assert collection_name("hash-a", "p") not in names
        assert collection_name("hash-b", "p") in names
        assert engram.vectors.count("hash-b") == engram.store.expected_vector_count("hash-b")
        assert engram.store.pending_count("hash-b") == 0
    finally:
        engram.close()

    engram = open_engram(data_dir, embedder=new)
    try:
        assert engram.embedder.model_id == "hash-b"
        assert engram.model_change() is None
        assert engram.start_up().queued == 0
        assert_all_findable(engram, ids[: len(TOPICS)])
        assert dense_ids(engram, "zeppelin hangars", 1) == [late.id]
        assert dense_ids(engram, "lava", 1) == [long_id]
        assert len(engram.vectors.query("hash-b", new.embed(["x"])[0], 1, None)[0:1]) == 1
    finally:
        engram.close()


def test_memory_embedding_text() -> None:
    from tests.services.builders import make_memory

    memory = make_memory("body text", title="Title")
    assert memory_embedding_text(memory) == "Title\nbody text"
