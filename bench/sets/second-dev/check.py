#!/usr/bin/env python3
"""Validate the second-dev evaluation set (standard library only).

Usage: python check.py [DIR]   (DIR defaults to this file's folder)
Exits 1 and lists every problem found; prints a summary and exits 0 otherwise.
"""

import json
import os
import re
import sys
from collections import Counter
from datetime import UTC, datetime

PROJECTS = {"requests", "ripgrep", "gin"}
TYPES = {
    "decision",
    "constraint",
    "pitfall",
    "fix",
    "convention",
    "pattern",
    "workflow",
    "architecture",
    "dependency",
    "episode",
    "lesson",
}
LABELS = {"supersedes", "contradiction", "compatible"}
QKINDS = {"current-truth", "error", "identifier", "paraphrase", "howto", "why"}
DUPKINDS = {"exact", "near"}
EARLIEST = datetime(2023, 6, 1, tzinfo=UTC)
LATEST = datetime(2026, 9, 1, tzinfo=UTC)

problems = []


def bad(msg):
    problems.append(msg)


def load(folder, name):
    rows = []
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        bad(f"{name}: missing")
        return rows
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                bad(f"{name}:{i}: blank line")
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                bad(f"{name}:{i}: invalid JSON ({e})")
    return rows


def parse_ts(s, where):
    try:
        ts = datetime.fromisoformat(s)
    except (TypeError, ValueError):
        bad(f"{where}: created_at {s!r} is not ISO-8601")
        return None
    if ts.tzinfo is None:
        bad(f"{where}: created_at {s!r} has no UTC offset")
        return None
    return ts


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    mems = load(folder, "memories.jsonl")
    pairs = load(folder, "pairs.jsonl")
    dups = load(folder, "duplicates.jsonl")
    dupneg = load(folder, "dup_negatives.jsonl")
    queries = load(folder, "queries.jsonl")

    # ---- memories ----
    by_id = {}
    ts_of = {}
    prev = None
    for i, m in enumerate(mems, 1):
        where = f"memories.jsonl:{i}"
        need = {"id", "project", "type", "title", "content", "created_at", "tags", "file_refs"}
        if set(m) != need:
            bad(f"{where}: fields {sorted(m)} != {sorted(need)}")
        mid = m.get("id")
        if mid in by_id:
            bad(f"{where}: duplicate id {mid}")
        by_id[mid] = m
        if mid != f"sd-m{i:03d}":
            bad(f"{where}: id {mid} should be sd-m{i:03d} (ids follow creation order)")
        if m.get("project") not in PROJECTS:
            bad(f"{where}: unknown project {m.get('project')!r}")
        if m.get("type") not in TYPES:
            bad(f"{where}: unknown type {m.get('type')!r}")
        if not isinstance(m.get("title"), str) or not m["title"].strip():
            bad(f"{where}: empty title")
        words = len(re.findall(r"\S+", m.get("content") or ""))
        if not 10 <= words <= 150:
            bad(f"{where}: content has {words} words (10-150 expected)")
        if not isinstance(m.get("tags"), list) or not all(
            isinstance(t, str) for t in m.get("tags", [])
        ):
            bad(f"{where}: tags must be a list of strings")
        if not isinstance(m.get("file_refs"), list) or not all(
            isinstance(t, str) and t for t in m.get("file_refs", [])
        ):
            bad(f"{where}: file_refs must be a list of non-empty strings")
        ts = parse_ts(m.get("created_at"), where)
        if ts is not None:
            ts_of[mid] = ts
            if not EARLIEST <= ts <= LATEST:
                bad(f"{where}: created_at {m['created_at']} outside 2023-06 .. 2026-08")
            if prev is not None and ts <= prev:
                bad(f"{where}: created_at not strictly after the previous memory")
            prev = ts

    def exists(mid, where):
        if mid not in by_id:
            bad(f"{where}: unknown memory id {mid!r}")
            return False
        return True

    # ---- pairs ----
    stale = set()
    paired = set()
    seen_pairs = set()
    for i, p in enumerate(pairs, 1):
        where = f"pairs.jsonl:{i}"
        if set(p) != {"a", "b", "label", "holder", "why"}:
            bad(f"{where}: fields {sorted(p)}")
        a, b, label, holder = p.get("a"), p.get("b"), p.get("label"), p.get("holder")
        if not (exists(a, where) and exists(b, where)):
            continue
        paired.update([a, b])
        key = frozenset((a, b))
        if key in seen_pairs:
            bad(f"{where}: pair {a}/{b} listed twice")
        seen_pairs.add(key)
        if a == b:
            bad(f"{where}: a == b")
        if by_id[a]["project"] != by_id[b]["project"]:
            bad(f"{where}: {a} and {b} belong to different projects")
        if a in ts_of and b in ts_of and not ts_of[a] < ts_of[b]:
            bad(f"{where}: a ({a}) must be created before b ({b})")
        if label not in LABELS:
            bad(f"{where}: unknown label {label!r}")
        elif label == "supersedes":
            if holder != b:
                bad(f"{where}: supersedes holder must be b ({b}), got {holder!r}")
            stale.add(a)
        elif label == "contradiction":
            if holder not in (a, b, None):
                bad(f"{where}: contradiction holder must be a, b or null")
            if holder is not None:
                stale.add(b if holder == a else a)
        elif label == "compatible" and holder is not None:
            bad(f"{where}: compatible pairs have holder null")
        if not isinstance(p.get("why"), str) or not p["why"].strip():
            bad(f"{where}: empty why")

    # ---- duplicates ----
    group_of = {}
    for i, d in enumerate(dups, 1):
        where = f"duplicates.jsonl:{i}"
        if set(d) != {"group", "kind"}:
            bad(f"{where}: fields {sorted(d)}")
        group, kind = d.get("group") or [], d.get("kind")
        if kind not in DUPKINDS:
            bad(f"{where}: unknown kind {kind!r}")
        if len(group) < 2 or len(set(group)) != len(group):
            bad(f"{where}: a group needs >= 2 distinct ids")
        ok = [g for g in group if exists(g, where)]
        for g in ok:
            if g in group_of:
                bad(f"{where}: {g} already in duplicate group {group_of[g]}")
            group_of[g] = i
            if g in paired:
                bad(f"{where}: {g} is a duplicate-group member but also appears in pairs.jsonl")
        if len({by_id[g]["project"] for g in ok}) > 1:
            bad(f"{where}: group spans projects")
        if kind == "exact" and ok:
            first = by_id[ok[0]]
            for g in ok[1:]:
                if (by_id[g]["title"], by_id[g]["content"]) != (first["title"], first["content"]):
                    bad(f"{where}: exact group members {ok[0]} and {g} differ in title/content")
        if kind == "near" and ok:
            contents = {by_id[g]["content"] for g in ok}
            if len(contents) != len(ok):
                bad(f"{where}: near group has identical contents (should be exact)")

    # ---- dup negatives ----
    for i, d in enumerate(dupneg, 1):
        where = f"dup_negatives.jsonl:{i}"
        if set(d) != {"a", "b", "why"}:
            bad(f"{where}: fields {sorted(d)}")
        a, b = d.get("a"), d.get("b")
        if not (exists(a, where) and exists(b, where)):
            continue
        if a == b:
            bad(f"{where}: a == b")
        if by_id[a]["project"] != by_id[b]["project"]:
            bad(f"{where}: different projects")
        if a in group_of and group_of.get(a) == group_of.get(b):
            bad(f"{where}: {a} and {b} are in the same duplicate group")

    # ---- queries ----
    groups = {}
    for g, gi in group_of.items():
        groups.setdefault(gi, set()).add(g)
    qids = set()
    for i, q in enumerate(queries, 1):
        where = f"queries.jsonl:{i}"
        if set(q) != {"id", "query", "project", "relevant", "kind"}:
            bad(f"{where}: fields {sorted(q)}")
        if q.get("id") != f"sd-q{i:03d}" or q.get("id") in qids:
            bad(f"{where}: id {q.get('id')} should be sd-q{i:03d}")
        qids.add(q.get("id"))
        if q.get("kind") not in QKINDS:
            bad(f"{where}: unknown kind {q.get('kind')!r}")
        if q.get("project") not in PROJECTS:
            bad(f"{where}: unknown project")
        if not isinstance(q.get("query"), str) or not q["query"].strip():
            bad(f"{where}: empty query")
        rel = q.get("relevant") or []
        if not rel:
            bad(f"{where}: no relevant ids")
        for r in rel:
            if not exists(r, where):
                continue
            if by_id[r]["project"] != q.get("project"):
                bad(
                    f"{where}: relevant {r} is in project {by_id[r]['project']}, "
                    f"query is {q.get('project')}"
                )
            if r in stale:
                bad(f"{where}: relevant {r} is stale (superseded or wrong side of a contradiction)")
            if r in group_of:
                missing = groups[group_of[r]] - set(rel)
                if missing:
                    bad(f"{where}: relevant {r} has duplicates not listed: {sorted(missing)}")
        # the replaced note must exist: some relevant id is b of a supersedes pair
        if q.get("kind") == "current-truth" and not any(
            p.get("label") == "supersedes" and p.get("b") in rel for p in pairs
        ):
            bad(f"{where}: current-truth query without a superseded counterpart")

    if problems:
        for p in problems:
            print("FAIL", p)
        print(f"{len(problems)} problem(s)")
        return 1

    print(f"memories: {len(mems)} {dict(sorted(Counter(m['project'] for m in mems).items()))}")
    print(f"pairs: {len(pairs)} {dict(sorted(Counter(p['label'] for p in pairs).items()))}")
    print(f"duplicates: {len(dups)} {dict(sorted(Counter(d['kind'] for d in dups).items()))}")
    print(f"dup_negatives: {len(dupneg)}")
    print(f"queries: {len(queries)} {dict(sorted(Counter(q['kind'] for q in queries).items()))}")
    print(f"stale memories: {len(stale)}")
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
