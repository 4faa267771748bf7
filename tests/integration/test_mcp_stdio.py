"""`engram mcp` as an assistant runs it: a real process on stdin/stdout with the real
embedder, driven by the MCP SDK's own stdio client and by the MCP Inspector CLI from
npm (an independent client, installed by `make mcp-inspector` from
tests/integration/mcp_inspector/package-lock.json); with and without a resident
`engram serve`; and it ends when its input ends, its output is closed or its parent
goes away."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.integration.conftest import ENGRAM, ROOT, clean_env, run_engram

pytestmark = pytest.mark.slow

MCP_COMMAND = [sys.executable, "-m", "ui.launcher", "mcp"]
INSPECTOR_DIR = ROOT / "tests" / "integration" / "mcp_inspector"
INSPECTOR = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture
def project_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "alpha"
    (folder / ".git").mkdir(parents=True)
    (folder / ".engram-project").write_text("alpha\n", encoding="utf-8")
    return folder


def server_env(data_dir: Path) -> dict[str, str]:
    return {"ENGRAM_DATA_DIR": str(data_dir), "ANONYMIZED_TELEMETRY": "False"}


def params(data_dir: Path, cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=MCP_COMMAND[0], args=MCP_COMMAND[1:], env=server_env(data_dir), cwd=cwd
    )


def test_an_assistant_session_over_stdio(data_dir: Path, project_folder: Path) -> None:
    run_engram(data_dir, "add", "Invoices are rounded half-even, never half-up.", "-p", "alpha")

    async def session() -> dict[str, Any]:
        started = time.perf_counter()
        async with Client(params(data_dir, project_folder), mode="legacy") as client:
            initialized = time.perf_counter() - started
            tools = (await client.list_tools()).tools
            found = await client.call_tool("search", {"query": "how are invoices rounded"})
            stored = await client.call_tool(
                "add_memory",
                {
                    "content": "Refunds go through the ledger service, never the DB.",
                    "type": "convention",
                },
            )
            again = await client.call_tool("search", {"query": "how are refunds made"})
            return {
                "initialized": initialized,
                "info": client.server_info,
                "instructions": client.instructions,
                "tools": [tool.name for tool in tools],
                "found": found,
                "stored": stored,
                "again": again,
            }

    result = anyio.run(session)
    assert result["initialized"] < 5.0  # the models load after the handshake
    assert result["info"].name == "engram" and "add_memory" in result["instructions"]
    assert len(result["tools"]) == 15 and {"search", "context", "add_memory"} <= set(
        result["tools"]
    )
    found = result["found"].structured_content
    assert found["project"] == "alpha"
    assert [r["title"] for r in found["results"]] == [
        "Invoices are rounded half-even, never half-up."
    ]
    stored = result["stored"].structured_content
    assert stored["project"] == "alpha" and stored["type"] == "convention"
    assert result["again"].structured_content["results"][0]["id"] == stored["id"]


def _message(handle: Any, message: dict[str, Any]) -> None:
    handle.write(json.dumps(message).encode() + b"\n")
    handle.flush()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


def test_it_ends_when_its_input_ends(data_dir: Path, project_folder: Path) -> None:
    process = subprocess.Popen(
        MCP_COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=project_folder,
        env=clean_env(**server_env(data_dir), PYTHONPATH=str(ROOT)),
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        _message(process.stdin, INITIALIZE)
        answer = json.loads(process.stdout.readline())
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "engram"
        process.stdin.close()
        assert process.wait(timeout=30) == 0
        assert process.stdout.read() == b""  # nothing but protocol messages, and no more
    finally:
        if process.poll() is None:
            process.kill()


def test_ctrl_c_ends_it_quietly_with_status_130(data_dir: Path, project_folder: Path) -> None:
    """SIGINT had printed anyio's whole KeyboardInterrupt traceback and exited 1."""
    process = subprocess.Popen(
        MCP_COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project_folder,
        env=clean_env(**server_env(data_dir), PYTHONPATH=str(ROOT)),
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        _message(process.stdin, INITIALIZE)
        assert json.loads(process.stdout.readline())["id"] == 1
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 130
        assert "Traceback" not in stderr.decode()
        assert "interrupted; nothing more was changed" in stderr.decode()
    finally:
        if process.poll() is None:
            process.kill()


def test_a_client_that_writes_its_requests_and_ends_its_input_gets_every_answer(
    data_dir: Path, project_folder: Path
) -> None:
    """`printf … | engram mcp`: the input ends right after a tool call and a line that
    is not JSON; the call is answered (the SDK had cancelled it) and the line refused."""
    run_engram(data_dir, "add", "-p", "alpha", "We pin httpx below 0.28 until the SDK is fixed.")
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "httpx pin"}},
    }
    lines = [
        json.dumps(INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "this is not json",
        json.dumps(call),
    ]
    done = subprocess.run(
        MCP_COMMAND,
        input=("\n".join(lines) + "\n").encode(),
        capture_output=True,
        cwd=project_folder,
        env=clean_env(**server_env(data_dir), PYTHONPATH=str(ROOT)),
        timeout=120,
    )
    assert done.returncode == 0
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, None, 2]
    assert answers[1]["error"]["code"] == -32700
    assert "We pin httpx below 0.28" in json.dumps(answers[2]["result"])


