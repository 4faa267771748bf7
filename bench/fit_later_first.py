"""Choose `knowledge.later_first`'s two bars (cosine, conflict score) leaving one set out
at a time, and report the folds.

    python bench/fit_later_first.py

Needs each set's folder after the bench's cycle: run `python bench/real_dev.py [--data
bench/sets/NAME] --only import --only pairs --only queries` first (it leaves
bench/.work/NAME/queries-after-cycle). Each set's queries are searched once with every
result hook but `later_first`; the hook is then applied to those results with each pair
of bars. A query scores its reciprocal rank (top 10) plus, for a current-truth query, 1
when every stale note of its replacement (pairs.jsonl) ranks below it. For each held-out
set the bars with the best total on the other sets are chosen (ties: the higher bars),
and the held-out set's gain with them is reported.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fit_conflicts import DATA, read_jsonl  # noqa: E402

from app.composition import current_first, open_engram  # noqa: E402
from services.filters import MemoryFilter  # noqa: E402
from services.knowledge import later_first  # noqa: E402

COSINES = (0.0, 0.3, 0.4, 0.5, 0.6)
SCORES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def stale_notes(folder: Path) -> dict[str, set[str]]:
    """Replacement → the notes it replaces or is right against (pairs.jsonl)."""
    found: dict[str, set[str]] = {}
    for pair in read_jsonl(folder / "pairs.jsonl"):
        holder = pair.get("holder")
        if pair["label"] in ("supersedes", "contradiction") and holder:
            found.setdefault(holder, set()).add(pair["b"] if holder == pair["a"] else pair["a"])
    return found


def points(query: dict, ids: list[str], stale: dict[str, set[str]]) -> float:
    rank = next((1 / (k + 1) for k, i in enumerate(ids[:10]) if i in query["relevant"]), 0.0)
    if query["kind"] != "current-truth":
        return rank
    below = all(
        h in ids and all(s not in ids or ids.index(s) > ids.index(h) for s in stale.get(h, ()))
        for h in query["relevant"]
    )
    return rank + float(below)


def set_gains(folder: Path, name: str) -> dict[tuple[float, float], float]:
    """(cosine, score) → the set's points with the hook at those bars, less without."""
    engram = open_engram(ROOT / "bench" / ".work" / name / "queries-after-cycle")
    engram.service.result_hooks = (current_first,)
    stale = stale_notes(folder)
    gains = dict.fromkeys(((c, s) for c in COSINES for s in SCORES), 0.0)
    try:
        for query in read_jsonl(folder / "queries.jsonl"):
            flt = MemoryFilter(project=query.get("project"))
            response = engram.service.search(query["query"], flt, limit=10)
            base = points(query, [r.memory.id for r in response.results], stale)
            for cosine, score in gains:
                later_first.MIN_COSINE, later_first.MIN_SCORE = cosine, score
                moved = later_first.later_change_first(
                    engram.vectors, engram.embedder.model_id, response
                )
                gains[(cosine, score)] += (
                    points(query, [r.memory.id for r in moved.results], stale) - base
                )
    finally:
        engram.close()
    return gains


def main() -> None:
    folders = {"real-dev": DATA} | {
        p.name: p for p in sorted((ROOT / "bench" / "sets").iterdir()) if p.is_dir()
    }
    gains = {name: set_gains(folder, name) for name, folder in folders.items()}
    total = 0.0
    for held in gains:
        bars = max(
            gains[held],
            key=lambda b: (sum(g[b] for n, g in gains.items() if n != held), b[1], b[0]),
        )
        total += gains[held][bars]
        chose = f"cosine {bars[0]} score {bars[1]}"
        print(f"fold {held:16} chose {chose}: held out {gains[held][bars]:+.2f}")
    print(f"held out in all: {total:+.2f} points (reciprocal ranks + stale notes placed)")
    print(
        "all sets, by bars (cosine: gains at each score bar " + ", ".join(map(str, SCORES)) + "):"
    )
    for cosine in COSINES:
        row = [sum(g[(cosine, score)] for g in gains.values()) for score in SCORES]
        print(f"  {cosine}: " + " ".join(f"{v:+.1f}" for v in row))


if __name__ == "__main__":
    main()
