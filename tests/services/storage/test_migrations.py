"""Schema migrations: recorded, idempotent, transactional, and the same schema whichever
way a database got there; the peewee models match the real tables."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import peewee as pw
import pytest

from services.storage.database import ALL_MODELS, open_database
from services.storage.migrations import (
    MIGRATIONS,
    Migration,
    applied_migrations,
    migrate,
    schema_sql,
)

ALL_NAMES = [m.name for m in MIGRATIONS]


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def table_names(connection: sqlite3.Connection) -> set[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {row[0] for row in rows}


def test_migration_names_are_unique_and_ordered() -> None:
    assert len(set(ALL_NAMES)) == len(ALL_NAMES)
    assert sorted(ALL_NAMES) == ALL_NAMES
    assert len(ALL_NAMES) >= 2


def test_fresh_database_gets_every_migration(tmp_path: Path) -> None:
    connection = connect(tmp_path / "fresh.sqlite3")
    assert migrate(connection) == ALL_NAMES
    assert applied_migrations(connection) == ALL_NAMES
    assert {
        "memory",
        "chunk",
        "usage_event",
        "search_metric",
        "meta",
        "memory_fts",
        "schema_migrations",
    } <= table_names(connection)


def test_second_run_applies_nothing_and_changes_nothing(tmp_path: Path) -> None:
    connection = connect(tmp_path / "twice.sqlite3")
    migrate(connection)
    before = schema_sql(connection)
    recorded = connection.execute("SELECT name, applied_at FROM schema_migrations").fetchall()
    assert migrate(connection) == []
    assert schema_sql(connection) == before
    assert (
        connection.execute("SELECT name, applied_at FROM schema_migrations").fetchall() == recorded
    )


def test_works_on_a_connection_with_default_transaction_handling(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "default.sqlite3")  # implicit transactions
    assert migrate(connection) == ALL_NAMES
    assert migrate(connection) == []


def test_stepwise_upgrade_ends_with_the_fresh_schema(tmp_path: Path) -> None:
    fresh = connect(tmp_path / "fresh.sqlite3")
    migrate(fresh)
    for done in range(1, len(MIGRATIONS)):
        old = connect(tmp_path / f"old-{done}.sqlite3")
        assert migrate(old, MIGRATIONS[:done]) == ALL_NAMES[:done]
        assert schema_sql(old) != schema_sql(fresh)  # really an older schema
        assert migrate(old) == ALL_NAMES[done:]
        assert schema_sql(old) == schema_sql(fresh)
        assert applied_migrations(old) == ALL_NAMES


def test_upgrade_keeps_existing_rows(tmp_path: Path) -> None:
    connection = connect(tmp_path / "old.sqlite3")
    migrate(connection, MIGRATIONS[:1])
    connection.execute(
        "INSERT INTO memory (id, type, title, content, created_at, created_ts, updated_at) "
        "VALUES ('m1', 'fact', 't', 'c', '2024-01-01T00:00:00+00:00', 0, 'x')"
    )
    migrate(connection)
    assert connection.execute("SELECT id, content FROM memory").fetchall() == [("m1", "c")]


def test_a_failing_migration_leaves_no_trace(tmp_path: Path) -> None:
    connection = connect(tmp_path / "broken.sqlite3")
    migrate(connection)
    before = schema_sql(connection)

    def broken(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE half_done (x INTEGER)")
        c.execute("INSERT INTO meta (key, value) VALUES ('half', 'done')")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        migrate(connection, (*MIGRATIONS, Migration("9999_broken", broken)))
    assert "half_done" not in table_names(connection)
    assert connection.execute("SELECT count(*) FROM meta").fetchone() == (0,)
    assert applied_migrations(connection) == ALL_NAMES
    assert schema_sql(connection) == before
    # and it is tried again next time, successfully once fixed
    fixed = Migration("9999_broken", lambda c: c.execute("CREATE TABLE half_done (x)"))
    assert migrate(connection, (*MIGRATIONS, fixed)) == ["9999_broken"]


def test_schema_sql_normalises_whitespace(tmp_path: Path) -> None:
    connection = connect(tmp_path / "s.sqlite3")
    connection.execute("CREATE TABLE t (\n   a   INTEGER,\n\tb TEXT\n)")
    assert ("t", "CREATE TABLE t ( a INTEGER, b TEXT )") in schema_sql(connection)


_AFFINITY = {
    pw.TextField: "TEXT",
    pw.FloatField: "REAL",
    pw.IntegerField: "INTEGER",
    pw.AutoField: "INTEGER",
}


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m._meta.table_name)
def test_models_match_the_migrated_tables(tmp_path: Path, model: type[pw.Model]) -> None:
    database = open_database(tmp_path / "models.sqlite3")
    try:
        table = model._meta.table_name
        columns = {
            row[1]: row for row in database.execute_sql(f"PRAGMA table_info({table})").fetchall()
        }
        assert columns, f"table {table} missing"
        fields = {field.column_name: field for field in model._meta.sorted_fields}
        assert set(fields) == set(columns), table
        for name, field in fields.items():
            _, _, declared, notnull, _, pk = columns[name]
            assert declared.upper() == _AFFINITY[type(field)], (table, name)
            assert bool(pk) == field.primary_key, (table, name)
            if not field.primary_key:
                assert bool(notnull) == (not field.null), (table, name)
    finally:
        database.close()


def test_open_database_migrates_and_turns_on_wal(tmp_path: Path) -> None:
    database = open_database(tmp_path / "wal.sqlite3")
    try:
        connection = database.connection()
        assert applied_migrations(connection) == ALL_NAMES
        assert database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert database.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
    finally:
        database.close()


def test_migrations_never_import_live_domain_code() -> None:
    """A migration runs the code it shipped with: the migrations import the standard
    library and their own frozen copies (0008's lesson parser), nothing that changes."""
    from tests.test_architecture import ROOT, imports_of

    frozen = "services.storage.lesson_backfill_0008"
    for module in ("migrations", "lesson_backfill_0008"):
        imported = {name for _, name in imports_of(ROOT / "services" / "storage" / f"{module}.py")}
        ours = {name for name in imported if name.split(".")[0] in ("services", "app", "ui")}
        assert ours <= {frozen, f"{frozen}.backfill_lessons"}, (module, ours)
