"""Fit the conflict scorer (`services/knowledge/conflict_weights.py`) and the duplicate
scorer (`duplicate_weights.py`) with cross-validation, and report every fold.

    python bench/fit_conflicts.py            # report the folds, write nothing
    python bench/fit_conflicts.py --write    # also write the fitted weights
    python bench/fit_conflicts.py --target duplicate --write
    python bench/fit_conflicts.py --all-sets # every hand-written set, one fold a set

The weights in the product are fitted on real-dev's five projects with corpus-2k's rows
as a regulariser (weighing as much as real-dev's), leaving one project out per fold.

`--all-sets` fits on real-dev and `bench/sets/*-dev` but those held out (`--hold-out`:
eighth-dev, tenth-dev and eleventh-dev), each fold holding out a whole set, so a fold
says how the scorer does on notes by a writer it never read; the corpus is left out
(`--corpus-weight`). Measured 2026-12-08 and not kept: at the scorer alone the refit is
better on sets it did not see (average precision over the other sets' candidates, each
held out: conflicts 0.68 → 0.72, duplicates 0.41 → 0.50), but end to end
(`bench/real_dev.py`, the three held-out sets) conflicts found fell 69 → 62–64 of 81 at
precision 0.68 → 0.64–0.65, and duplicates right 17 of 17 proposed → 13–14 of 13–26:
the operation's gates and bars were chosen around the current scorer.

Candidates are what the REM `contradictions` operation would judge: each memory's
nearest neighbours in its project (cosine of the embedded MiniLM vectors) plus the pairs
the cues link. Positives are the labelled `supersedes` and `contradiction` pairs;
negatives are every other candidate (the labelled `compatible` pairs and the unlabelled
neighbours alike, since a flag on either counts against precision), except the pairs
the sets' READMEs list as deliberately unlabelled. For the duplicate scorer the
positives are the duplicate groups; dup_negatives count as labelled look-alikes.
Labelled pairs weigh `--hard` times an unlabelled neighbour (see `sample_weights`). The
model is an L2-regularised logistic regression over
`services.knowledge.pair_features.FEATURES`; the threshold is chosen on the training
folds only (the highest F1 of the out-of-fold scores within the training sets).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.knowledge import contradictions as conflicts  # noqa: E402
from services.knowledge.conflict_scan import idf_weights  # noqa: E402
from services.knowledge.pair_features import FEATURES, features, read_pair_text  # noqa: E402
from services.memory import memory_from_dict  # noqa: E402

DATA = Path("/work/shared/bench/real-dev")
CORPUS = Path("/work/shared/bench/corpus-2k")
SETS = ROOT / "bench" / "sets"
HELD_OUT = ("eighth-dev", "tenth-dev", "eleventh-dev")
REAL_PROJECTS: set[str] = set()  # projects of the sets people wrote (not the corpus)
GROUP: dict[str, str] = {}  # project → its set's name: a fold holds out a whole set
CORPUS_WEIGHT = 1.0  # the corpus rows' share of the sets' weight (0: not loaded)
BY_SET = False  # folds hold out a whole set (--all-sets), else one project
OUT_DIR = ROOT / "services" / "knowledge"
UNLABELLED = {
    ("rd-m029", "rd-m139"), ("rd-m029", "rd-m116"), ("rd-m029", "rd-m140"),
    ("rd-m102", "rd-m141"), ("rd-m102", "rd-m137"), ("rd-m068", "rd-m189"),
}  # fmt: skip
L2 = 10.0
HARD = 5.0  # weight of a labelled pair against an unlabelled neighbour (sample_weights)
LABELLED: set[tuple[str, str]] = set()
OUT_OF_FOLD: list[tuple] = []


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def development_sets(held_out: tuple[str, ...] = HELD_OUT) -> list[Path]:
    """real-dev and every `bench/sets/*-dev`, except those `held_out`."""
    found = sorted(p.resolve() for p in SETS.glob("*-dev"))
    return [p for p in (DATA, *found) if p.name not in held_out]


def load(data: Path | list[Path], corpus: bool) -> tuple[dict, dict, dict]:
    """Memories, labels and vectors of one or more sets in real-dev's format, with
    corpus-2k's when `corpus`."""
    sets = data if isinstance(data, list) else [data]
    memories = {}
    labels = {}
    groups = []
    pair_sets = [(d / "memories.jsonl", d / "pairs.jsonl") for d in sets]
    if corpus:
        pair_sets.append((CORPUS / "memories.jsonl", CORPUS / "contradictions.jsonl"))
    for memory_file, pair_file in pair_sets:
        for index, record in enumerate(read_jsonl(memory_file)):
            memory, problems = memory_from_dict(record, f"{memory_file.name}:{index + 1}")
            assert memory is not None, problems
            memories[memory.id] = memory
        labels.update({key(p["a"], p["b"]): p for p in read_jsonl(pair_file)})
    for d in sets:
        for negative in read_jsonl(d / "dup_negatives.jsonl"):
            labels.setdefault(key(negative["a"], negative["b"]), {"label": "dup_negative"})
        groups += read_jsonl(d / "duplicates.jsonl")
        if (d / "not_counted.jsonl").exists():
            UNLABELLED.update(key(x["a"], x["b"]) for x in read_jsonl(d / "not_counted.jsonl"))
        projects = {m["project"] for m in read_jsonl(d / "memories.jsonl")}
        REAL_PROJECTS.update(projects)
        GROUP.update({p: d.name if BY_SET else p for p in projects})
    if corpus:
        groups += read_jsonl(CORPUS / "duplicates.jsonl")
        projects = {m["project"] for m in read_jsonl(CORPUS / "memories.jsonl")}
        GROUP.update({p: CORPUS.name if BY_SET else p for p in projects})
    for group in groups:
        for i, first in enumerate(group["group"]):
            for second in group["group"][i + 1 :]:
                labels[key(first, second)] = {"label": "duplicate", "kind": group["kind"]}
    ids = list(memories)
    texts = [f"{memories[i].title}\n{memories[i].content}" for i in ids]
    return memories, labels, dict(zip(ids, embedded(texts), strict=True))


