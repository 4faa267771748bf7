#!/usr/bin/env python3
"""Internal-consistency check for the eleventh-dev set (standard library only).

    python check.py                 # structure, labels, queries, context, temporal
    python check.py --mirrors DIR   # additionally check that every file_refs path and
                                    # context/file-query path exists somewhere in the history
                                    # of DIR/<owner>+<name>/repo (bare git mirrors)

Exits 1 on any problem and prints a table of counts otherwise.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECTS = {"alembic": "sqlalchemy/alembic", "fzf": "junegunn/fzf", "pinia": "vuejs/pinia"}
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
QKINDS = {"current-truth", "error", "identifier", "paraphrase", "howto", "why", "file"}
START, END = datetime(2024, 1, 1, tzinfo=UTC), datetime(2026, 10, 1, tzinfo=UTC)
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NUMWORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

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
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                bad(f"{name}:{n}: blank line")
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                bad(f"{name}:{n}: invalid JSON ({e})")
    return rows


def need_keys(name, row, keys, optional=()):
    missing = [k for k in keys if k not in row]
    extra = [k for k in row if k not in keys and k not in optional]
    if missing:
        bad(f"{name}: {row.get('id', row)} missing {missing}")
    if extra:
        bad(f"{name}: {row.get('id', row)} unexpected {extra}")


# ------------------------------------------------------------------ memories
mems = load("memories.jsonl")
M = {}
prev = None
for n, r in enumerate(mems, 1):
    need_keys(
        "memories",
        r,
        ["id", "project", "type", "title", "content", "created_at", "tags", "file_refs"],
    )
    mid = r.get("id")
    if mid != f"el-m{n:03d}":
        bad(f"memories: line {n} has id {mid}, expected el-m{n:03d}")
    if mid in M:
        bad(f"memories: duplicate id {mid}")
    M[mid] = r
    if r.get("project") not in PROJECTS:
        bad(f"{mid}: unknown project {r.get('project')}")
    if r.get("type") not in TYPES:
        bad(f"{mid}: unknown type {r.get('type')}")
    if not isinstance(r.get("title"), str) or not r["title"].strip():
        bad(f"{mid}: empty title")
    words = len(str(r.get("content", "")).split())
    if not 10 <= words <= 150:
        bad(f"{mid}: content has {words} words (want 10-150)")
    try:
        dt = datetime.fromisoformat(r["created_at"])
        if dt.utcoffset() is None:
            bad(f"{mid}: created_at without UTC offset")
        elif not START <= dt < END:
            bad(f"{mid}: created_at {r['created_at']} outside 2024-01 .. 2026-09")
        elif prev is not None and dt < prev:
            bad(f"{mid}: not in creation order")
        else:
            prev = dt
        r["_dt"] = dt
    except (KeyError, ValueError, TypeError):
        bad(f"{mid}: bad created_at {r.get('created_at')}")
        r["_dt"] = START
    if not isinstance(r.get("tags"), list) or not all(
        isinstance(t, str) for t in r.get("tags", [])
    ):
        bad(f"{mid}: tags must be a list of strings")
    if not isinstance(r.get("file_refs"), list) or not all(
        isinstance(t, str) for t in r.get("file_refs", [])
    ):
        bad(f"{mid}: file_refs must be a list of strings")


def exists(mid, where):
    if mid not in M:
        bad(f"{where}: unknown memory id {mid}")
        return False
    return True


def proj(mid):
    return M[mid]["project"] if mid in M else None


# ------------------------------------------------------------------ pairs
pairs = load("pairs.jsonl")
seen_pairs = set()
conflict_members = set()
stale = set()
for r in pairs:
    need_keys("pairs", r, ["a", "b", "label", "holder", "why"])
    a, b, lab, h = r.get("a"), r.get("b"), r.get("label"), r.get("holder")
    w = f"pairs {a}/{b}"
    if not (exists(a, w) and exists(b, w)):
        continue
    if a == b:
        bad(f"{w}: a == b")
    key = frozenset((a, b))
    if key in seen_pairs:
        bad(f"{w}: listed twice")
    seen_pairs.add(key)
    if proj(a) != proj(b):
        bad(f"{w}: different projects")
    if not M[a]["_dt"] < M[b]["_dt"]:
        bad(f"{w}: a is not strictly earlier than b")
    if lab not in LABELS:
        bad(f"{w}: bad label {lab}")
    elif lab == "supersedes":
        if h != b:
            bad(f"{w}: supersedes must have holder = b")
        stale.add(a)
        conflict_members.update((a, b))
    elif lab == "contradiction":
        if h not in (a, b, None):
            bad(f"{w}: contradiction holder must be a, b or null")
        if h is not None:
            stale.add(a if h == b else b)
        conflict_members.update((a, b))
    elif lab == "compatible" and h is not None:
        bad(f"{w}: compatible pair must have holder null")
    if not str(r.get("why", "")).strip():
        bad(f"{w}: empty why")

# ------------------------------------------------------------------ duplicates
dups = load("duplicates.jsonl")
group_of = {}
for n, r in enumerate(dups, 1):
    need_keys("duplicates", r, ["group", "kind"])
    g = r.get("group", [])
    w = f"duplicates #{n}"
    if len(g) < 2 or len(set(g)) != len(g):
        bad(f"{w}: group needs >= 2 distinct ids")
    if not all(exists(x, w) for x in g):
        continue
    if len({proj(x) for x in g}) != 1:
        bad(f"{w}: members from different projects")
    for x in g:
        if x in group_of:
            bad(f"{w}: {x} already in another group (groups must be disjoint)")
        group_of[x] = tuple(g)
        if x in conflict_members:
            bad(f"{w}: {x} is in a supersedes/contradiction pair")
    kind = r.get("kind")
    if kind == "exact":
        if len({(M[x]["title"], M[x]["content"]) for x in g}) != 1:
            bad(f"{w}: exact group members differ in title/content")
    elif kind == "near":
        if len({M[x]["content"] for x in g}) != len(g):
            bad(f"{w}: near group has identical contents (should be exact)")
    else:
        bad(f"{w}: bad kind {kind}")

# every pair of identical title+content must be in one exact group
by_text = defaultdict(list)
for mid, r in M.items():
    by_text[(r["project"], r["title"], r["content"])].append(mid)
for ids in by_text.values():
    if len(ids) > 1 and len({group_of.get(x) for x in ids}) != 1:
        bad(f"identical memories {ids} not grouped together")

dupneg = load("dup_negatives.jsonl")
for r in dupneg:
    need_keys("dup_negatives", r, ["a", "b", "why"])
    a, b = r.get("a"), r.get("b")
    w = f"dup_negatives {a}/{b}"
    if exists(a, w) and exists(b, w):
        if proj(a) != proj(b):
            bad(f"{w}: different projects")
        if group_of.get(a) is not None and group_of.get(a) == group_of.get(b):
            bad(f"{w}: both in the same duplicate group")
        if M[a]["content"] == M[b]["content"]:
            bad(f"{w}: identical content")

# ------------------------------------------------------------------ not_counted
nc = load("not_counted.jsonl")
for r in nc:
    need_keys("not_counted", r, ["a", "b", "why"])
    a, b = r.get("a"), r.get("b")
    w = f"not_counted {a}/{b}"
    if exists(a, w) and exists(b, w):
        if proj(a) != proj(b):
            bad(f"{w}: different projects")
        if not M[a]["_dt"] < M[b]["_dt"]:
            bad(f"{w}: a is not earlier than b")
        if frozenset((a, b)) in seen_pairs:
            bad(f"{w}: also labelled in pairs.jsonl")
        if a not in stale and b not in stale:
            bad(
                f"{w}: neither side is stale "
                "(expected a follow-up conflicting with an already-replaced note)"
            )

# ------------------------------------------------------------------ queries
queries = load("queries.jsonl")
qids = set()
for r in queries:
    need_keys("queries", r, ["id", "query", "project", "relevant", "kind"])
    qid = r.get("id")
    if qid in qids:
        bad(f"queries: duplicate id {qid}")
    qids.add(qid)
    if r.get("kind") not in QKINDS:
        bad(f"{qid}: bad kind {r.get('kind')}")
    rel = r.get("relevant", [])
    if not rel:
        bad(f"{qid}: no relevant memories")
    if len(set(rel)) != len(rel):
        bad(f"{qid}: repeated relevant id")
    for x in rel:
        if not exists(x, qid):
            continue
        if proj(x) != r.get("project"):
            bad(f"{qid}: {x} belongs to {proj(x)}")
        if x in stale:
            bad(f"{qid}: stale memory {x} listed as relevant")
        for y in group_of.get(x, ()):
            if y not in rel:
                bad(f"{qid}: {x} relevant but its duplicate {y} is not")
    if r.get("kind") == "file":
        expect = sorted(
            mid
            for mid, m in M.items()
            if m["project"] == r.get("project")
            and r.get("query") in m["file_refs"]
            and mid not in stale
        )
        if sorted(rel) != expect:
            bad(
                f"{qid}: file query relevant {sorted(rel)} != "
                f"non-stale memories referencing it {expect}"
            )
    if r.get("kind") == "current-truth":
        replaced = [p for p in pairs if p.get("label") == "supersedes" and p.get("b") in rel]
        wrong = [p for p in pairs if p.get("label") == "contradiction" and p.get("holder") in rel]
        if not replaced and not wrong:
            bad(
                f"{qid}: current-truth query without a superseded/wrong "
                "counterpart of a relevant memory"
            )

# ------------------------------------------------------------------ context
context = load("context.jsonl")
cids = set()
for r in context:
    need_keys(
        "context", r, ["id", "project", "file", "needed", "must_not"], optional=("error", "branch")
    )
    cid = r.get("id")
    if cid in cids:
        bad(f"context: duplicate id {cid}")
    cids.add(cid)
    if r.get("project") not in PROJECTS:
        bad(f"{cid}: unknown project")
    needed, must_not = r.get("needed", []), r.get("must_not", [])
    if not needed:
        bad(f"{cid}: nothing needed")
    if set(needed) & set(must_not):
        bad(f"{cid}: id in both needed and must_not")
    groups_seen = set()
    for x in needed:
        if not exists(x, cid):
            continue
        if proj(x) != r.get("project"):
            bad(f"{cid}: needed {x} from another project")
        if x in stale:
            bad(f"{cid}: stale memory {x} is needed")
        g = group_of.get(x)
        if g:
            if g in groups_seen:
                bad(f"{cid}: two members of one duplicate group in needed")
            groups_seen.add(g)
    for x in must_not:
        if exists(x, cid) and proj(x) != r.get("project"):
            bad(f"{cid}: must_not {x} from another project")
        if group_of.get(x) and any(group_of.get(x) == group_of.get(y) for y in needed):
            bad(f"{cid}: must_not {x} is a duplicate of a needed memory")

# ------------------------------------------------------------------ temporal
temporal = load("temporal.jsonl")


def resolve(phrase, d):
    p = phrase.lower()
    if p in ("today", "this morning", "this afternoon", "this evening", "tonight"):
        return d, d, False
    if p == "the day before yesterday":
        return d - timedelta(2), d - timedelta(2), False
    if p == "yesterday":
        return d - timedelta(1), d - timedelta(1), False
    m = re.fullmatch(r"(\d+|two|three|four|five|six) days ago", p)
    if m:
        k = int(m.group(1)) if m.group(1).isdigit() else NUMWORDS[m.group(1)]
        return d - timedelta(k), d - timedelta(k), False
    if p == "two weeks ago":
        return d - timedelta(14), d - timedelta(14), False
    m = re.fullmatch(r"(last|next) (\w+)", p)
    if m and m.group(2) in WEEKDAYS:
        wd = WEEKDAYS.index(m.group(2))
        if m.group(1) == "last":
            back = (d.weekday() - wd) % 7 or 7
            return d - timedelta(back), d - timedelta(back), False
        fwd = (wd - d.weekday()) % 7 or 7
        return d + timedelta(fwd), d + timedelta(fwd), False
    m = re.fullmatch(r"on the (\d+)(st|nd|rd|th)", p)
    if m:
        day = int(m.group(1))
        y, mo = d.year, d.month
        while True:
            try:
                cand = date(y, mo, day)
            except ValueError:
                cand = None
            if cand and cand <= d:
                return cand, cand, False
            mo -= 1
            if mo == 0:
                y, mo = y - 1, 12
    if p == "last week":
        monday = d - timedelta(d.weekday())
        return monday - timedelta(7), monday - timedelta(1), False
    if p == "over the weekend":
        back = (d.weekday() - 6) % 7 or 7
        sunday = d - timedelta(back)
        return sunday - timedelta(1), sunday, False
    if p == "a couple of days ago":
        return d - timedelta(3), d - timedelta(2), True
    if p == "the other day":
        return d - timedelta(7), d - timedelta(1), True
    if p == "the end of last month":
        last = d.replace(day=1) - timedelta(1)
        return last - timedelta(6), last, True
    if p == "last sprint":
        monday = d - timedelta(d.weekday())
        return monday - timedelta(14), monday - timedelta(1), True
    return None


for r in temporal:
    need_keys(
        "temporal",
        r,
        [
            "memory",
            "phrase",
            "expected_start",
            "expected_end",
            "question",
            "answer_date",
            "vague",
            "local_date",
            "utc_date",
        ],
    )
    mid = r.get("memory")
    w = f"temporal {mid} '{r.get('phrase')}'"
    if not exists(mid, w):
        continue
    if str(r.get("phrase", "")).lower() not in M[mid]["content"].lower():
        bad(f"{w}: phrase not in content")
    dt = M[mid]["_dt"]
    if r.get("local_date") != dt.date().isoformat():
        bad(f"{w}: local_date should be {dt.date().isoformat()}")
    if r.get("utc_date") != dt.astimezone(UTC).date().isoformat():
        bad(f"{w}: utc_date wrong")
    res = resolve(r.get("phrase", ""), dt.date())
    if res is None:
        bad(f"{w}: phrase not in the README table")
        continue
    s, e, vague = res
    if (r.get("expected_start"), r.get("expected_end")) != (s.isoformat(), e.isoformat()):
        bad(f"{w}: expected {s}..{e}, got {r.get('expected_start')}..{r.get('expected_end')}")
    if r.get("vague") != vague:
        bad(f"{w}: vague should be {vague}")
    want_answer = s.isoformat() if s == e else None
    if r.get("answer_date") != want_answer:
        bad(f"{w}: answer_date should be {want_answer}")

# ------------------------------------------------------- optional: paths exist in history
ap = argparse.ArgumentParser()
ap.add_argument("--mirrors", help="directory holding <owner>+<name>/repo git mirrors")
args = ap.parse_args()
if args.mirrors:
    paths = defaultdict(set)
    for r in M.values():
        paths[r["project"]].update(r["file_refs"])
    for r in context:
        paths[r["project"]].add(r["file"])
    for r in queries:
        if r.get("kind") == "file":
            paths[r["project"]].add(r["query"])
    for project, ps in paths.items():
        gitdir = os.path.join(args.mirrors, PROJECTS[project].replace("/", "+"), "repo")
        if not os.path.isdir(gitdir):
            bad(f"--mirrors: no mirror for {project} at {gitdir}")
            continue
        out = subprocess.run(
            ["git", "--git-dir", gitdir, "log", "--all", "--pretty=format:", "--name-only"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        known = {line.strip() for line in out.splitlines() if line.strip()}
        for p in sorted(ps):
            if p not in known:
                bad(f"{project}: path {p} never appears in the repository history")

# ------------------------------------------------------------------ report
if problems:
    for p in problems:
        print("PROBLEM:", p)
    print(f"{len(problems)} problem(s)")
    sys.exit(1)

rows = [
    ("memories.jsonl", len(mems)),
    ("pairs.jsonl", len(pairs)),
    ("not_counted.jsonl", len(nc)),
    ("duplicates.jsonl", len(dups)),
    ("dup_negatives.jsonl", len(dupneg)),
    ("queries.jsonl", len(queries)),
    ("context.jsonl", len(context)),
    ("temporal.jsonl", len(temporal)),
]
for k, v in sorted(Counter(r["project"] for r in mems).items()):
    rows.append((f"memories: {k}", v))
for k, v in sorted(Counter(r["label"] for r in pairs).items()):
    rows.append((f"pairs: {k}", v))
rows.append(
    (
        "pairs: contradiction with holder null",
        sum(1 for r in pairs if r["label"] == "contradiction" and r["holder"] is None),
    )
)
rows.append(
    (
        "pairs: contradiction where the wrong note is the later one",
        sum(1 for r in pairs if r["label"] == "contradiction" and r["holder"] == r["a"]),
    )
)
rows.append(("stale memories", len(stale)))
for k, v in sorted(Counter(r["kind"] for r in queries).items()):
    rows.append((f"queries: {k}", v))
for k, v in sorted(Counter(r["kind"] for r in dups).items()):
    rows.append((f"duplicates: {k}", v))
rows.append(("memories with empty file_refs", sum(1 for r in mems if not r["file_refs"])))
rows.append(("temporal: vague", sum(1 for r in temporal if r["vague"])))
rows.append(
    (
        "temporal: local date differs from UTC date",
        sum(1 for r in temporal if r["local_date"] != r["utc_date"]),
    )
)
offsets = Counter(r["created_at"][-6:] for r in mems)
rows.append(("distinct UTC offsets", len(offsets)))
print("| item | count |\n| --- | --- |")
for k, v in rows:
    print(f"| {k} | {v} |")
print("OK")
