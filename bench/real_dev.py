"""Engram on the realistic development set `real-dev` (SHARED/real-dev, see its README).

    python bench/real_dev.py                       # every part, cues only (no LLM)
    python bench/real_dev.py --only pairs          # one part: import, pairs, duplicates,
                                                   # queries, context or temporal
    python bench/real_dev.py --with-llm            # pairs also with the embedded SmolLM2
    python bench/real_dev.py --no-distractors      # queries without the corpus-2k run
    python bench/real_dev.py --data DIR            # another set in the same format (its
                                                   # sections are named after the folder)
    python bench/real_dev.py --sources DIR         # context also with the real files,
                                                   # DIR/<project>/<path> (clones)

270 hand-written notes about five real projects (httpx, pydantic, axum, cobra, vite),
with labelled pairs, duplicate groups, queries, context cases and relative dates. Engram
is driven only through the `engram` CLI (`--data-dir`, `--json`); the SQLite file is read
(read-only) for the `contradiction` and `contradiction_candidate` tables, as
bench/contradictions.py does. Everything lives in bench/.work/real-dev/.

1. import: `engram import memories.jsonl` into an empty folder, then `engram embed --wait`
   until no memory waits for its vector. This folder ("base") is what the other parts use
   (each works on a copy where it changes anything); it is built when missing. Should the
   importer reject the set's format (no `source`/`confidence`, the `episode` type), the
   records are converted (defaults `source` explicit, `confidence` 0.8) and said so.
2. pairs: `engram rem run --op contradictions --json` on a copy, without a language model
   (`ENGRAM_LLM_PROVIDER=gguf`, no GGUF file set); `--with-llm` adds a run with the
   default embedded model. Flagged pairs (the `contradiction` table) are compared with
   pairs.jsonl: supersedes + contradiction are positives, compatible pairs the hard
   negatives; the unlabelled pairs the README lists are not counted either way.
3. duplicates: `engram rem run --op duplicates --dry-run --json`; proposed findings vs
   duplicates.jsonl (pairs), and which dup_negatives pairs were proposed.
4. queries: `engram search --json --limit 10 --queries-file Q` with each query scoped to
   its project: recall@5/@10 and MRR per kind; for current-truth also whether every stale
   note paired with a relevant one ranks below it. Then the same queries unscoped in a copy
   of the embedded corpus-2k folder with real-dev imported beside it (2,000 distractors).
5. context: `engram context --project P --file F [--error E] [--branch B] --budget N
   --json` for each case of context.jsonl. The CLI wants the file to exist: each project
   gets a folder with a `.git` marker and an empty file at the path (path only, no
   symbols); with `--sources DIR` a second run copies the real files from DIR.
6. temporal: `engram show ID --json` (`times`: phrase, resolved, resolved_end) against
   expected_start/expected_end; `engram recall --no-llm --json --queries-file` with every
   question, unscoped and scoped to the memory's project.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

from corpus import (
    ENGRAM,
    SHARED,
    WORK,
    embed_all,
    embedded_data_dir,
    engram,
    read_jsonl,
    table,
    update_doc,
)

DATA = SHARED / "real-dev"
OUT = WORK / "real-dev"
BASE = OUT / "data"
PARTS = ("import", "pairs", "duplicates", "queries", "context", "temporal")
NO_LLM = {"ENGRAM_LLM_PROVIDER": "gguf"}  # no GGUF file set: the provider is unavailable
AS_OF = "2026-08-22"  # the day after the last note
KINDS = ("current-truth", "error", "identifier", "paraphrase", "file", "howto", "why")
# Unlabelled pairs the README says not to count as false positives (later notes that
# conflict with an already superseded one).
NOT_COUNTED = {
    tuple(sorted(pair))
    for pair in [
        ("rd-m029", "rd-m139"),
        ("rd-m029", "rd-m116"),
        ("rd-m029", "rd-m140"),
        ("rd-m102", "rd-m141"),
        ("rd-m102", "rd-m137"),
        ("rd-m068", "rd-m189"),
    ]
}


# ---------------------------------------------------------------- helpers


def cli(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`engram --data-dir DIR ARGS`; stdout. Raises with the CLI's stderr on failure."""
    done = subprocess.run(
        [ENGRAM, "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if done.returncode:
        raise RuntimeError(
            f"engram {' '.join(args[:4])} … exited {done.returncode}: {done.stderr.strip()[-800:]}"
        )
    return done.stdout


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def ratio(part: float, whole: float) -> str:
    return f"{part / whole:.3f}" if whole else "–"


def share(part: int, whole: int) -> str:
    return f"{ratio(part, whole)} ({part}/{whole})"


def memories() -> dict[str, dict]:
    return {m["id"]: m for m in read_jsonl(DATA / "memories.jsonl")}


def title(memories_by_id: dict[str, dict], memory_id: str) -> str:
    memory = memories_by_id.get(memory_id)
    return memory["title"][:60] if memory else "?"


def copy_of(source: Path, name: str) -> Path:
    """A scratch copy of a data folder (never the original), without its embedder's lock."""
    target = OUT / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("embed.lock", "embed.log"))
    return target


def converted(path: Path, error: str) -> Path:
    """The set's records with what the importer missed: `source`, `confidence` and, if the
    importer named it, the `episode` type (as `fact`)."""
    out = OUT / "memories-converted.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        for memory in read_jsonl(path):
            memory.setdefault("source", "explicit")
            memory.setdefault("confidence", 0.8)
            if memory["type"] == "episode" and "episode" in error:
                memory["type"] = "fact"
            handle.write(json.dumps(memory, ensure_ascii=False) + "\n")
    return out


def import_set(data_dir: Path) -> tuple[float, str]:
    """`engram import` the set into `data_dir`; seconds and how (as is, or converted)."""
    source = DATA / "memories.jsonl"
    started = time.perf_counter()
    try:
        cli(data_dir, "import", "--json", str(source))
        return time.perf_counter() - started, "as is"
    except RuntimeError as error:
        fixed = converted(source, str(error))
        print(f"importer rejected memories.jsonl, retrying converted records: {error}")
        started = time.perf_counter()
        cli(data_dir, "import", "--json", str(fixed))
        return time.perf_counter() - started, f"converted ({str(error)[:200]})"


def build_base() -> dict[str, object]:
    """Import into an empty BASE and embed everything; the figures of the import part."""
    shutil.rmtree(BASE, ignore_errors=True)
    BASE.mkdir(parents=True)
    seconds, how = import_set(BASE)
    started = time.perf_counter()
    embed_all(BASE)
    embed_seconds = time.perf_counter() - started
    stats = json.loads(engram(BASE, "stats", "--json"))
    (BASE / ".bench-ready").write_text(datetime.datetime.now().isoformat())
    return {"import_s": seconds, "how": how, "embed_s": embed_seconds, "stats": stats}


def base() -> Path:
    """The imported and embedded set, built once."""
    if not (BASE / ".bench-ready").exists():
        build_base()
    return BASE


# ---------------------------------------------------------------- 1. import


def part_import(args: argparse.Namespace) -> str:
    figures = build_base()
    stats = figures["stats"]
    count = stats["memories"]
    rows = [
        ["memories imported", f"{count} (of {len(memories())})"],
        ["format", figures["how"]],
        [
            "`engram import` (one CLI run, process start included)",
            f"{figures['import_s']:.2f} s ({count / figures['import_s']:.0f} memories/s)",
        ],
        ["vectors written (`engram embed --wait`)", f"{figures['embed_s']:.1f} s"],
        ["waiting for embedding afterwards", stats["waiting_for_embedding"]],
        ["dated phrases found (`memory_time`)", stats["knowledge"]["dated_phrases"]],
        ["by project", ", ".join(f"{k} {v}" for k, v in sorted(stats["by_project"].items()))],
    ]
    print(
        f"import: {figures['import_s']:.2f} s, embed {figures['embed_s']:.1f} s, {figures['how']}"
    )
    return "### Import\n\n" + table(["measure", "value"], rows)


# ---------------------------------------------------------------- 2. pairs


def flagged(data_dir: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    connection = sqlite3.connect(f"file:{data_dir / 'engram.sqlite3'}?mode=ro", uri=True)
    rows = connection.execute("SELECT a, b, kind, holder FROM contradiction").fetchall()
    connection.close()
    return {key(a, b): (kind, holder) for a, b, kind, holder in rows}


def queued(data_dir: Path) -> set[tuple[str, str]]:
    """Pairs that reached the candidate queue (judged or not)."""
    connection = sqlite3.connect(f"file:{data_dir / 'engram.sqlite3'}?mode=ro", uri=True)
    rows = connection.execute("SELECT a, b FROM contradiction_candidate").fetchall()
    connection.close()
    return {key(a, b) for a, b in rows}


def score_pairs(found: dict, labels: list[dict], candidates: set) -> dict[str, object]:
    listed = {key(x["a"], x["b"]): x for x in labels}
    positives = {k: x for k, x in listed.items() if x["label"] != "compatible"}
    hits = [k for k in found if k in positives]
    wrong = [k for k in found if k in listed and listed[k]["label"] == "compatible"]
    ignored = [k for k in found if k not in listed and k in NOT_COUNTED]
    unlisted = [k for k in found if k not in listed and k not in NOT_COUNTED]
    with_holder = [k for k in hits if positives[k]["holder"]]
    by_label = Counter(x["label"] for x in labels)
    found_by_label = Counter(listed[k]["label"] for k in found if k in listed)
    queued_by_label = Counter(x["label"] for k, x in listed.items() if k in candidates)
    return {
        "flagged": len(found),
        "hits": len(hits),
        "compatible": len(wrong),
        "unlisted": len(unlisted),
        "ignored": len(ignored),
        "recall": len(hits) / len(positives),
        "precision": len(hits) / (len(hits) + len(wrong)) if hits or wrong else 0.0,
        "precision_all": len(hits) / (len(hits) + len(wrong) + len(unlisted))
        if hits or wrong or unlisted
        else 0.0,
        "holder": (
            sum(found[k][1] == positives[k]["holder"] for k in with_holder),
            len(with_holder),
            sum(found[k][1] is None for k in with_holder),
        ),
        "kind": sum(found[k][0] == positives[k]["label"] for k in hits),
        "by_label": {
            label: (found_by_label[label], queued_by_label[label], by_label[label])
            for label in ("supersedes", "contradiction", "compatible")
        },
        "missed": [k for k in positives if k not in found],
        "false": sorted(wrong + unlisted),
        "ignored_pairs": sorted(ignored),
    }


def part_pairs(args: argparse.Namespace) -> str:
    labels = read_jsonl(DATA / "pairs.jsonl")
    listed = {key(x["a"], x["b"]): x for x in labels}
    names = memories()
    setups = [("cues only (no LLM)", "pairs-cues", NO_LLM)]
    if args.with_llm:
        setups.append(("cues + embedded SmolLM2-135M", "pairs-llm", {}))
    columns = []
    for label, folder, env in setups:
        data_dir = copy_of(base(), folder)
        started = time.perf_counter()
        report = json.loads(
            cli(data_dir, "rem", "run", "--op", "contradictions", "--json", env=env)
        )
        wall = time.perf_counter() - started
        (operation,) = report["operations"]
        if operation["error"]:
            raise RuntimeError(f"contradictions operation failed: {operation['error']}")
        found = flagged(data_dir)
        s = score_pairs(found, labels, queued(data_dir))
        changes = operation["changes"]
        right, with_holder, no_holder = s["holder"]
        columns.append(
            [
                label,
                f"{s['recall']:.3f} ({s['hits']}/{len(labels) - s['by_label']['compatible'][2]})",
                *(
                    f"{s['by_label'][k][0]}/{s['by_label'][k][2]}"
                    for k in ("supersedes", "contradiction")
                ),
                f"{s['precision']:.3f}",
                f"{s['precision_all']:.3f}",
                f"{s['hits']} / {s['compatible']} / {s['unlisted']} / {s['ignored']}",
                f"{ratio(right, with_holder)} ({right}/{with_holder}; {no_holder} without)",
                f"{s['kind']}/{s['hits']}",
                " / ".join(
                    f"{s['by_label'][k][1]}/{s['by_label'][k][2]}"
                    for k in ("supersedes", "contradiction", "compatible")
                ),
                f"{changes.get('queued', 0)} / {changes.get('judged', 0)}",
                str(changes.get("asked_llm", 0)),
                f"{operation['seconds']:.1f} s ({wall:.1f} s)",
            ]
        )
        summary = {k: v for k, v in s.items() if k not in ("missed", "false", "ignored_pairs")}
        print(f"pairs, {label}: {summary}")
        print(f"  missed positives ({len(s['missed'])}):")
        for a, b in s["missed"]:
            x = listed[(a, b)]
            print(
                f"    {x['label']:13} {x['a']} «{title(names, x['a'])}» – "
                f"{x['b']} «{title(names, x['b'])}»"
            )
        print(f"  false positives ({len(s['false'])}):")
        for a, b in s["false"]:
            what = listed[(a, b)]["label"] if (a, b) in listed else "unlisted"
            print(
                f"    {found[(a, b)][0]:13} ({what}) {a} «{title(names, a)}» – "
                f"{b} «{title(names, b)}»"
            )
        for a, b in s["ignored_pairs"]:
            print(f"    not counted: {found[(a, b)][0]} {a} – {b}")
    rows_names = [
        "recall (supersedes + contradiction)",
        "recall: supersedes",
        "recall: contradiction",
        "precision (labelled pairs)",
        "precision (all pairs)",
        "flagged: right / compatible / unlisted / not counted",
        "holder right (labelled holder not null)",
        "kind right (of found)",
        "labelled pairs queued as candidates (sup. / contr. / compat.)",
        "queued / judged pairs",
        "LLM calls",
        "operation time (CLI run)",
    ]
    rows = [[name, *(c[i + 1] for c in columns)] for i, name in enumerate(rows_names)]
    counts = Counter(x["label"] for x in labels)
    return (
        "### Conflicting pairs\n\n"
        "`engram rem run --op contradictions --json` on a copy of the imported folder; flagged "
        f"pairs are read from the `contradiction` table. {counts['supersedes']} supersedes + "
        f"{counts['contradiction']} contradiction pairs are the positives, "
        f"{counts['compatible']} `compatible` pairs the hard negatives. Precision over all "
        "pairs also counts flagged pairs the set does not list, except the "
        f"{len([k for k in NOT_COUNTED if k[0] in memories()])} unlabelled follow-ups its "
        "README names (*not counted*). Holder: "
        "the memory Engram says holds is the labelled one (for supersedes the later, for "
        "contradictions the correct note, sometimes the earlier). *Queued*: the pair "
        "reached the candidate queue at all (`contradiction_candidate`).\n\n"
        + table(["measure", *(c[0] for c in columns)], rows)
    )


# ---------------------------------------------------------------- 3. duplicates


def pairs_of(groups: list[list[str]]) -> set[tuple[str, str]]:
    return {key(a, b) for group in groups for a, b in itertools.combinations(group, 2)}


def part_duplicates(args: argparse.Namespace) -> str:
    labelled = read_jsonl(DATA / "duplicates.jsonl")
    truth = {
        kind: pairs_of([g["group"] for g in labelled if g["kind"] == kind])
        for kind in ("exact", "near")
    }
    every = truth["exact"] | truth["near"]
    negatives = {key(n["a"], n["b"]): n["why"] for n in read_jsonl(DATA / "dup_negatives.jsonl")}
    conflicting = {
        key(x["a"], x["b"]): x["label"]
        for x in read_jsonl(DATA / "pairs.jsonl")
        if x["label"] != "compatible"
    }
    names = memories()
    started = time.perf_counter()
    report = json.loads(cli(base(), "rem", "run", "--op", "duplicates", "--dry-run", "--json"))
    wall = time.perf_counter() - started
    (operation,) = report["operations"]
    if operation["error"]:
        raise RuntimeError(f"duplicates operation failed: {operation['error']}")
    by_kind: dict[str, set] = defaultdict(set)
    for finding in operation["findings"]:
        by_kind[finding["kind"]] |= pairs_of([finding["memory_ids"]])
    proposed = set().union(*by_kind.values()) if by_kind else set()
    hits = proposed & every
    rows = [
        [
            "labelled groups (exact / near)",
            " / ".join(str(sum(g["kind"] == k for g in labelled)) for k in ("exact", "near")),
        ],
        ["labelled pairs (exact / near)", f"{len(truth['exact'])} / {len(truth['near'])}"],
        ["proposed findings / pairs", f"{len(operation['findings'])} / {len(proposed)}"],
        [
            "proposed pairs by finding kind",
            ", ".join(f"{k} {len(v)}" for k, v in sorted(by_kind.items())) or "–",
        ],
        ["precision (pairs)", ratio(len(hits), len(proposed))],
        ["recall (pairs)", share(len(hits), len(every))],
        [
            "recall: exact",
            share(len(proposed & truth["exact"]), len(truth["exact"])),
        ],
        [
            "recall: near",
            share(len(proposed & truth["near"]), len(truth["near"])),
        ],
    ]
    for kind, pairs in sorted(by_kind.items()):
        rows.append([f"precision of `{kind}` findings", ratio(len(pairs & every), len(pairs))])
    rows += [
        ["dup_negatives proposed", f"{len(proposed & set(negatives))} of {len(negatives)}"],
        [
            "proposed pairs labelled conflicting in pairs.jsonl",
            f"{len(proposed & set(conflicting))} of {len(conflicting)}",
        ],
        ["operation time", f"{operation['seconds']:.2f} s (CLI run {wall:.1f} s)"],
    ]
    print(f"duplicates: proposed {len(proposed)}, right {len(hits)}, labelled {len(every)}")
    for a, b in sorted(every - proposed):
        kind = "exact" if (a, b) in truth["exact"] else "near"
        print(f"  missed {kind}: {a} «{title(names, a)}» – {b} «{title(names, b)}»")
    for a, b in sorted(proposed - every):
        why = f" (dup_negative: {negatives[(a, b)]})" if (a, b) in negatives else ""
        why += f" (labelled {conflicting[(a, b)]})" if (a, b) in conflicting else ""
        print(f"  wrong: {a} «{title(names, a)}» – {b} «{title(names, b)}»{why}")
    return (
        "### Duplicates\n\n"
        "`engram rem run --op duplicates --dry-run --json` on the imported folder; the "
        "proposed findings' memories, as pairs, against the groups of duplicates.jsonl "
        "(`exact`: imported twice; `near`: paraphrases written months apart). "
        "dup_negatives.jsonl holds look-alike pairs that are not duplicates.\n\n"
        + table(["measure", "value"], rows)
    )


# ---------------------------------------------------------------- 4. queries


def stale_losers(labels: list[dict]) -> dict[str, set[str]]:
    """Stale memory → the memories that replace it (supersedes `a`, contradiction non-holder)."""
    losers: dict[str, set[str]] = defaultdict(set)
    for x in labels:
        if x["label"] != "compatible" and x["holder"]:
            losers[x["a"] if x["holder"] == x["b"] else x["b"]].add(x["holder"])
    return losers


def search_batch(
    data_dir: Path, queries: list[dict], scoped: bool, name: str
) -> dict[str, list[str]]:
    path = OUT / f"queries-{name}.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": q["id"],
                    "query": q["query"],
                    **({"project": q["project"]} if scoped else {}),
                }
            )
            + "\n"
            for q in queries
        ),
        encoding="utf-8",
    )
    lines = json_lines(
        cli(data_dir, "search", "--json", "--limit", "10", "--queries-file", str(path))
    )
    return {line["id"]: [r["id"] for r in line["results"]] for line in lines}


