"""Temporal phrases and `engram recall` against `temporal.jsonl` of corpus-2k.

    python bench/temporal.py          # corpus-2k (docs section "temporal")
    python bench/temporal.py 10000    # a generated corpus (its own section)
    python bench/temporal.py --seed 7 # held out: 2,000 memories generated with seed 7
                                      # (section "temporal_heldout")

With `--seed S` the corpus is generated with that seed (bench/.work/corpus-N-seedS,
embedded once into bench/.work/data-N-seedS): the same templates with other names, values
and dates, which the phrase rules were not written against.

Copies the embedded 2k data folder (the original is never modified), then:

1. resolution: fills `memory_time` for the folder (the backfill `engram recall` runs on a
   database written before the table existed) and checks, for each labelled item, that
   the phrase was found in its memory and resolved to `expected_date`;
2. end to end: `engram recall --json --queries-file …` with every question (no project
   given, so every memory competes), once `--no-llm` and once with the language
   model allowed (it is asked only when the dates alone are not enough); an answer is
   right when its `date` is `expected_date`, and its source the labelled memory.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sqlite3
import time
from collections import Counter

from corpus import WORK, corpus, embedded_data_dir, engram, read_jsonl, table, update_doc

AS_OF = "2026-10-31"


def phrase_kind(phrase: str) -> str:
    """The corpus generator's grouping of phrases (make_corpus.phrase_kind)."""
    words = phrase.split()
    days = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
    if len(words) == 2 and words[0] in ("last", "next") and words[1] in days:
        return f"{words[0]} <weekday>"
    if phrase.endswith("days ago"):
        return "<n> days ago"
    if phrase.startswith("in ") and phrase.endswith(" days"):
        return "in <n> days"
    return phrase


def resolution(data_dir, items: list[dict]) -> tuple[dict[str, bool], float]:
    from services.storage.memories import MemoryStore
    from services.storage.time_index import backfill

    store = MemoryStore(data_dir / "engram.sqlite3")
    started = time.perf_counter()
    backfill(store, force=True)
    seconds = time.perf_counter() - started
    store.close()
    connection = sqlite3.connect(data_dir / "engram.sqlite3")
    rows: dict[str, list[tuple[str, str]]] = {}
    for memory_id, phrase, resolved in connection.execute(
        "SELECT memory_id, phrase, resolved FROM memory_time"
    ):
        rows.setdefault(memory_id, []).append((phrase.lower(), resolved))
    connection.close()
    right = {
        f"{x['memory_id']}|{x['phrase']}": (x["phrase"].lower(), x["expected_date"])
        in rows.get(x["memory_id"], [])
        for x in items
    }
    return right, seconds


def recall_run(data_dir, items: list[dict], *flags: str) -> tuple[list[dict], float]:
    queries = WORK / f"{data_dir.name}-queries.jsonl"
    queries.write_text(
        "".join(
            json.dumps({"id": str(i), "query": x["question"]}) + "\n" for i, x in enumerate(items)
        ),
        encoding="utf-8",
    )
    started = time.perf_counter()
    out = engram(
        data_dir, "recall", "--json", "--as-of", AS_OF, "--queries-file", str(queries), *flags
    )
    seconds = time.perf_counter() - started
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    return sorted(answers, key=lambda a: int(a["id"])), seconds


