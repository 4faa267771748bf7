"""A damaged Chroma folder (real Chroma, real files overwritten) is set aside, never
deleted, and rebuilt from SQLite whatever first touches it (start-up, add, search,
reindex), the user told once; an emptied or replaced database never costs the vectors."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from app.composition import Engram, open_engram
from services.search.retrieval import RetrieverKind
from services.vectors.index import VectorIndex, VectorIndexDamaged, VectorItem, is_damage
from services.vectors.indexing import ORPHANS_ALWAYS_REMOVED
from tests.fakes import HashEmbedder
from tests.services.vectors.test_indexing import TOPICS, add_topics, assert_all_findable, in_step


def _overwrite_middle(chroma: Path) -> None:
    with (chroma / "chroma.sqlite3").open("r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xde\xad" * 20_000)


def _garbage_header(chroma: Path) -> None:
    with (chroma / "chroma.sqlite3").open("r+b") as handle:
        handle.write(b"garbage!" * 16)


def _truncate_half(chroma: Path) -> None:
    database = chroma / "chroma.sqlite3"
    with database.open("r+b") as handle:
        handle.truncate(database.stat().st_size // 2)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "overwritten": _overwrite_middle,
    "header": _garbage_header,
    "truncated": _truncate_half,
}


@pytest.fixture
def damaged(data_dir: Path) -> Iterator[tuple[Path, list[str]]]:
    """A data folder with eight embedded memories whose chroma.sqlite3 is then damaged."""
    engram = open_engram(data_dir, embedder=HashEmbedder())
    ids = add_topics(engram)
    engram.close()
    _overwrite_middle(data_dir / "chroma")
    yield data_dir, ids


def _open(data_dir: Path) -> tuple[Engram, list[str]]:
    notices: list[str] = []
    engram = open_engram(data_dir, embedder=HashEmbedder())
    engram.indexer.notice = notices.append
    return engram, notices


def _set_aside(data_dir: Path) -> list[Path]:
    return sorted(data_dir.glob("chroma.damaged-*"))


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_start_up_sets_a_damaged_index_aside_and_rebuilds_it(data_dir: Path, kind: str) -> None:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    ids = add_topics(engram)
    records = {m.id: m for m in engram.store.iter_all()}
    engram.close()
    size = (data_dir / "chroma" / "chroma.sqlite3").stat().st_size
    DAMAGE[kind](data_dir / "chroma")
    damaged_size = (data_dir / "chroma" / "chroma.sqlite3").stat().st_size

    engram, notices = _open(data_dir)
    try:
        report = engram.start_up()
        [moved] = _set_aside(data_dir)
        assert moved.name.startswith("chroma.damaged-")
        assert report.set_aside == moved
        assert report.queued == len(ids)
        # set aside whole, as it was found: nothing deleted
        assert (moved / "chroma.sqlite3").stat().st_size == damaged_size <= size
        assert notices == [
            f"the vector index was damaged; set aside as {moved} and rebuilt from the "
            f"database ({len(ids)} memories re-embedding; until then they are found by keywords)"
        ]
        model = engram.embedder.model_id
        assert engram.store.pending_count(model) == len(ids)
        assert engram.indexer.process_pending() == len(ids)
        assert in_step(engram)
        assert_all_findable(engram, ids)
        assert {m.id: m for m in engram.store.iter_all()} == records
        assert engram.start_up().set_aside is None
    finally:
        engram.close()

    engram, notices = _open(data_dir)
    try:
        assert engram.start_up().queued == 0
        assert notices == []
        assert len(_set_aside(data_dir)) == 1
    finally:
        engram.close()


def test_add_on_a_damaged_index_stores_and_embeds(damaged: tuple[Path, list[str]]) -> None:
    data_dir, ids = damaged
    engram, notices = _open(data_dir)
    try:
        memory = engram.service.add({"content": "Notes about zinc roofs only.", "project": "p"})
        assert engram.store.get(memory.id) is not None
        assert len(notices) == 1 and "set aside as" in notices[0]
        assert len(_set_aside(data_dir)) == 1
        model = engram.embedder.model_id
        # the new memory went into the fresh index; the older ones wait
        assert engram.store.pending_count(model) == len(ids)
        response = engram.service.search("zinc roofs", limit=1, kind=RetrieverKind.DENSE)
        assert [r.memory.id for r in response.results] == [memory.id]
    finally:
        engram.close()


def test_search_on_a_damaged_index_falls_back_to_keywords(
    damaged: tuple[Path, list[str]],
) -> None:
    data_dir, ids = damaged
    engram, notices = _open(data_dir)
    try:
        response = engram.service.search(TOPICS[3], limit=3)
        assert response.results[0].memory.id == ids[3]
        assert "vectors_unavailable" in response.flags
        assert len(notices) == 1
        assert engram.store.pending_count(engram.embedder.model_id) == len(ids)
        assert engram.indexer.process_pending() == len(ids)
        assert_all_findable(engram, ids)
    finally:
        engram.close()


def test_reindex_repairs_a_damaged_index(damaged: tuple[Path, list[str]]) -> None:
    data_dir, ids = damaged
    engram, notices = _open(data_dir)
    try:
        assert engram.indexer.reindex() == len(ids)
        assert len(notices) == 1
        assert len(_set_aside(data_dir)) == 1
        assert in_step(engram)
        assert_all_findable(engram, ids)
    finally:
        engram.close()


def _index_with_hnsw_files(path: Path, count: int = 1200) -> VectorIndex:
    """Enough vectors that Chroma writes its HNSW segment files (over its 1,000 batch)."""
    vectors = VectorIndex(path)
    rng = np.random.default_rng(7)
    items = [VectorItem(f"m{i}", -1, rng.random(16).tolist()) for i in range(count)]
    vectors.upsert("model", "p", items)
    vectors.close()
    return VectorIndex(path)


def test_an_unreadable_hnsw_segment_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    vectors = _index_with_hnsw_files(path)
    [pickle] = path.glob("*/index_metadata.pickle")
    pickle.write_bytes(b"\xe6not a pickle" * 20)
    moved: list[Path] = []
    vectors.on_set_aside = moved.append
    with pytest.raises(VectorIndexDamaged) as raised:
        vectors.count("model")
    assert moved == [raised.value.set_aside_as] == _set_aside(tmp_path)
    assert (moved[0] / pickle.parent.name / pickle.name).exists()
    assert vectors.count("model") == 0
    vectors.upsert("model", "p", [VectorItem("fresh", -1, [1.0] * 16)])
    assert vectors.count("model") == 1
    vectors.close()


@pytest.mark.parametrize(
    ("error", "damage"),
    [
        (sqlite3.DatabaseError("database disk image is malformed"), True),
        (RuntimeError("error returned from database: (code: 26) file is not a database"), True),
        (RuntimeError("Error constructing hnsw segment reader: Error loading hnsw index"), True),
        (sqlite3.OperationalError("database is locked"), False),
        (sqlite3.OperationalError("attempt to write a readonly database"), False),
        (RuntimeError("error returned from database: (code: 13) database or disk is full"), False),
        (PermissionError("[Errno 13] Permission denied: 'chroma.sqlite3'"), False),
        (ConnectionError("Could not connect to a Chroma server"), False),
    ],
)
def test_only_damage_is_damage(error: Exception, damage: bool) -> None:
    assert is_damage(error) is damage


def test_a_busy_index_is_not_set_aside(tmp_path: Path) -> None:
    vectors = VectorIndex(tmp_path / "chroma")
    assert vectors._failure(sqlite3.OperationalError("database is locked"), "x").__class__ is not (
        VectorIndexDamaged
    )
    assert _set_aside(tmp_path) == []


def test_a_replaced_database_keeps_the_vectors(data_dir: Path, tmp_path: Path) -> None:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    ids = add_topics(engram) + add_topics(engram, project="q")
    assert len(ids) > ORPHANS_ALWAYS_REMOVED
    model = engram.embedder.model_id
    engram.close()
    # an emptied database (a new, empty file) beside the old vectors
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copytree(data_dir / "chroma", fresh / "chroma")

    engram, notices = _open(fresh)
    try:
        report = engram.start_up()
        assert (report.orphans_kept, report.orphans_removed) == (len(ids), 0)
        assert engram.vectors.count(model) == len(ids)
        [notice] = notices
        assert f"kept {len(ids)} of {len(ids)} vectors" in notice
        assert "(0 memories there)" in notice
        assert "engram salvage" in notice and "engram restore" in notice
        assert engram.indexer.reindex() == 0
        assert engram.vectors.count(model) == len(ids)
        # one new memory does not make the many old vectors strays either
        engram.service.add({"content": "Notes about zinc roofs only.", "project": "p"})
        assert engram.start_up().orphans_kept == len(ids)
        assert engram.vectors.count(model) == len(ids) + 1
    finally:
        engram.close()


def test_a_few_orphans_are_still_removed(engram: Engram) -> None:
    ids = add_topics(engram) + add_topics(engram, project="q")
    model = engram.embedder.model_id
    vector = HashEmbedder().embed(["ghost"])[0].tolist()
    ghosts = [VectorItem(f"ghost-{i}", -1, vector) for i in range(ORPHANS_ALWAYS_REMOVED + 1)]
    engram.vectors.upsert(model, "p", ghosts)
    # 11 orphans of 27 vectors: more than a handful but less than half
    report = engram.start_up()
    assert (report.orphans_removed, report.orphans_kept) == (len(ghosts), 0)
    assert engram.vectors.count(model) == len(ids)


def test_an_empty_database_never_deletes_even_a_few_vectors(data_dir: Path, tmp_path: Path) -> None:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    ids = add_topics(engram)
    assert len(ids) <= ORPHANS_ALWAYS_REMOVED
    engram.close()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copytree(data_dir / "chroma", fresh / "chroma")
    engram, notices = _open(fresh)
    try:
        assert engram.start_up().orphans_kept == len(ids)
        assert engram.vectors.count(engram.embedder.model_id) == len(ids)
        assert len(notices) == 1
    finally:
        engram.close()
