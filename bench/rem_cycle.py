"""A full consolidation cycle — every operation, the embedded LLM included — at 1k and
10k memories.

    python bench/rem_cycle.py [--sizes 1000 10000] [--ops retention staleness …]

For each size: copies the embedded data folder (bench/corpus.py builds it once; embedding
1k memories takes about a minute, 10k about 12 minutes) to a scratch folder, loads the
corpus's usage log (`usage.jsonl`) into it as bench/staleness.py does, and times
`engram rem run --op … (all of them) --as-of 2026-10-31T23:59:59+00:00 --json` with the
default settings, so summaries are written by the embedded SmolLM2 (findings stored,
none applied); then, on a fresh copy, the same with `--auto` (every recommended option
applied except extraction's suggestions). Reports the seconds of each operation (from
the JSON), the CLI's wall time (process start, opening the services and loading the
model included), the findings per operation and kind, what the operations that apply
themselves changed, what --auto applied, and how the time grows from the smallest to
the largest size. Target: a full cycle on 1,000 memories in ≤ 2 minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sqlite3
import time
from collections import Counter
from pathlib import Path

from corpus import WORK, corpus, embedded_data_dir, engram, read_jsonl, table, update_doc
from staleness import load_usage

from services.rem.cycle import describe_changes
from services.rem.registry import find_operation, names

AS_OF = "2026-10-31T23:59:59+00:00"
OPS = names()  # the whole cycle, in its order
TARGET_SIZE = 1000
TARGET_SECONDS = 120.0


def prepared(size: int, source: Path) -> Path:
    """A fresh copy of the embedded `size` folder with the corpus's usage log loaded."""
    data_dir = WORK / f"rem-cycle-{size}"
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.copytree(source, data_dir, ignore=shutil.ignore_patterns("embed.lock", "embed.log"))
    load_usage(str(data_dir / "engram.sqlite3"), read_jsonl(corpus(size) / "usage.jsonl"))
    return data_dir


def cycle(data_dir: Path, ops: list[str], *extra: str) -> tuple[float, list[dict]]:
    """Run the whole cycle; return the CLI's wall seconds and the operation reports."""
    selected = [arg for op in ops for arg in ("--op", op)]
    started = time.perf_counter()
    output = engram(data_dir, "rem", "run", *selected, "--as-of", AS_OF, "--json", *extra)
    wall = time.perf_counter() - started
    operations = json.loads(output)["operations"]
    failed = [f"{o['op']}: {o['error']}" for o in operations if o["error"]]
    assert not failed, f"{data_dir}: {failed}"
    return wall, operations


def tiers(data_dir: Path) -> dict[str, int]:
    connection = sqlite3.connect(data_dir / "engram.sqlite3")
    rows = connection.execute("SELECT tier, count(*) FROM memory GROUP BY tier").fetchall()
    superseded = connection.execute(
        "SELECT count(*) FROM memory WHERE superseded_by IS NOT NULL"
    ).fetchone()[0]
    # Memories whose vectors were queued again (read here, not with `engram stats`, which
    # would start embedding them).
    waiting = connection.execute(
        "SELECT count(*) FROM memory WHERE embedded_model IS NULL"
    ).fetchone()[0]
    connection.close()
    return {
        **{str(t): int(n) for t, n in rows},
        "superseded": int(superseded),
        "waiting": int(waiting),
    }


def kinds(operation: dict) -> str:
    counted = Counter(f["kind"] for f in operation["findings"])
    return ", ".join(f"{k} {v}" for k, v in sorted(counted.items())) or "—"


def outcome(report: dict) -> str:
    """Findings by kind, or what an operation that applies itself changed."""
    if report["op"] == "retention":
        moved = ", ".join(f"→ {k} {v}" for k, v in sorted(report["changes"].items()))
        return f"tiers {moved or 'unchanged'}"
    declared = find_operation(report["op"])
    if declared is not None and declared.applies_itself:
        return describe_changes(report["op"], report["changes"]) or "no change"
    return f"{len(report['findings'])} ({kinds(report)})"


def measure(size: int, ops: list[str]) -> dict:
    source = embedded_data_dir(size)
    stored_dir = prepared(size, source)
    stored_wall, stored = cycle(stored_dir, ops)
    auto_dir = prepared(size, source)
    auto_wall, auto = cycle(auto_dir, ops, "--auto")
    result = {
        "size": size,
        "stored": {"wall": stored_wall, "operations": stored},
        "auto": {"wall": auto_wall, "operations": auto, "tiers": tiers(auto_dir)},
    }
    print(
        f"{size}: stored {stored_wall:.1f} s, auto {auto_wall:.1f} s; "
        + ", ".join(f"{o['op']} {o['seconds']:.2f} s" for o in stored),
        flush=True,
    )
    return result


def growth(small: float, large: float, ratio: float) -> str:
    if small <= 0 or large <= 0:
        return "—"
    return f"×{large / small:.1f} (exponent {math.log(large / small) / math.log(ratio):.2f})"


