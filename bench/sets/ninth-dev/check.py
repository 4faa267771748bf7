"""Validate the ninth-dev set (standard library only).

Usage: python check.py   (exits 1 on any problem, prints a summary otherwise)
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = Path("/work/main/bench/.work/ninth-dev-sources")

PROJECTS = {"pip", "actix-web", "vitest"}
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
MIN_OFFSET, MAX_OFFSET = timedelta(hours=-8), timedelta(hours=10)
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5}
MEMORY_FIELDS = {"id", "project", "type", "title", "content", "created_at", "tags", "file_refs"}
CONTEXT_FIELDS = {"id", "project", "file", "needed", "must_not"}
TEMPORAL_FIELDS = {
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

problems: list[str] = []


def bad(msg: str) -> None:
    problems.append(msg)


def load(name: str) -> list[dict]:
    path = HERE / name
    rows = []
    if not path.exists():
        bad(f"{name}: missing")
        return rows
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                bad(f"{name}:{n}: blank line")
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                bad(f"{name}:{n}: invalid JSON ({exc})")
                continue
            if not isinstance(obj, dict):
                bad(f"{name}:{n}: not an object")
                continue
            rows.append(obj)
    return rows


def check_keys(
    name: str, row: dict, required: set[str], optional: frozenset[str] = frozenset()
) -> bool:
    keys = set(row)
    missing = required - keys
    extra = keys - required - optional
    if missing:
        bad(f"{name}: {row.get('id', row)}: missing fields {sorted(missing)}")
    if extra:
        bad(f"{name}: {row.get('id', row)}: unexpected fields {sorted(extra)}")
    return not missing


def resolve_phrase(phrase: str, d: date) -> tuple[date, date, bool] | None:
    """Resolve a phrase from the README table against the local calendar date."""
    p = phrase.lower().strip()
    if p in {"today", "this morning", "this afternoon", "this evening", "tonight"}:
        return d, d, False
    if p == "yesterday":
        return d - timedelta(1), d - timedelta(1), False
    if p == "the day before yesterday":
        return d - timedelta(2), d - timedelta(2), False
    m = re.fullmatch(r"(\d+|two|three|four|five) (days|weeks) ago", p)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else NUMBERS[m.group(1)]
        k = n * 7 if m.group(2) == "weeks" else n
        return d - timedelta(k), d - timedelta(k), False
    m = re.fullmatch(r"(last|next) (\w+)", p)
    if m and m.group(2) in WEEKDAYS:
        w = WEEKDAYS.index(m.group(2))
        if m.group(1) == "last":
            back = (d.weekday() - w) % 7 or 7
            return d - timedelta(back), d - timedelta(back), False
        fwd = (w - d.weekday()) % 7 or 7
        return d + timedelta(fwd), d + timedelta(fwd), False
    m = re.fullmatch(r"on the (\d{1,2})(st|nd|rd|th)", p)
    if m:
        day = int(m.group(1))
        x = d
        for _ in range(400):
            if x.day == day:
                return x, x, False
            x -= timedelta(1)
        return None
    if p == "last week":
        mon = d - timedelta(d.weekday() + 7)
        return mon, mon + timedelta(6), False
    if p == "over the weekend":
        x = d - timedelta(1)
        while x.weekday() != 6:
            x -= timedelta(1)
        return x - timedelta(1), x, False
    if p == "a couple of days ago":
        return d - timedelta(3), d - timedelta(2), True
    if p == "the other day":
        return d - timedelta(7), d - timedelta(1), True
    if p == "the end of last month":
        last = d.replace(day=1) - timedelta(1)
        return last - timedelta(6), last, True
    if p == "last sprint":
        mon = d - timedelta(d.weekday())
        return mon - timedelta(14), mon - timedelta(1), True
    return None


def main() -> int:
    mems = load("memories.jsonl")
    pairs = load("pairs.jsonl")
    dups = load("duplicates.jsonl")
    dupneg = load("dup_negatives.jsonl")
    queries = load("queries.jsonl")
    context = load("context.jsonl")
    temporal = load("temporal.jsonl")
    notc = load("not_counted.jsonl")
    if not (HERE / "README.md").exists():
        bad("README.md: missing")

    # ---------------------------------------------------------------- memories
    by_id: dict[str, dict] = {}
    instants: dict[str, datetime] = {}
    prev = None
    for n, m in enumerate(mems, 1):
        if not check_keys("memories", m, MEMORY_FIELDS):
            continue
        mid = m["id"]
        if mid != f"s9-m{n:03d}":
            bad(f"memories: line {n} has id {mid}, expected s9-m{n:03d}")
        if mid in by_id:
            bad(f"memories: duplicate id {mid}")
        by_id[mid] = m
        if m["project"] not in PROJECTS:
            bad(f"{mid}: unknown project {m['project']!r}")
        if m["type"] not in TYPES:
            bad(f"{mid}: unknown type {m['type']!r}")
        if not isinstance(m["title"], str) or not m["title"].strip():
            bad(f"{mid}: empty title")
        if not isinstance(m["content"], str):
            bad(f"{mid}: content is not a string")
        else:
            wc = len(m["content"].split())
            if not 10 <= wc <= 150:
                bad(f"{mid}: content has {wc} words (want 10-150)")
        for field in ("tags", "file_refs"):
            v = m[field]
            if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
                bad(f"{mid}: {field} must be a list of non-empty strings")
        try:
            dt = datetime.fromisoformat(m["created_at"])
        except (TypeError, ValueError):
            bad(f"{mid}: bad created_at {m['created_at']!r}")
            continue
        off = dt.utcoffset()
        if off is None:
            bad(f"{mid}: created_at has no UTC offset")
            continue
        if not MIN_OFFSET <= off <= MAX_OFFSET:
            bad(f"{mid}: offset {off} outside -08:00..+10:00")
        inst = dt.astimezone(UTC)
        instants[mid] = inst
        if prev is not None and inst < prev:
            bad(f"{mid}: not sorted by UTC instant")
        prev = inst

    def exists(i: str, where: str) -> bool:
        if i not in by_id:
            bad(f"{where}: unknown memory id {i!r}")
            return False
        return True

    def proj(i: str) -> str | None:
        return by_id[i]["project"] if i in by_id else None

    # ---------------------------------------------------------------- pairs
    labelled: dict[frozenset, str] = {}
    stale: set[str] = set()
    sup_con_members: set[str] = set()
    for p in pairs:
        if not check_keys("pairs", p, {"a", "b", "label", "holder", "why"}):
            continue
        a, b, label, holder = p["a"], p["b"], p["label"], p["holder"]
        where = f"pair {a}/{b}"
        if not (exists(a, where) and exists(b, where)):
            continue
        if a == b:
            bad(f"{where}: a == b")
        if label not in LABELS:
            bad(f"{where}: unknown label {label!r}")
        if proj(a) != proj(b):
            bad(f"{where}: different projects")
        if a in instants and b in instants and not instants[a] < instants[b]:
            bad(f"{where}: a is not strictly earlier than b")
        if not isinstance(p["why"], str) or not p["why"].strip():
            bad(f"{where}: empty why")
        key = frozenset((a, b))
        if key in labelled:
            bad(f"{where}: labelled twice")
        labelled[key] = label
        if label == "supersedes":
            if holder != b:
                bad(f"{where}: supersedes holder must be b")
            stale.add(a)
            sup_con_members |= {a, b}
        elif label == "contradiction":
            if holder not in (a, b, None):
                bad(f"{where}: contradiction holder must be a, b or null")
            if holder is not None:
                stale.add(a if holder == b else b)
            sup_con_members |= {a, b}
        elif label == "compatible" and holder is not None:
            bad(f"{where}: compatible holder must be null")

    # ---------------------------------------------------------------- duplicates
    group_of: dict[str, tuple[str, ...]] = {}
    for g in dups:
        if not check_keys("duplicates", g, {"group", "kind"}):
            continue
        ids = g["group"]
        if not isinstance(ids, list) or len(ids) < 2:
            bad(f"duplicates: group {ids} needs at least two ids")
            continue
        if not all(exists(i, "duplicates") for i in ids):
            continue
        if len({proj(i) for i in ids}) != 1:
            bad(f"duplicates: group {ids} spans projects")
        if g["kind"] not in ("near", "exact"):
            bad(f"duplicates: group {ids} unknown kind {g['kind']!r}")
        same = len({(by_id[i]["title"], by_id[i]["content"]) for i in ids}) == 1
        if g["kind"] == "exact" and not same:
            bad(f"duplicates: exact group {ids} differs in title/content")
        if g["kind"] == "near" and same:
            bad(f"duplicates: near group {ids} is actually identical")
        for i in ids:
            if i in group_of:
                bad(f"duplicates: {i} is in two groups")
            group_of[i] = tuple(ids)
            if i in sup_con_members:
                bad(f"duplicates: {i} is also in a supersedes/contradiction pair")
    for p in dupneg:
        if not check_keys("dup_negatives", p, {"a", "b", "why"}):
            continue
        if not (exists(p["a"], "dup_negatives") and exists(p["b"], "dup_negatives")):
            continue
        if proj(p["a"]) != proj(p["b"]):
            bad(f"dup_negatives {p['a']}/{p['b']}: different projects")
        if group_of.get(p["a"]) is not None and group_of.get(p["a"]) == group_of.get(p["b"]):
            bad(f"dup_negatives {p['a']}/{p['b']}: both in one duplicate group")

    # ---------------------------------------------------------------- not counted
    for p in notc:
        if not check_keys("not_counted", p, {"a", "b", "why"}):
            continue
        a, b = p["a"], p["b"]
        if not (exists(a, "not_counted") and exists(b, "not_counted")):
            continue
        if proj(a) != proj(b):
            bad(f"not_counted {a}/{b}: different projects")
        if frozenset((a, b)) in labelled:
            bad(f"not_counted {a}/{b}: pair is labelled in pairs.jsonl")

    # ---------------------------------------------------------------- queries
    for n, q in enumerate(queries, 1):
        if not check_keys("queries", q, {"id", "query", "project", "relevant", "kind"}):
            continue
        qid = q["id"]
        if qid != f"s9-q{n:03d}":
            bad(f"queries: line {n} has id {qid}, expected s9-q{n:03d}")
        if q["kind"] not in QUERY_KINDS:
            bad(f"{qid}: unknown kind {q['kind']!r}")
        if q["project"] not in PROJECTS:
            bad(f"{qid}: unknown project")
        rel = q["relevant"]
        if not isinstance(rel, list) or not rel:
            bad(f"{qid}: relevant must be a non-empty list")
            continue
        if len(set(rel)) != len(rel):
            bad(f"{qid}: repeated ids in relevant")
        for i in rel:
            if not exists(i, qid):
                continue
            if proj(i) != q["project"]:
                bad(f"{qid}: {i} belongs to another project")
            if i in stale:
                bad(f"{qid}: stale memory {i} listed as relevant")
            for j in group_of.get(i, ()):
                if j not in rel:
                    bad(f"{qid}: duplicate group of {i} not listed whole (missing {j})")
        if q["kind"] == "file":
            want = {
                m["id"]
                for m in mems
                if m.get("project") == q["project"]
                and q["query"] in m.get("file_refs", [])
                and m["id"] not in stale
            }
            if set(rel) != want:
                bad(
                    f"{qid}: file query relevant {sorted(rel)} != "
                    f"non-stale file_refs holders {sorted(want)}"
                )

    # ---------------------------------------------------------------- context
    src_dir_exists = SOURCES.is_dir()
    for n, c in enumerate(context, 1):
        if not check_keys("context", c, CONTEXT_FIELDS, frozenset({"error", "branch"})):
            continue
        cid = c["id"]
        if cid != f"s9-c{n:03d}":
            bad(f"context: line {n} has id {cid}, expected s9-c{n:03d}")
        if c["project"] not in PROJECTS:
            bad(f"{cid}: unknown project")
        if not c["needed"]:
            bad(f"{cid}: needed is empty")
        for field in ("needed", "must_not"):
            for i in c[field]:
                if exists(i, cid) and proj(i) != c["project"]:
                    bad(f"{cid}: {field} {i} belongs to another project")
        for i in c["needed"]:
            if i in stale:
                bad(f"{cid}: stale memory {i} is needed")
        if set(c["needed"]) & set(c["must_not"]):
            bad(f"{cid}: ids in both needed and must_not")
        for i in c["needed"]:
            for j in group_of.get(i, ()):
                if j != i and j in c["needed"]:
                    bad(f"{cid}: more than one member of a duplicate group is needed ({i}, {j})")
                if j in c["must_not"]:
                    bad(f"{cid}: duplicate {j} of needed {i} is in must_not")
        if "error" in c and (not isinstance(c["error"], str) or not c["error"].strip()):
            bad(f"{cid}: empty error")
        if src_dir_exists and not (SOURCES / c["project"] / c["file"]).is_file():
            bad(f"{cid}: source file {c['project']}/{c['file']} not found under {SOURCES}")

    # ---------------------------------------------------------------- temporal
    for t in temporal:
        if not check_keys("temporal", t, TEMPORAL_FIELDS):
            continue
        mid = t["memory"]
        if not exists(mid, "temporal"):
            continue
        m = by_id[mid]
        where = f"temporal {mid} {t['phrase']!r}"
        if t["phrase"] not in m["content"]:
            bad(f"{where}: phrase not in content")
        dt = datetime.fromisoformat(m["created_at"])
        local = dt.date()
        utcd = dt.astimezone(UTC).date()
        if t["local_date"] != local.isoformat():
            bad(f"{where}: local_date {t['local_date']} != {local}")
        if t["utc_date"] != utcd.isoformat():
            bad(f"{where}: utc_date {t['utc_date']} != {utcd}")
        res = resolve_phrase(t["phrase"], local)
        if res is None:
            bad(f"{where}: phrase not in the README table")
            continue
        s, e, vague = res
        if (t["expected_start"], t["expected_end"]) != (s.isoformat(), e.isoformat()):
            got = f"{t['expected_start']}..{t['expected_end']}"
            bad(f"{where}: expected {got}, table gives {s}..{e}")
        if t["vague"] is not vague:
            bad(f"{where}: vague should be {vague}")
        want_answer = s.isoformat() if s == e else None
        if t["answer_date"] != want_answer:
            bad(f"{where}: answer_date should be {want_answer}")
        if not isinstance(t["question"], str) or not t["question"].strip():
            bad(f"{where}: empty question")

    # ---------------------------------------------------------------- summary
    if problems:
        for p in problems:
            print("PROBLEM:", p)
        print(f"{len(problems)} problem(s)")
        return 1
    labels = Counter(p["label"] for p in pairs)
    kinds = Counter(q["kind"] for q in queries)
    per_proj = Counter(m["project"] for m in mems)
    differs = sum(1 for t in temporal if t["local_date"] != t["utc_date"])
    print("ninth-dev: OK")
    print(f"  memories {len(mems)} " + ", ".join(f"{k} {v}" for k, v in sorted(per_proj.items())))
    print(f"  memories without file_refs {sum(1 for m in mems if not m['file_refs'])}")
    print(f"  pairs {len(pairs)} " + ", ".join(f"{k} {v}" for k, v in sorted(labels.items())))
    print(f"  stale memories {len(stale)}")
    exact = sum(1 for g in dups if g["kind"] == "exact")
    print(f"  duplicates {len(dups)} groups ({exact} exact), dup_negatives {len(dupneg)}")
    print(f"  not_counted {len(notc)}")
    print(f"  queries {len(queries)} " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(f"  context {len(context)} ({sum(1 for c in context if 'error' in c)} with error)")
    vague_n = sum(1 for t in temporal if t["vague"])
    print(f"  temporal {len(temporal)} ({vague_n} vague, {differs} local != UTC)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
