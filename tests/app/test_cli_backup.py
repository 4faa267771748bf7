"""`engram backup | backups | restore | salvage` in process, on a real data folder
(real SQLite, real Chroma), and the messages for a damaged database and a full disk."""

from __future__ import annotations

import errno
import json
import sqlite3
from pathlib import Path

from app.errors import to_message
from services.errors import StoreDamaged
from tests.app.conftest import EngramCli


def _damage(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[len(data) // 3 :] = b"\xa5" * (len(data) - len(data) // 3)
    path.write_bytes(bytes(data))


def test_backup_writes_one_and_lists_it(corpus_cli: EngramCli) -> None:
    written = corpus_cli.json("backup")
    path = Path(written["path"])
    assert path.parent == corpus_cli.data_dir / "backups"
    assert path.stat().st_size == written["size"] > 0
    listed = corpus_cli.json("backups")["backups"]
    assert listed[0]["path"] == str(path)  # newest first
    assert listed[0]["memories"] == 30
    assert corpus_cli.json("backup", "--list") == {"backups": listed}
    shown = corpus_cli.ok("backups").stdout
    assert str(path) in shown and "30 memories" in shown


def test_restore_needs_yes_without_a_terminal(corpus_cli: EngramCli) -> None:
    backup = corpus_cli.json("backup")["path"]
    victim = sorted(corpus_cli.all_ids())[0]
    corpus_cli.ok("delete", victim, "--yes")

    refused = corpus_cli("restore", backup, input="y\n")
    assert refused.exit_code == 2
    assert "add --yes" in refused.stderr
    assert victim not in corpus_cli.all_ids()

    report = corpus_cli.json("restore", backup, "--yes")
    assert report["memories"] == 30
    assert "before-restore" in report["before_restore"]
    assert victim in corpus_cli.all_ids()
    found = corpus_cli.json("search", "the", "--limit", "50")["results"]
    assert victim in {r["id"] for r in found} or len(found) == 30


def test_restore_refuses_a_file_that_is_not_an_engram_database(
    corpus_cli: EngramCli, tmp_path: Path
) -> None:
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    result = corpus_cli("restore", other, "--yes")
    assert result.exit_code == 2
    assert "is not an Engram database" in result.stderr
    assert len(corpus_cli.all_ids()) == 30


def test_a_damaged_database_names_the_backup_and_salvage_restores(
    corpus_cli: EngramCli,
) -> None:
    backup = corpus_cli.json("backup")["path"]
    database = corpus_cli.data_dir / "engram.sqlite3"
    _damage(database)

    result = corpus_cli("list")
    assert result.exit_code == 3
    assert "is damaged" in result.stderr
    assert f"engram restore {backup}" in result.stderr
    assert "intact" not in result.stderr

    done = corpus_cli("salvage", "--json")
    salvaged = json.loads(done.stdout)
    assert Path(salvaged["output"]).parent == corpus_cli.data_dir / "backups"
    assert salvaged["memories"] < 30  # two thirds of the file are gone
    assert salvaged["method"] == "rows"
    assert salvaged["fuller_backup"] == {"path": backup, "memories": 30}
    assert done.exit_code == (1 if salvaged["memories"] == 0 else 0)

    corpus_cli.json("restore", backup, "--yes")
    assert len(corpus_cli.all_ids()) == 30


def test_salvage_of_an_intact_database_then_restore(corpus_cli: EngramCli) -> None:
    salvaged = corpus_cli.json("salvage")
    assert salvaged["method"] == "vacuum"
    assert salvaged["memories"] == 30
    text = corpus_cli.ok("salvage", "--output", corpus_cli.data_dir / "copy.sqlite3").stdout
    assert "salvaged 30 memories" in text and "engram restore" in text
    report = corpus_cli.json("restore", salvaged["output"], "--yes")
    assert report["memories"] == 30
    assert len(corpus_cli.all_ids()) == 30


def test_the_cli_backs_up_once_per_interval(engram_cli: EngramCli) -> None:
    engram_cli.add("the first memory of this folder")
    assert engram_cli.json("backups")["backups"] == []  # it was empty when the add began
    engram_cli.ok("list")
    engram_cli.ok("list")
    backups = engram_cli.json("backups")["backups"]
    assert [b["reason"] for b in backups] == ["auto"]
    assert backups[0]["memories"] == 1


def test_backup_keep_zero_turns_automatic_backups_off(engram_cli: EngramCli) -> None:
    engram_cli.ok("config", "set", "backup.keep", "0")
    engram_cli.add("a memory")
    engram_cli.ok("list")
    assert engram_cli.json("backups")["backups"] == []
    assert json.loads(engram_cli.ok("backup", "--json").stdout)["size"] > 0  # by hand: yes


def test_messages_never_call_a_damaged_store_intact() -> None:
    damaged = to_message(StoreDamaged("/d/engram.sqlite3 is damaged (malformed)"))
    assert damaged.exit_code == 3 and "intact" not in damaged.detail.lower()
    raw = to_message(sqlite3.DatabaseError("database disk image is malformed"))
    assert raw.exit_code == 3
    assert "damaged" in raw.title and "salvage" in raw.detail
    assert "intact" not in (raw.title + raw.detail).lower()
    full = to_message(OSError(errno.ENOSPC, "No space left on device", "/d/export.json"))
    assert (full.title, full.exit_code) == (
        "the disk holding /d/export.json is full; nothing was changed",
        3,
    )


def test_a_salvage_that_reads_nothing_says_so_and_its_copy_is_not_restored(
    corpus_cli: EngramCli,
) -> None:
    """A new user's salvage of a database whose schema pages were overwritten got 0
    memories, printed "to use it: engram restore …", and restore --yes then replaced the
    database with the empty copy although a backup held every memory."""
    backup = corpus_cli.json("backup")["path"]
    database = corpus_cli.data_dir / "engram.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(database.read_bytes())
    data[:] = data[:100] + b"\xa5" * (len(data) - 100)  # every page after the header
    database.write_bytes(bytes(data))

    result = corpus_cli("salvage")
    assert result.exit_code == 1
    assert "no memory could be read" in result.stderr
    assert f"engram restore {backup}" in result.stdout and "30 memories" in result.stdout
    assert "to use the salvaged copy" not in result.stdout
    empty = next(p for p in (corpus_cli.data_dir / "backups").iterdir() if "salvaged" in p.name)

    refused = corpus_cli("restore", empty, "--yes")
    assert refused.exit_code == 2
    assert "holds no memories" in refused.stderr and backup in refused.stderr
    assert corpus_cli("list").exit_code == 3  # still the damaged one, not an empty store
    corpus_cli.json("restore", backup, "--yes")
    assert len(corpus_cli.all_ids()) == 30
    assert corpus_cli("restore", empty, "--yes", "--empty").exit_code == 0
    assert corpus_cli.all_ids() == set() or len(corpus_cli.all_ids()) == 0
