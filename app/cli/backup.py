"""`engram backup | backups | restore | salvage`: copies of the database, putting one
back, and rescuing the readable rows of a damaged one.

None of them opens the services: they work on the database file itself, so they work
when the database is damaged and nothing else can open it.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from app.cli.common import (
    CliState,
    cli,
    emit_json,
    err,
    handle_errors,
    json_option,
    pass_state,
    say,
    stdin_is_terminal,
)
from services.errors import UserInputError


def _database(state: CliState) -> Path:
    from app.composition import DATABASE_FILE

    return state.data_dir / DATABASE_FILE


def _keep(state: CliState) -> int:
    from app.settings import SETTINGS_FILE, Settings

    return Settings(state.data_dir / SETTINGS_FILE).get_int("backup.keep")


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size:.1f} GB"


def _backup_rows(state: CliState) -> list[dict[str, Any]]:
    from services.storage.backup import backup_folder, list_backups

    return [
        {
            "path": str(info.path),
            "created": info.created.isoformat(),
            "reason": info.reason,
            "size": info.size,
            "memories": info.memories,
        }
        for info in list_backups(backup_folder(_database(state)))
    ]


def _show_list(state: CliState, as_json: bool) -> None:
    rows = _backup_rows(state)
    if as_json:
        emit_json({"backups": rows})
        return
    if not rows:
        say(f"no backups in {state.data_dir / 'backups'}")
        return
    for row in rows:
        memories = "unreadable" if row["memories"] is None else f"{row['memories']} memories"
        created = datetime.fromisoformat(row["created"]).strftime("%Y-%m-%d %H:%M:%S")
        reason = f"  ({row['reason']})" if row["reason"] else ""
        say(f"{created}  {_size(row['size']):>9}  {memories:>15}  {row['path']}{reason}")


@cli.command()
@click.option("--list", "listing", is_flag=True, help="List the backups instead of writing one.")
@json_option
@pass_state
@handle_errors
def backup(state: CliState, listing: bool, as_json: bool) -> None:
    """Write a backup of the database now (a consistent copy, checked) into the data
    folder's backups/, keeping the newest `backup.keep`."""
    from services.storage.backup import write_backup

    if listing:
        _show_list(state, as_json)
        return
    database = _database(state)
    if not database.is_file() or database.stat().st_size == 0:
        raise UserInputError(f"there is no database to back up in {state.data_dir}")
    path = write_backup(database, _keep(state))
    size = path.stat().st_size
    if as_json:
        emit_json({"path": str(path), "size": size})
    else:
        say(f"backed up to {path} ({_size(size)})")


@cli.command()
@json_option
@pass_state
@handle_errors
def backups(state: CliState, as_json: bool) -> None:
    """List the backups, newest first, with their dates, sizes and memory counts."""
    _show_list(state, as_json)


def _current_memories(database: Path) -> str:
    from services.storage.backup import memory_count, read_only_uri

    if not database.is_file():
        return "no database"
    try:
        with sqlite3.connect(read_only_uri(database), uri=True) as connection:
            return f"{memory_count(connection)} memories"
    except sqlite3.DatabaseError:
        return "damaged"


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--empty",
    is_flag=True,
    help="Restore FILE even though it holds no memories while the database or a backup does.",
)
@json_option
@pass_state
@handle_errors
def restore(state: CliState, file: Path, yes: bool, empty: bool, as_json: bool) -> None:
    """Replace the database with FILE (a backup or a salvaged database). The current
    database is backed up first. Asks on a terminal; without one it needs --yes.
    A FILE with no memories, while the database or a backup holds some, is refused
    unless --empty. Close the desktop app first."""
    from services.storage.backup import backup_folder, check_engram_database, restore_backup

    database = _database(state)
    memories = check_engram_database(file)
    if memories == 0 and not empty:
        _refuse_an_empty_copy(database, file)
    if not yes:
        if not stdin_is_terminal():
            raise click.UsageError(
                "not on a terminal, so nothing was restored: add --yes to restore without asking"
            )
        click.confirm(
            f"Replace {database} ({_current_memories(database)}) with {file} "
            f"({memories} memories)? The current database is backed up first to "
            f"{backup_folder(database)}.",
            abort=True,
        )
    report = restore_backup(file, database, _keep(state))
    if as_json:
        emit_json(
            {
                "restored": str(report.restored),
                "memories": report.memories,
                "before_restore": str(report.before_restore) if report.before_restore else None,
            }
        )
        return
    say(f"restored {report.memories} memories from {report.restored}")
    if report.before_restore is not None:
        say(f"the database it replaced is kept as {report.before_restore}")
    say("vectors missing for the restored memories are embedded by the next command")