def query_scores(relevant: list[str], ranked: list[str]) -> tuple[float, float, float]:
    wanted = set(relevant)
    rank = next((i + 1 for i, m in enumerate(ranked) if m in wanted), None)
    return (
        len(wanted & set(ranked[:5])) / len(wanted),
        len(wanted & set(ranked[:10])) / len(wanted),
        1 / rank if rank else 0.0,
    )


def stale_below(query: dict, ranked: list[str], losers: dict[str, set[str]]) -> bool | None:
    """Every stale note paired with a relevant one ranks below it (absent counts as below;
    the relevant one must be in the top 10). None when no stale note is paired."""
    position = {m: i for i, m in enumerate(ranked)}
    checks = [
        (stale, holder)
        for stale, holders in losers.items()
        for holder in holders
        if holder in query["relevant"]
    ]
    if not checks:
        return None
    return all(
        holder in position and position.get(stale, 99) > position[holder]
        for stale, holder in checks
    )


def query_rows(queries: list[dict], ranked: dict[str, list[str]], losers, label: str, others=None):
    per = {q["id"]: query_scores(q["relevant"], ranked.get(q["id"], [])) for q in queries}
    rows = []
    for kind in ("all", *KINDS):
        chosen = [q for q in queries if kind in ("all", q["kind"])]
        if not chosen:
            continue
        means = [sum(per[q["id"]][i] for q in chosen) / len(chosen) for i in range(3)]
        rows.append([label, kind, len(chosen), *(f"{m:.3f}" for m in means)])
    truth = [
        stale_below(q, ranked.get(q["id"], []), losers)
        for q in queries
        if q["kind"] == "current-truth"
    ]
    checked = [t for t in truth if t is not None]
    return rows, per, (sum(checked), len(checked))


