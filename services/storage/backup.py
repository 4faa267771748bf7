"""Backups of the SQLite database and restoring one.

A backup is a consistent copy taken with SQLite's online backup API (writers may keep
writing meanwhile) into `<data>/backups/engram-YYYYmmdd-HHMMSS[-reason].sqlite3`
(the folder 0700, each file 0600, in rollback-journal mode so it is one self-contained
file). Each new backup passes `PRAGMA quick_check` before older ones are pruned to the
newest `keep`, so a damaged database never pushes the good backups out.

Restoring checks that the file is an intact Engram database, backs up the current
database first (`…-before-restore`), and then replaces it atomically; the vector index
follows at the next start (`Indexer.reconcile` queues what it lacks for embedding).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from services.errors import StoreDamaged, StoreUnavailable, UserInputError
from services.storage.file_lock import file_lock

BACKUP_FOLDER = "backups"
LOCK_FILE = ".lock"
_NAME = re.compile(r"^engram-(\d{8}-\d{6})(?:-([a-z0-9-]+?))?(?:-(\d+))?\.sqlite3$")
_STAMP = "%Y%m%d-%H%M%S"
REQUIRED_TABLES = ("memory", "meta")


@dataclass(frozen=True)
class BackupInfo:
    path: Path
    created: datetime
    reason: str
    size: int
    memories: int | None  # None: the file cannot be read as an Engram database


@dataclass(frozen=True)
class RestoreReport:
    restored: Path
    memories: int
    before_restore: Path | None  # the backup of the database that was replaced


def backup_folder(database: Path) -> Path:
    """Where the backups of `database` live: `backups/` beside it, in the data folder."""
    return database.parent / BACKUP_FOLDER


def read_only_uri(path: Path) -> str:
    """A URI that opens `path` for reading only (never creating it)."""
    return f"{path.resolve().as_uri()}?mode=ro"


@contextlib.contextmanager
def _connection(target: str | Path, uri: bool = False) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(target, uri=uri, isolation_level=None)
    try:
        yield connection
    finally:
        connection.close()


def _tables(connection: sqlite3.Connection) -> set[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(row[0]) for row in rows}


def memory_count(connection: sqlite3.Connection) -> int:
    """How many memories an Engram database holds (0 when it has no memory table yet)."""
    if "memory" not in _tables(connection):
        return 0
    return int(connection.execute("SELECT count(*) FROM memory").fetchone()[0])


def quick_check(connection: sqlite3.Connection) -> str | None:
    """None when SQLite's quick check passes, else its first complaint."""
    rows = connection.execute("PRAGMA quick_check").fetchall()
    first = str(rows[0][0]) if rows else "no answer"
    return None if first == "ok" else first


def check_engram_database(path: Path) -> int:
    """The number of memories in `path` if it is an intact Engram database; a
    UserInputError naming the file and what is wrong otherwise."""
    if not path.is_file():
        raise UserInputError(f"{path}: no such file")
    try:
        with _connection(read_only_uri(path), uri=True) as connection:
            missing = [name for name in REQUIRED_TABLES if name not in _tables(connection)]
            if missing:
                raise UserInputError(
                    f"{path} is not an Engram database (no {' or '.join(missing)} table)"
                )
            problem = quick_check(connection)
            if problem is not None:
                raise UserInputError(f"{path} is damaged ({problem}); choose another backup")
            return memory_count(connection)
    except sqlite3.DatabaseError as error:
        raise UserInputError(f"{path} cannot be read as a database ({error})") from None


# --- writing backups --------------------------------------------------------------------


def _backup_lock(folder: Path, wait: bool) -> contextlib.AbstractContextManager[bool]:
    """True when this process holds the backups folder's lock (two processes never
    write or prune backups at once; an automatic backup skips instead of waiting)."""
    return file_lock(folder / LOCK_FILE, wait)


def _make_folder(folder: Path) -> None:
    try:
        created = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if created:
            folder.chmod(0o700)  # mkdir's mode is filtered by the umask
    except OSError as error:
        raise StoreUnavailable(f"{folder}: cannot create the backups folder ({error})") from None


def _free_name(folder: Path, reason: str, now: datetime) -> Path:
    stem = f"engram-{now.strftime(_STAMP)}" + (f"-{reason}" if reason else "")
    candidate = folder / f"{stem}.sqlite3"
    number = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{number}.sqlite3"
        number += 1
    return candidate


def _copy_pages(database: Path, target: Path, verify: bool) -> None:
    """Copy `database` into the new file `target` with the backup API, as a
    self-contained rollback-journal file; with `verify`, it must pass quick_check."""
    with (
        _connection(read_only_uri(database), uri=True) as source,
        _connection(target) as copy,
    ):
        source.backup(copy)
        copy.execute("PRAGMA journal_mode = DELETE")
        problem = quick_check(copy) if verify else None
        if problem is None and verify and REQUIRED_TABLES[0] not in _tables(copy):
            problem = "no memory table"
    if problem is not None:
        raise StoreDamaged(
            f"{database} did not copy intact ({problem}); no backup written, older ones kept. "
            "`engram salvage` copies what is readable"
        )


def write_backup(
    database: Path,
    keep: int,
    reason: str = "",
    verify: bool = True,
    now: datetime | None = None,
) -> Path:
    """Write a backup of `database` now and keep the newest `keep` (0 keeps all:
    pruning is for automatic backups; an explicit one is never refused)."""
    folder = backup_folder(database)
    _make_folder(folder)
    with _backup_lock(folder, wait=True):
        return _write_locked(database, keep, reason, verify, now or datetime.now())