def main(size: int = 2000, seed: int | None = None) -> None:
    folder = corpus(size, seed)
    items = read_jsonl(folder / "temporal.jsonl")
    data_dir = WORK / (f"temporal-{size}" if seed is None else f"temporal-{size}-seed{seed}")
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.copytree(embedded_data_dir(size, seed=seed), data_dir)
    resolved, backfill_s = resolution(data_dir, items)
    runs = {
        "recall --no-llm": recall_run(data_dir, items, "--no-llm"),
        "recall (LLM when needed)": recall_run(data_dir, items),
    }
    kinds = Counter(phrase_kind(x["phrase"]) for x in items)
    per_kind: dict[str, list[int]] = {k: [0] * (1 + len(runs)) for k in kinds}
    totals = [0] * (1 + len(runs))
    misses: list[str] = []
    for i, x in enumerate(items):
        row = per_kind[phrase_kind(x["phrase"])]
        checks = [resolved[f"{x['memory_id']}|{x['phrase']}"]]
        if not checks[0]:
            misses.append(
                f"- not resolved: '{x['phrase']}' in {x['memory_id']} (expected "
                f"{x['expected_date']})"
            )
        for name, (answers, _) in runs.items():
            a = answers[i]
            ok = a["date"] == x["expected_date"]
            checks.append(ok)
            if not ok and name == "recall --no-llm":
                misses.append(
                    f"- {x['question']} expected {x['expected_date']} ({x['memory_id']}, "
                    f"'{x['phrase']}'); got {a['date']} from {a['sources']}"
                )
        for j, ok in enumerate(checks):
            row[j] += ok
            totals[j] += ok
    n = len(items)
    header = ["phrase kind", "items", "resolved", *runs.keys()]
    rows = [[k, kinds[k], *(f"{v}/{kinds[k]}" for v in per_kind[k])] for k in sorted(kinds)]
    rows.append(["**all**", n, *(f"**{v / n:.1%}** ({v}/{n})" for v in totals)])
    stats = []
    for name, (answers, seconds) in runs.items():
        needed = sum(a["inference_needed"] for a in answers)
        used = sum(a["used_llm"] for a in answers)
        source_ok = sum(items[i]["memory_id"] in a["sources"] for i, a in enumerate(answers))
        stats.append(
            [
                name,
                f"{source_ok}/{n}",
                needed,
                used,
                f"{seconds:.1f} s ({1000 * seconds / n:.0f} ms a question, one process)",
            ]
        )
    label = "corpus-2k" if size == 2000 else f"{size:,} memories"
    heading = f"## Temporal phrases and recall ({label})\n\n"
    if seed is not None:
        created = {
            m["id"]: datetime.datetime.fromisoformat(m["created_at"])
            for m in read_jsonl(folder / "memories.jsonl")
        }
        local_not_utc = sum(
            created[x["memory_id"]].date()
            != created[x["memory_id"]].astimezone(datetime.UTC).date()
            for x in items
        )
        heading = (
            f"## Temporal phrases and recall, held out ({size:,} memories, seed {seed})\n\n"
            f"The corpus was generated with `make_corpus.py --size {size} --seed {seed}` "
            "instead of the default seed: the same templates and phrase list, with other "
            f"names, values and creation dates ({local_not_utc} of the {len(items)} items "
            "were written on a local date other than the UTC date). It shows whether the "
            "phrase rules and the question matching hold beyond the particular items of "
            "corpus-2k they were written against; it does not show how they do on "
            "phrasings the generator never produces. Nothing in services/ was changed for "
            "this corpus.\n\n"
        )
    body = (
        heading + "`temporal.jsonl`: a relative phrase in a memory and a question whose answer is "
        "the date it means (resolved against the local date of `created_at`, weeks from "
        "Monday). *resolved*: the phrase's row in `memory_time` has `expected_date` "
        f"(backfill of all {size:,} memories: {backfill_s:.2f} s). *recall*: `engram recall "
        f"--json --as-of {AS_OF} --queries-file Q` over the whole folder (no project "
        "given) answers with `expected_date`. Target ≥ 95 %.\n\n"
        + table(header, rows)
        + "\n\n"
        + table(
            ["run", "labelled memory among sources", "inference needed", "LLM used", "time"], stats
        )
        + ("\n\nMisses without the LLM:\n\n" + "\n".join(misses) if misses else "")
    )
    print(body)
    section = "temporal" if size == 2000 else f"temporal-{size}"
    command = "python bench/temporal.py" + ("" if size == 2000 else f" {size}")
    if seed is not None:
        section = "temporal_heldout" if size == 2000 else f"temporal_heldout-{size}"
        command += f" --seed {seed}"
    update_doc(section, body, command)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("size", nargs="?", type=int, default=2000, help="memories (2000)")
    parser.add_argument(
        "--seed", type=int, help="a corpus generated with this seed instead of the default"
    )
    arguments = parser.parse_args()
    main(arguments.size, arguments.seed)