def embedded(texts: list[str]) -> np.ndarray:
    """Unit MiniLM vectors of `texts`, cached in bench/.work by the texts' hash (the
    model is the same from run to run; embedding 2,270 notes takes a minute)."""
    import hashlib

    digest = hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()[:16]
    cache = ROOT / "bench" / ".work" / f"fit-vectors-{digest}.npy"
    if cache.exists():
        return np.load(cache)
    from services.vectors.embeddings.onnx_minilm import OnnxMiniLMEmbedder

    matrix = np.asarray(OnnxMiniLMEmbedder().embed(texts), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, matrix)
    return matrix


def candidate_rows(memories: dict, vectors: dict, neighbours: int) -> list[tuple]:
    """(pair, project, features) for every candidate pair of every project."""
    by_project = defaultdict(list)
    for memory in memories.values():
        by_project[memory.project].append(memory)
    rows = []
    for project, members in by_project.items():
        readings = {m.id: conflicts.reading_of(m) for m in members}
        weights = idf_weights(readings.values())
        texts = {m.id: read_pair_text(m) for m in members}
        pairs = conflicts.candidate_pairs(
            [m.id for m in members], vectors, readings, weights, neighbours
        )
        for a, b in sorted(pairs):
            cosine = float(vectors[a] @ vectors[b])
            cues = conflicts.compare(readings[a], readings[b], weights)
            rows.append(((a, b), project, features(texts[a], texts[b], cosine, cues, weights)))
    return rows


