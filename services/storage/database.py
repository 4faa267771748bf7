"""The SQLite database: opening it safely (WAL, busy timeout), migrating it, and the
peewee models that map its tables.

Models are bound to `database_proxy`, which `open_database` initialises; the store owns
the one open database of a process.
"""

from __future__ import annotations

import errno
import logging
import os
import random
import sqlite3
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import peewee as pw

from services.errors import DiskFull, StoreDamaged, StoreReadOnly, StoreUnavailable
from services.storage.backup import (
    BACKUP_FOLDER,
    fullest_recent_backup,
    memory_count,
    newest_backup,
    read_only_uri,
    write_backup,
)
from services.storage.migrations import migrate, pending_migrations

log = logging.getLogger(__name__)
WRITE_WAIT_S = 60.0  # how long a write waits for other writers before it gives up
WRITE_WAIT_SAY_S = 3.0  # from when the wait is worth saying
DEFAULT_BACKUP_KEEP = 5  # the `backup.keep` setting's default

database_proxy = pw.DatabaseProxy()

T = TypeVar("T")
# SQLite allows 999 (older builds) or 32766 bound parameters a statement: ids go in
# batches well under the smaller limit.
ID_BATCH = 500


def batches(items: Sequence[T], size: int = ID_BATCH) -> Iterator[list[T]]:
    """`items` in consecutive lists of at most `size` (for `IN (?, ?, …)` lookups)."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


class _Model(pw.Model):
    class Meta:
        database = database_proxy
        legacy_table_names = False


class MemoryRow(_Model):
    id = pw.TextField(primary_key=True)
    project = pw.TextField(null=True)
    type = pw.TextField()
    title = pw.TextField()
    content = pw.TextField()
    summary = pw.TextField(null=True)
    compressed = pw.TextField(null=True)
    index_line = pw.TextField(null=True)
    tags = pw.TextField(default="[]")
    file_refs = pw.TextField(default="[]")
    confidence = pw.FloatField(default=0.5)
    source = pw.TextField(default="explicit")
    session_id = pw.TextField(null=True)
    task_id = pw.TextField(null=True)
    role = pw.TextField(null=True)
    branch = pw.TextField(null=True)
    scope = pw.TextField(default="project-shared")
    created_at = pw.TextField()
    created_ts = pw.FloatField()
    updated_at = pw.TextField()
    valid_from = pw.TextField(null=True)
    valid_to = pw.TextField(null=True)
    last_accessed = pw.TextField(null=True)
    retrieval_count = pw.IntegerField(default=0)
    citation_count = pw.IntegerField(default=0)
    ignore_count = pw.IntegerField(default=0)
    use_count = pw.IntegerField(default=0)
    supersedes = pw.TextField(null=True)
    superseded_by = pw.TextField(null=True)
    tier = pw.TextField(default="warm")
    embedded_model = pw.TextField(null=True)
    staged_model = pw.TextField(null=True)

    class Meta:
        table_name = "memory"


class ChunkRow(_Model):
    memory_id = pw.TextField()
    idx = pw.IntegerField()
    kind = pw.TextField()
    language = pw.TextField(null=True)
    text = pw.TextField()
    token_count = pw.IntegerField()

    class Meta:
        table_name = "chunk"


class UsageEventRow(_Model):
    memory_id = pw.TextField()
    event = pw.TextField()
    session_id = pw.TextField(null=True)
    at = pw.TextField()

    class Meta:
        table_name = "usage_event"


class SearchMetricRow(_Model):
    at = pw.TextField()
    retriever = pw.TextField()
    mode = pw.TextField()
    query_chars = pw.IntegerField()
    dense_count = pw.IntegerField()
    lexical_count = pw.IntegerField()
    identifier_count = pw.IntegerField()
    result_count = pw.IntegerField()
    embed_ms = pw.FloatField()
    dense_ms = pw.FloatField()
    lexical_ms = pw.FloatField()
    merge_ms = pw.FloatField()
    total_ms = pw.FloatField()
    top_similarity = pw.FloatField(null=True)
    flags = pw.TextField(default="[]")

    class Meta:
        table_name = "search_metric"


class MetaRow(_Model):
    key = pw.TextField(primary_key=True)
    value = pw.TextField()

    class Meta:
        table_name = "meta"


ALL_MODELS: tuple[type[pw.Model], ...] = (
    MemoryRow,
    ChunkRow,
    UsageEventRow,
    SearchMetricRow,
    MetaRow,
)


class EngramDatabase(pw.SqliteDatabase):
    """The peewee database, knowing whether it was opened read-only and why (the
    folder or file cannot be written, or the disk is full)."""

    read_only: bool = False
    disk_full: bool = False


DAMAGE_WORDS = ("malformed", "not a database", "file is encrypted", "disk image")
FULL_WORDS = ("database or disk is full", "disk is full", "sqlite_full")
FULL_BELOW = 1 << 20  # bytes free under which a failing write is put down to a full disk


def damaged_message(path: Path, what: str) -> StoreDamaged:
    """The database at `path` is damaged: say so, name salvage and the newest backup,
    and never claim the memories are intact."""
    fullest = fullest_recent_backup(path.parent / BACKUP_FOLDER)
    newest = None if fullest is not None else newest_backup(path.parent)
    if fullest is not None:  # not a salvaged copy that read nothing
        backup = (
            f"The backup of {fullest.created:%Y-%m-%d %H:%M} holds {fullest.memories} "
            f"memories: `engram restore {fullest.path}` puts it back."
        )
    elif newest is not None:
        backup = f"The newest backup is {newest}: `engram restore {newest}` puts it back."
    else:
        backup = f"There is no backup in {path.parent / BACKUP_FOLDER}."
    return StoreDamaged(
        f"{path} is damaged ({what}); memories in it may be lost. `engram salvage` copies "
        f"every readable row into a new database. {backup}"
    )


def disk_full_message(path: Path) -> DiskFull:
    return DiskFull(f"the disk holding {path.parent} is full; nothing was changed")


def disk_is_full(folder: Path) -> bool:
    """Less than `FULL_BELOW` left for this user on the disk holding `folder` (SQLite
    reports a write that ran out of space as a "disk I/O error" as often as "full")."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < FULL_BELOW