def distractor_folder() -> Path:
    """A fresh copy of the embedded corpus-2k folder (built once by bench/corpus.py) with
    real-dev imported beside it and embedded."""
    data_dir = OUT / "with-corpus-2k"
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.copytree(
        embedded_data_dir(2000),
        data_dir,
        ignore=shutil.ignore_patterns("embed.lock", "embed.log", ".bench-ready"),
    )
    import_set(data_dir)
    embed_all(data_dir)
    return data_dir


def part_queries(args: argparse.Namespace) -> str:
    queries = read_jsonl(DATA / "queries.jsonl")
    losers = stale_losers(read_jsonl(DATA / "pairs.jsonl"))
    names = memories()
    project_of = {m: x["project"] for m, x in names.items()}
    started = time.perf_counter()
    ranked = search_batch(base(), queries, True, "scoped")
    wall = time.perf_counter() - started
    rows, per, (below, checked) = query_rows(queries, ranked, losers, "scoped")
    notes = [
        f"current-truth, every stale note below its replacement (scoped): **{below}/{checked}**"
    ]
    # What a user sees once the idle cycle has judged the pairs: open conflicts rank the
    # note that holds above the one it replaces.
    cycled = copy_of(base(), "queries-after-cycle")
    cli(cycled, "rem", "run", "--op", "contradictions", "--json", env=NO_LLM)
    ranked_after = search_batch(cycled, queries, True, "scoped-after-cycle")
    more, _, (below_after, checked_after) = query_rows(
        queries, ranked_after, losers, "scoped, after the contradictions operation"
    )
    rows += more
    notes.append(
        "current-truth, every stale note below its replacement (scoped, after the "
        f"contradictions operation): **{below_after}/{checked_after}**"
    )
    print(
        "  after the contradictions operation: stale below replacement "
        f"{below_after}/{checked_after}"
    )
    print(f"queries scoped ({wall:.1f} s for {len(queries)}):")
    for row in rows:
        print("  " + "  ".join(str(c) for c in row[1:]))
    print(f"  current-truth stale below replacement: {below}/{checked}")
    for q in queries:
        if per[q["id"]][1] < 1:
            got = ranked.get(q["id"], [])
            missing = [m for m in q["relevant"] if m not in got]
            print(f"  miss {q['id']} [{q['kind']}] {q['query'][:70]!r}: {missing} not in top 10")
    for q in queries:
        if (
            q["kind"] == "current-truth"
            and stale_below(q, ranked.get(q["id"], []), losers) is False
        ):
            top = ranked.get(q["id"], [])[:5]
            print(
                f"  stale above: {q['id']} {q['query'][:60]!r} top5={top} relevant={q['relevant']}"
            )
    if not args.no_distractors:
        data_dir = distractor_folder()
        ranked_all = search_batch(data_dir, queries, False, "unscoped-2k")
        more, _, (below_all, checked_all) = query_rows(
            queries, ranked_all, losers, "unscoped + corpus-2k"
        )
        rows += more
        slots = [m for q in queries for m in ranked_all.get(q["id"], [])[:5]]
        foreign = sum(m not in project_of for m in slots)
        other = sum(
            m in project_of and project_of[m] != q["project"]
            for q in queries
            for m in ranked_all.get(q["id"], [])[:5]
        )
        notes.append(
            "current-truth, every stale note below its replacement (unscoped + corpus-2k): "
            f"**{below_all}/{checked_all}**"
        )
        notes.append(
            f"unscoped top-5 slots ({len(slots)}): {foreign} taken by corpus-2k memories, "
            f"{other} by notes of another project of the set"
        )
        print(f"  unscoped + corpus-2k: all R@10 {more[0][4]}, MRR {more[0][5]}; {notes[-1]}")
    return (
        "### Search\n\n"
        f"{len(queries)} queries of queries.jsonl through `engram search --json --limit 10 "
        "--queries-file Q` (hybrid). *scoped*: each query with its `project` on the imported "
        "folder; *unscoped + corpus-2k*: no project, in a copy of the embedded corpus-2k folder "
        "with the set imported beside it (2,000 template memories and the other four projects "
        "compete). recall@k = share of a query's relevant memories in its top k; MRR over the "
        "top 10. For `current-truth` a query passes the stale check when its relevant "
        "(replacing) memory is in the top 10 and every stale note paired with it (superseded, "
        "or the wrong side of a contradiction) ranks below it or is absent.\n\n"
        + table(["run", "kind", "queries", "recall@5", "recall@10", "MRR"], rows)
        + "\n\n"
        + "\n".join(f"- {n}" for n in notes)
    )


