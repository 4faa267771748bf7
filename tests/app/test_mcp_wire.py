"""`app.mcp_wire`: between the stdio transport and the server, the end of the input
waits for the answers, and a line that is not JSON-RPC is answered with an error.
The server here is a stand-in that answers each request after a delay; the real
process is driven in tests/integration/test_mcp_stdio.py."""

from __future__ import annotations

import time
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from app.mcp_wire import answered_before_ending, refusal


def request(request_id: int) -> SessionMessage:
    return SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call"))


def cancelled(request_id: int) -> SessionMessage:
    return SessionMessage(
        JSONRPCNotification(
            jsonrpc="2.0", method="notifications/cancelled", params={"requestId": request_id}
        )
    )


def bad_line(line: str) -> ValidationError:
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as problem:
        return problem
    raise AssertionError(f"{line!r} was read as a message")


async def serve(
    items: list[Any], answer_after_s: float, drain_s: float = 5.0, answers: bool = True
) -> tuple[list[Any], float]:
    """Feed `items` and end the input; a server answers each request (if `answers`)
    after `answer_after_s` and stops when its input ends, as the SDK's does (cancelling
    what is still running). What the client got, and when the input reached the server's end."""
    wire_send, wire_receive = anyio.create_memory_object_stream[Any](100)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](100)
    ended_at = 0.0

    async def server(incoming: Any, outgoing: Any) -> None:
        nonlocal ended_at
        async with outgoing, anyio.create_task_group() as tasks:

            async def answer(message: JSONRPCRequest) -> None:
                await anyio.sleep(answer_after_s)
                if answers:
                    await outgoing.send(
                        SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=message.id, result={}))
                    )

            async for item in incoming:
                if isinstance(item.message, JSONRPCRequest):
                    tasks.start_soon(answer, item.message)
            ended_at = time.monotonic()
            tasks.cancel_scope.cancel()

    for item in items:
        await wire_send.send(item)
    wire_send.close()
    started = time.monotonic()
    async with answered_before_ending(wire_receive, out_send, drain_s) as (incoming, outgoing):
        await server(incoming, outgoing)
    got = []
    async with out_receive:
        async for item in out_receive:
            got.append(item.message)
    return got, ended_at - started


def test_the_input_ends_only_once_every_request_is_answered() -> None:
    got, ended_after = anyio.run(serve, [request(1), request(2)], 0.3)
    assert sorted(m.id for m in got if isinstance(m, JSONRPCResponse)) == [1, 2]
    assert ended_after >= 0.3


def test_a_request_the_client_cancelled_is_not_waited_for() -> None:
    got, ended_after = anyio.run(serve, [request(1), cancelled(1)], 2.0)
    assert got == [] and ended_after < 1.5


def test_the_wait_is_bounded() -> None:
    got, ended_after = anyio.run(lambda: serve([request(1)], 0.0, drain_s=0.3, answers=False))
    assert got == [] and 0.3 <= ended_after < 2.0


def test_a_line_that_is_not_json_rpc_gets_an_error_and_the_rest_is_served() -> None:
    items = [bad_line("this is not json"), bad_line('{"a": 1}'), request(7)]
    got, _ = anyio.run(serve, items, 0.0)
    errors = [m for m in got if isinstance(m, JSONRPCError)]
    assert [(e.id, e.error.code) for e in errors] == [(None, PARSE_ERROR), (None, INVALID_REQUEST)]
    assert [m.id for m in got if isinstance(m, JSONRPCResponse)] == [7]


def test_refusal_reads_the_kind_of_problem() -> None:
    assert refusal(bad_line("{")).error.code == PARSE_ERROR
    assert refusal(bad_line('{"jsonrpc": "2.0"}')).error.code == INVALID_REQUEST
    assert refusal(ValueError("anything else")).error.code == INVALID_REQUEST
