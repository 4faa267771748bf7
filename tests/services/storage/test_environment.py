"""A hostile machine: read-only data folder, a database locked by another process, a
corrupt database file. Each gives a StoreUnavailable that says what is wrong, and no
memory is lost."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.composition import open_engram
from app.settings import Settings
from services.errors import EnvironmentProblem, StoreDamaged, StoreUnavailable
from services.filters import MemoryFilter
from services.search.retrieval import RetrieverKind
from services.storage.memories import MemoryStore
from tests.fakes import HashEmbedder
from tests.services.builders import make_memory

ROOT = Path(__file__).resolve().parents[3]
_CAPS_GRANTING_WRITE = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
_PR_CAPBSET_DROP = 24

_OPEN_IN_READ_ONLY_FOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    folder = Path(sys.argv[1])
    try:
        (folder / "probe").write_text("x")
    except PermissionError:
        pass
    else:
        print("CAN-WRITE")
        sys.exit(0)
    from services.errors import StoreUnavailable
    from services.storage.memories import MemoryStore
    try:
        store = MemoryStore(folder / "engram.sqlite3")
        print("READ:", store.get("keep").content)
        store.add(store.get("keep"))
        print("OPENED")
    except StoreUnavailable as error:
        print(f"{type(error).__name__}:", error)
""")


def without_write_privileges() -> None:  # runs in the child, before exec
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in _CAPS_GRANTING_WRITE:
            libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)


def open_as_unprivileged(folder: Path) -> str:
    """Open a store in `folder` from a process that file permissions really bind (as
    root: one without the capabilities that bypass them)."""
    result = subprocess.run(
        [sys.executable, "-c", _OPEN_IN_READ_ONLY_FOLDER, str(folder)],
        cwd=ROOT,
        preexec_fn=without_write_privileges,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    if result.stdout.strip() == "CAN-WRITE":
        pytest.skip("permissions do not bind here (root without a droppable capability set)")
    return result.stdout.strip()


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    folder.mkdir()
    tmp_path.chmod(0o755)
    yield folder
    folder.chmod(0o755)


def test_read_only_empty_folder(read_only_folder: Path) -> None:
    read_only_folder.chmod(0o555)
    output = open_as_unprivileged(read_only_folder)
    assert output == (
        f"StoreReadOnly: the data folder {read_only_folder} is read-only; "
        "cannot create engram.sqlite3 there"
    )


@pytest.mark.parametrize("files_too", [True, False], ids=["folder-and-files", "folder-only"])
def test_read_only_folder_with_a_database_reads(read_only_folder: Path, files_too: bool) -> None:
    """Reading works whether the write-ahead log's files can be written or not (an
    unwritable folder whose database file is writable still cannot hold a new -shm)."""
    store = MemoryStore(read_only_folder / "engram.sqlite3")
    store.add(make_memory("kept safe", id="keep"))
    store.close()
    if files_too:
        for path in read_only_folder.iterdir():
            path.chmod(0o444)
    read_only_folder.chmod(0o555)
    output = open_as_unprivileged(read_only_folder).splitlines()
    assert output == [
        "READ: kept safe",
        f"StoreReadOnly: the data folder {read_only_folder} is read-only; cannot write "
        "(reading works: search, list, show, export)",
    ]
    read_only_folder.chmod(0o755)
    for path in read_only_folder.iterdir():
        path.chmod(0o644)
    store = MemoryStore(read_only_folder / "engram.sqlite3")
    try:
        assert store.get("keep").content == "kept safe"
    finally:
        store.close()


def test_data_folder_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreUnavailable, match="cannot create the data folder") as caught:
        MemoryStore(blocker / "data" / "engram.sqlite3")
    assert str(blocker / "data") in str(caught.value)
    assert isinstance(caught.value, EnvironmentProblem)


def test_database_path_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "engram.sqlite3").mkdir()
    with pytest.raises(StoreUnavailable, match="a folder, not a database file") as caught:
        MemoryStore(tmp_path / "engram.sqlite3")
    assert str(tmp_path / "engram.sqlite3") in str(caught.value)


# --- locked -------------------------------------------------------------------------------------

_HOLD_LOCK = textwrap.dedent("""
    import sqlite3, sys
    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    sys.stdin.readline()
    connection.execute("ROLLBACK")
""")