# ---------------------------------------------------------------- 5. context


def placeholder_files(cases: list[dict], sources: Path | None) -> Path:
    """A folder per project with a `.git` marker (so the project root and the relative
    path come out right) holding each case's file: empty, or copied from `sources`."""
    root = OUT / ("files-real" if sources else "files-empty")
    shutil.rmtree(root, ignore_errors=True)
    for case in cases:
        project = root / case["project"]
        (project / ".git").mkdir(parents=True, exist_ok=True)
        target = project / case["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        if sources is None:
            target.touch()
        else:
            origin = sources / case["project"] / case["file"]
            if not origin.is_file():
                raise FileNotFoundError(f"{origin}: not in --sources")
            shutil.copyfile(origin, target)
    return root


def context_of(data_dir: Path, root: Path, case: dict, budget: int) -> dict[int, list[str]]:
    args = [
        "context",
        "--project",
        case["project"],
        "--file",
        str(root / case["project"] / case["file"]),
    ]
    if case.get("error"):
        args += ["--error", case["error"]]
    if case.get("branch"):
        args += ["--branch", case["branch"]]
    out = json.loads(cli(data_dir, *args, "--budget", str(budget), "--json", "--no-record"))
    return {tier["tier"]: [m["id"] for m in tier["memories"]] for tier in out["tiers"]}


def context_run(data_dir: Path, cases: list[dict], root: Path, names) -> dict[str, object]:
    groups: dict[str, set[str]] = {}
    for g in read_jsonl(DATA / "duplicates.jsonl"):
        for m in g["group"]:
            groups[m] = set(g["group"])
    counts = Counter()
    for case in cases:
        wide = context_of(data_dir, root, case, 2000)
        narrow = context_of(data_dir, root, case, 500)
        top = {m for t in (1, 2) for m in wide.get(t, [])}
        anywhere = {m for ms in wide.values() for m in ms}
        tier1 = set(narrow.get(1, []))
        anywhere_500 = {m for ms in narrow.values() for m in ms}
        missing = []
        for need in case["needed"]:
            members = groups.get(need, {need})
            counts["needed"] += 1
            counts["top"] += bool(members & top)
            counts["anywhere"] += bool(members & anywhere)
            counts["tier1_500"] += bool(members & tier1)
            if not members & top:
                missing.append(need)
        counts["must_not"] += len(case["must_not"])
        injected = [m for m in case["must_not"] if m in anywhere]
        counts["must_not_in"] += len(injected)
        counts["must_not_in_500"] += sum(m in anywhere_500 for m in case["must_not"])
        counts["cases_clean"] += not injected
        counts["cases_all_top"] += not missing
        if missing or injected:
            print(
                f"  {case['id']} {case['project']}:{case['file']}"
                + (
                    f" not in tiers 1–2: {', '.join(f'{m} «{title(names, m)}»' for m in missing)}"
                    if missing
                    else ""
                )
                + (
                    f" injected must_not: {', '.join(f'{m} «{title(names, m)}»' for m in injected)}"
                    if injected
                    else ""
                )
            )
    return counts


def part_context(args: argparse.Namespace) -> str:
    cases = read_jsonl(DATA / "context.jsonl")
    names = memories()
    runs: list[tuple[str, Path | None, Path]] = [("path only (empty file)", None, base())]
    if args.sources:
        sources = Path(args.sources).expanduser().resolve()
        runs.append(("real file contents", sources, base()))
        # What a user sees once the idle cycle has judged the pairs: open conflicts with a
        # holder put the note that holds in place of the one it replaces.
        cycled = copy_of(base(), "context-after-cycle")
        cli(cycled, "rem", "run", "--op", "contradictions", "--json", env=NO_LLM)
        runs.append(("real files, after the contradictions operation", sources, cycled))
    columns = []
    for label, sources, data_dir in runs:
        root = placeholder_files(cases, sources)
        print(f"context, {label}:")
        started = time.perf_counter()
        c = context_run(data_dir, cases, root, names)
        wall = time.perf_counter() - started
        columns.append(
            [
                label,
                share(c["top"], c["needed"]),
                share(c["anywhere"], c["needed"]),
                f"{c['cases_all_top']}/{len(cases)}",
                share(c["must_not_in"], c["must_not"]),
                f"{c['cases_clean']}/{len(cases)}",
                share(c["tier1_500"], c["needed"]),
                share(c["must_not_in_500"], c["must_not"]),
                f"{1000 * wall / (2 * len(cases)):.0f} ms",
            ]
        )
        print(f"  {dict(c)}")
    names_rows = [
        "needed in tiers 1–2 (budget 2000)",
        "needed anywhere (budget 2000)",
        "cases with every needed note in tiers 1–2",
        "must_not injected anywhere (budget 2000)",
        "cases with no must_not injected",
        "needed in tier 1 (budget 500)",
        "must_not injected anywhere (budget 500)",
        "time per `engram context` (process included)",
    ]
    rows = [[name, *(c[i + 1] for c in columns)] for i, name in enumerate(names_rows)]
    errors = sum(bool(c.get("error")) for c in cases)
    branches = sum(bool(c.get("branch")) for c in cases)
    return (
        "### Context\n\n"
        f"{len(cases)} cases of context.jsonl ({errors} with an error, {branches} with a "
        "branch): `engram context --project P --file F [--error E] [--branch B] --budget N "
        "--json` on the imported folder (no REM cycle has run; the memories' pairs were "
        "judged by the cues and scorers as they were embedded, so open contradictions "
        "give ⚠ lines and a replaced note gives way to its newest replacement). "
        "The CLI refuses a file that does not exist, so each project gets a folder with a "
        "`.git` marker holding the file"
        + (
            ": empty (the path is all Engram has), and a second run with the real file "
            "copied from a checkout of the snapshot the notes describe (its names and imports "
            "become signals); the third run is the second on a copy of the folder after "
            "`engram rem run --op contradictions` (no model), as a user sees it once the "
            "idle cycle has judged the pairs."
            if args.sources
            else " as an empty file: the path is all Engram has (`--sources DIR` adds a run "
            "with the real files)."
        )
        + " A needed note counts when any member of its duplicate group is placed.\n\n"
        + table(["measure", *(c[0] for c in columns)], rows)
    )


# ---------------------------------------------------------------- 6. temporal


def resolution_check(item: dict, times: list[dict]) -> bool | None:
    """The phrase's resolved interval: equal to the expected one (not vague) or inside it
    (vague). None when no resolved phrase of the memory matches the item's phrase."""
    phrase = item["phrase"].lower()
    matching = [t for t in times if phrase in t["phrase"].lower() or t["phrase"].lower() in phrase]
    if not matching:
        return None
    expected = (item["expected_start"], item["expected_end"])
    for t in matching:
        got = (t["resolved"][:10], (t["resolved_end"] or t["resolved"])[:10])
        if got == expected or (item["vague"] and expected[0] <= got[0] <= got[1] <= expected[1]):
            return True
    return False


def recall_batch(data_dir: Path, items: list[dict], scoped: bool, names) -> list[dict]:
    path = OUT / f"temporal-{'scoped' if scoped else 'unscoped'}.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": str(i),
                    "query": x["question"],
                    **({"project": names[x["memory"]]["project"]} if scoped else {}),
                }
            )
            + "\n"
            for i, x in enumerate(items)
        ),
        encoding="utf-8",
    )
    out = cli(
        data_dir, "recall", "--no-llm", "--json", "--as-of", AS_OF, "--queries-file", str(path)
    )
    return sorted(json_lines(out), key=lambda a: int(a["id"]))


