"""Concurrent writers: 8 processes adding and 2 searching one data folder at once.

    python bench/concurrency.py                 # 60 s
    python bench/concurrency.py --seconds 10    # a quick run

Each writer starts `engram add TEXT --id ID --no-check --json` processes one after the
other (distinct texts and ids) and each searcher `engram search WORD --json` (which
records its results: a small write of its own), until the time is up; processes running
then finish. Afterwards every add that said it stored its memory must find it in the
database, an add that failed must have stored nothing, and `PRAGMA integrity_check`
must be ok. Target: nothing lost.

The time each add waited for SQLite's write lock is measured inside the process: the
CLI is started through a small launcher that times `SqliteStore._begin_immediate` (busy
timeout and jittered retries included) and prints each wait to stderr, so no log line is
needed in the store. A solo add's wall time is measured first, for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from corpus import ROOT, WORK, table, update_doc

WRITERS = 8
SEARCHERS = 2
WAIT_MARK = "ENGRAM-BENCH-LOCK-WAIT"
# The CLI as `engram` runs it, with the store's lock wait timed and printed to stderr.
LAUNCHER = f"""
import sys, time
from services.storage.database import SqliteStore
begin = SqliteStore._begin_immediate
def timed(self):
    started = time.monotonic()
    transaction = begin(self)
    sys.stderr.write("{WAIT_MARK} %.6f\\n" % (time.monotonic() - started))
    return transaction
