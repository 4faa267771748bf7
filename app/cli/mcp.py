"""`engram mcp`: Engram's MCP server on standard input and output, started by an
assistant (Claude Code, Codex, Gemini CLI, Cursor, …) in its project folder.

Standard output is the protocol, so before anything else is imported the real stdout
and stdin are kept for the transport and file descriptors 1 and 0 are pointed at
stderr and /dev/null: a stray print from a library or a C extension, or a stray read,
cannot corrupt the protocol. The server ends when its input ends, when its output is
closed and when its parent process goes away (a leaked server would hold the data
folder); when its input ends, only once every request it read is answered, and a line
that is not JSON-RPC gets an error (`app.mcp_wire`)."""

from __future__ import annotations

import io
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from app.cli.common import (
    INTERRUPTED,
    INTERRUPTED_LINE,
    CliState,
    cli,
    err,
    handle_errors,
    pass_state,
)

log = logging.getLogger(__name__)

PARENT_POLL_S = 1.0


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The process's real stdin and stdout, for the protocol alone; from here on file
    descriptor 1 writes to stderr and 0 reads nothing."""
    sys.stdout.flush()
    wire_in = os.fdopen(os.dup(0), "rb")  # os.dup: not inherited by child processes
    wire_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    return wire_in, wire_out


def watch_parent(on_gone: Callable[[], None], poll_s: float = PARENT_POLL_S) -> None:
    """Call `on_gone` once the process that started this one has ended (this process
    is then adopted by another, so its parent id changes)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        on_gone()

    threading.Thread(target=watch, name="engram-mcp-parent", daemon=True).start()


class _ProtocolOutput(io.TextIOWrapper):
    """The protocol's output; when the client closes it, `closed_by_client` is called
    (the transport would otherwise wait for input that may never come)."""

    closed_by_client: Callable[[], None]

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except (BrokenPipeError, ConnectionResetError):
            self.closed_by_client()
            raise

    def flush(self) -> None:
        try:
            super().flush()
        except (BrokenPipeError, ConnectionResetError):
            self.closed_by_client()
            raise


async def _serve(
    server: Any, wire_in: BinaryIO, wire_out: BinaryIO, closed: Callable[[], None]
) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    from app.mcp_wire import answered_before_ending

    reader = anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
    output = _ProtocolOutput(wire_out, encoding="utf-8")
    output.closed_by_client = closed
    writer = anyio.wrap_file(output)
    async with (
        stdio_server(stdin=reader, stdout=writer) as (wire_incoming, wire_outgoing),
        answered_before_ending(wire_incoming, wire_outgoing) as (incoming, outgoing),
    ):
        # MCPServer serves stdio only on the process's own descriptors, which no longer
        # carry the protocol here; its low-level server takes any streams.
        lowlevel = server._lowlevel_server
        await lowlevel.run(incoming, outgoing, lowlevel.create_initialization_options())


@cli.command()
@pass_state
@handle_errors
def mcp(state: CliState) -> None:
    """Serve Engram's tools to an assistant over MCP (stdio). The assistant starts it
    in the project folder; it uses the resident service when one runs (the tray,
    `engram serve`), else loads the models itself. It ends when the assistant goes away."""
    wire_in, wire_out = claim_stdio()
    import anyio

    from app.mcp_server import build_server

    server, runner = build_server(state.data_dir, os.getcwd())

    def end(reason: str, status: int = 0) -> None:
        log.info("engram mcp ends: %s", reason)
        runner.close()
        sys.stderr.flush()
        os._exit(status)  # worker threads (a command still running, the warm-up) end with it

    watch_parent(lambda: end("its parent process went away"))

    def warm_up() -> None:
        try:
            runner.warm_up()
        except Exception:  # the first tool call opens them and says what is wrong
            log.exception("could not load the services in the background")

    threading.Thread(target=warm_up, name="engram-mcp-warm-up", daemon=True).start()
    try:
        anyio.run(_serve, server, wire_in, wire_out, lambda: end("its output was closed"))
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback, the CLI's status for it
        err(INTERRUPTED_LINE)
        end("it was interrupted", INTERRUPTED)
    except BaseException:  # e.g. the client closed our output: end, said on stderr
        log.exception("engram mcp stopped")
        end("it failed", 1)
    end("its input ended")