def fit(
    x: np.ndarray, y: np.ndarray, l2: float | None = None, sample: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method; balanced class weights."""
    l2 = L2 if l2 is None else l2
    n, d = x.shape
    weight = np.where(y == 1, n / (2 * max(1, y.sum())), n / (2 * max(1, n - y.sum())))
    if sample is not None:
        weight = weight * sample
    w = np.zeros(d)
    b = 0.0
    for _ in range(50):
        z = x @ w + b
        p = 1 / (1 + np.exp(-z))
        g = weight * (p - y)
        grad_w = x.T @ g + l2 * w
        grad_b = g.sum()
        h = weight * p * (1 - p)
        hess = np.zeros((d + 1, d + 1))
        hess[:d, :d] = (x * h[:, None]).T @ x + l2 * np.eye(d)
        hess[:d, d] = hess[d, :d] = x.T @ h
        hess[d, d] = h.sum() + 1e-9
        step = np.linalg.solve(hess, np.append(grad_w, grad_b))
        w -= step[:d]
        b -= step[d]
        if np.abs(step).max() < 1e-8:
            break
    return w, b


def threshold(scores: np.ndarray, y: np.ndarray, min_precision: float = 0.0) -> float:
    best, best_f1, fallback, fallback_f1 = 0.5, -1.0, 0.5, -1.0
    for t in np.unique(scores):
        flagged = scores >= t
        tp = float((flagged & (y == 1)).sum())
        if tp == 0:
            continue
        precision = tp / flagged.sum()
        recall = tp / max(1, y.sum())
        f1 = 2 * precision * recall / (precision + recall)
        if f1 > fallback_f1:
            fallback, fallback_f1 = float(t), f1
        if precision >= min_precision and f1 > best_f1:
            best, best_f1 = float(t), f1
    return best if best_f1 >= 0 else fallback


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.mean(axis=0), np.where(x.std(axis=0) > 1e-9, x.std(axis=0), 1.0)


def sample_weights(rows) -> np.ndarray:
    """The sets' rows weigh 1; the template corpus's rows together weigh
    `CORPUS_WEIGHT` times as much as theirs (if it was loaded at all). A labelled
    pair of either set weighs `HARD` times more: the look-alikes (a duplicate for the
    conflict scorer, a change or a contradiction for the duplicate scorer, a compatible
    pair for both) are what the two scorers must tell apart, and they are a handful
    among thousands of unrelated neighbours."""
    real = np.array([p in REAL_PROJECTS for _, p, _ in rows])
    other = max(1, int((~real).sum()))
    base = np.where(real, 1.0, CORPUS_WEIGHT * real.sum() / other)
    labelled = np.array([pair in LABELLED for pair, _, _ in rows])
    return base * np.where(labelled, HARD, 1.0)


def evaluate(rows, labels, positives_total: dict) -> dict:
    groups = np.array([GROUP[project] for _, project, _ in rows])
    sample = sample_weights(rows)
    x_all = np.array([[f[name] for name in FEATURES] for _, _, f in rows])
    y_all = np.array([1 if _positive(labels.get(pair)) else 0 for pair, _, _ in rows])
    keep = np.array([pair not in UNLABELLED for pair, _, _ in rows]) & (sample > 0)
    folds = []
    for held in sorted({GROUP[p] for p in REAL_PROJECTS} & set(groups.tolist())):
        train = (groups != held) & keep
        test = (groups == held) & keep
        mean, scale = standardise(x_all[train])
        w, b = fit((x_all[train] - mean) / scale, y_all[train], sample=sample[train])
        cut = inner_threshold(x_all, y_all, rows, train)
        scores = 1 / (1 + np.exp(-(((x_all[test] - mean) / scale) @ w + b)))
        flagged = scores >= cut
        for (pair, _, feats), score, label in zip(
            np.array(rows, dtype=object)[test], scores, y_all[test], strict=True
        ):
            OUT_OF_FOLD.append((pair, float(score), int(label), cut, feats))
        tp = int((flagged & (y_all[test] == 1)).sum())
        positives = sum(n for p, n in positives_total.items() if GROUP[p] == held)
        compatible_flags = sum(
            1
            for pair, f in zip(np.array(rows, dtype=object)[test], flagged, strict=True)
            if f and labels.get(pair[0], {}).get("label") == "compatible"
        )
        folds.append(
            {
                "project": held,
                "positives": positives,
                "candidates_with_positive": int(y_all[test].sum()),
                "flagged": int(flagged.sum()),
                "true": tp,
                "compatible_flagged": compatible_flags,
                "recall": tp / max(1, positives),
                "precision": tp / max(1, int(flagged.sum())),
                "threshold": cut,
            }
        )
    return {"folds": folds}


def inner_threshold(x_all, y_all, rows, train) -> float:
    """The threshold chosen on out-of-fold scores within the training sets, so
    that it is not picked on scores the model was fitted to."""
    groups = np.array([GROUP[p] for _, p, _ in rows])
    sample = sample_weights(rows)
    scores, labels = [], []
    for held in sorted(set(groups[train].tolist())):
        inner_train = train & (groups != held)
        inner_test = train & (groups == held)
        mean, scale = standardise(x_all[inner_train])
        w, b = fit(
            (x_all[inner_train] - mean) / scale, y_all[inner_train], sample=sample[inner_train]
        )
        if not any(GROUP[p] == held for p in REAL_PROJECTS):
            continue  # the threshold is chosen on notes people wrote
        scores.append(1 / (1 + np.exp(-(((x_all[inner_test] - mean) / scale) @ w + b))))
        labels.append(y_all[inner_test])
    return threshold(np.concatenate(scores), np.concatenate(labels))


TARGETS = {
    "conflict": ({"supersedes", "contradiction"}, "conflict_weights.py"),
    "duplicate": ({"duplicate"}, "duplicate_weights.py"),
}
TARGET = "conflict"


def _positive(label: dict | None) -> bool:
    return bool(label) and label["label"] in TARGETS[TARGET][0]


def main() -> None:
    global L2, TARGET, HARD, CORPUS_WEIGHT, BY_SET
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--target", choices=sorted(TARGETS), default="conflict")
    parser.add_argument(
        "--joint",
        action="store_true",
        help="also score duplicates and count a conflict only where the duplicate head "
        "does not claim the pair (held-out, both heads)",
    )
    parser.add_argument(
        "--all-sets",
        action="store_true",
        help="fit on real-dev and bench/sets/*-dev but --hold-out, one fold a set",
    )
    parser.add_argument(
        "--corpus-weight",
        type=float,
        default=None,
        help="the corpus-2k rows' share of the sets' weight (0: leave the corpus out; "
        "default 1, with --all-sets 0)",
    )
    parser.add_argument(
        "--hold-out",
        nargs="*",
        default=list(HELD_OUT),
        help="with --all-sets, the sets kept out, for measuring (default: %(default)s)",
    )
    parser.add_argument("--l2", type=float, default=None)
    parser.add_argument("--hard", type=float, default=HARD, help="weight of labelled pairs")
    parser.add_argument("--verbose", action="store_true", help="list misses and false flags")
    parser.add_argument("--neighbours", type=int, default=conflicts.NEIGHBOURS)
    parser.add_argument(
        "--with",
        dest="also",
        action="append",
        default=[],
        help="another set in real-dev's format to fit on as well (a fold of its own)",
    )
    args = parser.parse_args()
    TARGET = args.target
    L2 = args.l2 if args.l2 is not None else L2
    HARD = args.hard
    BY_SET = args.all_sets
    if args.corpus_weight is not None:
        CORPUS_WEIGHT = args.corpus_weight
    elif BY_SET:
        CORPUS_WEIGHT = 0.0
    first = development_sets(tuple(args.hold_out)) if BY_SET else [DATA]
    sets = [*first, *(Path(d).resolve() for d in args.also)]
    memories, labels, vectors = load(sets, corpus=CORPUS_WEIGHT > 0)
    LABELLED.update(labels)
    rows = candidate_rows(memories, vectors, args.neighbours)
    positives_total: dict[str, int] = defaultdict(int)
    for (a, _), label in labels.items():
        if _positive(label):
            positives_total[memories[a].project] += 1
    found = {pair for pair, _, _ in rows}
    reachable = sum(1 for pair, label in labels.items() if _positive(label) and pair in found)
    print(
        f"candidates: {len(rows)}; positives among them {reachable}/{sum(positives_total.values())}"
    )
    result = evaluate(rows, labels, positives_total)
    tp = sum(f["true"] for f in result["folds"])
    flagged = sum(f["flagged"] for f in result["folds"])
    total = sum(f["positives"] for f in result["folds"])
    print(
        "fold (held out) | positives | flagged | true | compatible flagged | "
        "recall | precision | threshold"
    )
    for f in result["folds"]:
        print(
            f"{f['project']:14} | {f['positives']:3} | {f['flagged']:3} | {f['true']:3} | "
            f"{f['compatible_flagged']:2} | {f['recall']:.3f} | {f['precision']:.3f} | "
            f"{f['threshold']:.3f}"
        )
    print(f"pooled: recall {tp / total:.3f}, precision {tp / max(1, flagged):.3f}")
    ranked = sorted(
        (r for r in OUT_OF_FOLD if memories[r[0][0]].project in REAL_PROJECTS), key=lambda r: -r[1]
    )
    hits = 0
    curve = []
    for n, row in enumerate(ranked, 1):
        hits += row[2]
        curve.append((n, hits))
    print(
        "out-of-fold ranking: flags → true (precision, recall): "
        + ", ".join(
            f"{n}→{h} ({h / n:.2f}, {h / total:.2f})"
            for n, h in curve
            if n in (10, 20, 30, 40, 50, 60, 80)
        )
    )
    keep = np.array([pair not in UNLABELLED for pair, _, _ in rows])
    x = np.array([[f[name] for name in FEATURES] for _, _, f in rows])[keep]
    y = np.array([1 if _positive(labels.get(pair)) else 0 for pair, _, _ in rows])[keep]
    mean, scale = standardise(x)
    w, b = fit(
        (x - mean) / scale,
        y,
        sample=sample_weights([r for r, k in zip(rows, keep, strict=True) if k]),
    )
    cut = inner_threshold(
        np.array([[f[name] for name in FEATURES] for _, _, f in rows]),
        np.array([1 if _positive(labels.get(pair)) else 0 for pair, _, _ in rows]),
        rows,
        np.array([pair not in UNLABELLED for pair, _, _ in rows]),
    )
    for name, weight in sorted(zip(FEATURES, w, strict=True), key=lambda t: -abs(t[1])):
        print(f"  {name:18} {weight:+.3f}")
    print(f"  threshold {cut:.3f}")
    if args.joint:
        joint_report(rows, labels, positives_total, memories)
    if args.verbose:
        show_errors(memories)
    if args.write:
        write_weights(w, b, mean, scale, cut, result, tp / total, tp / max(1, flagged))


def joint_report(rows, labels, positives_total, memories) -> None:
    """Held-out conflicts when pairs the duplicate head claims are not conflicts."""
    global TARGET
    conflict = {r[0]: r for r in OUT_OF_FOLD}
    OUT_OF_FOLD.clear()
    saved, TARGET = TARGET, "duplicate"
    evaluate(rows, labels, defaultdict(int))
    duplicate = {r[0]: r for r in OUT_OF_FOLD}
    TARGET = saved
    OUT_OF_FOLD[:] = list(conflict.values())
    real = [p for p in conflict if memories[p[0]].project in REAL_PROJECTS]
    total = sum(v for k, v in positives_total.items() if k in REAL_PROJECTS)
    for claim in (None, 0.5, 0.7, 0.9):
        flagged = [
            p
            for p in real
            if conflict[p][1] >= conflict[p][3]
            and (claim is None or duplicate[p][1] < max(claim, duplicate[p][3]))
        ]
        true = sum(conflict[p][2] for p in flagged)
        print(
            f"joint, duplicate claim {claim}: flagged {len(flagged)}, true {true}, "
            f"recall {true / total:.3f}, precision {true / max(1, len(flagged)):.3f}"
        )

    def logit(x: float) -> float:
        x = min(max(x, 1e-9), 1 - 1e-9)
        return float(np.log(x / (1 - x)))

    dup_total = sum(
        1
        for pair, label in labels.items()
        if label.get("label") == "duplicate" and memories[pair[0]].project in REAL_PROJECTS
    )
    for bias in (None, 0.0, 2.0, 4.0, 8.0, float("inf")):
        flagged, proposed = [], []
        for p in real:
            over_c = logit(conflict[p][1]) - logit(conflict[p][3])
            over_d = logit(duplicate[p][1]) - logit(max(0.9, duplicate[p][3]))
            # None: any claim wins (the rule before 2026-11-26); else the surer by `bias`
            claimed = over_d >= 0 and (bias is None or over_d > over_c + bias)
            if over_c >= 0 and not claimed:
                flagged.append(p)
            elif duplicate[p][1] >= duplicate[p][3]:
                proposed.append(p)
        true = sum(conflict[p][2] for p in flagged)
        dups = sum(1 for p in proposed if labels.get(p, {}).get("label") == "duplicate")
        print(
            f"joint, claim margin {bias}: conflicts flagged {len(flagged)}, true {true} "
            f"(recall {true / total:.3f}, precision {true / max(1, len(flagged)):.3f}); "
            f"duplicates proposed {len(proposed)}, true {dups} (recall {dups / dup_total:.3f}, "
            f"precision {dups / max(1, len(proposed)):.3f})"
        )


def show_errors(memories: dict) -> None:
    def name(i: str) -> str:
        return f"{i} [{memories[i].type}] {memories[i].title[:50]}"

    misses = [r for r in OUT_OF_FOLD if r[2] == 1 and r[1] < r[3]]
    false = sorted((r for r in OUT_OF_FOLD if r[2] == 0 and r[1] >= r[3]), key=lambda r: -r[1])
    print("missed:")
    for pair, score, _, cut, feats in sorted(misses, key=lambda r: -r[1]):
        short = {k: round(v, 2) for k, v in feats.items() if v}
        print(f"  {score:.2f}<{cut:.2f} {name(pair[0])} || {name(pair[1])} {short}")
    print("false flags:")
    for pair, score, _, _cut, feats in false[:40]:
        short = {k: round(v, 2) for k, v in feats.items() if v}
        print(f"  {score:.2f} {name(pair[0])} || {name(pair[1])} {short}")


def write_weights(w, b, mean, scale, cut, result, recall, precision) -> None:
    folds = "\n".join(
        f"#   {f['project']:14} recall {f['recall']:.3f}  precision {f['precision']:.3f}  "
        f"({f['true']} of {f['positives']}, {f['flagged']} flagged)"
        for f in result["folds"]
    )
    lines = [
        f'"""The fitted weights of the {TARGET} scorer. Generated by',
        f"`python bench/fit_conflicts.py --target {TARGET} --write` from the pairs of",
        *textwrap.wrap(", ".join(sorted(set(GROUP.values()))) + ";", 88, break_on_hyphens=False),
        'do not edit by hand (refit instead)."""',
        "",
        "# Leave-one-set-out folds when fitted:",
        folds,
        f"#   pooled         recall {recall:.3f}  precision {precision:.3f}",
        "",
        "WEIGHTS = {",
        *(
            f'    "{name}": ({float(weight):.6f}, {float(m):.6f}, {float(s):.6f}),'
            for name, weight, m, s in zip(FEATURES, w, mean, scale, strict=True)
        ),
        "}",
        '"""feature → (weight, mean, scale): score = bias + Σ weight·(value − mean)/scale."""',
        f"BIAS = {float(b):.6f}",
        f"THRESHOLD = {float(cut):.6f}",
        '"""Probability from which a pair is flagged."""',
        "",
    ]
    out = OUT_DIR / TARGETS[TARGET][1]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
