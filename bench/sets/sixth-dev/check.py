"""Validate the sixth-dev set (standard library only). Exit 1 on any problem."""

import datetime as dt
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECTS = {"black", "hugo", "jest"}
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
QUERY_KINDS = {
    "current-truth",
    "error",
    "identifier",
    "paraphrase",
    "howto",
    "why",
    "file",
}
ONE_DAY = dt.timedelta(days=1)
problems: list[str] = []


def problem(msg: str) -> None:
    problems.append(msg)


def load(name: str) -> list[dict]:
    path = HERE / name
    rows = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        problem(f"{name}: cannot read ({exc})")
        return rows
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            problem(f"{name}:{n}: empty line")
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problem(f"{name}:{n}: bad JSON ({exc})")
            continue
        if not isinstance(obj, dict):
            problem(f"{name}:{n}: not an object")
            continue
        rows.append(obj)
    return rows


def keys_exact(name: str, row: dict, required: set, optional: set = frozenset()) -> None:
    have = set(row)
    missing = required - have
    extra = have - required - optional
    if missing:
        problem(f"{name}: {row.get('id', row)} missing {sorted(missing)}")
    if extra:
        problem(f"{name}: {row.get('id', row)} unexpected {sorted(extra)}")


def parse_ts(value: str) -> dt.datetime | None:
    try:
        ts = dt.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    if ts.tzinfo is None:
        return None
    return ts


def resolve(phrase: str, local: dt.date) -> tuple[dt.date, dt.date, bool] | None:
    """Resolve a relative-date phrase against the local calendar date."""
    same_day = ("today", "this morning", "this afternoon", "this evening", "tonight")
    if phrase in same_day:
        return local, local, False
    if phrase == "yesterday":
        return local - ONE_DAY, local - ONE_DAY, False
    if phrase == "the day before yesterday":
        return local - 2 * ONE_DAY, local - 2 * ONE_DAY, False
    m = re.fullmatch(r"(\d+|three|two) (days|weeks) ago", phrase)
    if m:
        words = {"two": 2, "three": 3}
        count = int(words.get(m.group(1), m.group(1)))
        days = count * (7 if m.group(2) == "weeks" else 1)
        day = local - dt.timedelta(days=days)
        return day, day, False
    weekdays = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ]
    m = re.fullmatch(r"(last|next) (\w+)", phrase.lower())
    if m and m.group(2) in weekdays:
        target = weekdays.index(m.group(2))
        step = -ONE_DAY if m.group(1) == "last" else ONE_DAY
        day = local + step
        while day.weekday() != target:
            day += step
        return day, day, False
    m = re.fullmatch(r"on the (\d+)(st|nd|rd|th)", phrase)
    if m:
        day = local
        while day.day != int(m.group(1)):
            day -= ONE_DAY
        return day, day, False
    monday = local - dt.timedelta(days=local.weekday())
    if phrase == "last week":
        return monday - 7 * ONE_DAY, monday - ONE_DAY, False
    if phrase == "over the weekend":
        day = local - ONE_DAY
        while day.weekday() != 6:
            day -= ONE_DAY
        return day - ONE_DAY, day, False
    if phrase == "a couple of days ago":
        return local - 3 * ONE_DAY, local - 2 * ONE_DAY, True
    if phrase == "the other day":
        return local - 7 * ONE_DAY, local - ONE_DAY, True
    if phrase == "the end of last month":
        last = local.replace(day=1) - ONE_DAY
        return last - 6 * ONE_DAY, last, True
    if phrase == "last sprint":
        return monday - 14 * ONE_DAY, monday - ONE_DAY, True
    return None


