"""One desktop app per data folder: the first start listens on a local socket named
after the folder; a second start asks it to show its popup and exits."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

SHOW = b"show\n"


def socket_name(data_dir: Path) -> str:
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return f"engram-{digest}"


def ask_running_instance(data_dir: Path, timeout_ms: int = 500) -> bool:
    """True when an instance already runs for `data_dir` (it was asked to show itself)."""
    socket = QLocalSocket()
    socket.connectToServer(socket_name(data_dir))
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write(SHOW)
    socket.flush()
    socket.waitForBytesWritten(timeout_ms)
    socket.disconnectFromServer()
    return True


class InstanceServer(QObject):
    """Listens for later starts; calls `on_show` when one asks."""

    def __init__(self, data_dir: Path, on_show: Callable[[], None]) -> None:
        super().__init__()
        self.on_show = on_show
        self.server = QLocalServer(self)
        name = socket_name(data_dir)
        if not self.server.listen(name):
            QLocalServer.removeServer(name)  # a stale socket left by a crash
            self.server.listen(name)
        self.server.newConnection.connect(self._connection)

    def _connection(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))

    def _read(self, socket: QLocalSocket) -> None:
        if bytes(socket.readAll().data()).startswith(SHOW.strip()):
            self.on_show()
        socket.disconnectFromServer()

    def close(self) -> None:
        self.server.close()