def answer_right(item: dict, answer: dict) -> bool:
    """A single-day item: the answer's date is answer_date; a range: the date is inside."""
    got = answer.get("date")
    if not got:
        return False
    if item["answer_date"]:
        return got[:10] == item["answer_date"]
    return item["expected_start"] <= got[:10] <= item["expected_end"]


def part_temporal(args: argparse.Namespace) -> str:
    items = read_jsonl(DATA / "temporal.jsonl")
    names = memories()
    data_dir = base()
    times = {
        m: json.loads(cli(data_dir, "show", m, "--json", "--no-record"))["times"]
        for m in {x["memory"] for x in items}
    }
    resolved = [resolution_check(x, times[x["memory"]]) for x in items]
    answers = {
        "recall unscoped": recall_batch(data_dir, items, False, names),
        "recall scoped": recall_batch(data_dir, items, True, names),
    }
    groups = [
        ("not vague (exact day / range)", [i for i, x in enumerate(items) if not x["vague"]]),
        ("vague (inside the range)", [i for i, x in enumerate(items) if x["vague"]]),
        (
            "local date ≠ UTC date",
            [i for i, x in enumerate(items) if x["local_date"] != x["utc_date"]],
        ),
        ("all", list(range(len(items)))),
    ]
    rows = []
    for label, chosen in groups:
        row = [label, len(chosen), f"{sum(resolved[i] is True for i in chosen)}/{len(chosen)}"]
        for got in answers.values():
            row.append(f"{sum(answer_right(items[i], got[i]) for i in chosen)}/{len(chosen)}")
        unscoped = answers["recall unscoped"]
        row.append(
            f"{sum(items[i]['memory'] in unscoped[i]['sources'] for i in chosen)}/{len(chosen)}"
        )
        rows.append(row)
    print("temporal:")
    for row in rows:
        print("  " + "  ".join(str(c) for c in row))
    for i, x in enumerate(items):
        a = answers["recall unscoped"][i]
        if resolved[i] is not True or not answer_right(x, a):
            phrases = [(t["phrase"], t["resolved"], t["resolved_end"]) for t in times[x["memory"]]]
            print(
                f"  {x['memory']} '{x['phrase']}' expected "
                f"{x['expected_start']}…{x['expected_end']} (local {x['local_date']}, "
                f"UTC {x['utc_date']}): resolved "
                f"{'no phrase' if resolved[i] is None else phrases}; recall {a.get('date')} "
                f"from {a.get('sources')}"
            )
    unfound = sum(r is None for r in resolved)
    return (
        "### Relative dates\n\n"
        f"{len(items)} items of temporal.jsonl. *resolved*: the memory's `times` in `engram show "
        "ID --json` hold the phrase with the expected interval (exactly for non-vague phrases, "
        "a single day or a range such as `last week`; inside the expected range for vague "
        f"ones); {unfound} phrases were not found at all. *recall*: `engram recall --no-llm "
        f"--json --as-of {AS_OF} --queries-file Q` with every question, without a project and "
        "with the memory's project; right when `date` is `answer_date` (single day) or lies "
        "inside the expected range. Sources: the labelled memory is among the unscoped "
        "answer's sources.\n\n"
        + table(["items", "n", "resolved", *answers.keys(), "labelled memory in sources"], rows)
    )


