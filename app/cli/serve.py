"""`engram serve`: the resident service without the desktop (a server, CI, a terminal
session). It owns the data folder until stopped: the models stay loaded, and `engram`
commands, the MCP server and assistants' hooks are answered over the data folder's
socket. `engram serve --status` says whether one runs."""

from __future__ import annotations

import signal
import sys
import time
from typing import Any

import click

from app.cli.common import CliState, cli, emit_json, handle_errors, json_option, pass_state, say


@cli.command()
@click.option("--status", is_flag=True, help="Say whether a service runs for the data folder.")
@json_option
@pass_state
@handle_errors
def serve(state: CliState, status: bool, as_json: bool) -> None:
    """Keep Engram running for this data folder and answer commands, the MCP server
    and assistants' hooks from it (the desktop app does the same while it runs)."""
    from app.service import AlreadyServing, EngramService, ping

    if status:
        running = ping(state.data_dir)
        if as_json:
            emit_json({"running": running is not None, **(running or {})})
        elif running is None:
            say(f"no Engram service runs for {state.data_dir}")
        else:
            say(
                f"an Engram service runs for {state.data_dir}: pid {running['pid']}, "
                f"up {_duration(time.time() - float(running['started']))}, "
                f"{running['served']} commands answered"
            )
        sys.exit(0 if running is not None else 1)
    started = time.perf_counter()
    service = EngramService(state.data_dir, state.engram())
    try:
        service.start()
    except AlreadyServing as error:
        raise click.ClickException(str(error)) from None
    warm_up(state)

    def stop(_signal: int, _frame: Any) -> None:
        service._stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    say(
        f"serving {state.data_dir} on {service.path} (ready in "
        f"{time.perf_counter() - started:.1f} s; Ctrl+C stops)",
        err=True,
    )
    try:
        service.wait()
    finally:
        service.stop()
        say(f"stopped after {service.served} commands", err=True)


def warm_up(state: CliState) -> None:
    """Load what the first client would wait for: the embedding model and the index."""
    from app.forwarding import run_captured

    run_captured(
        ["--data-dir", str(state.data_dir), "search", "warm up", "--limit", "1", "--no-record"]
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
