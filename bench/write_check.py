"""The check a memory gets as it is written (`engram add`: "this may replace X", "this
may repeat X"), measured on the hand-written sets by adding their notes one at a time.

    python bench/write_check.py                  # real-dev and every set in bench/sets
    python bench/write_check.py --data DIR ...   # only these sets

Each set's notes are added in the order they were written (their `created_at`), into an
empty data folder, each embedded at once, and `write_check.check_added` is asked about
each right after it is stored, as `engram add` asks (in process, with the real MiniLM
embedder and the project's vocabulary; no model, no idle cycle). A labelled pair is
found when the later note's check names the earlier one: supersedes and contradiction
pairs among "may replace", duplicate pairs among "may repeat". Precision counts every
proposal (a pair the set does not label counts against it), except the pairs a set's
`not_counted.jsonl` leaves out.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from corpus import WORK, table, update_doc  # noqa: E402

from app.composition import open_engram  # noqa: E402
from services.knowledge.write_check import check_added  # noqa: E402
from services.memory import memory_from_dict  # noqa: E402

REAL_DEV = Path("/work/shared/bench/real-dev")
SETS = ROOT / "bench" / "sets"
CONFLICTS = {"supersedes", "contradiction"}


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def labels(folder: Path) -> tuple[dict[tuple[str, str], str], set[tuple[str, str]]]:
    """Pair → label (supersedes, contradiction, compatible, duplicate), and the pairs
    not counted either way."""
    found = {key(p["a"], p["b"]): p["label"] for p in read_jsonl(folder / "pairs.jsonl")}
    for group in read_jsonl(folder / "duplicates.jsonl"):
        members = group["group"]
        for i, first in enumerate(members):
            for second in members[i + 1 :]:
                found[key(first, second)] = "duplicate"
    skipped = {key(p["a"], p["b"]) for p in read_jsonl(folder / "not_counted.jsonl")}
    return found, skipped


def measure(folder: Path) -> dict[str, object]:
    records = read_jsonl(folder / "memories.jsonl")
    memories = []
    for index, record in enumerate(records):
        record.setdefault("source", "explicit")
        record.setdefault("confidence", 0.8)
        memory, problems = memory_from_dict(record, f"memories.jsonl:{index + 1}")
        assert memory is not None, problems
        memories.append(memory)
    memories.sort(key=lambda m: (m.created_at, m.id))
    data_dir = WORK / f"write-check-{folder.name}"
    shutil.rmtree(data_dir, ignore_errors=True)
    engram = open_engram(data_dir)
    engram.indexer.on_indexed = None  # the check alone: no embed-time judging
    replaces: set[tuple[str, str]] = set()
    repeats: set[tuple[str, str]] = set()
    started = time.perf_counter()
    try:
        for memory in memories:
            engram.service.import_memories([memory])
            found = check_added(engram.store, engram.vectors, engram.embedder, memory)
            replaces.update(key(memory.id, c.memory.id) for c in found.replaces)
            repeats.update(key(memory.id, c.memory.id) for c in found.repeats)
    finally:
        engram.close()
    seconds = time.perf_counter() - started
    label, skipped = labels(folder)
    conflicts = {p for p, v in label.items() if v in CONFLICTS}
    duplicates = {p for p, v in label.items() if v == "duplicate"}
    return {
        "notes": len(memories),
        "ms_per_add": 1000 * seconds / max(len(memories), 1),
        "replace": score(replaces - skipped, conflicts, label),
        "repeat": score(repeats - skipped, duplicates, label),
    }


def score(
    proposed: set[tuple[str, str]], wanted: set[tuple[str, str]], label: dict
) -> dict[str, object]:
    right = len(proposed & wanted)
    wrong_kind = sum(1 for p in proposed - wanted if p in label)
    return {
        "proposed": len(proposed),
        "right": right,
        "labelled": len(wanted),
        "recall": right / len(wanted) if wanted else 0.0,
        "precision": right / len(proposed) if proposed else 0.0,
        "other_label": wrong_kind,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, action="append", help="a set's folder")
    args = parser.parse_args()
    folders = args.data or [REAL_DEV, *sorted(p for p in SETS.iterdir() if p.is_dir())]
    missing = [f for f in folders if not (f / "memories.jsonl").exists()]
    for folder in missing:
        print(f"skipped {folder}: no memories.jsonl there", file=sys.stderr)
    folders = [f for f in folders if f not in missing]
    rows = []
    for folder in folders:
        found = measure(folder)
        replace, repeat = found["replace"], found["repeat"]
        assert isinstance(replace, dict) and isinstance(repeat, dict)
        rows.append(
            [
                folder.name,
                found["notes"],
                f"{replace['right']}/{replace['labelled']} ({replace['recall']:.2f})",
                f"{replace['precision']:.2f} of {replace['proposed']}",
                f"{repeat['right']}/{repeat['labelled']} ({repeat['recall']:.2f})",
                f"{repeat['precision']:.2f} of {repeat['proposed']}",
                repeat["other_label"],
                f"{found['ms_per_add']:.0f}",
            ]
        )
        print(rows[-1], flush=True)
    body = (
        "### The check at `engram add`\n\n"
        "Each set's notes added one at a time in the order they were written, each "
        "embedded at once and checked right after it is stored, as `engram add` checks "
        "it (`write_check.check_added`, real MiniLM vectors, no model, no idle cycle). "
        "*may replace*: labelled supersedes and contradiction pairs whose later note "
        "names the earlier one; *may repeat*: labelled duplicate pairs. Precision counts "
        "every proposal, a pair the set does not label included; *repeat, other label*: "
        "proposed repeats the set labels as something else (a change, a contradiction, "
        "compatible). Time per add is the store, the embedding and the check.\n\n"
        + table(
            [
                "set",
                "notes",
                "may replace: found",
                "precision",
                "may repeat: found",
                "precision",
                "repeat, other label",
                "ms per add",
            ],
            rows,
        )
    )
    update_doc("write-check", body, "python bench/write_check.py")
    print(body)


if __name__ == "__main__":
    main()
