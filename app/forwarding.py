"""Running an `engram` command inside this process with its output captured: what the
resident service does for a client, and what the MCP server does for an assistant
(through the service when one runs, else here with its own warm services).

A command run here behaves as from a shell: the same parsing, messages and exit
codes. It runs in the client's working folder; since that is one per process, such
commands run one at a time."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Callable
from pathlib import Path

from app.service_client import Answer, forward, read_invocation

ONE_AT_A_TIME = threading.Lock()  # commands here share the process's working folder


def run_captured(
    argv: list[str],
    *,
    cwd: str | None = None,
    stdin: bytes = b"",
    stdin_tty: bool = False,
    stdout_tty: bool = False,
    width: int | None = None,
    color_system: str | None = None,
    ask: Callable[[str, bool | None], bool | None] | None = None,
) -> Answer:
    """Run `engram ARGV` here; its output and status as a shell would have seen them."""
    import click

    import app.cli  # noqa: F401  (registers every command on the group)
    from app.cli.common import INTERRUPTED, Terminal, cli, stopped_message, terminal

    stdout, stderr = io.StringIO(), io.StringIO()
    streams = Terminal(
        stdout=stdout,
        stderr=stderr,
        stdin=stdin,
        stdin_tty=stdin_tty,
        stdout_tty=stdout_tty,
        width=width,
        color_system=color_system,
        ask=ask,
    )
    with ONE_AT_A_TIME, terminal(streams):
        previous = os.getcwd() if cwd else None
        try:
            if cwd:
                os.chdir(cwd)
            code = _exit_code(
                lambda: cli.main(args=argv, prog_name="engram", standalone_mode=False)
            )
        except click.ClickException as error:
            error.show(file=stderr)
            code = error.exit_code
        except click.Abort as stop:  # a question stopped before a command ran
            stderr.write(stopped_message(stop) + "\n")
            code = INTERRUPTED
        except OSError as error:  # e.g. the client's folder is gone
            stderr.write(f"error: {error}\n")
            code = 3
        finally:
            if previous is not None:
                os.chdir(previous)
    return Answer(code, stdout.getvalue(), stderr.getvalue())


def _exit_code(run: Callable[[], object]) -> int:
    try:
        returned = run()
    except SystemExit as ended:
        if ended.code is None:
            return 0
        return ended.code if isinstance(ended.code, int) else 1
    # click returns the status of `ctx.exit(n)` when not standalone; a command's own
    # return value is not a status.
    return returned if isinstance(returned, int) and not isinstance(returned, bool) else 0


def call(argv: list[str], data_dir: Path, stdin: bytes = b"", cwd: str | None = None) -> Answer:
    """`engram ARGV` for a program (the MCP server): through the service when one owns
    `data_dir`, else in this process."""
    full = ["--data-dir", str(data_dir), *argv]
    invocation = read_invocation(full)
    if invocation.forwardable and not os.environ.get("ENGRAM_NO_SERVICE"):
        answer = forward(full, invocation, data_dir, stdin=lambda: stdin, cwd=cwd)
        if answer is not None:
            return answer
    return run_captured(full, cwd=cwd, stdin=stdin)


def keep_open(data_dir: Path) -> None:
    """Open the services for `data_dir` once, as a command would (start-up checks,
    backup when due, waiting vectors), and keep them for every later command here."""
    from app.cli.common import CliState, resident, set_resident

    if resident(data_dir) is not None:
        return
    state = CliState(str(data_dir), verbose=False)
    set_resident(data_dir, state.engram())


def close_kept(data_dir: Path) -> None:
    from app.cli.common import resident, set_resident

    engram = resident(data_dir)
    set_resident(data_dir, None)
    if engram is not None:
        engram.close()
