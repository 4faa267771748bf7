"""Staleness and forgetting against `staleness.jsonl` of corpus-2k.

    python bench/staleness.py

Copies the 2k data folder, loads the corpus's usage log (`usage.jsonl`: retrieved,
cited, ignored events with their times) into it, runs
`engram rem run --op staleness --as-of 2026-10-31T23:59:59+00:00 --dry-run --json` and
compares the memories flagged stale (never retrieved or cited, 30+ days old) with the
labelled `flag` list; then runs the operation with `--auto` and checks that none of the
labelled `keep` memories (cited in the last 14 days) was archived.
"""

from __future__ import annotations

import json
import shutil
import sqlite3

from corpus import WORK, corpus, embedded_data_dir, engram, read_jsonl, table, update_doc

AS_OF = "2026-10-31T23:59:59+00:00"
FLAG_KINDS = {"stale", "unused"}


def load_usage(database: str, events: list[dict]) -> None:
    counters = {
        "retrieved": "retrieval_count",
        "cited": "citation_count",
        "ignored": "ignore_count",
    }
    connection = sqlite3.connect(database)
    with connection:
        connection.executemany(
            "INSERT INTO usage_event (memory_id, event, session_id, at) VALUES (?, ?, NULL, ?)",
            [(e["memory_id"], e["event"], e["t"]) for e in events],
        )
        for e in events:
            column = counters[e["event"]]
            connection.execute(
                f"UPDATE memory SET {column} = {column} + 1 WHERE id = ?", [e["memory_id"]]
            )
            if e["event"] != "ignored":
                connection.execute(
                    "UPDATE memory SET last_accessed = max(coalesce(last_accessed, ''), ?) "
                    "WHERE id = ?",
                    [e["t"], e["memory_id"]],
                )
    connection.close()


def main() -> None:
    folder = corpus(2000)
    data_dir = WORK / "staleness-2000"
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.copytree(embedded_data_dir(2000), data_dir)
    load_usage(str(data_dir / "engram.sqlite3"), read_jsonl(folder / "usage.jsonl"))
    labels = read_jsonl(folder / "staleness.jsonl")
    flag = {x["memory_id"] for x in labels if x["expected"] == "flag"}
    keep = {x["memory_id"] for x in labels if x["expected"] == "keep"}
    common = ("rem", "run", "--op", "staleness", "--as-of", AS_OF, "--json")
    report = json.loads(engram(data_dir, *common, "--dry-run"))["operations"][0]
    flagged = {i for f in report["findings"] if f["kind"] in FLAG_KINDS for i in f["memory_ids"]}
    any_finding = {i for f in report["findings"] for i in f["memory_ids"]}
    precision = len(flagged & flag) / len(flagged) if flagged else 0.0
    recall = len(flagged & flag) / len(flag)
    auto = json.loads(engram(data_dir, *common, "--auto"))["operations"][0]
    connection = sqlite3.connect(data_dir / "engram.sqlite3")
    archived = {r[0] for r in connection.execute("SELECT id FROM memory WHERE tier = 'archived'")}
    connection.close()
    kinds: dict[str, int] = {}
    for f in report["findings"]:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    rows = [
        ["labelled flag / keep", f"{len(flag)} / {len(keep)}"],
        ["findings by kind", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))],
        ["precision of stale flags", f"{precision:.3f}"],
        ["recall of stale flags", f"{recall:.3f}"],
        ["keep memories with any finding", str(len(any_finding & keep))],
        ["archived by --auto", str(auto["applied"])],
        ["keep memories archived", f"{len(archived & keep)} (must be 0)"],
        ["operation time", f"{report['seconds']:.2f} s"],
    ]
    body = (
        "## Staleness and forgetting (corpus-2k)\n\n"
        f"`engram rem run --op staleness --as-of {AS_OF}` on the 2k folder with the "
        "corpus's usage log loaded. Flags = findings of kind `stale` (30–90 days, never "
        "retrieved or cited; proposed for review) and `unused` (90+ days, proposed for "
        "archiving).\n\n" + table(["measure", "value"], rows)
    )
    print(body)
    update_doc("staleness", body, "python bench/staleness.py")


if __name__ == "__main__":
    main()