# ---------------------------------------------------------------- main

PART_FILES = {
    "pairs": "pairs.jsonl",
    "duplicates": "duplicates.jsonl",
    "queries": "queries.jsonl",
    "context": "context.jsonl",
    "temporal": "temporal.jsonl",
}


def use_set(data: Path) -> str:
    """Point the parts at `data` (work folder and doc sections named after it)."""
    global DATA, OUT, BASE
    global NOT_COUNTED
    DATA, OUT = data, WORK / data.name
    BASE = OUT / "data"
    listed = data / "not_counted.jsonl"  # the set's README names them; real-dev's are above
    if listed.exists():
        NOT_COUNTED = {key(x["a"], x["b"]) for x in read_jsonl(listed)}
    return data.name.replace("-", "_")


def has_files(part: str) -> bool:
    needed = PART_FILES.get(part)
    if needed and not (DATA / needed).exists():
        print(f"== {part}: skipped, {DATA} has no {needed}")
        return False
    return True


def set_header(section: str) -> str:
    if section == "real_dev":
        return (
            "## Real-dev development set\n\n"
            f"`{DATA}`: 270 hand-written notes about five real projects (httpx, pydantic, "
            "axum, cobra, vite) over two and a half years, in mixed human styles, with "
            "labelled conflicting pairs, duplicates, queries, context cases and relative dates "
            "(see its README). Unlike corpus-2k it is not template-made: it is the set to tune "
            "against. `bench/real_dev.py` drives only the `engram` CLI; each part below is its "
            "own section (`--only PART`)."
        )
    count = len(read_jsonl(DATA / "memories.jsonl"))
    projects = sorted({m["project"] for m in read_jsonl(DATA / "memories.jsonl")})
    return (
        f"## {DATA.name}: a second set in real-dev's format\n\n"
        f"`{DATA}`: {count} notes about {', '.join(projects)}, scored by the same parts as "
        "real-dev (its README says who wrote it and how). The detectors were not tuned on "
        "it: it says how far the real-dev figures carry to other notes."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--only", choices=PARTS, action="append", help="run only this part (repeatable)"
    )
    parser.add_argument(
        "--with-llm", action="store_true", help="pairs: also with the embedded model"
    )
    parser.add_argument(
        "--no-distractors",
        action="store_true",
        help="queries: skip the unscoped run beside corpus-2k",
    )
    parser.add_argument("--sources", help="context: folder of checkouts, DIR/<project>/<path>")
    parser.add_argument(
        "--data",
        help="a set in real-dev's format (default: SHARED/real-dev); parts whose files it "
        "lacks are skipped, and its sections in docs/benchmarks.md are named after the folder",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="import again even if --only skips import"
    )
    args = parser.parse_args()
    if args.sources and not Path(args.sources).expanduser().is_dir():
        parser.error(f"--sources {args.sources}: not a folder")
    section = use_set(Path(args.data).expanduser().resolve() if args.data else DATA)
    OUT.mkdir(parents=True, exist_ok=True)
    chosen = [p for p in (args.only or list(PARTS)) if p == "import" or has_files(p)]
    if args.fresh and "import" not in chosen:
        shutil.rmtree(BASE, ignore_errors=True)
    command = "python bench/real_dev.py" + "".join(f" {a}" for a in sys.argv[1:])
    functions = {
        "import": part_import,
        "pairs": part_pairs,
        "duplicates": part_duplicates,
        "queries": part_queries,
        "context": part_context,
        "temporal": part_temporal,
    }
    update_doc(section, set_header(section), "python bench/real_dev.py")
    failed = []
    for name in chosen:
        print(f"== {name}", flush=True)
        try:
            body = functions[name](args)
        except Exception:  # one part failing must not stop the others
            traceback.print_exc()
            failed.append(name)
            continue
        print(body, flush=True)
        update_doc(f"{section}_{name}", body, command)
    if failed:
        print(f"failed parts: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
