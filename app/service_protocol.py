"""What the resident service and its clients say to each other over the data folder's
socket: one JSON object per line.

- `{"op": "ping"}` → `{"op": "pong", "pid", "protocol", "data_dir", "started"}`
- `{"op": "run", "protocol", "argv", "cwd", "stdin" (base64), "stdin_tty",
  "stdout_tty", "width", "color_system"}` → any number of
  `{"op": "ask", "question", "default"}` (answered by `{"op": "answer", "yes"}`; a
  `default` of null asks for yes, no or nothing yet, and `yes` is then null for
  nothing), then
  `{"op": "done", "exit", "stdout", "stderr"}`; or `{"op": "refused", "reason"}` when
  the service will not run it (nothing was done: the client runs it itself).

Standard library only: the `engram` entry point imports it before anything heavy."""

from __future__ import annotations

import json
import socket
from typing import Any

PROTOCOL = 1
SOCKET_FILE = "engram.sock"
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

# Commands the service runs for a client: quick reads and writes of memories. The rest
# (settings, imports, consolidation, backups, anything long or interactive) run in the
# client's own process.
FORWARDED_COMMANDS = frozenset(
    {
        "add",
        "capture",
        "context",
        "contradictions",
        "edit",
        "facts",
        "hook",
        "ingest",
        "lesson",
        "list",
        "mark",
        "project-context",
        "recall",
        "search",
        "show",
        "stats",
    }
)


class ProtocolError(Exception):
    """The other end sent something that is not a message, or went away."""


class Channel:
    """Newline-delimited JSON messages over a connected socket."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        self.connection.sendall(data)

    def receive(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            chunk = self.connection.recv(1 << 16)
            if not chunk:
                raise ProtocolError("the connection closed")
            self._buffer += chunk
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                raise ProtocolError("a message is too large")
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError as error:
            raise ProtocolError(f"not a message: {error}") from None
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise ProtocolError("not a message: no op")
        return message
