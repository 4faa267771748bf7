"""Shared helpers of the integration tests (real models, real servers, real processes)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGRAM = Path(sys.executable).parent / "engram"


def free_port() -> int:
    """A TCP port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def clean_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(overrides)
    return env


def run_engram(
    data_dir: Path,
    *args: object,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`engram --data-dir DATA_DIR ARGS...` as its own process (the installed script)."""
    return subprocess.run(
        [str(ENGRAM), "--data-dir", str(data_dir), *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env if env is not None else clean_env(),
        cwd=ROOT,
    )


class JsonPostServer:
    """A real HTTP server on a free local port that records every POST (path, JSON body,
    Authorization header) and answers with `respond(path, body)`; subclasses play an
    OpenAI-compatible endpoint."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from typing import Any

        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(
                    {
                        "path": self.path,
                        "body": body,
                        "authorization": self.headers.get("Authorization"),
                    }
                )
                status, raw = server.respond(self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def respond(self, path: str, body: dict[str, object]) -> tuple[int, bytes]:
        raise NotImplementedError

    @staticmethod
    def answer(status: int, payload: object) -> tuple[int, bytes]:
        return status, json.dumps(payload).encode()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
