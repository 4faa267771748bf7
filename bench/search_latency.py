"""In-process search latency at 1k and 10k memories (and 100k when asked): p50/p95.

For each size: a data folder with the corpus imported and fully embedded (real ONNX
embedder; bench/.work/data-N, built once and reused), then every query of that corpus's
queries.jsonl through `engram.service.search(query, MemoryFilter(project=...), 10)`,
timed with time.perf_counter after a few warm-up queries. Hybrid latency includes the
query embedding. Also lexical-only and dense-only, and the hybrid stage breakdown from
`response.metrics`. DESIGN targets: hybrid p95 <= 30 ms at 10k, <= 60 ms at 100k.

    python bench/search_latency.py [--sizes 1000 10000] [--warmup 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from corpus import corpus, embedded_data_dir, read_jsonl, table, update_doc

from app.composition import open_engram
from services.filters import MemoryFilter
from services.search.retrieval import RetrieverKind

TARGETS = {10000: 30.0, 100000: 60.0}
STAGES = ("embed_ms", "dense_ms", "lexical_ms", "merge_ms")


def pct(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def measure(size: int, warmup: int) -> str:
    queries = read_jsonl(corpus(size) / "queries.jsonl")
    app = open_engram(embedded_data_dir(size))
    try:
        rows, stages = [], {name: [] for name in STAGES}
        for kind in (RetrieverKind.HYBRID, RetrieverKind.LEXICAL, RetrieverKind.DENSE):
            for q in queries[:warmup]:
                app.service.search(q["query"], MemoryFilter(project=q["project"]), 10, kind)
            timings = []
            app.retriever.clear_query_cache()  # every timed search embeds its query
            for q in queries:
                started = time.perf_counter()
                response = app.service.search(
                    q["query"], MemoryFilter(project=q["project"]), 10, kind
                )
                timings.append((time.perf_counter() - started) * 1000)
                if kind is RetrieverKind.HYBRID:
                    for name in STAGES:
                        stages[name].append(getattr(response.metrics, name))
            p50, p95 = pct(timings)
            target = TARGETS.get(size) if kind is RetrieverKind.HYBRID else None
            met = "—" if target is None else ("yes" if p95 <= target else "NO")
            rows.append(
                [
                    kind.value,
                    len(timings),
                    f"{p50:.1f}",
                    f"{p95:.1f}",
                    f"{max(timings):.1f}",
                    f"≤ {target:.0f}" if target else "—",
                    met,
                ]
            )
        count = app.store.count()
    finally:
        app.close()
    stage_rows = [
        [name.removesuffix("_ms"), *(f"{v:.1f}" for v in pct(values)), f"{np.mean(values):.1f}"]
        for name, values in stages.items()
    ]
    return (
        f"### {count:,} memories, {len(queries)} queries\n\n"
        + table(["retriever", "queries", "p50 ms", "p95 ms", "max ms", "target p95", "met"], rows)
        + "\n\nHybrid stages (from `response.metrics`):\n\n"
        + table(["stage", "p50 ms", "p95 ms", "mean ms"], stage_rows)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    for size in args.sizes:
        body = measure(size, args.warmup)
        print(body + "\n")
        update_doc(f"search_latency_{size}", body, f"python bench/search_latency.py --sizes {size}")


if __name__ == "__main__":
    main()
