"""Salvage: every readable row of a damaged database copied into a fresh one.

The original is never touched: it is copied (with its write-ahead log, so committed
writes still in the log are read too) into a scratch folder and read from there. The
first attempt is `VACUUM INTO`, which succeeds when every page is readable; otherwise
the fresh database gets the current schema (the migrations) and each table is read in
rowid ranges, a range that fails being split down to single rows, so one bad page costs
only the rows on it. Rows whose memory was lost (a chunk, a link) are dropped, and the
lexical index is left empty for the next start to rebuild from the memories.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from services.errors import UserInputError
from services.storage.backup import memory_count, quick_check
from services.storage.migrations import migrate

RANGE = 256  # rows read at once; the window of rowids rescued after a failed read
GIVE_UP_WINDOWS = 4  # windows giving nothing before the jumps start doubling
MAX_ROWID = 1 << 62
# Rebuilt rather than copied: the FTS5 index (its shadow tables hold no records) and
# the list of applied migrations (the fresh database has the current schema).
SKIPPED_PREFIXES = ("memory_fts", "schema_migrations", "sqlite_")


@dataclass
class TableSalvage:
    recovered: int = 0
    # rowids between readable rows that could not be read (about the rows lost there)
    unreadable: int = 0
    end_unreadable: bool = False  # reading stopped at damage: rows after it may be lost
    dropped: int = 0  # readable rows left out: their memory was lost


@dataclass
class SalvageReport:
    output: Path
    method: str  # "vacuum" (everything was readable) or "rows"
    tables: dict[str, TableSalvage] = field(default_factory=dict)
    memories: int = 0

    @property
    def unreadable(self) -> int:
        return sum(t.unreadable for t in self.tables.values())

    @property
    def damaged_tables(self) -> list[str]:
        """Tables whose end could not be read (all of it, when nothing was recovered)."""
        return [name for name, t in self.tables.items() if t.end_unreadable]


def salvage(source: Path, output: Path) -> SalvageReport:
    """Copy every readable row of `source` into the new database `output`."""
    if not source.is_file():
        raise UserInputError(f"{source}: no such file")
    if output.exists():
        raise UserInputError(f"{output} already exists; choose another --output")
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="engram-salvage-") as scratch:
        copy = Path(scratch) / source.name
        shutil.copyfile(source, copy)
        wal = source.with_name(source.name + "-wal")
        if wal.is_file():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        connection = sqlite3.connect(copy, isolation_level=None)
        try:
            report = _vacuum_into(connection, output) or _row_by_row(connection, output)
        finally:
            connection.close()
    output.chmod(0o600)
    return report


def _vacuum_into(source: sqlite3.Connection, output: Path) -> SalvageReport | None:
    """The whole database in one statement, when every page reads and checks clean."""
    try:
        if quick_check(source) is not None:
            return None
        source.execute("VACUUM INTO ?", (str(output),))
    except sqlite3.DatabaseError:
        output.unlink(missing_ok=True)
        return None
    report = SalvageReport(output, "vacuum")
    with sqlite3.connect(output, isolation_level=None) as copy:
        for table in _tables(copy):
            count = copy.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            report.tables[table] = TableSalvage(recovered=int(count))
        report.memories = memory_count(copy)
    return report


def _tables(connection: sqlite3.Connection) -> list[str]:
    rows = connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
    ).fetchall()
    return [str(row[0]) for row in rows if not str(row[0]).startswith(SKIPPED_PREFIXES)]


def _source_tables(source: sqlite3.Connection, fallback: list[str]) -> list[str]:
    """The tables the damaged file names, or the current schema's when its own list
    (sqlite_master, page 1) cannot be read."""
    try:
        return _tables(source)
    except sqlite3.DatabaseError:
        return fallback


def _columns(connection: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in connection.execute(f'PRAGMA table_info("{table}")')]


def _without_rowid(connection: sqlite3.Connection, table: str) -> bool:
    row = connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return bool(row and row[0] and "WITHOUT ROWID" in str(row[0]).upper())


def _row_by_row(source: sqlite3.Connection, output: Path) -> SalvageReport:
    report = SalvageReport(output, "rows")
    fresh = sqlite3.connect(output, isolation_level=None)
    try:
        migrate(fresh)
        fresh.execute("PRAGMA foreign_keys = OFF")
        wanted = _tables(fresh)
        for table in _source_tables(source, wanted):
            if table not in wanted:
                continue
            report.tables[table] = _copy_table(source, fresh, table)
        _drop_orphans(fresh, report)
        fresh.execute("PRAGMA journal_mode = DELETE")
        report.memories = memory_count(fresh)
    finally:
        fresh.close()
    return report


def _copy_table(source: sqlite3.Connection, fresh: sqlite3.Connection, table: str) -> TableSalvage:
    result = TableSalvage()
    try:
        source_columns = set(_columns(source, table))
    except sqlite3.DatabaseError:
        source_columns = set()
    columns = [c for c in _columns(fresh, table) if c in source_columns] or _columns(fresh, table)
    names = ", ".join(f'"{c}"' for c in columns)
    insert = f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({", ".join("?" for _ in columns)})'
    fresh.execute("BEGIN")
    if _without_rowid(fresh, table):
        _copy_whole(source, fresh, table, names, insert, result)
    else:
        _copy_by_rowid(source, fresh, table, names, insert, result)
    fresh.execute("COMMIT")
    return result


def _copy_whole(
    source: sqlite3.Connection,
    fresh: sqlite3.Connection,
    table: str,
    names: str,
    insert: str,
    result: TableSalvage,
) -> None:
    """A table without rowids is read in one pass, keeping the rows before a bad page."""
    try:
        for row in source.execute(f'SELECT {names} FROM "{table}"'):
            fresh.execute(insert, row)
            result.recovered += 1
    except sqlite3.DatabaseError:
        result.end_unreadable = True


def _lowest_rowid(source: sqlite3.Connection, table: str) -> int | None:
    try:
        row = source.execute(f'SELECT min(rowid) FROM "{table}"').fetchone()
    except sqlite3.DatabaseError:
        return 0  # Engram's rowids start at 1
    return None if row[0] is None else int(row[0])


def _copy_by_rowid(
    source: sqlite3.Connection,
    fresh: sqlite3.Connection,
    table: str,
    names: str,
    insert: str,
    result: TableSalvage,
) -> None:
    """Read forward in rowid order; where a read fails, recover what the window of
    `RANGE` rowids from there still gives (`_rescue`) and go on after it. After
    `GIVE_UP_WINDOWS` windows that give nothing, it only looks further ahead, each jump
    twice the last, so a damaged stretch of any size is crossed in a few dozen reads
    (rowids that fail between readable rows are counted as unreadable; failures after
    the last readable row only mark the table's end as unreadable)."""
    scan = f'SELECT rowid, {names} FROM "{table}" WHERE rowid >= ? ORDER BY rowid LIMIT {RANGE}'
    start = _lowest_rowid(source, table)
    barren = 0
    doubtful = 0  # rowids not read since the last row found: lost only if rows follow
    while start is not None and start < MAX_ROWID:
        try:
            rows = source.execute(scan, (start,)).fetchall()
        except sqlite3.DatabaseError:
            if barren < GIVE_UP_WINDOWS:
                found, failed = _rescue(source, fresh, table, names, insert, result, start)
                doubtful += failed
                if found:
                    result.unreadable += doubtful
                    doubtful = barren = 0
                else:
                    barren += 1
                start += RANGE
            else:  # a long damaged stretch: look further and further ahead
                barren += 1
                start += RANGE << (barren - GIVE_UP_WINDOWS)
            continue
        if not rows:
            break
        for row in rows:
            fresh.execute(insert, row[1:])
        result.recovered += len(rows)
        result.unreadable += doubtful
        doubtful = barren = 0
        start = int(rows[-1][0]) + 1
    result.end_unreadable = doubtful > 0 or barren > 0


def _rescue(
    source: sqlite3.Connection,
    fresh: sqlite3.Connection,
    table: str,
    names: str,
    insert: str,
    result: TableSalvage,
    start: int,
) -> tuple[int, int]:
    """The readable rows among rowids [start, start + RANGE): a range that fails is
    split down to single rowids. Returns how many were read and how many failed."""
    select = f'SELECT {names} FROM "{table}" WHERE rowid >= ? AND rowid < ?'
    found = failed = 0
    pending = [(start, start + RANGE)]
    while pending:
        low, high = pending.pop()
        try:
            rows = source.execute(select, (low, high)).fetchall()
        except sqlite3.DatabaseError:
            if high - low > 1:
                middle = (low + high) // 2
                pending.extend([(middle, high), (low, middle)])
            else:
                failed += 1
            continue
        for row in rows:
            fresh.execute(insert, row)
        found += len(rows)
    result.recovered += found
    return found, failed


# Rows that only make sense with their memory: (table, column naming the memory).
_BELONGS_TO_MEMORY = (
    ("chunk", "memory_id"),
    ("memory_time", "memory_id"),
    ("memory_link", "source"),
    ("memory_link", "target"),
)


def _drop_orphans(fresh: sqlite3.Connection, report: SalvageReport) -> None:
    tables = set(_tables(fresh))
    for table, column in _BELONGS_TO_MEMORY:
        if table not in tables or column not in _columns(fresh, table):
            continue
        cursor = fresh.execute(
            f'DELETE FROM "{table}" WHERE "{column}" NOT IN (SELECT id FROM memory)'
        )
        if cursor.rowcount and table in report.tables:
            report.tables[table].dropped += cursor.rowcount
            report.tables[table].recovered -= cursor.rowcount
