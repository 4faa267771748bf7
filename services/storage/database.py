"""The SQLite database: opening it safely (WAL, busy timeout), migrating it, and the
peewee models that map its tables.

Models are bound to `database_proxy`, which `open_database` initialises; the store owns
the one open database of a process.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import peewee as pw

from services.errors import StoreUnavailable
from services.storage.migrations import migrate

log = logging.getLogger(__name__)
WRITE_WAIT_S = 60.0  # how long a write waits for other writers before it gives up
WRITE_WAIT_SAY_S = 3.0  # from when the wait is worth saying

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


def describe_sqlite_error(error: Exception, path: Path) -> StoreUnavailable:
    """Turn a sqlite/peewee operational error into a message that names the file."""
    text = str(error).lower()
    if "locked" in text or "busy" in text:
        reason = "the database is locked by another process (close it or try again)"
    elif "readonly" in text or "read-only" in text or "unable to open" in text:
        reason = "the database cannot be written (is the folder read-only?)"
    elif "malformed" in text or "not a database" in text:
        reason = "the database file is corrupt (restore a backup or move it aside)"
    else:
        reason = str(error)
    return StoreUnavailable(f"{path}: {reason}")


def open_database(path: Path, busy_timeout_ms: int = 5000) -> pw.SqliteDatabase:
    """Open (creating if needed) and migrate the database at `path`, bound to the models.
    A data folder it creates is private to the user (0700), and so is a new database
    file (0600; SQLite gives its WAL and shared-memory files the same mode)."""
    try:
        created = not path.parent.exists()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if created:
            path.parent.chmod(0o700)  # mkdir's mode is filtered by the umask
    except OSError as error:
        raise StoreUnavailable(f"{path.parent}: cannot create the data folder ({error})") from None
    try:
        if not path.exists():
            path.touch(mode=0o600)
            path.chmod(0o600)
    except OSError:
        pass  # a folder that cannot be written: SQLite says so below, naming the file
    database = pw.SqliteDatabase(
        str(path),
        pragmas={
            "journal_mode": "wal",
            "foreign_keys": 1,
            "synchronous": "normal",
            "busy_timeout": busy_timeout_ms,
        },
        timeout=busy_timeout_ms / 1000,
    )
    try:
        database.connect(reuse_if_open=True)
        connection: sqlite3.Connection = database.connection()
        migrate(connection)
    except (pw.OperationalError, pw.DatabaseError, sqlite3.Error) as error:
        if not database.is_closed():
            database.close()
        raise describe_sqlite_error(error, path) from error
    database_proxy.initialize(database)
    return database


def is_locked(error: BaseException) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


class SqliteStore:
    """An open database with its read and write guards: SQLite failures (locked,
    read-only, corrupt) become a `StoreUnavailable` naming the file."""

    path: Path
    database: pw.SqliteDatabase
    write_wait_s: float = WRITE_WAIT_S

    @contextmanager
    def writing(self) -> Iterator[None]:
        """One atomic write; SQLite failures become a StoreUnavailable naming the file.

        The write lock is taken when the transaction begins (BEGIN IMMEDIATE), so a
        write that reads first cannot be refused half-way by another writer; while
        other processes write, it waits (SQLite's busy timeout, then jittered retries,
        `WRITE_WAIT_S` in all) and says so after a few seconds. Inside another write it
        is a savepoint of that one."""
        try:
            with self._write_transaction():
                yield
        except (pw.DatabaseError, sqlite3.DatabaseError) as error:
            if isinstance(error, pw.IntegrityError | sqlite3.IntegrityError):
                raise
            raise describe_sqlite_error(error, self.path) from error

    @contextmanager
    def _write_transaction(self) -> Iterator[None]:
        if self.database.transaction_depth() > 0:
            with self.database.atomic():
                yield
            return
        transaction = self._begin_immediate()
        try:
            yield
        except BaseException:
            if not transaction.__exit__(*sys.exc_info()):
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
        try:
            yield
        except (pw.DatabaseError, sqlite3.DatabaseError) as error:  # locked, corrupt
            raise describe_sqlite_error(error, self.path) from error
