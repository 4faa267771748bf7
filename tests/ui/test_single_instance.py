"""One desktop app per data folder: the socket lives in the data folder, owner-only;
a later start is answered; a listener that is not Engram neither blocks the start nor
counts as running. The asking side runs in another process, as a second start does."""

from __future__ import annotations

import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.single_instance import SOCKET_FILE, InstanceServer, ask_running_instance, socket_name

ASK = (
    "import sys; from pathlib import Path; "
    "from app.single_instance import ask_running_instance; "
    "sys.exit(0 if ask_running_instance(Path(sys.argv[1]), 2000) else 1)"
)


def _ask_from_another_process(qtbot: Any, folder: Path) -> bool:
    process = subprocess.Popen([sys.executable, "-c", ASK, str(folder)])
    qtbot.waitUntil(lambda: process.poll() is not None, timeout=15000)
    return process.returncode == 0


def test_a_second_start_is_answered_and_shows_the_popup(qtbot: Any, tmp_path: Path) -> None:
    shown: list[bool] = []
    folder = tmp_path / "one"
    assert not ask_running_instance(folder, timeout_ms=200)
    server = InstanceServer(folder, lambda: shown.append(True))
    try:
        assert _ask_from_another_process(qtbot, folder)
        assert shown == [True]
        assert not _ask_from_another_process(qtbot, tmp_path / "other")
    finally:
        server.close()


def test_the_socket_is_in_the_data_folder_and_owner_only(qtbot: Any, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    server = InstanceServer(folder, lambda: None)
    try:
        path = Path(socket_name(folder))
        assert path == folder.resolve() / SOCKET_FILE
        mode = stat.S_IMODE(path.stat().st_mode)
        assert stat.S_ISSOCK(path.stat().st_mode)
        assert mode & 0o077 == 0, oct(mode)
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    finally:
        server.close()


def test_a_listener_that_is_not_engram_does_not_block_the_start(qtbot: Any, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    squatter.bind(socket_name(folder))
    squatter.listen(5)
    try:
        assert not ask_running_instance(folder, timeout_ms=300)
        shown: list[bool] = []
        server = InstanceServer(folder, lambda: shown.append(True))
        try:
            assert server.server.isListening()
            assert _ask_from_another_process(qtbot, folder)
        finally:
            server.close()
    finally:
        squatter.close()


def test_a_data_folder_too_deep_for_a_socket_path_still_gets_one(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    folder = tmp_path / ("deep-" * 30)
    name = socket_name(folder)
    assert name.startswith(str(runtime)) and len(name) < 108
    server = InstanceServer(folder, lambda: None)
    try:
        assert server.server.isListening()
    finally:
        server.close()