def read_only_message(path: Path, action: str = "write", reading: bool = True) -> StoreReadOnly:
    folder = path.parent
    where = f"the data folder {folder}" if not os.access(folder, os.W_OK) else f"{path}"
    works = " (reading works: search, list, show, export)" if reading else ""
    return StoreReadOnly(f"{where} is read-only; cannot {action}{works}")


def first_failure(error: BaseException) -> BaseException:
    """The error that started it: a failed commit's rollback can fail in turn ("cannot
    rollback - no transaction is active" after a full disk) and hide the first one."""
    seen: BaseException | None = error
    while isinstance(seen, pw.DatabaseError | sqlite3.DatabaseError):
        if any(word in str(seen).lower() for word in FULL_WORDS + DAMAGE_WORDS):
            return seen
        seen = seen.__context__
    return error


def describe_sqlite_error(error: BaseException, path: Path) -> StoreUnavailable:
    """Turn a sqlite/peewee operational error into a message that names the file."""
    text = str(error).lower()
    if any(word in text for word in FULL_WORDS):
        return disk_full_message(path)
    if "disk i/o error" in text and disk_is_full(path.parent):
        return disk_full_message(path)
    if any(word in text for word in DAMAGE_WORDS):
        return damaged_message(path, str(error))
    if "locked" in text or "busy" in text:
        reason = "the database is locked by another process (close it or try again)"
    elif "readonly" in text or "read-only" in text:
        return read_only_message(path)
    elif "unable to open" in text and path.is_dir():
        reason = "this is a folder, not a database file (move it aside)"
    elif "unable to open" in text:
        reason = "the database cannot be opened (can the folder be written?)"
    else:
        reason = str(error)
    return StoreUnavailable(f"{path}: {reason}")