def _refuse_an_empty_copy(database: Path, file: Path) -> None:
    """Restoring a copy with no memories over a database or beside a backup that has
    some loses them all (a salvage that read nothing writes such a copy)."""
    from services.storage.backup import backup_folder, fullest_recent_backup

    current = _current_memories(database)
    better = fullest_recent_backup(backup_folder(database), besides=file)
    if not better and current in ("no database", "damaged", "0 memories"):
        return
    hint = f"; the backup {better.path} holds {better.memories}" if better else ""
    held = {"damaged": "is damaged", "no database": "does not exist"}.get(
        current, f"holds {current}"
    )
    raise UserInputError(
        f"{file} holds no memories and the database {held}{hint}: nothing was restored "
        "(add --empty to restore it all the same)"
    )


@cli.command()
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The new database (default: backups/engram-<now>-salvaged.sqlite3).",
)
@json_option
@pass_state
@handle_errors
def salvage(state: CliState, output: Path | None, as_json: bool) -> None:
    """Copy every readable row of a damaged database into a new one; the damaged file is
    not changed. Then `engram restore` the new one."""
    from services.storage.backup import backup_folder, fullest_recent_backup
    from services.storage.salvage import salvage as salvage_rows

    database = _database(state)
    if output is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        output = backup_folder(database) / f"engram-{stamp}-salvaged.sqlite3"
        output.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    report = salvage_rows(database, output)
    tables = {
        name: {
            "recovered": t.recovered,
            "unreadable": t.unreadable,
            "end_unreadable": t.end_unreadable,
            "dropped": t.dropped,
        }
        for name, t in report.tables.items()
    }
    better = fullest_recent_backup(backup_folder(database), besides=output)
    if better is not None and (better.memories or 0) <= report.memories:
        better = None  # the salvaged copy holds as much
    if as_json:
        emit_json(
            {
                "output": str(output),
                "method": report.method,
                "memories": report.memories,
                "unreadable": report.unreadable,
                "damaged_tables": report.damaged_tables,
                "tables": tables,
                "fuller_backup": None
                if better is None
                else {"path": str(better.path), "memories": better.memories},
            }
        )
        if not report.memories:
            raise SystemExit(1)
        return
    whole = "every page was readable" if report.method == "vacuum" else "row by row"
    say(f"salvaged {report.memories} memories into {output} ({whole})")
    for name, counts in sorted(tables.items()):
        if any(counts.values()):
            say(f"  {name}: {_table_line(counts)}")
    lost = [f"{report.unreadable} rows could not be read"] if report.unreadable else []
    if report.damaged_tables:
        lost.append(f"the end of {', '.join(report.damaged_tables)} could not be read")
    if lost:
        err("; ".join(lost))
    if better is not None:
        when = better.created.strftime("%Y-%m-%d %H:%M")
        say(
            f"the backup of {when} holds {better.memories} memories (changes since are "
            f"not in it): engram restore {better.path}"
        )
    if report.memories:
        say(f"to use the salvaged copy: engram restore {output}")
    else:
        err("no memory could be read from the damaged database")
        raise SystemExit(1)


def _table_line(counts: dict[str, Any]) -> str:
    parts = [f"{counts['recovered']} rows"]
    if counts["unreadable"]:
        parts.append(f"{counts['unreadable']} unreadable")
    if counts["end_unreadable"]:
        parts.append("its end unreadable" if counts["recovered"] else "nothing readable")
    if counts["dropped"]:
        parts.append(f"{counts['dropped']} dropped (their memory was lost)")
    return ", ".join(parts)
