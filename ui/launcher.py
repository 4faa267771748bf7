"""The `engram` command: the CLI of app.cli plus `engram tray`, the desktop app.

It lives in ui/ because it is the outermost layer: ui imports app, never the reverse,
and the CLI commands never load Qt unless the tray is asked for. Before the CLI is
imported, a command a running Engram service can answer is handed to it
(`app.service_client`), and `engram hook` gets its time limit."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time


def main() -> None:
    try:
        _main(sys.argv[1:])
    except KeyboardInterrupt:  # before the CLI's group runs (imports, a forwarded command)
        sys.stderr.write("\ninterrupted; nothing more was changed\n")  # as app.cli.common says
        sys.exit(130)


def _refuse_undecodable(argv: list[str]) -> None:
    """Exit 2 naming the first argument that is not valid UTF-8 (Python keeps its bytes as
    lone surrogates, which no store, index or terminal accepts)."""
    for position, argument in enumerate(argv, 1):
        if any("\udc80" <= character <= "\udcff" for character in argument):
            shown = os.fsencode(argument).decode("utf-8", "replace")
            sys.stderr.write(
                f"error: argument {position} ({shown!r}) is not valid UTF-8; nothing was changed\n"
            )
            sys.exit(2)


def _main(argv: list[str]) -> None:
    _refuse_undecodable(argv)
    from app.service_client import (
        data_folder,
        forward,
        hook_timeout_s,
        print_answer,
        read_invocation,
        reads_stdin,
    )

    invocation = read_invocation(argv)
    deadline = None
    if invocation.command == "hook" and not invocation.wants_help:
        data_dir = data_folder(invocation.data_dir)
        limit = hook_timeout_s(data_dir)
        deadline = time.monotonic() + limit
        _give_up_after(limit)
    if invocation.forwardable and not os.environ.get("ENGRAM_NO_SERVICE"):
        consumed: list[bytes] = []

        def stdin() -> bytes:
            if not consumed:
                consumed.append(sys.stdin.buffer.read() if reads_stdin(invocation, argv) else b"")
            return consumed[0]

        answer = forward(argv, invocation, data_folder(invocation.data_dir), deadline, stdin)
        if answer is not None:
            print_answer(answer)
            sys.exit(answer.exit_code)
        if consumed:  # the service refused after the input was read: give it to the CLI
            sys.stdin = io.TextIOWrapper(io.BytesIO(consumed[0]), encoding="utf-8")
    if invocation.command == "hook":
        _run_hook()
    _run_cli()


def _run_hook() -> None:
    """`engram hook` in this process: whatever goes wrong, even before the command
    runs (a bad global option), the assistant gets status 0 and no output — some
    assistants read status 2 as "block this prompt"."""
    import app.cli  # noqa: F401
    from app.cli.common import cli

    with contextlib.suppress(BaseException):
        cli.main(prog_name="engram", standalone_mode=False)
    sys.exit(0)


def _give_up_after(seconds: float) -> None:
    """An assistant's hook never holds a session up: past its time limit the process
    ends with no output and status 0 (the command prints only once it is done)."""
    import threading

    def give_up() -> None:
        os._exit(0)

    timer = threading.Timer(seconds, give_up)
    timer.daemon = True
    timer.start()


def _run_cli() -> None:
    import app.cli  # noqa: F401  (registers every command on the group)
    import ui.tray_command  # noqa: F401  (`engram tray`)
    from app.cli.common import cli

    cli.main(prog_name="engram", standalone_mode=True)


if __name__ == "__main__":
    main()
