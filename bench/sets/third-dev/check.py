#!/usr/bin/env python3
"""Validate the third-dev set. Standard library only; exits 1 on any problem."""

import json
import os
import sys
from collections import Counter
from datetime import UTC, datetime

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECTS = {"fastapi", "express", "fd"}
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
LO = datetime(2023, 1, 1, tzinfo=UTC)
HI = datetime(2026, 10, 1, tzinfo=UTC)

problems = []


def bad(msg):
    problems.append(msg)


def load(name, required=True):
    path = os.path.join(HERE, name)
    if not os.path.exists(path):
        if required:
            bad(f"{name}: missing")
        return []
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                bad(f"{name}:{n}: invalid JSON ({e})")
    return rows


def instant(s, where):
    try:
        d = datetime.fromisoformat(s)
    except (TypeError, ValueError):
        bad(f"{where}: created_at {s!r} is not ISO-8601")
        return None
    if d.tzinfo is None:
        bad(f"{where}: created_at {s!r} has no UTC offset")
        return None
    return d.astimezone(UTC)


# ------------------------------------------------------------------ memories
mems = load("memories.jsonl")
M = {}
prev = None
for i, m in enumerate(mems, 1):
    mid = m.get("id")
    where = f"memories.jsonl:{i} ({mid})"
    for k in ("id", "project", "type", "title", "content", "created_at", "tags", "file_refs"):
        if k not in m:
            bad(f"{where}: missing field {k}")
    if mid in M:
        bad(f"{where}: duplicate id")
    if mid != f"td-m{i:03d}":
        bad(f"{where}: expected id td-m{i:03d} (ids are assigned in creation order)")
    if m.get("project") not in PROJECTS:
        bad(f"{where}: unknown project {m.get('project')!r}")
    if m.get("type") not in TYPES:
        bad(f"{where}: unknown type {m.get('type')!r}")
    words = len(str(m.get("content", "")).split())
    if not 10 <= words <= 150:
        bad(f"{where}: content has {words} words (want 10-150)")
    if not isinstance(m.get("tags"), list) or not isinstance(m.get("file_refs"), list):
        bad(f"{where}: tags and file_refs must be lists")
    t = instant(m.get("created_at"), where)
    if t is not None:
        if not LO <= t < HI:
            bad(f"{where}: created_at outside 2023-01 .. 2026-09")
        if prev is not None and t < prev:
            bad(f"{where}: not sorted by created_at")
        prev = t
    m["_t"] = t
    M[mid] = m


def known(mid, where):
    if mid not in M:
        bad(f"{where}: unknown memory id {mid!r}")
        return False
    return True


# ------------------------------------------------------------------ pairs
pairs = load("pairs.jsonl")
stale = set()
pair_members = set()
seen_pairs = set()
for i, p in enumerate(pairs, 1):
    where = f"pairs.jsonl:{i}"
    a, b, lab, h = p.get("a"), p.get("b"), p.get("label"), p.get("holder", "MISSING")
    if h == "MISSING" or "why" not in p:
        bad(f"{where}: needs a, b, label, holder, why")
    if not (known(a, where) and known(b, where)):
        continue
    key = frozenset((a, b))
    if key in seen_pairs:
        bad(f"{where}: pair {a}/{b} listed twice")
    seen_pairs.add(key)
    pair_members.update((a, b))
    if M[a]["project"] != M[b]["project"]:
        bad(f"{where}: {a} and {b} are in different projects")
    if M[a]["_t"] and M[b]["_t"] and not M[a]["_t"] < M[b]["_t"]:
        bad(f"{where}: a ({a}) must be strictly earlier than b ({b})")
    if lab not in LABELS:
        bad(f"{where}: unknown label {lab!r}")
    elif lab == "supersedes":
        if h != b:
            bad(f"{where}: supersedes holder must be b ({b}), got {h}")
        stale.add(a)
    elif lab == "contradiction":
        if h not in (a, b, None):
            bad(f"{where}: contradiction holder must be a, b or null")
        if h is not None:
            stale.add(b if h == a else a)
    elif lab == "compatible" and h is not None:
        bad(f"{where}: compatible pairs have holder null")

