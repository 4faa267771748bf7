"""Validate the tenth-dev set (standard library only). Exit 1 on any problem."""

import datetime as dt
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE.parent.parent / ".work" / "tenth-dev-sources"
PROJECTS = {"rich", "bat", "nest"}
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
KINDS = {"current-truth", "error", "identifier", "paraphrase", "howto", "why", "file"}
problems = []


def bad(msg):
    problems.append(msg)


def load(name):
    path = HERE / name
    if not path.exists():
        bad(f"missing {name}")
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            bad(f"{name}:{n}: {e}")
    return rows


mems = load("memories.jsonl")
pairs = load("pairs.jsonl")
dups = load("duplicates.jsonl")
dupneg = load("dup_negatives.jsonl")
queries = load("queries.jsonl")
contexts = load("context.jsonl")
temporal = load("temporal.jsonl")
notc = load("not_counted.jsonl")
M = {m["id"]: m for m in mems}


def when(m):
    return dt.datetime.fromisoformat(m["created_at"])


# memories
prev = None
for i, m in enumerate(mems, 1):
    if m.get("id") != f"t10-m{i:03d}":
        bad(f"memory {i}: id {m.get('id')} out of sequence")
    keys = {"id", "project", "type", "title", "content", "created_at", "tags", "file_refs"}
    if set(m) != keys:
        bad(f"{m.get('id')}: fields {sorted(set(m) ^ keys)}")
        continue
    if m["project"] not in PROJECTS:
        bad(f"{m['id']}: project {m['project']}")
    if m["type"] not in TYPES:
        bad(f"{m['id']}: type {m['type']}")
    n = len(m["content"].split())
    if not 10 <= n <= 150:
        bad(f"{m['id']}: {n} words")
    t = when(m)
    if t.utcoffset() is None:
        bad(f"{m['id']}: created_at without offset")
    if not dt.datetime(2024, 1, 1, tzinfo=dt.UTC) <= t < dt.datetime(2027, 1, 1, tzinfo=dt.UTC):
        bad(f"{m['id']}: date outside 2024-2026")
    if prev and t < prev:
        bad(f"{m['id']}: not in creation order")
    prev = t
    if not isinstance(m["tags"], list) or not isinstance(m["file_refs"], list):
        bad(f"{m['id']}: tags/file_refs must be lists")

# pairs
stale = set()
conflict_members = set()
for p in pairs:
    a, b = M.get(p["a"]), M.get(p["b"])
    if not a or not b:
        bad(f"pair {p}: unknown id")
        continue
    if a["project"] != b["project"]:
        bad(f"pair {p['a']}/{p['b']}: different projects")
    if not when(a) < when(b):
        bad(f"pair {p['a']}/{p['b']}: a is not earlier")
    lab, h = p["label"], p["holder"]
    if lab == "supersedes":
        if h != p["b"]:
            bad(f"pair {p['a']}/{p['b']}: supersedes holder must be b")
        stale.add(p["a"])
        conflict_members |= {p["a"], p["b"]}
    elif lab == "contradiction":
        if h not in (None, p["a"], p["b"]):
            bad(f"pair {p['a']}/{p['b']}: bad holder")
        if h:
            stale.add(p["b"] if h == p["a"] else p["a"])
        conflict_members |= {p["a"], p["b"]}
    elif lab == "compatible":
        if h is not None:
            bad(f"pair {p['a']}/{p['b']}: compatible holder must be null")
    else:
        bad(f"pair {p['a']}/{p['b']}: label {lab}")
    if not p.get("why"):
        bad(f"pair {p['a']}/{p['b']}: no why")
seen = Counter(frozenset((p["a"], p["b"])) for p in pairs)
for k, v in seen.items():
    if v > 1:
        bad(f"pair {sorted(k)} listed {v} times")

# not_counted
for p in notc:
    if set(p) != {"a", "b", "why"} or p["a"] not in M or p["b"] not in M:
        bad(f"not_counted {p}: bad row")
    elif M[p["a"]]["project"] != M[p["b"]]["project"]:
        bad(f"not_counted {p}: different projects")
    elif frozenset((p["a"], p["b"])) in seen:
        bad(f"not_counted {p}: also labelled in pairs.jsonl")

# duplicates
group_of = {}
for g in dups:
    ids = g["group"]
    if g["kind"] not in ("near", "exact") or len(ids) < 2:
        bad(f"dup group {ids}: bad kind/size")
    for x in ids:
        if x not in M:
            bad(f"dup group {ids}: unknown {x}")
            continue
        if x in group_of:
            bad(f"dup groups overlap on {x}")
        group_of[x] = tuple(ids)
        if x in conflict_members:
            bad(f"dup member {x} is in a supersedes/contradiction pair")
    if len({M[x]["project"] for x in ids if x in M}) != 1:
        bad(f"dup group {ids}: mixed projects")
    exact_texts = {(M[x]["title"], M[x]["content"]) for x in ids if x in M}
    if g["kind"] == "exact" and len(exact_texts) != 1:
        bad(f"exact group {ids}: title/content differ")
exact_groups = sum(1 for g in dups if g["kind"] == "exact")
if exact_groups > 1:
    bad("more than one exact duplicate group")
for p in dupneg:
    if p["a"] not in M or p["b"] not in M:
        bad(f"dup_negative {p}: unknown id")
    elif group_of.get(p["a"]) and group_of.get(p["a"]) == group_of.get(p["b"]):
        bad(f"dup_negative {p}: same duplicate group")