class Locker:
    """Another process holding the write lock of a database."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _HOLD_LOCK, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "locked"

    def release(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("\n")
            self.process.stdin.flush()
            self.process.wait(timeout=30)


@pytest.fixture
def locker() -> Iterator[list[Locker]]:
    held: list[Locker] = []
    yield held
    for lock in held:
        lock.release()


def test_locked_database(tmp_path: Path, locker: list[Locker]) -> None:
    path = tmp_path / "engram.sqlite3"
    store = MemoryStore(path, busy_timeout_ms=100, write_wait_s=0.3)
    try:
        kept = store.add(make_memory("kept while locked", id="kept"))
        lock = Locker(path)
        locker.append(lock)
        for write in (
            lambda: store.add(make_memory("new", id="new")),
            lambda: store.update("kept", {"content": "changed"}),
            lambda: store.delete("kept"),
            lambda: store.add_many([make_memory("x"), make_memory("y")]),
            lambda: store.meta_set("k", "v"),
        ):
            with pytest.raises(StoreUnavailable, match="locked") as caught:
                write()
            assert str(path) in str(caught.value)
        assert store.get("kept") == kept  # reads go on (WAL)
        lock.release()
        assert store.get("kept") == kept
        assert store.all_ids() == {"kept"}
        store.add(make_memory("after the lock", id="new"))
        assert store.all_ids() == {"kept", "new"}
    finally:
        store.close()


def test_search_works_while_another_process_writes(data_dir: Path, locker: list[Locker]) -> None:
    settings = Settings(
        data_dir / "settings.json",
        environ={"ENGRAM_STORE_BUSY_TIMEOUT_MS": "100", "ENGRAM_STORE_WRITE_WAIT_S": "0.3"},
    )
    engram: Any = open_engram(data_dir, embedder=HashEmbedder(), settings=settings)
    try:
        memory = engram.service.add({"content": "Pelicans scoop fish in their bills."})
        locker.append(Locker(data_dir / "engram.sqlite3"))
        for kind in RetrieverKind:
            response = engram.service.search("pelicans fish", kind=kind)
            assert [r.memory.id for r in response.results] == [memory.id]
        with pytest.raises(StoreUnavailable, match="locked"):
            engram.service.add({"content": "not now"})
        locker[0].release()
        engram.service.add({"content": "now it works"})
        assert engram.store.count() == 2
    finally:
        engram.close()


# --- corrupt --------------------------------------------------------------------------------------


def _filled_database(path: Path, count: int = 150) -> None:
    store = MemoryStore(path)
    store.add_many([make_memory(f"memory number {i} " * 40, id=f"m{i}") for i in range(count)])
    store.close()


def test_garbage_file_is_reported_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "engram.sqlite3"
    path.write_bytes(os.urandom(64 * 1024))
    with pytest.raises(StoreDamaged, match="is damaged") as caught:
        MemoryStore(path)
    assert str(path) in str(caught.value)
    assert path.stat().st_size == 64 * 1024  # left as it was, for the user to inspect


def test_text_file_is_reported_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "engram.sqlite3"
    path.write_text("this is not a database\n" * 100)
    with pytest.raises(StoreDamaged, match="is damaged"):
        open_engram(tmp_path, embedder=HashEmbedder())


def test_truncated_database_is_reported_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "engram.sqlite3"
    _filled_database(path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    with pytest.raises(StoreDamaged, match="is damaged"):
        store = MemoryStore(path)
        try:
            list(store.iter_all())
            store.count(MemoryFilter.everything())
        finally:
            store.close()


def test_damaged_pages_are_reported_corrupt_when_read(tmp_path: Path) -> None:
    path = tmp_path / "engram.sqlite3"
    _filled_database(path)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 32 * 1024] = b"\xa5" * (32 * 1024)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreDamaged, match="is damaged") as caught:
        store = MemoryStore(path)
        try:
            store.query(MemoryFilter.everything())
            store.lexical("memory number", 500)
            [store.get(f"m{i}") for i in range(150)]
        finally:
            store.close()
    assert str(path) in str(caught.value)


def test_a_new_data_folder_and_database_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "data"
    store = MemoryStore(folder / "engram.sqlite3")
    try:
        store.add(make_memory("private", id="p"))
    finally:
        store.close()
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / "engram.sqlite3").stat().st_mode & 0o777 == 0o600