# ------------------------------------------------------------------ not_counted
for i, p in enumerate(load("not_counted.jsonl", required=False), 1):
    where = f"not_counted.jsonl:{i}"
    a, b = p.get("a"), p.get("b")
    if not (known(a, where) and known(b, where)):
        continue
    if M[a]["project"] != M[b]["project"]:
        bad(f"{where}: different projects")
    if frozenset((a, b)) in seen_pairs:
        bad(f"{where}: {a}/{b} is also labeled in pairs.jsonl")
    if "why" not in p:
        bad(f"{where}: missing why")

# ------------------------------------------------------------------ duplicates
dups = load("duplicates.jsonl")
group_of = {}
for i, g in enumerate(dups, 1):
    where = f"duplicates.jsonl:{i}"
    ids = g.get("group", [])
    kind = g.get("kind")
    if kind not in ("exact", "near"):
        bad(f"{where}: kind must be exact or near")
    if len(ids) < 2:
        bad(f"{where}: a group needs at least two ids")
    if not all(known(x, where) for x in ids):
        continue
    if len({M[x]["project"] for x in ids}) != 1:
        bad(f"{where}: group spans projects")
    for x in ids:
        if x in group_of:
            bad(f"{where}: {x} is already in group {group_of[x] + 1}")
        group_of[x] = i - 1
        if x in pair_members:
            bad(f"{where}: {x} is also in a pairs.jsonl pair")
    tc = {(M[x]["title"], M[x]["content"]) for x in ids}
    if kind == "exact":
        if len(tc) != 1:
            bad(f"{where}: exact group members differ in title or content")
        if len({M[x]["created_at"] for x in ids}) != len(ids):
            bad(f"{where}: exact copies should have different created_at")
    elif kind == "near" and len({M[x]["content"] for x in ids}) != len(ids):
        bad(f"{where}: near group has identical contents (should be exact)")

# ------------------------------------------------------------------ dup_negatives
for i, p in enumerate(load("dup_negatives.jsonl"), 1):
    where = f"dup_negatives.jsonl:{i}"
    a, b = p.get("a"), p.get("b")
    if not (known(a, where) and known(b, where)):
        continue
    if a == b or (a in group_of and group_of.get(a) == group_of.get(b)):
        bad(f"{where}: {a}/{b} are in the same duplicate group")
    if "why" not in p:
        bad(f"{where}: missing why")

# ------------------------------------------------------------------ queries
queries = load("queries.jsonl")
superseders = {p["b"] for p in pairs if p.get("label") == "supersedes"}
qids = set()
for i, q in enumerate(queries, 1):
    where = f"queries.jsonl:{i} ({q.get('id')})"
    if q.get("id") in qids:
        bad(f"{where}: duplicate query id")
    qids.add(q.get("id"))
    if q.get("kind") not in QKINDS:
        bad(f"{where}: unknown kind {q.get('kind')!r}")
    if q.get("project") not in PROJECTS:
        bad(f"{where}: unknown project")
    rel = q.get("relevant") or []
    if not rel:
        bad(f"{where}: empty relevant list")
    for x in rel:
        if not known(x, where):
            continue
        if M[x]["project"] != q.get("project"):
            bad(f"{where}: {x} is not in project {q.get('project')}")
        if x in stale:
            bad(f"{where}: {x} is stale and cannot be relevant")
        if x in group_of:
            missing = [y for y in dups[group_of[x]]["group"] if y not in rel]
            if missing:
                bad(f"{where}: duplicate group of {x} incomplete, missing {missing}")
    if q.get("kind") == "current-truth" and not any(x in superseders for x in rel):
        bad(f"{where}: current-truth query without a replacing note among relevant")

# ------------------------------------------------------------------ report
if problems:
    for p in problems:
        print("FAIL:", p)
    print(f"{len(problems)} problem(s)")
    sys.exit(1)

print("OK")
print("memories:", len(mems), dict(Counter(m["project"] for m in mems)))
print("pairs:", len(pairs), dict(Counter(p["label"] for p in pairs)))
print("duplicates:", len(dups), dict(Counter(g["kind"] for g in dups)))
print("dup_negatives:", len(load("dup_negatives.jsonl")))
print("queries:", len(queries), dict(Counter(q["kind"] for q in queries)))
print("not_counted:", len(load("not_counted.jsonl", required=False)))
print("stale memories:", len(stale))
