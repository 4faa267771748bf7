"""The `engram` entry point's first step: when a resident service (the tray or
`engram serve`) owns the data folder, hand it the command and print its answer, so a
search from a shell or an assistant's hook costs a process start and a socket round
trip instead of loading the models. When none answers, or it refuses, the caller runs
the command itself.

Standard library only, and nothing imported before it is needed: this runs before the
CLI is imported. Set `ENGRAM_NO_SERVICE=1` to always run in-process."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.local_socket import socket_path
from app.service_protocol import (
    FORWARDED_COMMANDS,
    PROTOCOL,
    SOCKET_FILE,
    Channel,
    ProtocolError,
)

CONNECT_TIMEOUT_S = 0.25
HOOK_TIMEOUT_MS = 1000  # the `hooks.timeout_ms` setting's default
_GLOBAL_FLAGS = {"-v", "--verbose"}


@dataclass(frozen=True)
class Invocation:
    """What the command line asks for, read the way the CLI's root group reads it."""

    command: str | None
    data_dir: str | None
    wants_help: bool

    @property
    def forwardable(self) -> bool:
        return self.command in FORWARDED_COMMANDS and not self.wants_help


@dataclass(frozen=True)
class Answer:
    exit_code: int
    stdout: str
    stderr: str


def read_invocation(argv: list[str]) -> Invocation:
    data_dir: str | None = None
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--data-dir" and index + 1 < len(argv):
            data_dir = argv[index + 1]
            index += 2
            continue
        if word.startswith("--data-dir="):
            data_dir = word.split("=", 1)[1]
        elif word not in _GLOBAL_FLAGS:
            break
        index += 1
    else:
        return Invocation(None, data_dir, False)
    if argv[index].startswith("-"):
        return Invocation(None, data_dir, True)  # --help, --version, a typo: click says
    rest = argv[index + 1 :]
    return Invocation(argv[index], data_dir, "--help" in rest or "-h" in rest)


def data_folder(option: str | None) -> Path:
    from app.paths import resolve_data_dir

    return resolve_data_dir(option)


def hook_timeout_s(data_dir: Path) -> float:
    """`hooks.timeout_ms`, read without the settings module (which loads the schema);
    an unreadable value means the default: the hook must never wait longer."""
    raw: object = os.environ.get("ENGRAM_HOOKS_TIMEOUT_MS")
    if raw is None:
        try:
            raw = json.loads((data_dir / "settings.json").read_text("utf-8")).get(
                "hooks.timeout_ms"
            )
        except (OSError, ValueError, AttributeError):
            raw = None
    try:
        milliseconds = int(raw) if raw is not None else HOOK_TIMEOUT_MS  # type: ignore[call-overload]
    except (TypeError, ValueError):
        milliseconds = HOOK_TIMEOUT_MS
    return min(max(milliseconds, 100), 10_000) / 1000


def reads_stdin(invocation: Invocation, argv: list[str]) -> bool:
    """Whether the command reads standard input: the service gets it with the request."""
    return invocation.command == "hook" or "-" in argv


def _color_system() -> str | None:
    if os.environ.get("NO_COLOR"):
        return None
    if os.environ.get("COLORTERM") in ("truecolor", "24bit"):
        return "truecolor"
    return "256" if "256" in os.environ.get("TERM", "") else "standard"


def service_socket(data_dir: Path) -> Path | None:
    """The data folder's service socket when one is there (live or stale)."""
    try:
        path = socket_path(data_dir, SOCKET_FILE)
    except OSError:
        return None
    return path if path.exists() else None


def forward(
    argv: list[str],
    invocation: Invocation,
    data_dir: Path,
    deadline: float | None = None,
    stdin: Callable[[], bytes] | None = None,
    cwd: str | None = None,
) -> Answer | None:
    """Run `argv` in the service for `data_dir`. None when no service answers or it
    refused before doing anything: the caller runs the command itself."""
    path = service_socket(data_dir)
    if path is None:
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(CONNECT_TIMEOUT_S)
        try:
            connection.connect(str(path))
        except OSError:
            return None
        channel = Channel(connection)
        request = {
            "op": "run",
            "protocol": PROTOCOL,
            "argv": ["--data-dir", str(data_dir), *_without_data_dir(argv)],
            "cwd": cwd or os.getcwd(),
            "stdin": base64.b64encode(stdin() if stdin else b"").decode("ascii"),
            "stdin_tty": sys.stdin.isatty(),
            "stdout_tty": sys.stdout.isatty(),
            "width": shutil.get_terminal_size().columns if sys.stdout.isatty() else None,
            "color_system": _color_system(),
        }
        started = False
        try:
            channel.send(request)
            while True:
                _set_timeout(connection, deadline)
                message = channel.receive()
                if message["op"] == "refused":
                    return None
                started = True
                if message["op"] == "ask":
                    channel.send({"op": "answer", "yes": _ask_here(message)})
                elif message["op"] == "done":
                    return Answer(
                        int(message.get("exit", 1)),
                        str(message.get("stdout", "")),
                        str(message.get("stderr", "")),
                    )
        except (OSError, ProtocolError) as error:
            if not started and not isinstance(error, TimeoutError):
                return None
            if invocation.command == "hook":
                return Answer(0, "", "")  # a hook never holds a session up, nor fails it
            detail = "it took too long" if isinstance(error, TimeoutError) else str(error)
            return Answer(
                3,
                "",
                f"error: the Engram service did not finish `{invocation.command}` ({detail}); "
                "it may or may not have been applied — check, or run it again with "
                "ENGRAM_NO_SERVICE=1\n",
            )
    finally:
        connection.close()


def _without_data_dir(argv: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--data-dir":
            skip = True
        elif not word.startswith("--data-dir="):
            kept.append(word)
    return kept


def _set_timeout(connection: socket.socket, deadline: float | None) -> None:
    if deadline is None:
        connection.settimeout(None)
        return
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    connection.settimeout(remaining)


def _ask_here(message: dict[str, object]) -> bool | None:
    """The person's answer; with a `default` of null, Enter (or no input) is None."""
    default = message.get("default", False)
    later = default is None
    choices = "y/n, Enter: decide later" if later else "Y/n" if default else "y/N"
    try:
        sys.stderr.write(f"{message.get('question', '')} [{choices}]: ")
        sys.stderr.flush()
        reply = sys.stdin.readline().strip().lower()
    except (OSError, KeyboardInterrupt):
        return None if later else False
    if later:
        return True if reply in ("y", "yes") else False if reply in ("n", "no") else None
    return bool(default) if not reply else reply in ("y", "yes")


def print_answer(answer: Answer) -> None:
    if answer.stdout:
        sys.stdout.write(answer.stdout)
        sys.stdout.flush()
    if answer.stderr:
        sys.stderr.write(answer.stderr)
        sys.stderr.flush()