def check_not_emptied(path: Path, vector_folder: Path | None = None) -> None:
    """Refuse a database file of 0 bytes where a database existed: backups of it, or
    vectors beside it, say so. Taking it for a new, empty store would lose everything
    (and let the vector index drop every vector as an orphan)."""
    if not path.is_file() or path.stat().st_size > 0:
        return
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        return  # a new database's first writes wait in its write-ahead log
    evidence = []
    if newest_backup(path.parent) is not None:
        evidence.append(f"backups in {path.parent / BACKUP_FOLDER}")
    if vector_folder is not None and _holds_folders(vector_folder):
        evidence.append(f"vectors in {vector_folder}")
    if evidence:
        raise damaged_message(
            path, f"it is empty, 0 bytes, but a database existed: {' and '.join(evidence)}"
        )


def _holds_folders(folder: Path) -> bool:
    """Chroma keeps each collection's vectors in a folder of its own."""
    return folder.is_dir() and any(entry.is_dir() for entry in folder.iterdir())


def _prepare_folder(path: Path) -> bool:
    """Create the data folder if needed (0700) and the database file (0600); False when
    the folder or the file cannot be written (the database then opens read-only)."""
    try:
        created = not path.parent.exists()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if created:
            path.parent.chmod(0o700)  # mkdir's mode is filtered by the umask
    except OSError as error:
        raise StoreUnavailable(f"{path.parent}: cannot create the data folder ({error})") from None
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return False
    try:
        if not path.exists():
            path.touch(mode=0o600)
            path.chmod(0o600)
    except OSError:
        pass  # SQLite says what is wrong below, naming the file
    return True


def open_database(
    path: Path, busy_timeout_ms: int = 5000, backup_keep: int = DEFAULT_BACKUP_KEEP
) -> pw.SqliteDatabase:
    """Open (creating if needed) and migrate the database at `path`, bound to the models.
    A data folder it creates is private to the user (0700), and so is a new database
    file (0600; SQLite gives its WAL and shared-memory files the same mode). Before a
    migration changes a database that holds memories, a backup is written. A folder or
    file that cannot be written opens read-only (writes then say why not)."""
    if not _prepare_folder(path):
        database = _open_read_only(path, busy_timeout_ms)
    else:
        try:
            database = _open_writable(path, busy_timeout_ms, backup_keep)
        except DiskFull:
            # Reading needs no space (but the write-ahead log's shared memory does):
            # searches still work, and writes say the disk is full.
            if not path.is_file() or path.stat().st_size == 0:
                raise
            database = _open_read_only(path, busy_timeout_ms, disk_full=True)
    database_proxy.initialize(database)
    return database


def _open_writable(path: Path, busy_timeout_ms: int, backup_keep: int) -> pw.SqliteDatabase:
    database: pw.SqliteDatabase = EngramDatabase(
        str(path),
        pragmas={
            "journal_mode": "wal",
            "foreign_keys": 1,
            "synchronous": "normal",
            "busy_timeout": busy_timeout_ms,
        },
        timeout=busy_timeout_ms / 1000,
    )

    def back_up_first(pending: list[str]) -> None:
        if backup_keep > 0 and memory_count(connection) > 0:
            write_backup(path, backup_keep, reason="before-upgrade")
            log.info("backed up %s before migrations %s", path, ", ".join(pending))

    try:
        database.connect(reuse_if_open=True)
        connection: sqlite3.Connection = database.connection()
        migrate(connection, before=back_up_first)
    except (pw.OperationalError, pw.DatabaseError, sqlite3.Error) as error:
        if not database.is_closed():
            database.close()
        raise describe_sqlite_error(error, path) from error
    return database


def _open_read_only(path: Path, busy_timeout_ms: int, disk_full: bool = False) -> pw.SqliteDatabase:
    """Open for reading only. Without a write-ahead log beside it the file is opened as
    immutable (nothing waits in a log; opening it otherwise would leave a log and a
    shared-memory file as unwritable as the database, which later writes trip on).
    With one, it is read through the log when SQLite can, else as immutable: writes
    still waiting in the log are then not seen."""
    if not path.is_file():
        raise read_only_message(path, f"create {path.name} there", reading=False)
    last: Exception | None = None
    has_log = path.with_name(path.name + "-wal").is_file()
    for flags in ("", "&immutable=1") if has_log else ("&immutable=1",):
        opened = EngramDatabase(
            read_only_uri(path) + flags,
            uri=True,
            pragmas={"foreign_keys": 1, "busy_timeout": busy_timeout_ms},
            timeout=busy_timeout_ms / 1000,
        )
        opened.read_only = True
        opened.disk_full = disk_full
        database: pw.SqliteDatabase = opened
        try:
            database.connect(reuse_if_open=True)
            pending = pending_migrations(database.connection())
        except (pw.OperationalError, pw.DatabaseError, sqlite3.Error) as error:
            if not database.is_closed():
                database.close()
            if any(word in str(error).lower() for word in DAMAGE_WORDS):
                raise damaged_message(path, str(error)) from error
            last = error
            continue
        if pending:
            database.close()
            raise read_only_message(
                path, f"upgrade the database ({len(pending)} migrations wait)", reading=False
            )
        return database
    raise describe_sqlite_error(last or RuntimeError("cannot open"), path)


