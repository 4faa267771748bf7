"""Backups on real SQLite files: written with the backup API and checked, pruned to the
newest `keep`, listed, restored (the current database backed up first), automatic
before a migration and when the interval has passed; a damaged or emptied database is
reported as damaged, naming the newest backup; a full disk is reported as full."""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.errors import DiskFull, StoreDamaged, UserInputError
from services.storage.backup import (
    backup_folder,
    backup_if_due,
    check_engram_database,
    list_backups,
    newest_backup,
    prune,
    restore_backup,
    write_backup,
)
from services.storage.database import check_not_emptied
from services.storage.memories import MemoryStore
from services.storage.migrations import MIGRATIONS, migrate
from tests.services.builders import make_memory


def _filled(path: Path, count: int = 120) -> None:
    store = MemoryStore(path)
    store.add_many([make_memory(f"memory number {i} " * 30, id=f"m{i}") for i in range(count)])
    store.close()


def _ids(path: Path) -> set[str]:
    store = MemoryStore(path)
    try:
        return store.all_ids()
    finally:
        store.close()


def _damage(path: Path, size: int = 16 * 1024) -> None:
    """Overwrite bytes in the middle of the file (after folding the log into it)."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + size] = b"\xa5" * size
    path.write_bytes(bytes(data))


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "engram.sqlite3"
    _filled(path)
    return path


def test_a_backup_is_a_checked_private_copy(database: Path) -> None:
    written = write_backup(database, keep=5)
    assert written.parent == backup_folder(database) == database.parent / "backups"
    assert written.name.startswith("engram-") and written.name.endswith(".sqlite3")
    assert written.stat().st_mode & 0o777 == 0o600
    assert written.parent.stat().st_mode & 0o777 == 0o700
    assert check_engram_database(written) == 120
    assert _ids(written) == {f"m{i}" for i in range(120)}
    # one self-contained file: no write-ahead log needed to read it
    assert not written.with_name(written.name + "-wal").exists()
    assert [p.name for p in written.parent.iterdir() if p.name.endswith(".partial")] == []


def test_backups_are_pruned_to_the_newest_kept(database: Path) -> None:
    start = datetime(2026, 1, 1, 12, 0, 0)
    written = [
        write_backup(database, keep=3, now=start + timedelta(hours=hour)) for hour in range(5)
    ]
    listed = list_backups(backup_folder(database))
    assert [info.path for info in listed] == written[:1:-1]  # the newest three, newest first
    assert [info.memories for info in listed] == [120, 120, 120]
    assert newest_backup(database.parent) == written[-1]
    assert prune(backup_folder(database), 1) == written[3:1:-1]


def test_keep_zero_prunes_nothing_and_names_do_not_collide(database: Path) -> None:
    moment = datetime(2026, 1, 1, 12, 0, 0)
    first = write_backup(database, keep=0, now=moment)
    second = write_backup(database, keep=0, now=moment)
    assert first != second and first.exists() and second.exists()
    assert {info.path for info in list_backups(backup_folder(database))} == {first, second}


def test_a_damaged_database_does_not_push_good_backups_out(database: Path) -> None:
    good = write_backup(database, keep=1)
    _damage(database)
    with pytest.raises(StoreDamaged, match=r"older ones kept|cannot be backed up"):
        write_backup(database, keep=1)
    assert [info.path for info in list_backups(backup_folder(database))] == [good]


def test_restore_backs_up_the_current_database_first(database: Path) -> None:
    backup = write_backup(database, keep=5)
    store = MemoryStore(database)
    store.add(make_memory("written after the backup", id="late"))
    store.close()

    report = restore_backup(backup, database, keep=5)

    assert report.memories == 120
    assert report.before_restore is not None
    assert "before-restore" in report.before_restore.name
    assert "late" in _ids(report.before_restore)
    assert _ids(database) == {f"m{i}" for i in range(120)}
    assert database.stat().st_mode & 0o777 == 0o600


def test_restore_replaces_a_damaged_database_and_keeps_its_bytes(database: Path) -> None:
    backup = write_backup(database, keep=5)
    _damage(database)
    damaged_bytes = database.read_bytes()
    report = restore_backup(backup, database, keep=5)
    assert report.before_restore is not None
    # page for page (the file header's journal mode and counters aside)
    assert report.before_restore.read_bytes()[100:] == damaged_bytes[100:]
    assert _ids(database) == {f"m{i}" for i in range(120)}


def test_restore_refuses_what_is_not_an_intact_engram_database(
    database: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all\n" * 200)
    damaged = write_backup(database, keep=5)
    _damage(damaged, size=48 * 1024)
    before = database.read_bytes()
    for candidate, reason in (
        (other, "not an Engram database"),
        (text, "cannot be read as a database"),
        (damaged, "damaged|cannot be read"),
        (tmp_path / "missing.sqlite3", "no such file"),
    ):
        with pytest.raises(UserInputError, match=reason):
            restore_backup(candidate, database, keep=5)
    assert database.read_bytes() == before


def test_backup_if_due_writes_once_per_interval(database: Path) -> None:
    first = backup_if_due(database, keep=5, interval_hours=24)
    assert first is not None and "auto" in first.name
    assert backup_if_due(database, keep=5, interval_hours=24) is None
    day_ago = time.time() - 25 * 3600
    os.utime(first, (day_ago, day_ago))
    assert backup_if_due(database, keep=5, interval_hours=24) is not None
    assert backup_if_due(database, keep=0, interval_hours=1) is None  # backups off


def test_backup_if_due_skips_an_empty_store(tmp_path: Path) -> None:
    path = tmp_path / "engram.sqlite3"
    MemoryStore(path).close()
    assert backup_if_due(path, keep=5, interval_hours=1) is None
    assert not backup_folder(path).exists()


def test_a_migration_is_preceded_by_a_backup(tmp_path: Path) -> None:
    database = tmp_path / "engram.sqlite3"
    last = MIGRATIONS[-1].name
    with sqlite3.connect(database, isolation_level=None) as connection:
        migrate(connection, MIGRATIONS[:-1])  # a database of the previous version
        connection.execute(
            "INSERT INTO memory (id, type, title, content, created_at, created_ts, updated_at) "
            "VALUES ('old', 'fact', 'Old', 'from the previous version', '2026-01-01', 0, "
            "'2026-01-01')"
        )
    assert newest_backup(database.parent) is None
    assert _ids(database) == {"old"}  # opening runs the pending migration
    backup = newest_backup(database.parent)
    assert backup is not None and "before-upgrade" in backup.name
    with sqlite3.connect(backup) as connection:
        recorded = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
    assert last not in recorded  # the copy is of the database as it was before
    _ids(database)
    assert len(list_backups(backup_folder(database))) == 1  # nothing pending: no backup


def test_a_new_database_gets_no_backup_before_its_first_migrations(tmp_path: Path) -> None:
    MemoryStore(tmp_path / "engram.sqlite3").close()
    assert newest_backup(tmp_path) is None


def test_damage_names_the_newest_backup(database: Path) -> None:
    backup = write_backup(database, keep=5)
    _damage(database, size=64 * 1024)
    with pytest.raises(StoreDamaged) as caught:
        store = MemoryStore(database)
        try:
            list(store.iter_all())
        finally:
            store.close()
    message = str(caught.value)
    assert str(database) in message and "is damaged" in message
    assert f"engram restore {backup}" in message
    assert "engram salvage" in message
    assert "intact" not in message


def test_an_emptied_database_beside_backups_or_vectors_is_damage(
    database: Path, tmp_path: Path
) -> None:
    check_not_emptied(database)  # a real database: nothing to say
    write_backup(database, keep=5)
    database.write_bytes(b"")
    with pytest.raises(StoreDamaged, match=r"0 bytes.*backups in"):
        check_not_emptied(database)
    alone = tmp_path / "alone" / "engram.sqlite3"
    alone.parent.mkdir()
    alone.write_bytes(b"")
    check_not_emptied(alone, alone.parent / "chroma")  # nothing says one existed
    (alone.parent / "chroma" / "4f1c-segment").mkdir(parents=True)
    with pytest.raises(StoreDamaged, match="vectors in"):
        check_not_emptied(alone, alone.parent / "chroma")


def test_a_full_disk_is_reported_as_full_and_changes_nothing(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "engram.sqlite3")
    try:
        store.add(make_memory("first", id="first"))
        pages = store.database.execute_sql("PRAGMA page_count").fetchone()[0]
        store.database.execute_sql(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL
        with pytest.raises(DiskFull) as caught:
            store.add(make_memory("a long memory " * 20_000, id="big"))
        assert str(caught.value) == f"the disk holding {tmp_path} is full; nothing was changed"
        assert store.all_ids() == {"first"}
    finally:
        store.close()
