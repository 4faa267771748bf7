"""Fit the restatement scorer (`services/knowledge/restatement_weights.py`) on every
hand-written development set at once, with leave-one-set-out cross-validation, and
report every fold.

    python bench/fit_restatements.py            # report the folds, write nothing
    python bench/fit_restatements.py --write    # also write the fitted weights

Candidates are what `bench/fit_conflicts.py` takes (each memory's nearest neighbours in
its project and the pairs the cues link); positives are the sets' duplicate groups;
every other candidate is a negative (the labelled conflicts, compatible pairs and
dup_negatives weigh `HARD` times more). Features: `pair_features.FEATURES` and
`restatements.EXTRA_FEATURES`. The regression is not class-balanced, so its
probabilities are rates, comparable across folds. A pair the conflict scorer flags is
never proposed as a duplicate, so precision and the threshold are read over the rest.
The threshold is the highest-F1 cut at precision ≥ `MIN_PRECISION` of the
out-of-fold scores; each fold's own cut is chosen the same way on its training sets
only (nested), and that is what the fold's figures use.

Sets: real-dev and `bench/sets/*-dev`, except those held out (`--hold-out`, by default
eighth-dev, tenth-dev and eleventh-dev, which are kept for measuring).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import fit_conflicts as fc  # noqa: E402

from services.knowledge import contradictions as conflicts  # noqa: E402
from services.knowledge.conflict_scorer import THRESHOLD, probability  # noqa: E402
from services.knowledge.pair_features import FEATURES  # noqa: E402
from services.knowledge.restatements import (  # noqa: E402
    EXTRA_FEATURES,
    LEFT_OUT,
    Vocabulary,
    restatement_features,
)

NAMES = (*(f for f in FEATURES if f not in LEFT_OUT), *EXTRA_FEATURES)
MIN_PRECISION = 0.8
L2 = 10.0
OUT = ROOT / "services" / "knowledge" / "restatement_weights.py"


def fit_rates(x: np.ndarray, y: np.ndarray, sample: np.ndarray) -> tuple[np.ndarray, float]:
    """`fc.fit` balances the classes; undo that so probabilities are rates."""
    n = len(y)
    balance = np.where(y == 1, n / (2 * max(1, y.sum())), n / (2 * max(1, n - y.sum())))
    return fc.fit(x, y, L2, sample / balance)


def scores_out_of_fold(
    x: np.ndarray, y: np.ndarray, sample: np.ndarray, groups: np.ndarray
) -> np.ndarray:
    scores = np.zeros(len(y))
    for held in sorted(set(groups)):
        train = groups != held
        mean, scale = fc.standardise(x[train])
        w, b = fit_rates((x[train] - mean) / scale, y[train], sample[train])
        scores[~train] = 1 / (1 + np.exp(-(((x[~train] - mean) / scale) @ w + b)))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--hold-out", nargs="*", default=list(fc.HELD_OUT))
    args = parser.parse_args()
    sets = fc.development_sets(tuple(args.hold_out))
    fc.TARGET = "duplicate"
    memories, labels, vectors = fc.load(sets, corpus=False)
    fc.LABELLED.update(labels)
    rows = [r for r in fc.candidate_rows(memories, vectors, conflicts.NEIGHBOURS)]
    rows = [r for r in rows if r[0] not in fc.UNLABELLED]
    set_of = {}
    for data in sets:
        for record in fc.read_jsonl(data / "memories.jsonl"):
            set_of[record["id"]] = data.name
    vocabularies = {}
    for project in {m.project for m in memories.values()}:
        vocabularies[project] = Vocabulary(m for m in memories.values() if m.project == project)
    table = []
    for (a, b), project, found in rows:
        extra = restatement_features(memories[a], memories[b], vocabularies[project])
        table.append([{**found, **extra}[name] for name in NAMES])
    x = np.array(table)
    y = np.array([1 if fc._positive(labels.get(pair)) else 0 for pair, _, _ in rows])
    groups = np.array([set_of[pair[0]] for pair, _, _ in rows])
    open_to_merge = np.array([probability(found) < THRESHOLD for _, _, found in rows])
    sample = fc.sample_weights(rows)
    print(f"candidates {len(rows)}; duplicate pairs among them {int(y.sum())}")

    out_of_fold = scores_out_of_fold(x, y, sample, groups)
    lines = []
    found_total = flagged_total = positives_total = 0
    for held in sorted(set(groups)):
        train = groups != held
        inner = scores_out_of_fold(x[train], y[train], sample[train], groups[train])
        usable = open_to_merge[train]
        cut = fc.threshold(inner[usable], y[train][usable], MIN_PRECISION)
        here = groups == held
        flagged = here & open_to_merge & (out_of_fold >= cut)
        true = int((flagged & (y == 1)).sum())
        positives = int(y[here].sum())
        found_total, flagged_total = found_total + true, flagged_total + int(flagged.sum())
        positives_total += positives
        lines.append(
            f"#   {held:12} recall {true / max(1, positives):.3f}  precision "
            f"{true / max(1, int(flagged.sum())):.3f}  ({true} of {positives}, "
            f"{int(flagged.sum())} proposed, cut {cut:.3f})"
        )
    pooled = (
        f"#   pooled       recall {found_total / positives_total:.3f}  precision "
        f"{found_total / max(1, flagged_total):.3f}"
    )
    print("\n".join([*lines, pooled]))
    cut = fc.threshold(out_of_fold[open_to_merge], y[open_to_merge], MIN_PRECISION)
    mean, scale = fc.standardise(x)
    w, b = fit_rates((x - mean) / scale, y, sample)
    for name, weight in sorted(zip(NAMES, w, strict=True), key=lambda t: -abs(t[1]))[:12]:
        print(f"  {name:24} {weight:+.3f}")
    print(f"  threshold {cut:.3f}")
    if args.write:
        write(w, b, mean, scale, cut, [*lines, pooled], [s.name for s in sets])


def write(w, b, mean, scale, cut, folds: list[str], sets: list[str]) -> None:
    lines = [
        '"""The fitted weights of the restatement scorer. Generated by',
        "`python bench/fit_restatements.py --write` from the duplicate groups of",
        *textwrap.wrap(", ".join(sets) + ";", 88, break_on_hyphens=False),
        'do not edit by hand (refit instead)."""',
        "",
        "# Leave-one-set-out folds when fitted (pairs the conflict scorer flags left out):",
        *folds,
        "",
        "WEIGHTS = {",
        *(
            f'    "{name}": ({float(weight):.6f}, {float(m):.6f}, {float(s):.6f}),'
            for name, weight, m, s in zip(NAMES, w, mean, scale, strict=True)
        ),
        "}",
        '"""feature → (weight, mean, scale): score = bias + Σ weight·(value − mean)/scale."""',
        f"BIAS = {float(b):.6f}",
        f"THRESHOLD = {float(cut):.6f}",
        '"""Probability from which a pair is proposed."""',
        "",
    ]
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
