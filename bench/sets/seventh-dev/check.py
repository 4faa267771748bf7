"""Validate the seventh-dev set (standard library only). Exits 1 on any problem."""

import datetime as dt
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE.parent.parent / ".work" / "seventh-dev-sources"
PROJECTS = {"drf", "serde", "webpack"}
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
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5}

problems = []


def bad(msg):
    problems.append(msg)


def load(name):
    path = HERE / name
    rows = []
    if not path.exists():
        bad(f"{name}: missing")
        return rows
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            bad(f"{name}:{n}: blank line")
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            bad(f"{name}:{n}: bad json: {e}")
    return rows


def keys(name, row, required, optional=()):
    have = set(row)
    missing = set(required) - have
    extra = have - set(required) - set(optional)
    if missing or extra:
        bad(f"{name}: {row.get('id', row)} missing {sorted(missing)} extra {sorted(extra)}")
        return False
    return True


def parse_ts(s):
    try:
        t = dt.datetime.fromisoformat(s)
    except (TypeError, ValueError):
        return None
    return t if t.tzinfo is not None else None


def expected_range(phrase, local):
    """Resolve a phrase per the README table; returns (start, end, vague) or None."""
    p = phrase.lower()
    day = dt.timedelta(days=1)
    if p in {"today", "this morning", "this afternoon", "this evening", "tonight"}:
        return local, local, False
    if p in {"yesterday", "yesterday's"}:
        return local - day, local - day, False
    if p == "the day before yesterday":
        return local - 2 * day, local - 2 * day, False
    m = re.fullmatch(r"(\d+|two|three|four|five) (days|weeks) ago", p)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else NUMBERS[m.group(1)]
        d = local - (n * 7 if m.group(2) == "weeks" else n) * day
        return d, d, False
    m = re.fullmatch(r"last (\w+)", p)
    if m and m.group(1) in WEEKDAYS:
        wd = WEEKDAYS.index(m.group(1))
        back = (local.weekday() - wd) % 7 or 7
        d = local - back * day
        return d, d, False
    m = re.fullmatch(r"next (\w+)", p)
    if m and m.group(1) in WEEKDAYS:
        wd = WEEKDAYS.index(m.group(1))
        fwd = (wd - local.weekday()) % 7 or 7
        d = local + fwd * day
        return d, d, False
    m = re.fullmatch(r"on the (\d+)(st|nd|rd|th)", p)
    if m:
        dom = int(m.group(1))
        d = local
        while d.day != dom:
            d -= day
        return d, d, False
    monday = local - local.weekday() * day
    if p == "last week":
        return monday - 7 * day, monday - day, False
    if p == "over the weekend":
        sunday = local - ((local.weekday() + 1) % 7 or 7) * day
        return sunday - day, sunday, False
    if p == "a couple of days ago":
        return local - 3 * day, local - 2 * day, True
    if p == "the other day":
        return local - 7 * day, local - day, True
    if p == "the end of last month":
        last = local.replace(day=1) - day
        return last - 6 * day, last, True
    if p == "last sprint":
        return monday - 14 * day, monday - day, True
    return None


# ---------------------------------------------------------------- memories
mems = load("memories.jsonl")
M = {}
prev = None
for i, m in enumerate(mems, 1):
    mf = ["id", "project", "type", "title", "content", "created_at", "tags", "file_refs"]
    if not keys("memories", m, mf):
        continue
    if m["id"] != f"s7-m{i:03d}":
        bad(f"memories: line {i} has id {m['id']}, expected s7-m{i:03d}")
    if m["id"] in M:
        bad(f"memories: duplicate id {m['id']}")
    M[m["id"]] = m
    if m["project"] not in PROJECTS:
        bad(f"{m['id']}: unknown project {m['project']}")
    if m["type"] not in TYPES:
        bad(f"{m['id']}: unknown type {m['type']}")
    if not isinstance(m["title"], str) or not m["title"].strip():
        bad(f"{m['id']}: empty title")
    words = len(str(m["content"]).split())
    if not 10 <= words <= 150:
        bad(f"{m['id']}: content has {words} words (10-150)")
    t = parse_ts(m["created_at"])
    if t is None:
        bad(f"{m['id']}: bad created_at {m['created_at']}")
        continue
    off = t.utcoffset().total_seconds() / 3600
    if not -8 <= off <= 10:
        bad(f"{m['id']}: offset {off} outside -08:00..+10:00")
    if prev is not None and t < prev:
        bad(f"{m['id']}: not sorted by UTC instant")
    prev = t
    if not isinstance(m["tags"], list) or not all(isinstance(x, str) for x in m["tags"]):
        bad(f"{m['id']}: tags must be a list of strings")
    refs = m["file_refs"]
    if not isinstance(refs, list) or not all(isinstance(x, str) and x for x in refs):
        bad(f"{m['id']}: file_refs must be a list of non-empty strings")


