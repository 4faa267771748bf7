"""Salvage on real SQLite files: a damaged database gives up most of its rows into a
fresh, intact one that Engram opens; the original is never changed; an intact one is
copied whole."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from services.errors import UserInputError
from services.filters import MemoryFilter
from services.storage.backup import check_engram_database
from services.storage.memories import MemoryStore
from services.storage.salvage import salvage
from tests.services.builders import make_memory

COUNT = 2000


def _filled(path: Path) -> None:
    store = MemoryStore(path)
    store.add_many(
        [make_memory(f"salvage subject {i} " + "words " * 40, id=f"m{i:04d}") for i in range(COUNT)]
    )
    store.close()
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("salvage") / "engram.sqlite3"
    _filled(path)
    return path


@pytest.fixture
def damaged(template: Path, tmp_path: Path) -> Path:
    """A copy with 16 KB overwritten in the middle (a few leaf pages of memories)."""
    path = tmp_path / "data" / "engram.sqlite3"
    path.parent.mkdir()
    data = bytearray(template.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 16 * 1024] = b"\xde\xad\xbe\xef" * 4096
    path.write_bytes(bytes(data))
    with sqlite3.connect(path) as connection, pytest.raises(sqlite3.DatabaseError):
        connection.execute("SELECT * FROM memory").fetchall()
    return path


def test_salvage_recovers_most_rows_of_a_damaged_database(damaged: Path, tmp_path: Path) -> None:
    before = _digest(damaged)
    output = tmp_path / "salvaged.sqlite3"

    report = salvage(damaged, output)

    assert _digest(damaged) == before  # the original is not touched
    assert report.method == "rows"
    assert COUNT * 0.95 <= report.memories < COUNT
    assert report.tables["memory"].recovered == report.memories
    assert report.tables["memory"].unreadable > 0
    assert check_engram_database(output) == report.memories  # intact, an Engram database
    assert output.stat().st_mode & 0o777 == 0o600
    store = MemoryStore(output)
    try:
        memories = list(store.iter_all())
        assert len(memories) == report.memories
        assert all(m.content.startswith(f"salvage subject {int(m.id[1:])} ") for m in memories)
        assert store.rebuild_fts() == report.memories  # the lexical index is rebuilt from them
        assert store.lexical("salvage subject", 5)
        assert store.count(MemoryFilter.everything()) == report.memories
    finally:
        store.close()


def test_salvage_of_an_intact_database_copies_it_whole(template: Path, tmp_path: Path) -> None:
    output = tmp_path / "whole.sqlite3"
    report = salvage(template, output)
    assert report.method == "vacuum"
    assert report.memories == COUNT
    assert report.unreadable == 0
    assert check_engram_database(output) == COUNT


def test_salvage_reads_writes_still_in_the_write_ahead_log(tmp_path: Path) -> None:
    path = tmp_path / "engram.sqlite3"
    store = MemoryStore(path)
    store.add(make_memory("only in the log so far", id="logged"))
    # the store stays open: its write-ahead log still holds the write
    try:
        report = salvage(path, tmp_path / "out.sqlite3")
    finally:
        store.close()
    assert report.memories == 1


def test_salvage_refuses_to_overwrite_or_to_read_nothing(template: Path, tmp_path: Path) -> None:
    existing = tmp_path / "taken.sqlite3"
    existing.write_bytes(b"keep me")
    with pytest.raises(UserInputError, match="already exists"):
        salvage(template, existing)
    assert existing.read_bytes() == b"keep me"
    with pytest.raises(UserInputError, match="no such file"):
        salvage(tmp_path / "missing.sqlite3", tmp_path / "out.sqlite3")
