"""Validate the eighth-dev set (standard library only). Exits 1 on any problem."""

import json
import os
import re
import sys
from collections import Counter
from datetime import UTC, date, datetime, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.normpath(os.path.join(HERE, "..", "..", ".work", "eighth-dev-sources"))
PROJECTS = {"celery", "reqwest", "esbuild"}
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
FIELDS = {
    "memories.jsonl": (
        {"id", "project", "type", "title", "content", "created_at", "tags", "file_refs"},
        set(),
    ),
    "pairs.jsonl": ({"a", "b", "label", "holder", "why"}, set()),
    "duplicates.jsonl": ({"group", "kind"}, set()),
    "dup_negatives.jsonl": ({"a", "b", "why"}, set()),
    "queries.jsonl": ({"id", "query", "project", "relevant", "kind"}, set()),
    "context.jsonl": ({"id", "project", "file", "needed", "must_not"}, {"error", "branch"}),
    "temporal.jsonl": (
        {
            "memory",
            "phrase",
            "expected_start",
            "expected_end",
            "question",
            "answer_date",
            "vague",
            "local_date",
            "utc_date",
        },
        set(),
    ),
    "not_counted.jsonl": ({"a", "b", "why"}, set()),
}
OFFSET_RE = re.compile(r"([+-])(\d\d):(\d\d)$")
PROBLEMS = []


def bad(msg):
    PROBLEMS.append(msg)


def load(name):
    path = os.path.join(HERE, name)
    if not os.path.exists(path):
        bad(f"{name}: missing")
        return []
    req, opt = FIELDS[name]
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                bad(f"{name}:{n}: blank line")
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                bad(f"{name}:{n}: invalid JSON ({e})")
                continue
            keys = set(row)
            if not req <= keys or not keys <= req | opt:
                bad(
                    f"{name}:{n}: fields {sorted(keys)} "
                    f"(need {sorted(req)}, optional {sorted(opt)})"
                )
            rows.append(row)
    return rows


def resolve(phrase, d):
    """Return (start, end, vague) for a phrase resolved against local date d."""
    p = phrase.lower()
    same_day = ("today", "this morning", "this afternoon", "this evening", "tonight")
    days = {
        "yesterday": 1,
        "the day before yesterday": 2,
        "3 days ago": 3,
        "three days ago": 3,
        "two weeks ago": 14,
    }
    weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    if p in same_day:
        return d, d, False
    if p in days:
        x = d - timedelta(days[p])
        return x, x, False
    if p.startswith("last ") and p[5:] in weekdays:
        back = (d.weekday() - weekdays.index(p[5:])) % 7 or 7
        x = d - timedelta(back)
        return x, x, False
    if p.startswith("next ") and p[5:] in weekdays:
        fwd = (weekdays.index(p[5:]) - d.weekday()) % 7 or 7
        x = d + timedelta(fwd)
        return x, x, False
    m = re.fullmatch(r"on the (\d+)(st|nd|rd|th)", p)
    if m:
        day = int(m.group(1))
        x = d
        while x.day != day:
            x -= timedelta(1)
        return x, x, False
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


