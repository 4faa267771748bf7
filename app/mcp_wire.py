"""What `engram mcp` adds to the MCP SDK's stdio transport, between its streams and the
server.

- **Every question asked is answered before the server ends.** The SDK cancels the
  requests still running when its input ends, so a client that writes its requests
  and closes its end of the pipe (`printf … | engram mcp`, a script) got no answer.
  Here the end of the input is passed on only once every request read so far has been
  answered or cancelled by the client, or `DRAIN_S` has passed.
- **A line that is not JSON-RPC gets an error**, as JSON-RPC 2.0 asks (`-32700` for
  text that is not JSON, `-32600` for JSON that is not a message; `"id": null`), and a
  line on stderr. The SDK passed over it in silence, so the client waited for an
  answer that never came.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

log = logging.getLogger(__name__)

DRAIN_S = 120.0  # the longest the server waits, once its input has ended, for answers
CANCELLED = "notifications/cancelled"

Incoming = ObjectReceiveStream[Any]  # SessionMessage, or the Exception of a bad line
Outgoing = ObjectSendStream[SessionMessage]


class Unanswered:
    """The ids of the requests read and not yet answered."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self._changed = anyio.Event()

    def add(self, request_id: Any) -> None:
        self.ids.add(request_id)

    def discard(self, request_id: Any) -> None:
        self.ids.discard(request_id)
        self._changed.set()
        self._changed = anyio.Event()

    async def all_answered(self) -> None:
        while self.ids:
            await self._changed.wait()


def refusal(problem: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message."""
    errors = getattr(problem, "errors", None)
    kinds = {e.get("type") for e in errors()} if callable(errors) else set()
    if "json_invalid" in kinds:
        return JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error")
        )
    return JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC message"),
    )


@asynccontextmanager
async def answered_before_ending(
    incoming: Incoming, outgoing: Outgoing, drain_s: float = DRAIN_S
) -> AsyncIterator[tuple[Incoming, Outgoing]]:
    """Streams for the server in place of the transport's `incoming` and `outgoing`
    (see the module's docstring)."""
    unanswered = Unanswered()
    to_server, from_client = anyio.create_memory_object_stream[Any](0)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage](0)

    refusals = to_client.clone()

    async def relay_in() -> None:
        async with to_server, refusals:
            async for item in incoming:
                if isinstance(item, Exception):
                    refused = refusal(item)
                    log.warning("engram mcp: a line was refused: %s", refused.error.message)
                    await refusals.send(SessionMessage(refused))
                    continue
                message = item.message
                if isinstance(message, JSONRPCRequest):
                    unanswered.add(message.id)
                elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
                    unanswered.discard((message.params or {}).get("requestId"))
                await to_server.send(item)
            with anyio.move_on_after(drain_s):
                await unanswered.all_answered()
            if unanswered.ids:
                log.warning("engram mcp: input ended; %d request(s) left", len(unanswered.ids))

    async def relay_out() -> None:
        async with outgoing, from_server:
            async for item in from_server:
                await outgoing.send(item)
                if isinstance(item.message, JSONRPCResponse | JSONRPCError):
                    unanswered.discard(item.message.id)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(relay_in)
        tasks.start_soon(relay_out)
        try:
            yield from_client, to_client
        finally:
            to_client.close()  # the server closes it as it ends; this covers a failure