def report(results: list[dict]) -> str:
    ops = [o["op"] for o in results[0]["stored"]["operations"]]
    timing = []
    for r in results:
        for mode in ("stored", "auto"):
            run = r[mode]
            seconds = [o["seconds"] for o in run["operations"]]
            timing.append(
                [
                    f"{r['size']:,}",
                    "findings stored" if mode == "stored" else "--auto",
                    *(f"{s:.2f}" for s in seconds),
                    f"{sum(seconds):.2f}",
                    f"{run['wall']:.1f}",
                ]
            )
    found = []
    for r in results:
        by_op = {o["op"]: o for o in r["auto"]["operations"]}
        for operation in r["stored"]["operations"]:
            auto = by_op[operation["op"]]
            size = f"{r['size']:,}"
            found.append(
                [size, operation["op"], outcome(operation), outcome(auto), auto["applied"]]
            )
    after = [
        [
            f"{r['size']:,}",
            *(r["auto"]["tiers"].get(t, 0) for t in ("hot", "warm", "cold", "archived")),
            r["auto"]["tiers"]["superseded"],
            r["auto"]["tiers"]["waiting"],
        ]
        for r in results
    ]
    body = (
        "## Consolidation cycle (`engram rem run`, every operation)\n\n"
        f"`engram rem run {' '.join('--op ' + o for o in ops)} --as-of {AS_OF} --json` on a "
        "copy of the embedded folder with the corpus's usage log (`usage.jsonl`) loaded, "
        "default settings: the embedded SmolLM2 writes the prose of at most 4 cluster "
        "summaries and 2 community summaries a run (the others are derived from the "
        "memories; prose that is not about its sources is rejected), reads the facts of at "
        "most 5 memories the rules cannot read, and breaks ties between contradiction "
        "cues; each operation's model time is proportionate to the memories it looks at "
        "(0.025 s each, at most 40 s clusters, 20 s communities, 20 s facts, 30 s "
        "contradictions), and the model is loaded once, on first use. "
        "Retention, links, communities and episodes apply themselves; the others store "
        "findings. First with the findings stored for review "
        "and nothing applied, then on a fresh copy with `--auto` (every recommended option "
        "applied: duplicates merged, unused/idle/superseded memories archived, cluster "
        "summaries added; `stale` and `unmatched` findings recommend `skip` and stay open; "
        "extraction's suggestions are never applied by `--auto`). Operation seconds are "
        "from the JSON; the CLI wall time adds process start-up, opening the services "
        "(SQLite, the vector index, the embedder) and reconciling the indexes with the "
        "records.\n\n"
        "Seconds per operation and for the whole run:\n\n"
        + table(
            ["memories", "run", *ops, "operations total", "CLI wall"],
            timing,
        )
        + "\n\nFindings per operation (count, by kind) or what it changed itself, and what "
        "`--auto` applied:\n\n"
        + table(["memories", "operation", "stored run", "--auto run", "applied"], found)
        + "\n\nMemories per tier after the `--auto` run:\n\n"
        + table(
            ["memories", "hot", "warm", "cold", "archived", "superseded", "waiting for vectors"],
            after,
        )
        + "\n\nMerging adds the other members' tags and file references to the kept memory, "
        "which queues its vectors again (the last column; the next `engram` command on the "
        "folder embeds them, a few inline, more in the background). Staleness runs before "
        "duplicates, so with `--auto` the memories it "
        "archives are gone before duplicates looks: "
        + "; ".join(
            f"{r['size']:,}: {len(stored_dup['findings'])} duplicate groups when nothing is "
            f"applied, {len(auto_dup['findings'])} after staleness archived"
            for r in results
            for stored_dup, auto_dup in [
                (
                    next(o for o in r["stored"]["operations"] if o["op"] == "duplicates"),
                    next(o for o in r["auto"]["operations"] if o["op"] == "duplicates"),
                )
            ]
        )
        + "."
    )
    if len(results) > 1:
        first, last = results[0], results[-1]
        ratio = last["size"] / first["size"]
        rows = []
        for index, op in enumerate(ops):
            small = first["stored"]["operations"][index]["seconds"]
            large = last["stored"]["operations"][index]["seconds"]
            rows.append([op, f"{small:.2f}", f"{large:.2f}", growth(small, large, ratio)])
        for label, key in (("CLI wall (stored)", "stored"), ("CLI wall (--auto)", "auto")):
            small, large = first[key]["wall"], last[key]["wall"]
            rows.append([label, f"{small:.1f}", f"{large:.1f}", growth(small, large, ratio)])
        body += (
            f"\n\nGrowth from {first['size']:,} to {last['size']:,} memories (×{ratio:g}; "
            "exponent 1 = linear, 2 = quadratic), findings-stored run:\n\n"
            + table(
                ["", f"{first['size']:,} s", f"{last['size']:,} s", "growth"],
                rows,
            )
        )
    at_target = [r for r in results if r["size"] == TARGET_SIZE]
    if at_target:
        worst = max(at_target[0]["stored"]["wall"], at_target[0]["auto"]["wall"])
        met = "yes" if worst <= TARGET_SECONDS else "NO"
        body += (
            f"\n\nTarget: a full cycle on {TARGET_SIZE:,} memories in ≤ 2 minutes: {met} "
            f"({worst:.1f} s, the slower of the two CLI runs)."
        )
    return body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--ops", nargs="+", default=OPS, help="operations of the cycle")
    args = parser.parse_args()
    results = [measure(size, args.ops) for size in sorted(args.sizes)]
    body = report(results)
    print(body)
    sizes = " ".join(str(s) for s in sorted(args.sizes))
    ops = "" if args.ops == OPS else " --ops " + " ".join(args.ops)
    update_doc("rem_cycle", body, f"python bench/rem_cycle.py --sizes {sizes}{ops}")


if __name__ == "__main__":
    main()
