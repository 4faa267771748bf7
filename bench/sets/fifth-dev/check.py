"""Validate the fifth-dev evaluation set (standard library only).

Run from anywhere: ``python check.py``. Prints every problem found and exits 1
if there is at least one, 0 otherwise.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

PROJECTS = {"flask", "tokio", "eslint"}
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
QUERY_KINDS = {"current-truth", "error", "identifier", "paraphrase", "howto", "why", "file"}
DUP_KINDS = {"near", "exact"}
MIN_OFFSET = dt.timedelta(hours=-8)
MAX_OFFSET = dt.timedelta(hours=10)
MEM_ID = re.compile(r"^f5-m\d{3}$")
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

problems: list[str] = []


def bad(msg: str) -> None:
    problems.append(msg)


def load(name: str) -> list[dict]:
    path = HERE / name
    rows = []
    if not path.exists():
        bad(f"{name}: missing")
        return rows
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                bad(f"{name}:{n}: empty line")
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                bad(f"{name}:{n}: invalid JSON ({e})")
                continue
            if not isinstance(row, dict):
                bad(f"{name}:{n}: not an object")
                continue
            rows.append(row)
    return rows


def exact_keys(name: str, row: dict, required: set[str], optional: set[str] = frozenset()) -> bool:
    keys = set(row)
    missing = required - keys
    extra = keys - required - set(optional)
    if missing or extra:
        rid = row.get("id", row)
        bad(f"{name}: {rid}: missing keys {sorted(missing)}, unexpected keys {sorted(extra)}")
        return False
    return True


def parse_date(s: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(s)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- memories
memories = load("memories.jsonl")
mem: dict[str, dict] = {}
instants: dict[str, dt.datetime] = {}
prev_instant = None
for i, m in enumerate(memories, 1):
    req = {"id", "project", "type", "title", "content", "created_at", "tags", "file_refs"}
    if not exact_keys("memories.jsonl", m, req):
        continue
    mid = m["id"]
    if mid != f"f5-m{i:03d}":
        bad(f"memories.jsonl: line {i} has id {mid}, expected f5-m{i:03d}")
    if mid in mem:
        bad(f"memories.jsonl: duplicate id {mid}")
    mem[mid] = m
    if m["project"] not in PROJECTS:
        bad(f"{mid}: unknown project {m['project']!r}")
    if m["type"] not in TYPES:
        bad(f"{mid}: unknown type {m['type']!r}")
    if not isinstance(m["title"], str) or not m["title"].strip():
        bad(f"{mid}: empty title")
    if not isinstance(m["content"], str):
        bad(f"{mid}: content is not a string")
    else:
        words = len(m["content"].split())
        if not 10 <= words <= 150:
            bad(f"{mid}: content has {words} words (want 10-150)")
    if not isinstance(m["tags"], list) or not all(isinstance(t, str) and t for t in m["tags"]):
        bad(f"{mid}: tags must be a list of non-empty strings")
    refs = m["file_refs"]
    if not isinstance(refs, list) or not all(isinstance(p, str) and p for p in refs):
        bad(f"{mid}: file_refs must be a list of non-empty strings")
    try:
        created = dt.datetime.fromisoformat(m["created_at"])
    except (TypeError, ValueError):
        bad(f"{mid}: created_at not ISO-8601: {m['created_at']!r}")
        continue
    off = created.utcoffset()
    if off is None:
        bad(f"{mid}: created_at has no UTC offset")
        continue
    if not MIN_OFFSET <= off <= MAX_OFFSET:
        bad(f"{mid}: offset {off} outside -08:00..+10:00")
    inst = created.astimezone(dt.UTC)
    instants[mid] = inst
    if prev_instant is not None and inst < prev_instant:
        bad(f"{mid}: memories.jsonl not sorted by UTC instant")
    prev_instant = inst

# --------------------------------------------------------------------------- pairs
pairs = load("pairs.jsonl")
seen_pairs: set[frozenset] = set()
stale: set[str] = set()
conflicting: set[frozenset] = set()
for p in pairs:
    if not exact_keys("pairs.jsonl", p, {"a", "b", "label", "holder", "why"}):
        continue
    a, b, label, holder = p["a"], p["b"], p["label"], p["holder"]
    tag = f"pair {a}/{b}"
    if a not in mem or b not in mem:
        bad(f"{tag}: unknown id")
        continue
    if a == b:
        bad(f"{tag}: a equals b")
    key = frozenset((a, b))
    if key in seen_pairs:
        bad(f"{tag}: listed twice")
    seen_pairs.add(key)
    if mem[a]["project"] != mem[b]["project"]:
        bad(f"{tag}: different projects")
    if not instants[a] < instants[b]:
        bad(f"{tag}: a is not strictly earlier than b")
    if label not in LABELS:
        bad(f"{tag}: unknown label {label!r}")
    if not isinstance(p["why"], str) or not p["why"].strip():
        bad(f"{tag}: empty why")
    if label == "supersedes":
        if holder != b:
            bad(f"{tag}: supersedes holder must be b")
        stale.add(a)
        conflicting.add(key)
    elif label == "contradiction":
        if holder not in (a, b, None):
            bad(f"{tag}: contradiction holder must be a, b or null")
        if holder is not None:
            stale.add(b if holder == a else a)
        conflicting.add(key)
    elif label == "compatible" and holder is not None:
        bad(f"{tag}: compatible holder must be null")

# --------------------------------------------------------------------------- not_counted
for n in load("not_counted.jsonl"):
    if not exact_keys("not_counted.jsonl", n, {"a", "b", "why"}):
        continue
    a, b = n["a"], n["b"]
    if a not in mem or b not in mem:
        bad(f"not_counted {a}/{b}: unknown id")
        continue
    if mem[a]["project"] != mem[b]["project"]:
        bad(f"not_counted {a}/{b}: different projects")
    if frozenset((a, b)) in seen_pairs:
        bad(f"not_counted {a}/{b}: already labelled in pairs.jsonl")
    if not isinstance(n["why"], str) or not n["why"].strip():
        bad(f"not_counted {a}/{b}: empty why")

# --------------------------------------------------------------------------- duplicates
group_of: dict[str, int] = {}
groups: list[list[str]] = []
for gi, d in enumerate(load("duplicates.jsonl")):
    if not exact_keys("duplicates.jsonl", d, {"group", "kind"}):
        continue
    g, kind = d["group"], d["kind"]
    if kind not in DUP_KINDS:
        bad(f"duplicate group {gi}: unknown kind {kind!r}")
    if not isinstance(g, list) or len(g) < 2:
        bad(f"duplicate group {gi}: needs at least two ids")
        continue
    groups.append(g)
    for x in g:
        if x not in mem:
            bad(f"duplicate group {gi}: unknown id {x}")
            continue
        if x in group_of:
            bad(f"duplicate group {gi}: {x} already in group {group_of[x]}")
        group_of[x] = gi
        if x in {y for k in conflicting for y in k}:
            bad(f"duplicate group {gi}: {x} is in a supersedes/contradiction pair")
    known = [x for x in g if x in mem]
    if len({mem[x]["project"] for x in known}) > 1:
        bad(f"duplicate group {gi}: mixed projects")
    if kind == "exact" and len({(mem[x]["title"], mem[x]["content"]) for x in known}) != 1:
        bad(f"duplicate group {gi}: exact group with differing title/content")
    if kind == "near" and len({mem[x]["content"] for x in known}) != len(known):
        bad(f"duplicate group {gi}: near group with identical content")


def group_members(x: str) -> set[str]:
    if x in group_of:
        return set(groups[group_of[x]])
    return {x}


for n in load("dup_negatives.jsonl"):
    if not exact_keys("dup_negatives.jsonl", n, {"a", "b", "why"}):
        continue
    a, b = n["a"], n["b"]
    if a not in mem or b not in mem:
        bad(f"dup_negative {a}/{b}: unknown id")
        continue
    if mem[a]["project"] != mem[b]["project"]:
        bad(f"dup_negative {a}/{b}: different projects")
    if a in group_of and group_of.get(b) == group_of[a]:
        bad(f"dup_negative {a}/{b}: both in the same duplicate group")

# --------------------------------------------------------------------------- queries
qids = set()
for q in load("queries.jsonl"):
    if not exact_keys("queries.jsonl", q, {"id", "query", "project", "relevant", "kind"}):
        continue
    qid = q["id"]
    if qid in qids:
        bad(f"{qid}: duplicate query id")
    qids.add(qid)
    if q["project"] not in PROJECTS:
        bad(f"{qid}: unknown project")
    if q["kind"] not in QUERY_KINDS:
        bad(f"{qid}: unknown kind {q['kind']!r}")
    if not isinstance(q["query"], str) or not q["query"].strip():
        bad(f"{qid}: empty query")
    rel = q["relevant"]
    if not isinstance(rel, list) or not rel:
        bad(f"{qid}: relevant must be a non-empty list")
        continue
    if len(set(rel)) != len(rel):
        bad(f"{qid}: repeated ids in relevant")
    for x in rel:
        if x not in mem:
            bad(f"{qid}: unknown id {x}")
            continue
        if mem[x]["project"] != q["project"]:
            bad(f"{qid}: {x} belongs to another project")
        if x in stale:
            bad(f"{qid}: stale memory {x} listed as relevant")
        missing = group_members(x) - set(rel)
        if missing:
            bad(f"{qid}: duplicate group of {x} not listed whole (missing {sorted(missing)})")
    if q["kind"] == "file":
        want = {
            mid
            for mid, m in mem.items()
            if m["project"] == q["project"] and q["query"] in m["file_refs"] and mid not in stale
        }
        if set(rel) != want:
            bad(f"{qid}: file query relevant {sorted(rel)} != non-stale refs {sorted(want)}")

# --------------------------------------------------------------------------- context
cids = set()
for c in load("context.jsonl"):
    creq = {"id", "project", "file", "needed", "must_not"}
    if not exact_keys("context.jsonl", c, creq, {"error", "branch"}):
        continue
    cid = c["id"]
    if cid in cids:
        bad(f"{cid}: duplicate context id")
    cids.add(cid)
    if c["project"] not in PROJECTS:
        bad(f"{cid}: unknown project")
    if not isinstance(c["file"], str) or not c["file"]:
        bad(f"{cid}: empty file")
    for opt in ("error", "branch"):
        if opt in c and (not isinstance(c[opt], str) or not c[opt].strip()):
            bad(f"{cid}: {opt} must be a non-empty string")
    needed, must_not = c["needed"], c["must_not"]
    if not isinstance(needed, list) or not needed or not isinstance(must_not, list):
        bad(f"{cid}: needed must be a non-empty list and must_not a list")
        continue
    for x in needed + must_not:
        if x not in mem:
            bad(f"{cid}: unknown id {x}")
        elif mem[x]["project"] != c["project"]:
            bad(f"{cid}: {x} belongs to another project")
    for x in needed:
        if x in stale:
            bad(f"{cid}: stale memory {x} is needed")
    if set(needed) & set(must_not):
        bad(f"{cid}: ids in both needed and must_not")
    for gi, g in enumerate(groups):
        if len(set(g) & set(needed)) > 1:
            bad(f"{cid}: more than one member of duplicate group {gi} in needed")
    for x in must_not:
        if x in mem and group_members(x) & set(needed):
            bad(f"{cid}: must_not {x} is a duplicate of a needed memory")

# --------------------------------------------------------------------------- temporal
FIXED_BACK = {
    "yesterday": 1,
    "the day before yesterday": 2,
    "3 days ago": 3,
    "three days ago": 3,
    "two weeks ago": 14,
}
SAME_DAY = {"today", "this morning", "this afternoon", "this evening", "tonight"}


def resolve(phrase: str, local: dt.date) -> tuple[dt.date, dt.date, bool] | None:
    p = phrase.lower()
    if p in SAME_DAY:
        return local, local, False
    if p in FIXED_BACK:
        d = local - dt.timedelta(days=FIXED_BACK[p])
        return d, d, False
    if p.startswith("last ") and p[5:] in WEEKDAYS:
        wd = WEEKDAYS.index(p[5:])
        back = (local.weekday() - wd) % 7 or 7
        d = local - dt.timedelta(days=back)
        return d, d, False
    if p.startswith("next ") and p[5:] in WEEKDAYS:
        wd = WEEKDAYS.index(p[5:])
        ahead = (wd - local.weekday()) % 7 or 7
        d = local + dt.timedelta(days=ahead)
        return d, d, False
    m = re.fullmatch(r"on the (\d+)(st|nd|rd|th)", p)
    if m:
        day = int(m.group(1))
        y, mo = local.year, local.month
        while True:
            try:
                d = dt.date(y, mo, day)
            except ValueError:
                d = None
            if d is not None and d <= local:
                return d, d, False
            mo -= 1
            if mo == 0:
                y, mo = y - 1, 12
    monday = local - dt.timedelta(days=local.weekday())
    if p == "last week":
        return monday - dt.timedelta(days=7), monday - dt.timedelta(days=1), False
    if p == "over the weekend":
        back = (local.weekday() - 6) % 7 or 7
        sunday = local - dt.timedelta(days=back)
        return sunday - dt.timedelta(days=1), sunday, False
    if p == "a couple of days ago":
        return local - dt.timedelta(days=3), local - dt.timedelta(days=2), True
    if p == "the other day":
        return local - dt.timedelta(days=7), local - dt.timedelta(days=1), True
    if p == "the end of last month":
        first = local.replace(day=1)
        last = first - dt.timedelta(days=1)
        return last - dt.timedelta(days=6), last, True
    if p == "last sprint":
        return monday - dt.timedelta(days=14), monday - dt.timedelta(days=1), True
    return None


treq = {
    "memory",
    "phrase",
    "expected_start",
    "expected_end",
    "question",
    "answer_date",
    "vague",
    "local_date",
    "utc_date",
}
for t in load("temporal.jsonl"):
    if not exact_keys("temporal.jsonl", t, treq):
        continue
    x = t["memory"]
    tag = f"temporal {x}/{t['phrase']!r}"
    if x not in mem:
        bad(f"{tag}: unknown memory")
        continue
    if t["phrase"].lower() not in mem[x]["content"].lower():
        bad(f"{tag}: phrase does not occur in content")
    created = dt.datetime.fromisoformat(mem[x]["created_at"])
    if t["local_date"] != created.date().isoformat():
        bad(f"{tag}: local_date should be {created.date().isoformat()}")
    utc = created.astimezone(dt.UTC).date().isoformat()
    if t["utc_date"] != utc:
        bad(f"{tag}: utc_date should be {utc}")
    start, end = parse_date(t["expected_start"]), parse_date(t["expected_end"])
    if start is None or end is None or start > end:
        bad(f"{tag}: bad expected range")
        continue
    want_answer = t["expected_start"] if start == end else None
    if t["answer_date"] != want_answer:
        bad(f"{tag}: answer_date should be {want_answer}")
    r = resolve(t["phrase"], created.date())
    if r is None:
        bad(f"{tag}: phrase not in the phrase table")
        continue
    if (r[0], r[1]) != (start, end):
        bad(f"{tag}: expected {r[0]}..{r[1]}, file says {start}..{end}")
    if t["vague"] is not r[2]:
        bad(f"{tag}: vague should be {r[2]}")
    if not isinstance(t["question"], str) or not t["question"].strip():
        bad(f"{tag}: empty question")

# --------------------------------------------------------------------------- report
if problems:
    for p in problems:
        print("PROBLEM:", p)
    print(f"{len(problems)} problem(s)")
    sys.exit(1)
print(
    f"ok: {len(memories)} memories, {len(pairs)} pairs, {len(groups)} duplicate groups, "
    f"{len(qids)} queries, {len(cids)} context cases"
)
