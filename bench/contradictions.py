"""Contradiction detection against `contradictions.jsonl` of corpus-2k.

    python bench/contradictions.py             # corpus-2k (docs section "contradictions")
    python bench/contradictions.py --seed 7    # held-out (section "contradictions_heldout")

With `--seed S` the same measurement runs on a 2,000-memory corpus generated with that seed
(bench/.work/corpus-2000-seedS, embedded once into bench/.work/data-2000-seedS): the same
templates with other names, values and dates, which the cues were not written against.

Copies the embedded 2k data folder (bench/corpus.py builds it once) to a scratch folder
twice and runs `engram rem run --op contradictions --json` on each copy: once without a
language model (`ENGRAM_LLM_PROVIDER=gguf` with no GGUF file set: the provider is
unavailable, so the cues decide alone — what a user without a model gets) and once with
the default embedded SmolLM2-135M. The operation queues the candidates of every memory
(nearest neighbours and the cues' index), judges them and records contradictions.

The flagged pairs (kind `contradiction` or `supersedes` in the `contradiction` table) are
compared with the labels: contradiction + supersedes pairs are positives, `compatible`
pairs hard negatives. Precision over the labelled pairs counts flagged compatible pairs
as the errors; precision over all pairs also counts flagged pairs that are not listed
(the corpus says unlisted pairs are not contradictions). "Holder" is how often the
memory said to hold is the later one (`b`), which the labels say wins. Targets: recall
≥ 0.9 and precision ≥ 0.8 with the embedded model; the operation under a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

from corpus import ENGRAM, WORK, corpus, embedded_data_dir, read_jsonl, table, update_doc


def fresh_copy(name: str, seed: int | None = None) -> Path:
    data_dir = WORK / name
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.copytree(
        embedded_data_dir(2000, seed=seed),
        data_dir,
        ignore=shutil.ignore_patterns("embed.lock", "embed.log"),
    )
    return data_dir


def run(data_dir: Path, env: dict[str, str]) -> tuple[dict, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [ENGRAM, "--data-dir", str(data_dir), "rem", "run", "--op", "contradictions", "--json"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    wall = time.perf_counter() - started
    (operation,) = json.loads(done.stdout)["operations"]
    assert operation["error"] is None, operation["error"]
    return operation, wall


def flagged(data_dir: Path) -> dict[tuple[str, str], tuple[str, str]]:
    connection = sqlite3.connect(data_dir / "engram.sqlite3")
    rows = connection.execute("SELECT a, b, kind, holder FROM contradiction").fetchall()
    connection.close()
    return {(min(a, b), max(a, b)): (kind, holder) for a, b, kind, holder in rows}


def model_votes(data_dir: Path) -> str:
    """The model's answers on the pairs it was asked about, and how many counted."""
    connection = sqlite3.connect(data_dir / "engram.sqlite3")
    rows = connection.execute(
        "SELECT json_extract(cues, '$.llm.verdict'), json_extract(cues, '$.llm.holds'), "
        "json_extract(cues, '$.llm.counted') FROM contradiction_candidate "
        "WHERE json_extract(cues, '$.llm') IS NOT NULL"
    ).fetchall()
    connection.close()
    if not rows:
        return "–"
    answers: dict[str, int] = {}
    for verdict, holds, _ in rows:
        answers[f"{verdict}/{holds}"] = answers.get(f"{verdict}/{holds}", 0) + 1
    counted = sum(1 for *_, c in rows if c)
    shown = ", ".join(f"{k} {v}" for k, v in sorted(answers.items()))
    return f"{counted} of {len(rows)} ({shown})"


def score(found: dict, labels: list[dict]) -> dict[str, float | int]:
    positives = {
        (min(x["a"], x["b"]), max(x["a"], x["b"])): x for x in labels if x["label"] != "compatible"
    }
    negatives = {
        (min(x["a"], x["b"]), max(x["a"], x["b"])) for x in labels if x["label"] == "compatible"
    }
    hits = [pair for pair in found if pair in positives]
    wrong = [pair for pair in found if pair in negatives]
    holders = sum(found[pair][1] == positives[pair]["b"] for pair in hits)
    kinds = sum(found[pair][0] == positives[pair]["label"] for pair in hits)
    return {
        "flagged": len(found),
        "hits": len(hits),
        "compatible_flagged": len(wrong),
        "unlisted_flagged": len(found) - len(hits) - len(wrong),
        "recall": len(hits) / len(positives),
        "precision": len(hits) / (len(hits) + len(wrong)) if hits or wrong else 0.0,
        "precision_all": len(hits) / len(found) if found else 0.0,
        "holder": holders / len(hits) if hits else 0.0,
        "kind": kinds / len(hits) if hits else 0.0,
    }


def mistakes(found: dict, labels: list[dict]) -> dict[str, list[str]]:
    """Missed positives, and flagged pairs that are labelled compatible or not listed, by kind."""
    listed = {(min(x["a"], x["b"]), max(x["a"], x["b"])): x for x in labels}
    kinds: dict[str, list[str]] = {
        "missed (labelled contradiction or supersedes, not flagged)": [
            f"- missed {x['label']} {x['a']} – {x['b']}: {x['note']}"
            for pair, x in listed.items()
            if x["label"] != "compatible" and pair not in found
        ],
        "flagged, labelled compatible": [],
        "flagged, not listed": [],
    }
    for pair, (kind, _) in sorted(found.items()):
        x = listed.get(pair)
        if x is None:
            kinds["flagged, not listed"].append(f"- flagged {kind} {pair[0]} – {pair[1]}")
        elif x["label"] == "compatible":
            kinds["flagged, labelled compatible"].append(
                f"- flagged {kind} {pair[0]} – {pair[1]}: {x['note']}"
            )
    return kinds


