"""The resident service: the process that owns a data folder (the tray, or `engram
serve` where there is no desktop) keeps its services warm and answers the commands of
`engram` clients, the MCP server and assistants' hooks over a Unix socket in the data
folder (owner-only; no TCP port). See `app.service_protocol` for the messages.

A client's command runs with the client's working folder, input, terminal width and
questions (`app.forwarding.run_captured`), one at a time, on the services opened once
here. Only the owner of the data folder may connect."""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.local_socket import peer_uid, socket_path
from app.service_client import Answer, read_invocation, service_socket
from app.service_protocol import (
    FORWARDED_COMMANDS,
    PROTOCOL,
    SOCKET_FILE,
    Channel,
    ProtocolError,
)

if TYPE_CHECKING:
    from app.composition import Engram

log = logging.getLogger(__name__)

ANSWER_WAIT_S = 300.0  # how long a question waits for the person at the client


class AlreadyServing(Exception):
    """Another Engram service answers for this data folder."""

    def __init__(self, path: Path, pid: int | None) -> None:
        super().__init__(f"an Engram service already runs for this data folder (pid {pid}, {path})")
        self.pid = pid


def ping(data_dir: Path, timeout_s: float = 0.5) -> dict[str, Any] | None:
    """The running service's answer to a ping (pid, protocol, start time), or None."""
    path = service_socket(data_dir)
    if path is None:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout_s)
        try:
            connection.connect(str(path))
            channel = Channel(connection)
            channel.send({"op": "ping"})
            answer = channel.receive()
        except (OSError, ProtocolError):
            return None
    return answer if answer.get("op") == "pong" else None


@dataclass
class EngramService:
    """Listens on the data folder's socket and runs clients' commands on `engram`."""

    data_dir: Path
    engram: Engram
    started: float = field(default_factory=time.time)
    served: int = 0
    _listener: socket.socket | None = field(default=None, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return socket_path(self.data_dir, SOCKET_FILE)

    def start(self) -> None:
        """Take the socket (a stale one is replaced; a live service is not) and answer
        clients on a background thread."""
        from app.cli.common import set_resident

        path = self.path
        if path.exists() or path.is_symlink():
            running = ping(self.data_dir)
            if running is not None:
                raise AlreadyServing(path, running.get("pid"))
            path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            listener.bind(str(path))
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        listener.listen(16)
        listener.settimeout(0.5)
        self._listener = listener
        set_resident(self.data_dir, self.engram)
        self._thread = threading.Thread(target=self._accept, name="engram-service", daemon=True)
        self._thread.start()
        log.info("serving %s on %s", self.data_dir, path)

    def stop(self) -> None:
        from app.cli.common import set_resident

        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                self.path.unlink()
        set_resident(self.data_dir, None)

    def wait(self) -> None:
        """Block until `stop` (from a signal handler or another thread)."""
        while not self._stopping.wait(0.5):
            pass

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                raise
            threading.Thread(
                target=self._serve, args=(connection,), name="engram-client", daemon=True
            ).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            uid = peer_uid(connection)
            if uid is not None and uid != os.getuid():
                log.warning("refused a connection from user %s", uid)
                return
            channel = Channel(connection)
            try:
                connection.settimeout(ANSWER_WAIT_S)
                request = channel.receive()
                if request["op"] == "ping":
                    channel.send(self._pong())
                elif request["op"] == "run":
                    self._run(channel, request)
                else:
                    channel.send({"op": "refused", "reason": f"unknown op {request['op']!r}"})
            except (OSError, ProtocolError) as error:
                log.info("a client went away: %s", error)

    def _pong(self) -> dict[str, Any]:
        return {
            "op": "pong",
            "pid": os.getpid(),
            "protocol": PROTOCOL,
            "data_dir": str(self.data_dir),
            "started": self.started,
            "served": self.served,
        }

    def _run(self, channel: Channel, request: dict[str, Any]) -> None:
        refusal = self._refusal(request)
        if refusal is not None:
            channel.send({"op": "refused", "reason": refusal})
            return
        from app.forwarding import run_captured

        def ask(question: str, default: bool | None) -> bool | None:
            try:
                channel.send({"op": "ask", "question": question, "default": default})
                answer = channel.receive()
            except (OSError, ProtocolError):
                return default
            if answer.get("op") != "answer":
                return default
            yes = answer.get("yes", default)
            return None if yes is None else bool(yes)

        started = time.perf_counter()
        self.engram.settings.refresh()  # `engram config set` in another process
        try:
            answer = run_captured(
                [str(word) for word in request["argv"]],
                cwd=str(request.get("cwd") or "") or None,
                stdin=base64.b64decode(str(request.get("stdin") or ""), validate=True),
                stdin_tty=bool(request.get("stdin_tty")),
                stdout_tty=bool(request.get("stdout_tty")),
                width=_width(request.get("width")),
                color_system=_color_system(request.get("color_system")),
                ask=ask,
            )
        except (binascii.Error, ValueError) as error:
            answer = Answer(2, "", f"error: the request's input is not base64: {error}\n")
        except Exception:  # a bug in a command must not take the service down
            log.exception("a forwarded command failed")
            answer = Answer(1, "", "error: the Engram service failed to run the command\n")
        self.served += 1
        log.info(
            "ran %s in %.0f ms (exit %d)",
            request["argv"][2:4],
            (time.perf_counter() - started) * 1000,
            answer.exit_code,
        )
        done = {"op": "done", "exit": answer.exit_code}
        channel.send({**done, "stdout": answer.stdout, "stderr": answer.stderr})
        self.embed_waiting()

    def embed_waiting(self, limit: int = 256) -> int:
        """After the client has its answer: vectors for what the command stored (a
        capture, an add that left them for later), so the next search finds them by
        meaning. Skipped while another process holds the embedding lock."""
        from app.background import embedding_lock
        from app.forwarding import ONE_AT_A_TIME

        engram = self.engram
        if engram.read_only:
            return 0
        try:
            with ONE_AT_A_TIME, embedding_lock(self.data_dir) as held:
                if not held or not engram.store.pending_vector_count(engram.embedder.model_id):
                    return 0
                return engram.service.catch_up(limit)
        except Exception:  # the answer is given; a failure here is only logged
            log.exception("embedding what a command stored failed")
            return 0

    def _refusal(self, request: dict[str, Any]) -> str | None:
        if request.get("protocol") != PROTOCOL:
            return f"protocol {request.get('protocol')!r}; this service speaks {PROTOCOL}"
        argv = request.get("argv")
        if not isinstance(argv, list) or not all(isinstance(word, str) for word in argv):
            return "argv is not a list of strings"
        invocation = read_invocation(argv)
        if invocation.command not in FORWARDED_COMMANDS or invocation.wants_help:
            return f"{invocation.command!r} runs in the client"
        if invocation.data_dir is None or Path(invocation.data_dir).resolve() != (
            self.data_dir.resolve()
        ):
            return "another data folder"
        return None


def _width(value: object) -> int | None:
    return value if isinstance(value, int) and 20 <= value <= 1000 else None


def _color_system(value: object) -> str | None:
    return value if value in ("standard", "256", "truecolor") else None