# queries
for i, q in enumerate(queries, 1):
    if q["id"] != f"t10-q{i:03d}":
        bad(f"query {q['id']}: id out of sequence")
    if q["kind"] not in KINDS:
        bad(f"{q['id']}: kind {q['kind']}")
    rel = set(q["relevant"])
    if not rel:
        bad(f"{q['id']}: nothing relevant")
    for x in rel:
        if x not in M:
            bad(f"{q['id']}: unknown {x}")
            continue
        if M[x]["project"] != q["project"]:
            bad(f"{q['id']}: {x} from another project")
        if x in stale:
            bad(f"{q['id']}: stale {x} marked relevant")
        if x in group_of and not set(group_of[x]) <= rel:
            bad(f"{q['id']}: duplicate group of {x} not listed whole")
    if q["kind"] == "file":
        want = {
            m["id"]
            for m in mems
            if m["project"] == q["project"]
            and q["query"] in m["file_refs"]
            and m["id"] not in stale
        }
        if want != rel:
            bad(f"{q['id']}: file relevance {sorted(rel)} != {sorted(want)}")

# context
for i, c in enumerate(contexts, 1):
    if c["id"] != f"t10-c{i:03d}":
        bad(f"context {c['id']}: id out of sequence")
    src = SOURCES / c["project"] / c["file"]
    if not src.is_file():
        bad(f"{c['id']}: source file {src} missing")
    if set(c["needed"]) & set(c["must_not"]):
        bad(f"{c['id']}: id both needed and must_not")
    for x in c["needed"] + c["must_not"]:
        if x not in M:
            bad(f"{c['id']}: unknown {x}")
        elif M[x]["project"] != c["project"]:
            bad(f"{c['id']}: {x} from another project")
    for x in c["needed"]:
        if x in stale:
            bad(f"{c['id']}: stale {x} needed")
    for x in c["needed"]:
        for y in c["needed"]:
            if x < y and x in group_of and group_of.get(y) == group_of[x]:
                bad(f"{c['id']}: two members of one duplicate group needed")
    for x in c["must_not"]:
        if x in group_of and any(y in c["needed"] for y in group_of[x]):
            bad(f"{c['id']}: {x} must_not but its duplicate is needed")

# temporal
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def resolve(phrase, d):
    p = phrase.lower()
    day = dt.timedelta(days=1)
    if p in ("today", "this morning", "this afternoon", "this evening", "tonight"):
        return d, d
    if p in ("yesterday", "yesterday's"):
        return d - day, d - day
    if p == "the day before yesterday":
        return d - 2 * day, d - 2 * day
    if p == "the other day":
        return d - 7 * day, d - day
    if p == "over the weekend":
        sat = d - dt.timedelta(days=(d.weekday() - 5) % 7 or 7)
        return sat, sat + day
    if p == "earlier this week":
        mon = d - dt.timedelta(days=d.weekday())
        return mon, d - day
    if p == "last sprint":
        mon = d - dt.timedelta(days=d.weekday())
        return mon - 14 * day, mon - day
    m = re.fullmatch(r"last (\w+)", p)
    if m and m.group(1) in WEEKDAYS:
        back = (d.weekday() - WEEKDAYS.index(m.group(1))) % 7 or 7
        return d - back * day, d - back * day
    m = re.fullmatch(r"on the (\d+)(st|nd|rd|th)", p)
    if m:
        x = d
        while x.day != int(m.group(1)):
            x -= day
        return x, x
    return None


VAGUE = {"the other day", "earlier this week", "last sprint"}
for t in temporal:
    m = M.get(t["memory"])
    if not m:
        bad(f"temporal: unknown {t['memory']}")
        continue
    if t["phrase"] not in m["content"]:
        bad(f"temporal {t['memory']}: phrase not in content")
    cr = when(m)
    if t["local_date"] != cr.date().isoformat():
        bad(f"temporal {t['memory']}: local_date")
    if t["utc_date"] != cr.astimezone(dt.UTC).date().isoformat():
        bad(f"temporal {t['memory']}: utc_date")
    r = resolve(t["phrase"], cr.date())
    if r is None:
        bad(f"temporal {t['memory']}: unknown phrase {t['phrase']}")
    elif (r[0].isoformat(), r[1].isoformat()) != (t["expected_start"], t["expected_end"]):
        bad(f"temporal {t['memory']}: expected range {r}")
    same = t["expected_start"] == t["expected_end"]
    if t["answer_date"] != (t["expected_start"] if same else None):
        bad(f"temporal {t['memory']}: answer_date")
    if t["vague"] != (t["phrase"].lower() in VAGUE):
        bad(f"temporal {t['memory']}: vague flag")

for f in ("README.md",):
    if not (HERE / f).exists():
        bad(f"missing {f}")

if problems:
    print("\n".join(problems))
    sys.exit(1)
per_project = Counter(m["project"] for m in mems)
labels = Counter(p["label"] for p in pairs)
kinds = Counter(q["kind"] for q in queries)
print(
    f"memories {len(mems)} {dict(per_project)}; pairs {len(pairs)} {dict(labels)}; "
    f"duplicates {len(dups)} (exact {exact_groups}); dup_negatives {len(dupneg)}; "
    f"not_counted {len(notc)}"
)
print(f"queries {len(queries)} {dict(kinds)}; context {len(contexts)}; temporal {len(temporal)}")
print(
    f"stale memories {len(stale)}; temporal local!=utc "
    f"{sum(t['local_date'] != t['utc_date'] for t in temporal)}; "
    f"vague {sum(t['vague'] for t in temporal)}"
)
print("OK")