def test_it_ends_when_its_output_is_closed(data_dir: Path, project_folder: Path) -> None:
    """The client stops reading but keeps the input open: the server's next answer
    cannot be written, and it ends instead of waiting for input."""
    process = subprocess.Popen(
        MCP_COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=project_folder,
        env=clean_env(**server_env(data_dir), PYTHONPATH=str(ROOT)),
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdout.close()
        _message(process.stdin, INITIALIZE)
        assert process.wait(timeout=30) == 0
        assert not process.stdin.closed
    finally:
        if process.poll() is None:
            process.kill()


def _gone(pid: int) -> bool:
    """The process has ended (a zombie waiting for its new parent counts)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_it_ends_when_its_parent_goes_away_with_its_input_still_open(
    data_dir: Path, project_folder: Path
) -> None:
    """The leak the issue names: the assistant dies, but something else still holds
    the write end of the server's stdin, so no EOF comes."""
    launcher = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen({MCP_COMMAND!r}, stderr=subprocess.DEVNULL)\n"
        "sys.stderr.write(f'{child.pid}\\n'); sys.stderr.flush()\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", launcher],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project_folder,
        env=clean_env(**server_env(data_dir), PYTHONPATH=str(ROOT)),
    )
    assert parent.stdin is not None and parent.stdout is not None and parent.stderr is not None
    child = int(parent.stderr.readline())
    try:
        _message(parent.stdin, INITIALIZE)  # the child answers through the same pipes
        assert json.loads(parent.stdout.readline())["id"] == 1
        parent.kill()
        parent.wait(timeout=10)
        assert not _gone(child)
        deadline = time.monotonic() + 30
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _gone(child), "engram mcp outlived its parent"
        assert not parent.stdin.closed  # its input never ended
    finally:
        parent.stdin.close()
        if not _gone(child):
            os.kill(child, signal.SIGKILL)


@pytest.fixture
def resident_service(data_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    service = subprocess.Popen(
        [str(ENGRAM), "--data-dir", str(data_dir), "serve"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=clean_env(),
    )
    deadline = time.monotonic() + 60
    while run_engram(data_dir, "serve", "--status").returncode != 0:
        assert service.poll() is None and time.monotonic() < deadline, "engram serve did not start"
        time.sleep(0.2)
    yield service
    service.send_signal(signal.SIGTERM)
    service.wait(timeout=30)


def test_with_engram_serve_running_the_tools_are_answered_by_it(
    data_dir: Path, project_folder: Path, resident_service: subprocess.Popen[bytes]
) -> None:
    async def session() -> tuple[Any, Any]:
        async with Client(params(data_dir, project_folder), mode="legacy") as client:
            stored = await client.call_tool(
                "add_memory", {"content": "Feature flags live in flags.yaml, not in code."}
            )
            found = await client.call_tool("search", {"query": "where do feature flags live"})
            return stored, found

    stored, found = anyio.run(session)
    assert [r["id"] for r in found.structured_content["results"]] == [
        stored.structured_content["id"]
    ]
    status = json.loads(run_engram(data_dir, "serve", "--status", "--json").stdout)
    assert status["running"] and status["served"] >= 2  # add, then the search


# -- the MCP Inspector CLI, an independent client ---------------------------------------


def _inspector(data_dir: Path, cwd: Path, *arguments: str) -> Any:
    done = subprocess.run(
        [
            str(INSPECTOR),
            "--cli",
            "-e",
            f"ENGRAM_DATA_DIR={data_dir}",
            "-e",
            "ANONYMIZED_TELEMETRY=False",
            str(ENGRAM),
            "mcp",
            *arguments,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


@pytest.mark.skipif(
    shutil.which("node") is None or not INSPECTOR.exists(),
    reason="the MCP Inspector is not installed: run `make mcp-inspector` (needs Node.js and npm)",
)
def test_the_mcp_inspector_lists_and_calls_the_tools(data_dir: Path, project_folder: Path) -> None:
    run_engram(data_dir, "add", "Deploys freeze on Fridays after 14:00.", "-p", "alpha")
    listed = _inspector(data_dir, project_folder, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert len(tools) == 15
    assert tools["search"]["annotations"]["readOnlyHint"] is True
    assert tools["supersede_memory"]["annotations"]["destructiveHint"] is True
    assert tools["search"]["inputSchema"]["required"] == ["query"]

    called = _inspector(
        data_dir,
        project_folder,
        "--method",
        "tools/call",
        "--tool-name",
        "search",
        "--tool-arg",
        "query=when do deploys freeze",
    )
    assert called["isError"] is False
    results = called["structuredContent"]["results"]
    assert [r["title"] for r in results] == ["Deploys freeze on Fridays after 14:00."]
    assert "Deploys freeze on Fridays" in called["content"][0]["text"]

    failed = _inspector(
        data_dir,
        project_folder,
        "--method",
        "tools/call",
        "--tool-name",
        "get_memory",
        "--tool-arg",
        "memory_id=mem-000000000000",
    )
    assert failed["isError"] is True
    assert failed["content"][0]["text"] == "error: no memory with id 'mem-000000000000'"