SqliteStore._begin_immediate = timed
from ui.launcher import main
sys.argv[0] = "engram"
sys.exit(main())
"""
WORDS = "postgres redis timeout retry cache index parser token queue worker deploy".split()


@dataclass
class Run:
    """One `engram` process: what it was, how it ended, how long it took."""

    kind: str
    memory_id: str
    code: int
    seconds: float
    waits: list[float] = field(default_factory=list)
    error: str = ""


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}


def launch(data_dir: Path, *args: str, kind: str = "", memory_id: str = "") -> Run:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=ROOT,
        timeout=600,
    )
    seconds = time.perf_counter() - started
    waits, other = [], []
    for line in done.stderr.splitlines():
        if line.startswith(WAIT_MARK):
            waits.append(float(line.split()[1]))
        elif line.strip():
            other.append(line)
    return Run(kind, memory_id, done.returncode, seconds, waits, "\n".join(other[-3:]))


def writer(data_dir: Path, number: int, deadline: float, runs: list[Run]) -> None:
    rng = random.Random(number)
    serial = 0
    while time.monotonic() < deadline:
        serial += 1
        memory_id = f"w{number}-{serial:04d}"
        text = (
            f"writer {number}, note {serial}: the {rng.choice(WORDS)} limit of service "
            f"{rng.randint(1, 999)} is {rng.randint(1, 9999)} ms"
        )
        runs.append(
            launch(
                data_dir,
                "add",
                text,
                "--id",
                memory_id,
                "-p",
                "bench",
                "--no-check",
                "--json",
                kind="add",
                memory_id=memory_id,
            )
        )


def searcher(data_dir: Path, number: int, deadline: float, runs: list[Run]) -> None:
    rng = random.Random(100 + number)
    while time.monotonic() < deadline:
        runs.append(launch(data_dir, "search", rng.choice(WORDS), "--json", kind="search"))


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def stored_ids(database: Path) -> tuple[str, set[str]]:
    connection = sqlite3.connect(database, timeout=60)
    try:
        integrity = str(connection.execute("PRAGMA integrity_check").fetchone()[0])
        ids = {row[0] for row in connection.execute("SELECT id FROM memory")}
    finally:
        connection.close()
    return integrity, ids


def measure(data_dir: Path, seconds: float) -> dict[str, object]:
    shutil.rmtree(data_dir, ignore_errors=True)
    solo = [
        launch(data_dir, "add", f"solo note {n}: seed", "--id", f"solo-{n}", "--no-check")
        for n in range(4)
    ]
    if any(run.code for run in solo):
        raise RuntimeError(f"a solo add failed: {[run.error for run in solo]}")
    solo_seconds = statistics.median(run.seconds for run in solo[1:])  # the first migrates
    runs: list[Run] = []
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=writer, args=(data_dir, n, deadline, runs)) for n in range(WRITERS)
    ] + [
        threading.Thread(target=searcher, args=(data_dir, n, deadline, runs))
        for n in range(SEARCHERS)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    integrity, ids = stored_ids(data_dir / "engram.sqlite3")
    adds = [run for run in runs if run.kind == "add"]
    searches = [run for run in runs if run.kind == "search"]
    ok = [run for run in adds if run.code == 0]
    failed = [run for run in adds if run.code != 0]
    lost = [run.memory_id for run in ok if run.memory_id not in ids]
    half_done = [run.memory_id for run in failed if run.memory_id in ids]
    first_waits = [run.waits[0] for run in ok if run.waits]
    total_waits = [sum(run.waits) for run in ok if run.waits]
    return {
        "elapsed": elapsed,
        "solo_add_s": solo_seconds,
        "integrity": integrity,
        "adds": len(adds),
        "stored": len(ok) - len(lost),
        "failed": len(failed),
        "lost": lost,
        "failed_but_stored": half_done,
        "add_errors": sorted({run.error.splitlines()[-1] for run in failed if run.error})[:5],
        "searches_ok": sum(run.code == 0 for run in searches),
        "searches_failed": sum(run.code != 0 for run in searches),
        "search_errors": sorted(
            {run.error.splitlines()[-1] for run in searches if run.code and run.error}
        )[:5],
        "add_wall": [run.seconds for run in ok],
        "search_wall": [run.seconds for run in searches if run.code == 0],
        "first_waits": first_waits,
        "total_waits": total_waits,
        "memories_in_db": len(ids),
    }


def distribution(values: list[float]) -> str:
    if not values:
        return "—"
    return (
        f"p50 {percentile(values, 0.5):.3f} s, p90 {percentile(values, 0.9):.3f} s, "
        f"p99 {percentile(values, 0.99):.3f} s, max {max(values):.3f} s"
    )


def write_doc(result: dict[str, object], seconds: float, command: str) -> None:
    waits: list[float] = result["total_waits"]  # type: ignore[assignment]
    lost: list[str] = result["lost"]  # type: ignore[assignment]
    rows = [
        [
            "adds attempted / stored / failed",
            f"{result['adds']} / {result['stored']} / {result['failed']}",
        ],
        ["adds reported stored but missing (lost)", str(len(lost))],
        ["adds reported failed but stored (half done)", str(len(result["failed_but_stored"]))],  # type: ignore[arg-type]
        ["searches ok / failed", f"{result['searches_ok']} / {result['searches_failed']}"],
        ["`PRAGMA integrity_check` after", str(result["integrity"])],
        ["write-lock wait of the add's own write", distribution(result["first_waits"])],  # type: ignore[arg-type]
        ["write-lock wait, all writes of an add", distribution(waits)],
        [
            "adds that waited ≥ 0.1 s / ≥ 1 s / ≥ 3 s (told)",
            " / ".join(str(sum(w >= limit for w in waits)) for limit in (0.1, 1.0, 3.0)),
        ],
        ["add wall time (process)", distribution(result["add_wall"])],  # type: ignore[arg-type]
        ["solo add wall time (median of 3)", f"{result['solo_add_s']:.2f} s"],
        ["search wall time (process)", distribution(result["search_wall"])],  # type: ignore[arg-type]
    ]
    errors = [*result["add_errors"], *result["search_errors"]]  # type: ignore[misc]
    target = "yes" if not lost and not result["failed"] else "NO"
    body = (
        "## Concurrent writers\n\n"
        f"`bench/concurrency.py`: {WRITERS} processes each running `engram add --no-check` "
        f"one after the other (distinct texts and ids) and {SEARCHERS} running `engram "
        f"search` (which records its results), for {seconds:.0f} s on one data folder "
        f"(ran {result['elapsed']:.0f} s with the last processes finishing). The lock wait "
        "is timed inside each process around `SqliteStore._begin_immediate` (busy timeout "
        "and retries); an add makes a few writes (the memory, its embedding state), the "
        "first is the memory's. On 2 cores ten processes mostly wait for the CPU, which "
        "the wall times show. Target nothing lost: "
        f"**{target}**.\n\n" + table(["what", "measured"], rows)
    )
    if errors:
        body += "\n\nErrors seen:\n\n" + "\n".join(f"- `{e}`" for e in errors)
    update_doc("concurrency", body, command)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    options = parser.parse_args()
    result = measure(WORK / "concurrency", options.seconds)
    printable = {
        k: v
        for k, v in result.items()
        if k not in ("add_wall", "search_wall", "first_waits", "total_waits")
    }
    printable["lock_wait"] = distribution(result["total_waits"])  # type: ignore[arg-type]
    printable["add_wall"] = distribution(result["add_wall"])  # type: ignore[arg-type]
    print(json.dumps(printable, indent=2))
    if not options.no_doc:
        args = " ".join(sys.argv[1:])
        write_doc(result, options.seconds, f"python bench/concurrency.py {args}".strip())


if __name__ == "__main__":
    main()
