"""Duplicate detection against the labelled groups of corpus-2k.

    python bench/duplicates.py

Runs `engram rem run --op duplicates --dry-run --json` on the embedded 2k data folder
(built once by bench/corpus.py) and compares the proposed groups with
`duplicates.jsonl`: precision and recall over pairs (two memories in one proposed group
vs in one labelled group), and how many of the hard negatives of
`duplicate_negatives.jsonl` were proposed. Targets: precision and recall ≥ 0.9 each.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter

from corpus import corpus, embedded_data_dir, engram, read_jsonl, table, update_doc


def pairs_of(groups: list[list[str]]) -> set[tuple[str, str]]:
    return {tuple(sorted(pair)) for group in groups for pair in itertools.combinations(group, 2)}


def main() -> None:
    folder = corpus(2000)
    data_dir = embedded_data_dir(2000)
    labelled = read_jsonl(folder / "duplicates.jsonl")
    truth = pairs_of([g["group"] for g in labelled])
    exact_truth = pairs_of([g["group"] for g in labelled if g["kind"] == "exact"])
    negatives = {
        tuple(sorted((n["a"], n["b"]))) for n in read_jsonl(folder / "duplicate_negatives.jsonl")
    }
    started = time.perf_counter()
    report = json.loads(engram(data_dir, "rem", "run", "--op", "duplicates", "--dry-run", "--json"))
    wall = time.perf_counter() - started
    operation = report["operations"][0]
    proposed = pairs_of([f["memory_ids"] for f in operation["findings"]])
    hits = proposed & truth
    precision = len(hits) / len(proposed) if proposed else 0.0
    recall = len(hits) / len(truth)
    exact_recall = len(proposed & exact_truth) / len(exact_truth) if exact_truth else 1.0
    by_kind: dict[str, set[tuple[str, str]]] = {}
    for finding in operation["findings"]:
        by_kind.setdefault(finding["kind"], set()).update(pairs_of([finding["memory_ids"]]))
    kind_counts = Counter(f["kind"] for f in operation["findings"])
    largest = max((len(f["memory_ids"]) for f in operation["findings"]), default=0)
    rows = [
        ["labelled groups / pairs", f"{len(labelled)} / {len(truth)}"],
        ["proposed groups / pairs", f"{len(operation['findings'])} / {len(proposed)}"],
        [
            "proposed groups by finding kind",
            ", ".join(f"{k} {v}" for k, v in sorted(kind_counts.items())) or "—",
        ],
        ["largest proposed group (memories)", str(largest)],
        [
            "precision (pairs)",
            f"{precision:.3f}",
        ],
        ["recall (pairs)", f"{recall:.3f}"],
        ["recall of exact duplicates", f"{exact_recall:.3f}"],
        *(
            [
                f"precision of `{kind}` pairs",
                f"{len(pairs & truth) / len(pairs):.3f} ({len(pairs & truth)}/{len(pairs)})",
            ]
            for kind, pairs in sorted(by_kind.items())
            if pairs
        ),
        ["hard negatives proposed", f"{len(proposed & negatives)} of {len(negatives)}"],
        ["operation time", f"{operation['seconds']:.2f} s (CLI run {wall:.1f} s)"],
    ]
    target = "yes" if precision >= 0.9 and recall >= 0.9 else "NO"
    body = (
        "## Duplicate detection (corpus-2k)\n\n"
        "`engram rem run --op duplicates --dry-run` on the embedded 2k folder: exact "
        "duplicates by content hash; near duplicates by cosine ≥ 0.85 between MiniLM "
        "vectors plus three checks (same type, backticked names Jaccard ≥ 0.5, same "
        "numbers); and, since the fitted scorers (`services/knowledge/conflict_scorer.py`), "
        "each memory's 5 nearest neighbours whose duplicate probability reaches the "
        "scorer's threshold and which the conflict scorer does not take for a change, "
        "proposed for review as `possible_duplicate`. Pairs become groups (connected "
        "components), so a group's pairs include members that were never paired directly. "
        "Pairs are compared with `duplicates.jsonl`.\n\n"
        + table(["measure", "value"], [[r[0], r[1]] for r in rows])
        + f"\n\nTarget precision ≥ 0.9 and recall ≥ 0.9: {target}."
    )
    print(body)
    update_doc("duplicates", body, "python bench/duplicates.py")


if __name__ == "__main__":
    main()
