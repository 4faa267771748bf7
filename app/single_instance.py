"""One desktop app per data folder: the first start listens on a local socket inside
the data folder (owner-only, like the folder); a second start asks it to show its
popup and exits. Only an Engram that answers counts as running: a stale socket or any
other listener is replaced, so nothing outside the folder can stop the tray starting."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from app.local_socket import socket_path

SHOW = b"show\n"
SHOWN = b"engram: shown\n"
SOCKET_FILE = "tray.sock"


def socket_name(data_dir: Path) -> str:
    """The socket's full path: in the data folder, or, when that path is too long for
    a Unix socket, in an owner-only folder of the user's runtime folder."""
    return str(socket_path(data_dir, SOCKET_FILE))


def ask_running_instance(data_dir: Path, timeout_ms: int = 500) -> bool:
    """True when an Engram already runs for `data_dir` and answered that it showed
    its popup; a listener that does not answer so is not one."""
    socket = QLocalSocket()
    socket.connectToServer(socket_name(data_dir))
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write(SHOW)
    socket.flush()
    answer = b""
    while len(answer) < len(SHOWN) and socket.waitForReadyRead(timeout_ms):
        answer += bytes(socket.readAll().data())
    socket.disconnectFromServer()
    return answer.startswith(SHOWN)


class InstanceServer(QObject):
    """Listens for later starts; calls `on_show` when one asks, and answers it."""

    def __init__(self, data_dir: Path, on_show: Callable[[], None]) -> None:
        super().__init__()
        self.on_show = on_show
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        name = socket_name(data_dir)
        if name.startswith("/"):
            Path(name).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self.server.listen(name):
            QLocalServer.removeServer(name)  # a stale socket, or a listener not ours
            self.server.listen(name)
        self.server.newConnection.connect(self._connection)

    def _connection(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))

    def _read(self, socket: QLocalSocket) -> None:
        if bytes(socket.readAll().data()).startswith(SHOW.strip()):
            socket.write(SHOWN)
            socket.flush()
            self.on_show()
        socket.disconnectFromServer()

    def close(self) -> None:
        self.server.close()