def mem_ok(where, mid):
    if mid not in M:
        bad(f"{where}: unknown memory {mid}")
        return False
    return True


def when(mid):
    return parse_ts(M[mid]["created_at"])


# ---------------------------------------------------------------- pairs
pairs = load("pairs.jsonl")
stale = set()
conflict_members = set()
seen_pairs = set()
for p in pairs:
    if not keys("pairs", p, ["a", "b", "label", "holder", "why"]):
        continue
    a, b, label, holder = p["a"], p["b"], p["label"], p["holder"]
    where = f"pair {a}/{b}"
    if not (mem_ok(where, a) and mem_ok(where, b)):
        continue
    if frozenset((a, b)) in seen_pairs:
        bad(f"{where}: listed twice")
    seen_pairs.add(frozenset((a, b)))
    if M[a]["project"] != M[b]["project"]:
        bad(f"{where}: different projects")
    if not when(a) <= when(b):
        bad(f"{where}: a is not the earlier memory")
    if not str(p["why"]).strip():
        bad(f"{where}: empty why")
    if label == "supersedes":
        if not when(a) < when(b):
            bad(f"{where}: supersedes needs b strictly later")
        if holder != b:
            bad(f"{where}: supersedes holder must be b")
        stale.add(a)
        conflict_members.update((a, b))
    elif label == "contradiction":
        if holder not in (a, b, None):
            bad(f"{where}: contradiction holder must be a, b or null")
        if holder is not None:
            stale.add(b if holder == a else a)
        conflict_members.update((a, b))
    elif label == "compatible":
        if holder is not None:
            bad(f"{where}: compatible holder must be null")
    else:
        bad(f"{where}: unknown label {label}")

# ---------------------------------------------------------------- duplicates
dups = load("duplicates.jsonl")
group_of = {}
for n, g in enumerate(dups, 1):
    if not keys("duplicates", g, ["group", "kind"]):
        continue
    ids = g["group"]
    if len(ids) < 2 or len(set(ids)) != len(ids):
        bad(f"duplicates #{n}: needs 2+ distinct ids")
    if not all(mem_ok(f"duplicates #{n}", i) for i in ids):
        continue
    if len({M[i]["project"] for i in ids}) != 1:
        bad(f"duplicates #{n}: mixed projects")
    for i in ids:
        if i in group_of:
            bad(f"duplicates: {i} in two groups")
        group_of[i] = n
        if i in conflict_members:
            bad(f"duplicates: {i} is also in a supersedes/contradiction pair")
    same = {(M[i]["title"], M[i]["content"]) for i in ids}
    if g["kind"] == "exact" and len(same) != 1:
        bad(f"duplicates #{n}: exact group with differing title/content")
    elif g["kind"] == "near" and len(same) != len(ids):
        bad(f"duplicates #{n}: near group contains identical notes")
    elif g["kind"] not in ("exact", "near"):
        bad(f"duplicates #{n}: unknown kind {g['kind']}")

for p in pairs:
    a, b = p.get("a"), p.get("b")
    if a in group_of and group_of.get(a) == group_of.get(b):
        bad(f"pair {a}/{b}: both members of one duplicate group")

for p in load("dup_negatives.jsonl"):
    if not keys("dup_negatives", p, ["a", "b", "why"]):
        continue
    a, b = p["a"], p["b"]
    if mem_ok("dup_negatives", a) and mem_ok("dup_negatives", b):
        if M[a]["project"] != M[b]["project"]:
            bad(f"dup_negative {a}/{b}: different projects")
        if a in group_of and group_of.get(a) == group_of.get(b):
            bad(f"dup_negative {a}/{b}: same duplicate group")

# ---------------------------------------------------------------- not_counted
for p in load("not_counted.jsonl"):
    if not keys("not_counted", p, ["a", "b", "why"]):
        continue
    a, b = p["a"], p["b"]
    if mem_ok("not_counted", a) and mem_ok("not_counted", b):
        if M[a]["project"] != M[b]["project"]:
            bad(f"not_counted {a}/{b}: different projects")
        if frozenset((a, b)) in seen_pairs:
            bad(f"not_counted {a}/{b}: is labeled in pairs.jsonl")

