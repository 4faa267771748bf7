"""What a command costs from a shell or an assistant's hook: the whole `engram`
process (start, work, exit), through the resident service and without it.

    python bench/service_latency.py [--runs 40] [--cold-runs 10]

The data folder holds the 270 real-dev notes (`/work/shared/bench/real-dev`), embedded.
`engram serve` runs in its own process for the "service" rows; the "in-process" rows
set ENGRAM_NO_SERVICE=1, so each run loads what it needs itself (a cold start). The
commands alternate, so a burst of load on this shared machine hits every row alike.
Targets (issue 16): through the service, search / context / add p95 ≤ 150 ms and a
hook p95 ≤ 100 ms; without it, a cold search within 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from corpus import ENGRAM, SHARED, table, update_doc

NOTES = SHARED / "real-dev" / "memories.jsonl"
SEARCH_TARGET_MS = 150
HOOK_TARGET_MS = 100
COLD_SEARCH_TARGET_MS = 1000


def run(argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"") -> float:
    """Milliseconds for one `engram` process, start to exit; it must succeed."""
    started = time.perf_counter()
    done = subprocess.run(
        [ENGRAM, *argv], input=stdin, capture_output=True, env=env, cwd=cwd, check=False
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"engram {' '.join(argv)} failed: {done.stderr.decode()[-800:]}")
    return elapsed


def hook_input(event: str, cwd: Path, session: str, number: int) -> bytes:
    """What Claude Code sends a hook, in its shape."""
    base = {"session_id": session, "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd)}
    if event == "session-start":
        return json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}).encode()
    if event == "prompt":
        prompt = ["why do we pin the pool limits?", "what timeout does the client use?"][number % 2]
        return json.dumps(
            {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        ).encode()
    return json.dumps(
        {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": str(cwd / "httpx" / "_client.py")},
            "tool_response": {"success": True},
        }
    ).encode()


def has_hook_command(env: dict[str, str], cwd: Path) -> bool:
    done = subprocess.run(
        [ENGRAM, "hook", "--help"], capture_output=True, env=env, cwd=cwd, check=False
    )
    return done.returncode == 0


def cases(project_dir: Path, hooks: bool) -> list[tuple[str, list[str], str | None]]:
    """(label, argv, hook event or None)."""
    rows: list[tuple[str, list[str], str | None]] = [
        ("search", ["search", "how are timeouts configured", "--no-record"], None),
        ("search --json", ["search", "pool limits", "--json", "--no-record"], None),
        (
            "context (a file, budget 2000)",
            ["context", "--file", "httpx/_client.py", "--budget", "2000", "--no-record"],
            None,
        ),
        ("add", ["add", "Benchmark note", "-t", "episode", "--json"], None),
        ("list", ["list", "--limit", "10"], None),
    ]
    if hooks:
        rows += [
            ("hook session-start", ["hook", "session-start", "--for", "claude"], "session-start"),
            ("hook prompt", ["hook", "prompt", "--for", "claude"], "prompt"),
            ("hook tool-use (Read)", ["hook", "tool-use", "--for", "claude"], "tool-use"),
        ]
    return rows


def measure(
    rows: list[tuple[str, list[str], str | None]],
    env: dict[str, str],
    cwd: Path,
    runs: int,
    tag: str,
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label, _, _ in rows}
    for number in range(runs):
        for label, argv, event in rows:
            argv = [
                word.replace("Benchmark note", f"Benchmark note {tag} {number}") for word in argv
            ]
            stdin = hook_input(event, cwd, f"bench-{tag}-{number}", number) if event else b""
            times[label].append(run(argv, env, cwd, stdin))
    return times


def percentiles(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per command via the service")
    parser.add_argument("--cold-runs", type=int, default=10, help="runs per command without it")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="engram-service-bench-"))
    data_dir = work / "data"
    project_dir = work / "httpx-clone"
    (project_dir / "httpx").mkdir(parents=True)
    (project_dir / ".git").mkdir()
    (project_dir / ".engram-project").write_text("httpx\n")
    (project_dir / "httpx" / "_client.py").write_text("class Client:\n    pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_DATA_DIR"] = str(data_dir)
    cold_env = {**env, "ENGRAM_NO_SERVICE": "1"}
    run(["import", str(NOTES)], cold_env, project_dir)
    run(["embed", "--wait"], cold_env, project_dir)
    hooks = has_hook_command(cold_env, project_dir)
    rows = cases(project_dir, hooks)

    cold = measure(rows, cold_env, project_dir, args.cold_runs, "cold")
    server = subprocess.Popen(
        [ENGRAM, "serve"], env=env, cwd=project_dir, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stderr is not None
        ready_line = server.stderr.readline()
        if "serving" not in ready_line:
            raise SystemExit(f"engram serve did not start: {ready_line}{server.stderr.read()}")
        warm = measure(rows, env, project_dir, args.runs, "warm")
        status = json.loads(
            subprocess.run(
                [ENGRAM, "serve", "--status", "--json"], capture_output=True, env=env, check=False
            ).stdout
        )
    finally:
        server.terminate()
        server.wait(timeout=60)
    expected = len(rows) * args.runs
    if status.get("served") != expected:
        raise SystemExit(f"the service answered {status.get('served')} of {expected} commands")

    lines = []
    for label, _, event in rows:
        cold_p50, cold_p95 = percentiles(cold[label])
        warm_p50, warm_p95 = percentiles(warm[label])
        target = HOOK_TARGET_MS if event else SEARCH_TARGET_MS
        lines.append(
            [
                label,
                f"{warm_p50:.0f} / {warm_p95:.0f}",
                f"≤ {target}" + (" ✓" if warm_p95 <= target else " ✗"),
                f"{cold_p50:.0f} / {cold_p95:.0f}",
                f"{cold_p50 / warm_p50:.1f}×",
            ]
        )
    cold_search = percentiles(cold["search"])[0]
    body = "\n".join(
        [
            "## Commands through the resident service (`bench/service_latency.py`)",
            "",
            f"Each row is a whole `engram` process, start to exit, from a shell-like caller "
            f"(`subprocess.run`), on the 270 real-dev notes. *service*: `engram serve` runs "
            f"and answers ({args.runs} runs per command; it answered all {expected}); "
            f"*in-process*: ENGRAM_NO_SERVICE=1, each run loads what it needs "
            f"({args.cold_runs} runs). Commands alternate, so load on this shared machine "
            f"hits every row alike. Hooks get Claude Code's JSON on stdin"
            + ("." if hooks else " (not measured: `engram hook` is not there)."),
            "",
            table(
                [
                    "command",
                    "service p50 / p95 (ms)",
                    "target p95",
                    "in-process p50 / p95 (ms)",
                    "in-process ÷ service (p50)",
                ],
                lines,
            ),
            "",
            f"- cold search without the service: p50 {cold_search:.0f} ms (target "
            f"≤ {COLD_SEARCH_TARGET_MS} ms"
            + (" ✓)." if cold_search <= COLD_SEARCH_TARGET_MS else " ✗)."),
        ]
    )
    print(body)
    update_doc("service_latency", body, "python bench/service_latency.py")


if __name__ == "__main__":
    main()