def _write_locked(database: Path, keep: int, reason: str, verify: bool, now: datetime) -> Path:
    folder = backup_folder(database)
    target = _free_name(folder, reason, now)
    partial = target.with_name(f".{target.name}.partial")
    try:
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        partial.chmod(0o600)
        _copy_pages(database, partial, verify)
        os.replace(partial, target)
    except sqlite3.DatabaseError as error:
        raise StoreDamaged(
            f"{database} cannot be backed up ({error}); `engram salvage` copies what is readable"
        ) from None
    finally:
        partial.unlink(missing_ok=True)
    if keep > 0:
        prune(folder, keep, protect=target)
    return target


def backup_due(database: Path, interval_hours: float) -> bool:
    """Whether the newest backup of `database` is older than `interval_hours`."""
    newest = newest_backup(database.parent)
    if newest is None:
        return True
    return time.time() - newest.stat().st_mtime >= interval_hours * 3600


def backup_if_due(database: Path, keep: int, interval_hours: float) -> Path | None:
    """An automatic backup when the newest is older than `interval_hours` and the
    database holds memories; None when none was due, backups are off (`keep` 0) or
    another process is writing one."""
    if keep <= 0 or not database.is_file() or database.stat().st_size == 0:
        return None
    if not backup_due(database, interval_hours):
        return None
    with _connection(read_only_uri(database), uri=True) as connection:
        if memory_count(connection) == 0:
            return None
    folder = backup_folder(database)
    _make_folder(folder)
    with _backup_lock(folder, wait=False) as held:
        if not held or not backup_due(database, interval_hours):
            return None
        return _write_locked(database, keep, "auto", True, datetime.now())


def prune(folder: Path, keep: int, protect: Path | None = None) -> list[Path]:
    """Remove all but the newest `keep` backups (never `protect`); returns the removed."""
    removed: list[Path] = []
    for info in list_backups(folder, count=False)[keep:]:
        if info.path == protect:
            continue
        info.path.unlink(missing_ok=True)
        removed.append(info.path)
    return removed


# --- finding backups --------------------------------------------------------------------


def _created(path: Path) -> tuple[datetime, str] | None:
    match = _NAME.match(path.name)
    if match is None:
        return None
    try:
        created = datetime.strptime(match.group(1), _STAMP)
    except ValueError:
        return None
    return created, match.group(2) or ""


def _count_in(path: Path) -> int | None:
    try:
        with _connection(read_only_uri(path), uri=True) as connection:
            return memory_count(connection)
    except sqlite3.DatabaseError:
        return None


def list_backups(folder: Path, count: bool = True) -> list[BackupInfo]:
    """The backups in `folder`, newest first; `count` reads each one's memory count."""
    if not folder.is_dir():
        return []
    found: list[tuple[float, BackupInfo]] = []
    for path in folder.iterdir():
        parsed = _created(path)
        if parsed is None or not path.is_file():
            continue
        stat = path.stat()
        memories = _count_in(path) if count else None
        found.append(
            (stat.st_mtime, BackupInfo(path, parsed[0], parsed[1], stat.st_size, memories))
        )
    found.sort(key=lambda item: (item[1].created, item[0], item[1].path.name), reverse=True)
    return [info for _mtime, info in found]


def fullest_recent_backup(folder: Path, besides: Path | None = None) -> BackupInfo | None:
    """The newest backup in `folder` that opens and holds the most memories of the
    readable ones (a salvaged copy or `besides` left out): what to restore when a
    salvage got less back."""
    readable = [
        info
        for info in list_backups(folder)
        if info.memories and info.reason != "salvaged" and info.path != besides
    ]
    most = max((info.memories or 0 for info in readable), default=0)
    return next((info for info in readable if info.memories == most), None)


def newest_backup(data_dir: Path) -> Path | None:
    """The newest backup in the data folder, or None."""
    backups = list_backups(data_dir / BACKUP_FOLDER, count=False)
    return backups[0].path if backups else None


# --- restoring --------------------------------------------------------------------------


def _set_aside(database: Path, keep: int) -> Path | None:
    """Back up the database about to be replaced; a damaged one is copied byte for
    byte (with its write-ahead log) so nothing is thrown away."""
    if not database.is_file() or database.stat().st_size == 0:
        return None
    try:
        return write_backup(database, keep=0, reason="before-restore", verify=False)
    except (StoreDamaged, sqlite3.DatabaseError):
        folder = backup_folder(database)
        target = _free_name(folder, "before-restore", datetime.now())
        shutil.copy2(database, target)
        target.chmod(0o600)
        wal = database.with_name(database.name + "-wal")
        if wal.is_file():
            shutil.copy2(wal, target.with_name(target.name + "-wal"))
        return target


def restore_backup(backup: Path, database: Path, keep: int) -> RestoreReport:
    """Replace `database` with the Engram database `backup` (checked first), after
    backing the current one up. Other processes using the database must be closed."""
    memories = check_engram_database(backup)
    before = _set_aside(database, keep)
    incoming = database.with_name(f".{database.name}.restoring")
    try:
        shutil.copyfile(backup, incoming)
        incoming.chmod(0o600)
        with open(incoming, "rb+") as handle:
            os.fsync(handle.fileno())
        # A write-ahead log left beside the new file would be replayed into it.
        for suffix in ("-wal", "-shm"):
            database.with_name(database.name + suffix).unlink(missing_ok=True)
        os.replace(incoming, database)
    except OSError as error:
        incoming.unlink(missing_ok=True)
        raise StoreUnavailable(
            f"{database}: cannot restore ({error}); nothing was replaced"
        ) from None
    return RestoreReport(backup, memories, before)