# ---------------------------------------------------------------- queries
qids = set()
for q in load("queries.jsonl"):
    if not keys("queries", q, ["id", "query", "project", "relevant", "kind"]):
        continue
    qid = q["id"]
    if qid in qids:
        bad(f"{qid}: duplicate query id")
    qids.add(qid)
    if q["kind"] not in KINDS:
        bad(f"{qid}: unknown kind {q['kind']}")
    rel = q["relevant"]
    if not rel or len(set(rel)) != len(rel):
        bad(f"{qid}: relevant must be non-empty and distinct")
    for r in rel:
        if not mem_ok(qid, r):
            continue
        if M[r]["project"] != q["project"]:
            bad(f"{qid}: {r} belongs to another project")
        if r in stale:
            bad(f"{qid}: stale memory {r} listed as relevant")
        if r in group_of:
            whole = {i for i, n in group_of.items() if n == group_of[r]}
            if not whole <= set(rel):
                bad(f"{qid}: duplicate group of {r} not listed whole")
    if q["kind"] == "file":
        want = {
            i
            for i, m in M.items()
            if m["project"] == q["project"] and q["query"] in m["file_refs"] and i not in stale
        }
        if want != set(rel):
            bad(f"{qid}: file query relevant {sorted(rel)} != {sorted(want)}")
    if q["kind"] == "current-truth":
        replaced = {p["a"] for p in pairs if p.get("label") == "supersedes" and p.get("b") in rel}
        if not replaced:
            bad(f"{qid}: current-truth query without a superseded counterpart")

# ---------------------------------------------------------------- context
cids = set()
for c in load("context.jsonl"):
    if not keys("context", c, ["id", "project", "file", "needed", "must_not"], ["error", "branch"]):
        continue
    cid = c["id"]
    if cid in cids:
        bad(f"{cid}: duplicate context id")
    cids.add(cid)
    if not c["needed"]:
        bad(f"{cid}: nothing needed")
    if set(c["needed"]) & set(c["must_not"]):
        bad(f"{cid}: id both needed and must_not")
    for i in c["needed"] + c["must_not"]:
        if mem_ok(cid, i) and M[i]["project"] != c["project"]:
            bad(f"{cid}: {i} belongs to another project")
    for i in c["needed"]:
        if i in stale:
            bad(f"{cid}: stale memory {i} is needed")
    groups = [group_of[i] for i in c["needed"] if i in group_of]
    if len(groups) != len(set(groups)):
        bad(f"{cid}: more than one member of a duplicate group needed")
    if SOURCES.is_dir() and not (SOURCES / c["project"] / c["file"]).is_file():
        bad(f"{cid}: source file not saved under {SOURCES}/{c['project']}/{c['file']}")

# ---------------------------------------------------------------- temporal
tf = [
    "memory",
    "phrase",
    "expected_start",
    "expected_end",
    "question",
    "answer_date",
    "vague",
    "local_date",
    "utc_date",
]
for t in load("temporal.jsonl"):
    if not keys("temporal", t, tf) or not mem_ok("temporal", t["memory"]):
        continue
    mid = t["memory"]
    m = M[mid]
    if t["phrase"].lower() not in m["content"].lower():
        bad(f"temporal {mid}: phrase {t['phrase']!r} not in content")
    c = parse_ts(m["created_at"])
    local = c.date()
    if t["local_date"] != local.isoformat():
        bad(f"temporal {mid}: local_date should be {local}")
    if t["utc_date"] != c.astimezone(dt.UTC).date().isoformat():
        bad(f"temporal {mid}: utc_date wrong")
    exp = expected_range(t["phrase"], local)
    if exp is None:
        bad(f"temporal {mid}: phrase {t['phrase']!r} not in the phrase table")
        continue
    start, end, vague = exp
    if (t["expected_start"], t["expected_end"]) != (start.isoformat(), end.isoformat()):
        bad(f"temporal {mid}: expected {start}..{end}")
    if t["vague"] != vague:
        bad(f"temporal {mid}: vague should be {vague}")
    ans = start.isoformat() if start == end else None
    if t["answer_date"] != ans:
        bad(f"temporal {mid}: answer_date should be {ans}")

if problems:
    for p in problems:
        print("PROBLEM:", p)
    sys.exit(1)
print(
    f"ok: {len(M)} memories, {len(pairs)} pairs, {len(dups)} duplicate groups, "
    f"{len(qids)} queries, {len(cids)} context cases, {len(stale)} stale memories"
)