def main():
    mems = load("memories.jsonl")
    pairs = load("pairs.jsonl")
    dups = load("duplicates.jsonl")
    dupneg = load("dup_negatives.jsonl")
    queries = load("queries.jsonl")
    context = load("context.jsonl")
    temporal = load("temporal.jsonl")
    notc = load("not_counted.jsonl")

    # ---- memories
    by_id = {}
    inst = {}
    prev = None
    for n, m in enumerate(mems, 1):
        mid = m.get("id")
        if mid != f"s8-m{n:03d}":
            bad(f"memory #{n}: id {mid!r}, expected s8-m{n:03d}")
        by_id[mid] = m
        if m.get("project") not in PROJECTS:
            bad(f"{mid}: project {m.get('project')!r}")
        if m.get("type") not in TYPES:
            bad(f"{mid}: type {m.get('type')!r}")
        if not isinstance(m.get("title"), str) or not m["title"].strip():
            bad(f"{mid}: empty title")
        content = m.get("content", "")
        wc = len(str(content).split())
        if not 10 <= wc <= 150:
            bad(f"{mid}: content has {wc} words")
        if not isinstance(m.get("tags"), list) or not all(isinstance(t, str) for t in m["tags"]):
            bad(f"{mid}: tags must be a list of strings")
        refs = m.get("file_refs")
        if not isinstance(refs, list) or not all(isinstance(t, str) and t for t in refs):
            bad(f"{mid}: file_refs must be a list of strings")
        ca = str(m.get("created_at", ""))
        om = OFFSET_RE.search(ca)
        try:
            dt = datetime.fromisoformat(ca)
        except ValueError:
            bad(f"{mid}: created_at {ca!r} not ISO-8601")
            continue
        if not om or dt.tzinfo is None:
            bad(f"{mid}: created_at needs an explicit +HH:MM offset")
            continue
        off = (1 if om.group(1) == "+" else -1) * (int(om.group(2)) * 60 + int(om.group(3)))
        if not -8 * 60 <= off <= 10 * 60:
            bad(f"{mid}: offset {om.group(0)} outside -08:00..+10:00")
        u = dt.astimezone(UTC)
        inst[mid] = u
        if prev is not None and u < prev:
            bad(f"{mid}: not sorted by UTC instant")
        prev = u

    def proj(i):
        return by_id[i]["project"] if i in by_id else None

    # ---- pairs
    labelled = {}
    for p in pairs:
        a, b = p.get("a"), p.get("b")
        tag = f"pair {a}/{b}"
        if a not in by_id or b not in by_id:
            bad(f"{tag}: unknown id")
            continue
        if proj(a) != proj(b):
            bad(f"{tag}: different projects")
        if not inst[a] < inst[b]:
            bad(f"{tag}: a must be strictly earlier than b")
        key = frozenset((a, b))
        if key in labelled:
            bad(f"{tag}: labelled twice")
        labelled[key] = p.get("label")
        lab, h = p.get("label"), p.get("holder")
        if lab not in LABELS:
            bad(f"{tag}: label {lab!r}")
        elif lab == "supersedes" and h != b:
            bad(f"{tag}: supersedes holder must be b")
        elif lab == "contradiction" and h not in (a, b, None):
            bad(f"{tag}: contradiction holder must be a, b or null")
        elif lab == "compatible" and h is not None:
            bad(f"{tag}: compatible holder must be null")
        if not str(p.get("why", "")).strip():
            bad(f"{tag}: empty why")
    stale = set()
    conflicted = set()
    for p in pairs:
        if p.get("label") == "supersedes":
            stale.add(p["a"])
        if p.get("label") == "contradiction" and p.get("holder"):
            stale.add(p["b"] if p["holder"] == p["a"] else p["a"])
        if p.get("label") in ("supersedes", "contradiction"):
            conflicted.update((p["a"], p["b"]))

    # ---- not counted
    for p in notc:
        a, b = p.get("a"), p.get("b")
        if a not in by_id or b not in by_id:
            bad(f"not_counted {a}/{b}: unknown id")
            continue
        if proj(a) != proj(b):
            bad(f"not_counted {a}/{b}: different projects")
        if frozenset((a, b)) in labelled:
            bad(f"not_counted {a}/{b}: pair is labelled in pairs.jsonl")
        if not (a in stale or b in stale):
            bad(f"not_counted {a}/{b}: neither side is stale")

    # ---- duplicates
    group_of = {}
    groups = []
    for g in dups:
        ids = g.get("group", [])
        kind = g.get("kind")
        if kind not in ("near", "exact"):
            bad(f"duplicates {ids}: kind {kind!r}")
        if len(ids) < 2 or len(set(ids)) != len(ids):
            bad(f"duplicates {ids}: need two or more distinct ids")
        if any(i not in by_id for i in ids):
            bad(f"duplicates {ids}: unknown id")
            continue
        if len({proj(i) for i in ids}) != 1:
            bad(f"duplicates {ids}: mixed projects")
        for i in ids:
            if i in group_of:
                bad(f"duplicates: {i} in more than one group")
            group_of[i] = len(groups)
            if i in conflicted:
                bad(f"duplicates: {i} is in a supersedes/contradiction pair")
        tc = {(by_id[i]["title"], by_id[i]["content"]) for i in ids}
        if kind == "exact" and len(tc) != 1:
            bad(f"duplicates {ids}: exact group must have identical title and content")
        if kind == "near" and len({by_id[i]["content"] for i in ids}) != len(ids):
            bad(f"duplicates {ids}: near group has identical contents")
        groups.append(set(ids))
    for p in dupneg:
        a, b = p.get("a"), p.get("b")
        if a not in by_id or b not in by_id:
            bad(f"dup_negative {a}/{b}: unknown id")
            continue
        if proj(a) != proj(b):
            bad(f"dup_negative {a}/{b}: different projects")
        if a in group_of and group_of.get(a) == group_of.get(b):
            bad(f"dup_negative {a}/{b}: both in one duplicate group")

    # ---- queries
    qkinds = Counter()
    for n, q in enumerate(queries, 1):
        qid = q.get("id")
        if qid != f"s8-q{n:03d}":
            bad(f"query #{n}: id {qid!r}")
        kind = q.get("kind")
        qkinds[kind] += 1
        if kind not in QKINDS:
            bad(f"{qid}: kind {kind!r}")
        if q.get("project") not in PROJECTS:
            bad(f"{qid}: project {q.get('project')!r}")
        rel = q.get("relevant", [])
        if not rel or len(set(rel)) != len(rel):
            bad(f"{qid}: relevant must be non-empty and distinct")
        for i in rel:
            if i not in by_id:
                bad(f"{qid}: unknown id {i}")
                continue
            if proj(i) != q.get("project"):
                bad(f"{qid}: {i} belongs to another project")
            if i in stale:
                bad(f"{qid}: stale memory {i} listed as relevant")
            if i in group_of and not groups[group_of[i]] <= set(rel):
                bad(f"{qid}: duplicate group of {i} not listed whole")
        if kind == "file":
            want = sorted(
                i
                for i, m in by_id.items()
                if m["project"] == q.get("project")
                and q.get("query") in m["file_refs"]
                and i not in stale
            )
            if sorted(rel) != want:
                bad(f"{qid}: file query relevant {sorted(rel)} != {want}")
        if kind == "current-truth" and not any(
            p.get("label") in ("supersedes", "contradiction") and p.get("holder") in rel
            for p in pairs
        ):
            bad(f"{qid}: current-truth query has no relevant note that replaced/outranks another")

    # ---- context
    have_sources = os.path.isdir(SOURCES)
    for n, c in enumerate(context, 1):
        cid = c.get("id")
        if cid != f"s8-c{n:03d}":
            bad(f"context #{n}: id {cid!r}")
        pr = c.get("project")
        if pr not in PROJECTS:
            bad(f"{cid}: project {pr!r}")
        if not c.get("file"):
            bad(f"{cid}: empty file")
        if "error" in c and not str(c["error"]).strip():
            bad(f"{cid}: empty error")
        need, mn = c.get("needed", []), c.get("must_not", [])
        if not need:
            bad(f"{cid}: needed is empty")
        for i in need + mn:
            if i not in by_id:
                bad(f"{cid}: unknown id {i}")
            elif proj(i) != pr:
                bad(f"{cid}: {i} belongs to another project")
        for i in need:
            if i in stale:
                bad(f"{cid}: stale memory {i} is needed")
        if set(need) & set(mn):
            bad(f"{cid}: ids in both needed and must_not")
        seen_groups = [group_of[i] for i in need if i in group_of]
        if len(seen_groups) != len(set(seen_groups)):
            bad(f"{cid}: more than one member of a duplicate group in needed")
        if have_sources and not os.path.isfile(os.path.join(SOURCES, pr or "", c.get("file", ""))):
            bad(f"{cid}: source file {pr}/{c.get('file')} missing under {SOURCES}")

    # ---- temporal
    differs = 0
    vague_n = 0
    for t in temporal:
        mid = t.get("memory")
        tag = f"temporal {mid}/{t.get('phrase')}"
        if mid not in by_id:
            bad(f"{tag}: unknown memory")
            continue
        ph = str(t.get("phrase", ""))
        if ph.lower() not in by_id[mid]["content"].lower():
            bad(f"{tag}: phrase not in content")
        dt = datetime.fromisoformat(by_id[mid]["created_at"])
        ld, ud = dt.date(), dt.astimezone(UTC).date()
        if t.get("local_date") != ld.isoformat():
            bad(f"{tag}: local_date {t.get('local_date')} != {ld}")
        if t.get("utc_date") != ud.isoformat():
            bad(f"{tag}: utc_date {t.get('utc_date')} != {ud}")
        differs += ld != ud
        r = resolve(ph, ld)
        if r is None:
            bad(f"{tag}: phrase not in the phrase table")
            continue
        s, e, vague = r
        vague_n += vague
        if (t.get("expected_start"), t.get("expected_end")) != (s.isoformat(), e.isoformat()):
            bad(
                f"{tag}: expected {t.get('expected_start')}..{t.get('expected_end')}, "
                f"table gives {s}..{e}"
            )
        if t.get("vague") is not vague:
            bad(f"{tag}: vague should be {vague}")
        want_ans = s.isoformat() if s == e else None
        if t.get("answer_date") != want_ans:
            bad(f"{tag}: answer_date should be {want_ans}")
        if not str(t.get("question", "")).strip():
            bad(f"{tag}: empty question")
        date.fromisoformat(t["expected_start"])

    if PROBLEMS:
        for p in PROBLEMS:
            print("PROBLEM:", p)
        print(f"{len(PROBLEMS)} problem(s)")
        sys.exit(1)

    lab = Counter(p["label"] for p in pairs)
    print("eighth-dev OK")
    print(f"  memories: {len(mems)} " + str(dict(Counter(m["project"] for m in mems))))
    print(f"  memories without file_refs: {sum(1 for m in mems if not m['file_refs'])}")
    print(
        f"  pairs: {len(pairs)} {dict(lab)}; holder null contradictions: "
        f"{sum(1 for p in pairs if p['label'] == 'contradiction' and p['holder'] is None)}"
    )
    print(f"  stale memories: {len(stale)}; not_counted: {len(notc)}")
    print(
        f"  duplicates: {len(dups)} {dict(Counter(g['kind'] for g in dups))}; "
        f"dup_negatives: {len(dupneg)}"
    )
    print(f"  queries: {len(queries)} {dict(qkinds)}")
    print(
        f"  context: {len(context)} (with error: {sum(1 for c in context if 'error' in c)}); "
        f"sources checked: {have_sources}"
    )
    print(f"  temporal: {len(temporal)} (vague: {vague_n}, local date != UTC date: {differs})")


if __name__ == "__main__":
    main()