def main() -> int:
    mems = load("memories.jsonl")
    pairs = load("pairs.jsonl")
    dups = load("duplicates.jsonl")
    dnegs = load("dup_negatives.jsonl")
    queries = load("queries.jsonl")
    ctx = load("context.jsonl")
    temps = load("temporal.jsonl")
    not_counted = load("not_counted.jsonl")

    # memories
    by_id: dict[str, dict] = {}
    prev = None
    min_off = dt.timedelta(hours=-8)
    max_off = dt.timedelta(hours=10)
    mem_keys = {
        "id",
        "project",
        "type",
        "title",
        "content",
        "created_at",
        "tags",
        "file_refs",
    }
    for n, m in enumerate(mems, 1):
        keys_exact("memories.jsonl", m, mem_keys)
        mid = m.get("id")
        if mid != f"s6-m{n:03d}":
            problem(f"memories: line {n} has id {mid}, expected s6-m{n:03d}")
        if mid in by_id:
            problem(f"memories: duplicate id {mid}")
        by_id[mid] = m
        if m.get("project") not in PROJECTS:
            problem(f"{mid}: bad project {m.get('project')}")
        if m.get("type") not in TYPES:
            problem(f"{mid}: bad type {m.get('type')}")
        if not isinstance(m.get("title"), str) or not m["title"].strip():
            problem(f"{mid}: empty title")
        words = len(str(m.get("content", "")).split())
        if not 10 <= words <= 150:
            problem(f"{mid}: content has {words} words (want 10-150)")
        ts = parse_ts(m.get("created_at"))
        if ts is None:
            problem(f"{mid}: created_at must be ISO-8601 with offset")
        else:
            off = ts.utcoffset()
            if off is None or not min_off <= off <= max_off:
                problem(f"{mid}: offset {off} outside -08:00..+10:00")
            if prev is not None and ts < prev:
                problem(f"{mid}: not sorted by creation instant")
            prev = ts
        for field in ("tags", "file_refs"):
            val = m.get(field)
            if not isinstance(val, list) or not all(isinstance(x, str) and x for x in val):
                problem(f"{mid}: {field} must be a list of strings")

    def mem(mid: str, where: str) -> dict | None:
        if mid not in by_id:
            problem(f"{where}: unknown memory {mid}")
            return None
        return by_id[mid]

    def when(mid: str) -> dt.datetime:
        return parse_ts(by_id[mid]["created_at"]) or dt.datetime.min

    # pairs
    stale: set[str] = set()
    conflict_members: set[str] = set()
    seen_pairs: set[frozenset] = set()
    for p in pairs:
        keys_exact("pairs.jsonl", p, {"a", "b", "label", "holder", "why"})
        a, b, label, holder = p.get("a"), p.get("b"), p.get("label"), p.get("holder")
        where = f"pairs {a}/{b}"
        ma, mb = mem(a, where), mem(b, where)
        if ma is None or mb is None:
            continue
        key = frozenset((a, b))
        if key in seen_pairs:
            problem(f"{where}: listed twice")
        seen_pairs.add(key)
        if a == b:
            problem(f"{where}: a equals b")
        if ma["project"] != mb["project"]:
            problem(f"{where}: different projects")
        if not when(a) < when(b):
            problem(f"{where}: a must be strictly earlier than b")
        if label not in LABELS:
            problem(f"{where}: bad label {label}")
        if not p.get("why"):
            problem(f"{where}: empty why")
        if label == "supersedes":
            if holder != b:
                problem(f"{where}: supersedes holder must be b")
            stale.add(a)
            conflict_members.update((a, b))
        elif label == "contradiction":
            if holder not in (a, b, None):
                problem(f"{where}: contradiction holder must be a, b or null")
            if holder is not None:
                stale.add(b if holder == a else a)
            conflict_members.update((a, b))
        elif label == "compatible" and holder is not None:
            problem(f"{where}: compatible holder must be null")

    # duplicates
    group_of: dict[str, set] = {}
    for g in dups:
        keys_exact("duplicates.jsonl", g, {"group", "kind"})
        members = g.get("group") or []
        if len(members) < 2:
            problem(f"duplicates: group {members} too small")
        if g.get("kind") not in ("near", "exact"):
            problem(f"duplicates: bad kind {g.get('kind')}")
        found = [by_id[x] for x in members if mem(x, f"duplicates {members}")]
        if len({m["project"] for m in found}) > 1:
            problem(f"duplicates: group {members} spans projects")
        exact_texts = {(m["title"], m["content"]) for m in found}
        if g.get("kind") == "exact" and len(exact_texts) != 1:
            problem(f"duplicates: exact group {members} differs in title/content")
        for x in members:
            if x in group_of:
                problem(f"duplicates: {x} in more than one group")
            group_of[x] = set(members)
            if x in conflict_members:
                problem(f"duplicates: {x} is in a supersedes/contradiction pair")

    for p in dnegs:
        keys_exact("dup_negatives.jsonl", p, {"a", "b", "why"})
        a, b = p.get("a"), p.get("b")
        if mem(a, "dup_negatives") and mem(b, "dup_negatives"):
            if by_id[a]["project"] != by_id[b]["project"]:
                problem(f"dup_negatives {a}/{b}: different projects")
            if b in group_of.get(a, set()):
                problem(f"dup_negatives {a}/{b}: same duplicate group")

    # queries
    qids = set()
    for q in queries:
        keys_exact("queries.jsonl", q, {"id", "query", "project", "relevant", "kind"})
        qid = q.get("id")
        if qid in qids:
            problem(f"queries: duplicate id {qid}")
        qids.add(qid)
        if q.get("kind") not in QUERY_KINDS:
            problem(f"{qid}: bad kind {q.get('kind')}")
        if q.get("project") not in PROJECTS:
            problem(f"{qid}: bad project")
        rel = q.get("relevant") or []
        if not rel and q.get("kind") != "file":
            problem(f"{qid}: no relevant memories")
        for r in rel:
            m = mem(r, qid)
            if m is None:
                continue
            if m["project"] != q.get("project"):
                problem(f"{qid}: {r} belongs to another project")
            if r in stale:
                problem(f"{qid}: {r} is stale")
            missing = group_of.get(r, set()) - set(rel)
            if missing:
                problem(f"{qid}: duplicate group of {r} not listed whole {missing}")
        if q.get("kind") == "file":
            want = {
                m["id"]
                for m in mems
                if m["project"] == q.get("project")
                and q.get("query") in m["file_refs"]
                and m["id"] not in stale
            }
            if want != set(rel):
                problem(f"{qid}: file query relevant {sorted(rel)} != {sorted(want)}")
            if not want:
                problem(f"{qid}: file query has no memories")

    # context
    cids = set()
    for c in ctx:
        keys_exact(
            "context.jsonl",
            c,
            {"id", "project", "file", "needed", "must_not"},
            {"error", "branch"},
        )
        cid = c.get("id")
        if cid in cids:
            problem(f"context: duplicate id {cid}")
        cids.add(cid)
        needed = c.get("needed") or []
        must_not = c.get("must_not") or []
        if not needed:
            problem(f"{cid}: nothing needed")
        if set(needed) & set(must_not):
            problem(f"{cid}: id both needed and must_not")
        for x in needed + must_not:
            m = mem(x, cid)
            if m is not None and m["project"] != c.get("project"):
                problem(f"{cid}: {x} belongs to another project")
        for x in needed:
            if x in stale:
                problem(f"{cid}: needed {x} is stale")
        for x in must_not:
            for y in group_of.get(x, set()):
                if y in needed:
                    problem(f"{cid}: {x} must_not but its duplicate {y} needed")

    # temporal
    temp_keys = {
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
    for t in temps:
        keys_exact("temporal.jsonl", t, temp_keys)
        mid = t.get("memory")
        m = mem(mid, "temporal")
        if m is None:
            continue
        phrase = t.get("phrase", "")
        if phrase not in m["content"]:
            problem(f"temporal {mid}: phrase {phrase!r} not in content")
        ts = parse_ts(m["created_at"])
        if ts is None:
            continue
        local = ts.date()
        utc = ts.astimezone(dt.UTC).date()
        if t.get("local_date") != local.isoformat():
            problem(f"temporal {mid}: local_date should be {local}")
        if t.get("utc_date") != utc.isoformat():
            problem(f"temporal {mid}: utc_date should be {utc}")
        res = resolve(phrase, local)
        if res is None:
            problem(f"temporal {mid}: unknown phrase {phrase!r}")
            continue
        start, end, vague = res
        if (t.get("expected_start"), t.get("expected_end")) != (
            start.isoformat(),
            end.isoformat(),
        ):
            problem(f"temporal {mid}: expected {start}..{end}")
        if t.get("vague") is not vague:
            problem(f"temporal {mid}: vague should be {vague}")
        answer = start.isoformat() if start == end else None
        if t.get("answer_date") != answer:
            problem(f"temporal {mid}: answer_date should be {answer}")

    # not_counted
    for p in not_counted:
        keys_exact("not_counted.jsonl", p, {"a", "b", "why"})
        a, b = p.get("a"), p.get("b")
        if mem(a, "not_counted") and mem(b, "not_counted"):
            if by_id[a]["project"] != by_id[b]["project"]:
                problem(f"not_counted {a}/{b}: different projects")
            if frozenset((a, b)) in seen_pairs:
                problem(f"not_counted {a}/{b}: already labelled in pairs.jsonl")

    for msg in problems:
        print("PROBLEM:", msg)
    counts = {
        "memories": len(mems),
        "pairs": len(pairs),
        "duplicates": len(dups),
        "dup_negatives": len(dnegs),
        "queries": len(queries),
        "context": len(ctx),
        "temporal": len(temps),
        "not_counted": len(not_counted),
    }
    print(json.dumps(counts))
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
