"""How fast `engram mcp` answers an assistant: from starting the process to its
`initialize` answer, the first search, and p50/p95 of the `search` tool over stdio,
with the server working in its own process and with a resident `engram serve`
answering for it. Prints a Markdown table and writes it to docs/benchmarks.md.

    python bench/mcp_latency.py [--starts 8] [--calls 60] [--size 2000]

The data folder is a copy of the embedded corpus of `--size` memories; each search is
one of the corpus's queries scoped to its project, with the tool's default limit (8),
so a call is one search whose results carry their text. Times are measured by
the client, JSON-RPC over pipes included.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from corpus import ENGRAM, corpus, embedded_data_dir, read_jsonl, table, update_doc

PROTOCOL_VERSION = "2025-06-18"


class StdioSession:
    """`engram mcp` as a subprocess, spoken to in JSON-RPC lines."""

    def __init__(self, data_dir: Path, cwd: Path) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [ENGRAM, "--data-dir", str(data_dir), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        self.ids = itertools.count(1)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        number = next(self.ids)
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        while True:
            answer = json.loads(self.process.stdout.readline())
            if answer.get("id") == number:
                if "error" in answer:
                    raise RuntimeError(answer["error"])
                return dict(answer["result"])

    def initialize(self) -> float:
        """Seconds from the process start to the `initialize` answer."""
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        elapsed = time.perf_counter() - self.started
        assert self.process.stdin is not None
        notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.process.stdin.write(json.dumps(notice).encode() + b"\n")
        self.process.stdin.flush()
        return elapsed

    def search(self, query: dict[str, Any]) -> float:
        started = time.perf_counter()
        result = self.request(
            "tools/call",
            {"name": "search", "arguments": {"query": query["query"], "project": query["project"]}},
        )
        if result.get("isError"):
            raise RuntimeError(result["content"])
        return time.perf_counter() - started

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def measure(data_dir: Path, cwd: Path, queries: list[dict[str, Any]], starts: int) -> list[object]:
    """Start times, then one session's first search and the searches after it."""
    initialize = []
    for _ in range(starts):
        session = StdioSession(data_dir, cwd)
        initialize.append(session.initialize())
        session.close()
    session = StdioSession(data_dir, cwd)
    session.initialize()
    first = session.search(queries[0])
    first_after_start = time.perf_counter() - session.started
    calls = [session.search(query) for query in queries[1:]]
    session.close()
    ms = np.array(calls) * 1000
    return [
        f"{np.percentile(initialize, 50):.2f} / {np.percentile(initialize, 95):.2f}",
        f"{first * 1000:.0f} ({first_after_start:.2f} s after start)",
        f"{np.percentile(ms, 50):.1f}",
        f"{np.percentile(ms, 95):.1f}",
        len(calls),
    ]


def serving(data_dir: Path) -> subprocess.Popen[bytes]:
    service = subprocess.Popen(
        [ENGRAM, "--data-dir", str(data_dir), "serve"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    status = [ENGRAM, "--data-dir", str(data_dir), "serve", "--status"]
    while subprocess.run(status, stdout=subprocess.DEVNULL).returncode:
        if service.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("engram serve did not start")
        time.sleep(0.2)
    return service


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=8)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--size", type=int, default=2000)
    args = parser.parse_args()
    queries = read_jsonl(corpus(args.size) / "queries.jsonl")[: args.calls + 1]
    with tempfile.TemporaryDirectory() as folder:
        data_dir = Path(folder) / "data"
        shutil.copytree(embedded_data_dir(args.size), data_dir)
        cwd = Path(folder) / "project"
        cwd.mkdir()
        alone = measure(data_dir, cwd, queries, args.starts)
        service = serving(data_dir)
        try:
            with_service = measure(data_dir, cwd, queries, args.starts)
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=30)
    body = (
        f"## MCP server (`engram mcp`)\n\n{args.size} memories; `search` tool with its default "
        "limit (8), results with their text; times seen by the client over stdio.\n\n"
        + table(
            [
                "models held by",
                "start → initialize p50 / p95 s",
                "first search ms",
                "search p50 ms",
                "search p95 ms",
                "calls",
            ],
            [["the MCP server", *alone], ["a running `engram serve`", *with_service]],
        )
    )
    print(body)
    update_doc("mcp_latency", body, "python bench/mcp_latency.py")


if __name__ == "__main__":
    main()