def listed_mistakes(kinds: dict[str, list[str]], shown: int | None = None) -> str:
    """The mistakes by kind, the first `shown` of each (all when None) and a count of the rest."""
    parts = []
    for kind, lines in kinds.items():
        if not lines:
            continue
        rest = len(lines) - shown if shown is not None and len(lines) > shown else 0
        parts.append(
            f"{kind}: {len(lines)}"
            + (f" (the first {shown}; the full list is printed by the script)" if rest else "")
            + "\n\n"
            + "\n".join(lines[: len(lines) - rest])
            + (f"\n- … and {rest} more" if rest else "")
        )
    return "\n\n".join(parts)


def main(seed: int | None = None) -> None:
    labels = read_jsonl(corpus(2000, seed) / "contradictions.jsonl")
    positives = sum(x["label"] != "compatible" for x in labels)
    name = "contradictions-2000" + ("" if seed is None else f"-seed{seed}")
    setups = [
        ("cues only (no LLM)", f"{name}-cues", {"ENGRAM_LLM_PROVIDER": "gguf"}),
        ("cues + embedded SmolLM2-135M", f"{name}-llm", {}),
    ]
    columns: list[list[str]] = []
    errors: dict[str, list[str]] = {}
    for label, folder, env in setups:
        data_dir = fresh_copy(folder, seed)
        operation, wall = run(data_dir, env)
        found = flagged(data_dir)
        measured = score(found, labels)
        changes = operation["changes"]
        columns.append(
            [
                label,
                f"{measured['recall']:.3f}",
                f"{measured['precision']:.3f}",
                f"{measured['precision_all']:.3f}",
                f"{measured['hits']} / {measured['compatible_flagged']} / "
                f"{measured['unlisted_flagged']}",
                f"{measured['holder']:.3f}",
                f"{measured['kind']:.3f}",
                f"{changes.get('queued', 0)} / {changes.get('judged', 0)}",
                str(changes.get("asked_llm", 0))
                + (f" ({changes['llm_note']})" if not env and changes.get("llm_note") else ""),
                model_votes(data_dir),
                f"{operation['seconds']:.1f} s ({wall:.1f} s)",
            ]
        )
        errors = mistakes(found, labels)
        print(label, measured, changes, f"{operation['seconds']:.1f} s", flush=True)
    names = [
        "setup",
        "recall",
        "precision (labelled)",
        "precision (all pairs)",
        "flagged: right / compatible / unlisted",
        "holder = later memory",
        "kind right",
        "queued / judged pairs",
        "LLM calls",
        "model votes counted (answers)",
        "operation time (CLI)",
    ]
    rows = [[name, *(column[i] for column in columns)] for i, name in enumerate(names) if i]
    with_llm = columns[1]
    target = "yes" if float(with_llm[1]) >= 0.9 and float(with_llm[2]) >= 0.8 else "NO"
    heading = (
        "## Contradictions (corpus-2k)\n\n"
        if seed is None
        else f"## Contradictions, held out (2,000 memories, seed {seed})\n\n"
        "The corpus was generated with `make_corpus.py --size 2000 --seed "
        f"{seed}` instead of the default seed of corpus-2k: the same templates and topics, "
        "with other names, values, pairs and dates. It shows whether the cues fit the "
        "templates rather than the particular memories of corpus-2k they were written "
        "against; it does not show how they do on memories people actually write, whose "
        "wording no template covers.\n\n"
    )
    shown_errors = 15  # per kind in the doc; stdout has them all
    caveat = (
        "The cues (value kinds and tool categories) were written with this corpus in view; "
        "expect less on memories worded unlike it."
        if seed is None
        else "The first run on seed 7 (recall 0.975, precision 1.0 labelled / 0.987 all "
        'pairs) missed two supersessions worded unlike corpus-2k ("we replaced X with Y", '
        '"the old queue was drained and deleted"); the cues learnt both wordings '
        "afterwards, so this corpus is no longer fully held out for them."
    )
    body = (
        heading + "`engram rem run --op contradictions` on a copy of the embedded 2k folder: every "
        "memory's candidates are queued (20 nearest neighbours with a cue, and pairs with the "
        "same subject and attribute from the cues' index; the 5 nearest are also read by the "
        "fitted conflict and duplicate scorers of `conflict_scorer`), judged and recorded. "
        f"{positives} labelled contradiction + supersedes pairs are the positives, "
        f"{len(labels) - positives} `compatible` pairs the hard negatives; precision over "
        "all pairs also counts flagged pairs the corpus does not list. The model is asked "
        "only where its verdict can tip the cues' score (±0.15 around 0.5), within 30 s.\n\n"
        + table(["measure", columns[0][0], columns[1][0]], rows)
        + f"\n\nTarget recall ≥ 0.9 and precision ≥ 0.8 with the embedded model: {target}. "
        "A conflict vote counts only when the model names the holder the cues see (the "
        "memory that replaces the other, else the later one); SmolLM2 answers by rote, so "
        "its votes rarely count and both columns agree. " + caveat
    )
    if any(errors.values()):
        print(body + "\n\nErrors with the embedded model:\n\n" + listed_mistakes(errors))
        body += "\n\nErrors with the embedded model, by kind:\n\n" + listed_mistakes(
            errors, shown_errors
        )
    else:
        print(body)
    if seed is None:
        update_doc("contradictions", body, "python bench/contradictions.py")
    else:
        update_doc("contradictions_heldout", body, f"python bench/contradictions.py --seed {seed}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--seed", type=int, help="a corpus generated with this seed instead of corpus-2k"
    )
    main(parser.parse_args().seed)