def is_locked(error: BaseException) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


class SqliteStore:
    """An open database with its read and write guards: SQLite failures (locked,
    read-only, corrupt, disk full) become a `StoreUnavailable` naming the file."""

    path: Path
    database: pw.SqliteDatabase
    write_wait_s: float = WRITE_WAIT_S
    write_action: str = "write"  # what a refused write was for ("add"), for the message

    @property
    def read_only(self) -> bool:
        return bool(getattr(self.database, "read_only", False))

    def _bind_models(self) -> None:
        """Point the models at this store's database. They are bound to one proxy, which
        the last store opened in the process took: without this, a second store (a demo
        folder, a benchmark comparing folders) would make the first read and write the
        second's tables."""
        if database_proxy.obj is not self.database:
            database_proxy.initialize(self.database)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """One atomic write; SQLite failures become a StoreUnavailable naming the file.

        The write lock is taken when the transaction begins (BEGIN IMMEDIATE), so a
        write that reads first cannot be refused half-way by another writer; while
        other processes write, it waits (SQLite's busy timeout, then jittered retries,
        `WRITE_WAIT_S` in all) and says so after a few seconds. Inside another write it
        is a savepoint of that one. A store opened read-only refuses at once."""
        if getattr(self.database, "disk_full", False):
            raise disk_full_message(self.path)
        if self.read_only:
            raise read_only_message(self.path, self.write_action)
        self._bind_models()
        try:
            with self._write_transaction():
                yield
        except (pw.DatabaseError, sqlite3.DatabaseError) as error:
            if isinstance(error, pw.IntegrityError | sqlite3.IntegrityError):
                raise
            raise describe_sqlite_error(first_failure(error), self.path) from error
        except OSError as error:
            if error.errno == errno.ENOSPC:
                raise disk_full_message(self.path) from error
            raise

    @contextmanager
    def _write_transaction(self) -> Iterator[None]:
        if self.database.transaction_depth() > 0:
            with self.database.atomic():
                yield
            return
        transaction = self._begin_immediate()
        try:
            yield
        except BaseException as first:
            try:
                suppressed = transaction.__exit__(*sys.exc_info())
            except (pw.DatabaseError, sqlite3.DatabaseError) as rollback:
                # SQLite already rolled back (a full disk does): "cannot rollback - no
                # transaction is active" must not hide why the write failed.
                log.debug("rollback after %r failed: %s", first, rollback)
                raise first from None
            if not suppressed:
                raise
        else:
            transaction.__exit__(None, None, None)

    def _begin_immediate(self) -> Any:
        """Enter BEGIN IMMEDIATE, waiting for other writers with jittered retries."""
        started = time.monotonic()
        said = False
        delay = 0.05
        while True:
            transaction = self.database.atomic("IMMEDIATE")
            try:
                transaction.__enter__()
                return transaction
            except pw.OperationalError as error:
                if not is_locked(error):
                    raise
                waited = time.monotonic() - started
                if waited >= self.write_wait_s:
                    raise
                if not said and waited >= WRITE_WAIT_SAY_S:
                    log.warning("%s: waiting for other processes to finish writing", self.path)
                    said = True
                time.sleep(delay * random.uniform(0.5, 1.5))
                delay = min(delay * 2, 1.0)

    @contextmanager
    def _reading(self) -> Iterator[None]:
        self._bind_models()
        try:
            yield
        except (pw.DatabaseError, sqlite3.DatabaseError) as error:  # locked, corrupt
            raise describe_sqlite_error(error, self.path) from error
