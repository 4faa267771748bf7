"""Search quality on the labeled 2k corpus: recall@5, recall@10 and MRR per retriever.

Imports corpus-2k into a data folder (bench/.work/data-2000, reused unless --fresh), embeds
everything, then runs the CLI's batch
search (`engram search --json --limit 10 --retriever R --queries-file Q.jsonl`) for the
hybrid, dense and lexical retrievers, overall and by query kind (identifier, paraphrase,
file, error). recall@k = share of a query's relevant memories in its top k, averaged over
queries; MRR = mean of 1/rank of the first relevant result (0 if none in the top 10).

    python bench/search_quality.py [--size 2000] [--examples 3]
"""

from __future__ import annotations

import argparse
import json

from corpus import WORK, corpus, embedded_data_dir, engram, read_jsonl, table, update_doc

RETRIEVERS = ("hybrid", "dense", "lexical")
KINDS = ("identifier", "paraphrase", "file", "error")


def run(data_dir, queries_file, retriever: str) -> dict[str, list[str]]:
    out = engram(
        data_dir,
        "search",
        "--json",
        "--limit",
        "10",
        "--retriever",
        retriever,
        "--queries-file",
        str(queries_file),
    )
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {line["id"]: [r["id"] for r in line["results"]] for line in lines}


def scores(relevant: list[str], ranked: list[str]) -> tuple[float, float, float]:
    wanted = set(relevant)
    rank = next((i + 1 for i, memory_id in enumerate(ranked) if memory_id in wanted), None)
    return (
        len(wanted & set(ranked[:5])) / len(wanted),
        len(wanted & set(ranked[:10])) / len(wanted),
        1 / rank if rank else 0.0,
    )


def mean(values: list[tuple[float, float, float]]) -> tuple[float, ...]:
    return tuple(sum(v[i] for v in values) / len(values) for i in range(3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument(
        "--fresh", action="store_true", help="import again instead of reusing bench/.work/data-N"
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=3,
        help="print this many queries where hybrid is behind dense or lexical",
    )
    args = parser.parse_args()
    source = corpus(args.size)
    queries = read_jsonl(source / "queries.jsonl")
    data_dir = embedded_data_dir(args.size, args.fresh)
    queries_file = WORK / f"queries-{args.size}.jsonl"
    queries_file.write_text(
        "".join(json.dumps({k: q[k] for k in ("id", "query", "project")}) + "\n" for q in queries)
    )
    ranked = {r: run(data_dir, queries_file, r) for r in RETRIEVERS}
    per_query = {
        r: {q["id"]: scores(q["relevant"], ranked[r].get(q["id"], [])) for q in queries}
        for r in RETRIEVERS
    }

    rows = []
    for kind in ("all", *KINDS):
        chosen = [q["id"] for q in queries if kind in ("all", q["kind"])]
        for r in RETRIEVERS:
            r5, r10, mrr = mean([per_query[r][i] for i in chosen])
            rows.append([kind, len(chosen), r, f"{r5:.3f}", f"{r10:.3f}", f"{mrr:.3f}"])
    body = f"## Search quality ({args.size:,} memories, {len(queries)} queries)\n\n" + table(
        ["kind", "queries", "retriever", "recall@5", "recall@10", "MRR"], rows
    )
    print(body)

    def behind(q: dict) -> float:
        """How far hybrid is behind the better of dense/lexical on this query (MRR, recall@10)."""
        h = per_query["hybrid"][q["id"]]
        return max(
            max(per_query[r][q["id"]][i] - h[i] for r in ("dense", "lexical")) for i in (1, 2)
        )

    worse = sorted((q for q in queries if behind(q) > 0), key=behind, reverse=True)
    counts = ", ".join(f"{k} {sum(q['kind'] == k for q in worse)}" for k in KINDS)
    body += (
        f"\n\nQueries where hybrid ranks the first relevant memory lower, or finds fewer in the "
        f"top 10, than the better of dense and lexical: {len(worse)} ({counts})."
    )
    print(f"\n{len(worse)} queries where hybrid is behind ({counts}); worst first:")
    for q in worse[: args.examples]:
        print(f"- {q['id']} [{q['kind']}] {q['query']!r} relevant={q['relevant']}")
        for r in RETRIEVERS:
            marks = [f"*{m}*" if m in q["relevant"] else m for m in ranked[r].get(q["id"], [])]
            print(f"    {r:8} {' '.join(marks[:5])}")
    update_doc("search_quality", body, f"python bench/search_quality.py --size {args.size}")


if __name__ == "__main__":
    main()
