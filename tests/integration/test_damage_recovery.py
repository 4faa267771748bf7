"""The installed `engram` command, one real process per call, when the database is
damaged, the data folder is read-only or the disk is full: it says what is wrong and
what to do, and the way back (restore, salvage) works."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.storage.memories import MemoryStore
from tests.conftest import CORPUS_MEMORIES
from tests.integration.conftest import ENGRAM, ROOT, clean_env, run_engram
from tests.services.builders import make_memory
from tests.services.storage.test_environment import without_write_privileges

pytestmark = pytest.mark.slow


def _import(data: Path, tmp_path: Path, count: int) -> list[dict[str, Any]]:
    with CORPUS_MEMORIES.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle.readlines()[:count]]
    source = tmp_path / "memories.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = run_engram(data, "import", source)
    assert result.returncode == 0, result.stderr
    return records


def _json(data: Path, *args: object) -> Any:
    result = run_engram(data, *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _damage(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[len(data) // 3 :] = b"\xa5" * (len(data) - len(data) // 3)
    path.write_bytes(bytes(data))


def test_backup_damage_restore_search(tmp_path: Path) -> None:
    data = tmp_path / "data"
    records = _import(data, tmp_path, 12)
    backup = _json(data, "backup")["path"]
    _damage(data / "engram.sqlite3")

    damaged = run_engram(data, "search", "deploy")
    assert damaged.returncode == 3
    assert f"{data / 'engram.sqlite3'} is damaged" in damaged.stderr
    assert f"engram restore {backup}" in damaged.stderr
    assert "engram salvage" in damaged.stderr
    assert "intact" not in damaged.stderr.lower()
    assert "Traceback" not in damaged.stderr

    refused = run_engram(data, "restore", backup)  # no terminal: needs --yes
    assert refused.returncode == 2 and "--yes" in refused.stderr
    restored = _json(data, "restore", backup, "--yes")
    assert restored["memories"] == 12

    found = _json(data, "search", records[0]["title"], "--limit", "3")["results"]
    assert records[0]["id"] in [r["id"] for r in found]
    assert len(_json(data, "list", "--limit", "100")["memories"]) == 12


def test_salvage_recovers_most_rows_of_a_damaged_database(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = MemoryStore(data / "engram.sqlite3")
    store.add_many([make_memory(f"row {i} " + "text " * 40, id=f"m{i:04d}") for i in range(2000)])
    store.close()
    path = data / "engram.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2 : len(raw) // 2 + 16 * 1024] = b"\xde\xad\xbe\xef" * 4096
    path.write_bytes(bytes(raw))
    assert run_engram(data, "export").returncode == 3  # the memory table itself is hit

    output = tmp_path / "salvaged.sqlite3"
    report = _json(data, "salvage", "--output", output)
    assert 1900 <= report["memories"] < 2000, report
    assert report["tables"]["memory"]["unreadable"] > 0

    restored = _json(data, "restore", output, "--yes")
    assert restored["memories"] == report["memories"]
    exported = run_engram(data, "export", "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    assert len(exported.stdout.splitlines()) == report["memories"]


def _as_unprivileged(data: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """`engram` in a process that file permissions bind (as root: one without the
    capabilities that bypass them)."""
    return subprocess.run(
        [str(ENGRAM), "--data-dir", str(data), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
        cwd=ROOT,
        preexec_fn=without_write_privileges,
        check=False,
    )


@pytest.fixture
def read_only_data(tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "data"
    _import(data, tmp_path, 12)
    yield data
    for path in (data, *data.rglob("*")):
        path.chmod(0o700 if path.is_dir() else 0o600)


@pytest.mark.parametrize("what", ["folder", "file"])
def test_read_only_data_reads_and_refuses_writes(read_only_data: Path, what: str) -> None:
    data = read_only_data
    if what == "folder":  # everything in it read-only too, as `chmod -R a-w` leaves it
        for path in data.rglob("*"):
            path.chmod(0o500 if path.is_dir() else 0o400)
        data.chmod(0o500)
    else:
        (data / "engram.sqlite3").chmod(0o400)
    probe = _as_unprivileged(data, "add", "probe")
    if probe.returncode == 0:
        pytest.skip("permissions do not bind here")

    where = f"the data folder {data}" if what == "folder" else f"{data / 'engram.sqlite3'}"
    assert probe.returncode == 3, probe.stderr
    assert f"{where} is read-only; cannot add" in probe.stderr
    for command in (
        ("search", "deploy", "--json"),
        ("list", "--json"),
        ("export",),
        ("stats",),
        ("context",),
    ):
        result = _as_unprivileged(data, *command)
        assert result.returncode == 0, (command, result.stderr)
        assert "Traceback" not in result.stderr
    listed = json.loads(_as_unprivileged(data, "list", "--json").stdout)["memories"]
    assert len(listed) == 12
    deleted = _as_unprivileged(data, "delete", listed[0]["id"], "--yes")
    assert deleted.returncode == 3 and "cannot delete" in deleted.stderr
    if what == "file":  # the folder could be written: nothing was left behind unwritable
        assert sorted(p.name for p in data.glob("engram.sqlite3*")) == ["engram.sqlite3"]


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr!r}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_reported_as_full(tiny_disk: Path) -> None:
    data = tiny_disk / "data"
    stored = run_engram(data, "add", "stored before the disk filled up", "--json")
    assert stored.returncode == 0, stored.stderr
    with open(tiny_disk / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError:
            pass
    text = "a memory too large for what is left " * 3000
    full = run_engram(data, "add", text)
    assert full.returncode == 3, full.stderr
    assert f"the disk holding {data} is full; nothing was changed" in full.stderr
    assert "cannot rollback" not in full.stderr and "Traceback" not in full.stderr
    found = _json(data, "search", "disk filled", "--retriever", "lexical")["results"]
    assert [r["id"] for r in found] == [json.loads(stored.stdout)["id"]]
