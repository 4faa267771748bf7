"""Validate the fourth-dev evaluation set (standard library only).

Usage: python check.py [DIR]   (DIR defaults to the folder of this file)
Prints every problem found and exits 1 if there is any, 0 otherwise.
"""

import datetime as dt
import json
import os
import re
import sys

PROJECTS = {"pytest", "clap", "prettier"}
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
MEM_ID = re.compile(r"^fd4-m\d{3}$")
MIN_OFFSET = dt.timedelta(hours=-8)
MAX_OFFSET = dt.timedelta(hours=10)
ONE_DAY = dt.timedelta(days=1)
UTC_ZONE = dt.timezone(dt.timedelta(0))
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

problems = []


def problem(msg):
    problems.append(msg)


def load(base, name):
    rows = []
    path = os.path.join(base, name)
    try:
        with open(path, encoding="utf-8") as fh:
            for num, line in enumerate(fh, 1):
                if not line.strip():
                    problem(f"{name}:{num}: empty line")
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    problem(f"{name}:{num}: bad JSON ({exc})")
    except OSError as exc:
        problem(f"{name}: cannot read ({exc})")
    return rows


def keys_are(name, row, required, optional=()):
    have = set(row)
    missing = set(required) - have
    extra = have - set(required) - set(optional)
    if missing:
        problem(f"{name}: {row.get('id', row)} missing fields {sorted(missing)}")
    if extra:
        problem(f"{name}: {row.get('id', row)} unexpected fields {sorted(extra)}")
    return not missing


def parse_time(value):
    try:
        stamp = dt.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    if stamp.tzinfo is None:
        return None
    return stamp


def resolve_phrase(phrase, local):
    """Return (start, end, vague) for a phrase of the README table, or None."""
    text = phrase.lower()
    if text in ("today", "this morning", "this afternoon", "this evening", "tonight"):
        return local, local, False
    if text == "the day before yesterday":
        return local - 2 * ONE_DAY, local - 2 * ONE_DAY, False
    if text in ("yesterday", "yesterday's"):
        return local - ONE_DAY, local - ONE_DAY, False
    match = re.fullmatch(r"(\d+|two|three) (days|weeks) ago", text)
    if match:
        words = {"two": 2, "three": 3}
        count = int(words.get(match.group(1), match.group(1) if match.group(1).isdigit() else 0))
        days = count * (7 if match.group(2) == "weeks" else 1)
        day = local - days * ONE_DAY
        return day, day, False
    match = re.fullmatch(r"(last|next) (\w+)", text)
    if match and match.group(2) in WEEKDAYS:
        target = WEEKDAYS.index(match.group(2))
        step = -ONE_DAY if match.group(1) == "last" else ONE_DAY
        day = local + step
        while day.weekday() != target:
            day += step
        return day, day, False
    if text == "last week":
        monday = local - local.weekday() * ONE_DAY
        return monday - 7 * ONE_DAY, monday - ONE_DAY, False
    if text == "over the weekend":
        day = local - ONE_DAY
        while day.weekday() != 6:
            day -= ONE_DAY
        return day - ONE_DAY, day, False
    if text == "a couple of days ago":
        return local - 3 * ONE_DAY, local - 2 * ONE_DAY, True
    if text == "the other day":
        return local - 7 * ONE_DAY, local - ONE_DAY, True
    if text == "the end of last month":
        last = local.replace(day=1) - ONE_DAY
        return last - 6 * ONE_DAY, last, True
    if text == "last sprint":
        monday = local - local.weekday() * ONE_DAY
        return monday - 14 * ONE_DAY, monday - ONE_DAY, True
    match = re.fullmatch(r"on the (\d{1,2})(st|nd|rd|th)", text)
    if match:
        wanted = int(match.group(1))
        day = local
        for _ in range(62):
            if day.day == wanted:
                return day, day, False
            day -= ONE_DAY
    return None


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

    # ---------------------------------------------------------------- memories
    mems = load(base, "memories.jsonl")
    by_id = {}
    prev_instant = None
    for index, mem in enumerate(mems, 1):
        mem_fields = [
            "id",
            "project",
            "type",
            "title",
            "content",
            "created_at",
            "tags",
            "file_refs",
        ]
        if not keys_are("memories", mem, mem_fields):
            continue
        mid = mem["id"]
        if not MEM_ID.match(mid) or mid != f"fd4-m{index:03d}":
            problem(f"memories: id {mid} out of sequence (expected fd4-m{index:03d})")
        if mid in by_id:
            problem(f"memories: duplicate id {mid}")
        by_id[mid] = mem
        if mem["project"] not in PROJECTS:
            problem(f"memories: {mid} unknown project {mem['project']!r}")
        if mem["type"] not in TYPES:
            problem(f"memories: {mid} unknown type {mem['type']!r}")
        if not isinstance(mem["title"], str) or not mem["title"].strip():
            problem(f"memories: {mid} empty title")
        words = len(str(mem["content"]).split())
        if not 10 <= words <= 150:
            problem(f"memories: {mid} content has {words} words (want 10-150)")
        stamp = parse_time(mem["created_at"])
        if stamp is None:
            problem(f"memories: {mid} created_at is not ISO-8601 with offset")
        else:
            offset = stamp.utcoffset()
            if not MIN_OFFSET <= offset <= MAX_OFFSET:
                problem(f"memories: {mid} offset {offset} outside -08:00..+10:00")
            instant = stamp.astimezone(UTC_ZONE)
            if prev_instant is not None and instant < prev_instant:
                problem(f"memories: {mid} not sorted by UTC instant")
            prev_instant = instant
        for field in ("tags", "file_refs"):
            value = mem[field]
            if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
                problem(f"memories: {mid} {field} must be a list of non-empty strings")

    def instant_of(mid):
        stamp = parse_time(by_id[mid]["created_at"])
        return stamp.astimezone(UTC_ZONE) if stamp else None

    def known(where, mid):
        if mid not in by_id:
            problem(f"{where}: unknown memory id {mid!r}")
            return False
        return True

    # ---------------------------------------------------------------- pairs
    pairs = load(base, "pairs.jsonl")
    stale = set()
    conflict_members = set()
    seen_pairs = set()
    for pair in pairs:
        if not keys_are("pairs", pair, ["a", "b", "label", "holder", "why"]):
            continue
        a_id, b_id, label, holder = pair["a"], pair["b"], pair["label"], pair["holder"]
        tag = f"pairs: {a_id}/{b_id}"
        if not (known("pairs", a_id) and known("pairs", b_id)):
            continue
        key = tuple(sorted((a_id, b_id)))
        if key in seen_pairs:
            problem(f"{tag}: listed twice")
        seen_pairs.add(key)
        if by_id[a_id]["project"] != by_id[b_id]["project"]:
            problem(f"{tag}: different projects")
        ia, ib = instant_of(a_id), instant_of(b_id)
        if ia and ib and not ia < ib:
            problem(f"{tag}: a is not strictly earlier than b")
        if label not in LABELS:
            problem(f"{tag}: unknown label {label!r}")
        elif label == "supersedes":
            if holder != b_id:
                problem(f"{tag}: supersedes needs holder == b")
            stale.add(a_id)
            conflict_members.update((a_id, b_id))
        elif label == "contradiction":
            if holder not in (a_id, b_id, None):
                problem(f"{tag}: contradiction holder must be a, b or null")
            if holder is not None:
                stale.add(b_id if holder == a_id else a_id)
            conflict_members.update((a_id, b_id))
        elif holder is not None:
            problem(f"{tag}: compatible pairs have holder null")
        if not str(pair["why"]).strip():
            problem(f"{tag}: empty why")

    # ---------------------------------------------------------------- duplicates
    dups = load(base, "duplicates.jsonl")
    group_of = {}
    for num, grp in enumerate(dups, 1):
        if not keys_are("duplicates", grp, ["group", "kind"]):
            continue
        ids = grp["group"]
        if not isinstance(ids, list) or len(ids) < 2:
            problem(f"duplicates: group {num} needs at least two ids")
            continue
        if grp["kind"] not in ("near", "exact"):
            problem(f"duplicates: group {num} bad kind {grp['kind']!r}")
        if not all(known("duplicates", x) for x in ids):
            continue
        if len({by_id[x]["project"] for x in ids}) != 1:
            problem(f"duplicates: group {num} mixes projects")
        if grp["kind"] == "exact":
            first = by_id[ids[0]]
            for other in ids[1:]:
                twin = by_id[other]
                same = (twin["title"], twin["content"]) == (first["title"], first["content"])
                if not same:
                    problem(f"duplicates: exact group {num} has differing title/content")
        for x in ids:
            if x in group_of:
                problem(f"duplicates: {x} is in more than one group")
            group_of[x] = num
            if x in conflict_members:
                problem(f"duplicates: {x} is also in a supersedes/contradiction pair")

    negs = load(base, "dup_negatives.jsonl")
    for neg in negs:
        if not keys_are("dup_negatives", neg, ["a", "b", "why"]):
            continue
        if not (known("dup_negatives", neg["a"]) and known("dup_negatives", neg["b"])):
            continue
        if by_id[neg["a"]]["project"] != by_id[neg["b"]]["project"]:
            problem(f"dup_negatives: {neg['a']}/{neg['b']} different projects")
        if neg["a"] in group_of and group_of.get(neg["a"]) == group_of.get(neg["b"]):
            problem(f"dup_negatives: {neg['a']}/{neg['b']} are in the same duplicate group")

    def group_members(mid):
        num = group_of.get(mid)
        if num is None:
            return {mid}
        return {x for x, g in group_of.items() if g == num}

    # ---------------------------------------------------------------- queries
    queries = load(base, "queries.jsonl")
    qids = set()
    for query in queries:
        if not keys_are("queries", query, ["id", "query", "project", "relevant", "kind"]):
            continue
        qid = query["id"]
        if qid in qids:
            problem(f"queries: duplicate id {qid}")
        qids.add(qid)
        if query["kind"] not in QUERY_KINDS:
            problem(f"queries: {qid} unknown kind {query['kind']!r}")
        if query["project"] not in PROJECTS:
            problem(f"queries: {qid} unknown project")
        rel = query["relevant"]
        if not isinstance(rel, list) or not rel:
            problem(f"queries: {qid} relevant must be a non-empty list")
            continue
        if len(set(rel)) != len(rel):
            problem(f"queries: {qid} repeats an id")
        if not all(known(f"queries {qid}", x) for x in rel):
            continue
        for x in rel:
            if by_id[x]["project"] != query["project"]:
                problem(f"queries: {qid} relevant {x} is from another project")
            if x in stale:
                problem(f"queries: {qid} relevant {x} is stale")
            missing = group_members(x) - set(rel)
            if missing:
                problem(f"queries: {qid} lists {x} but not its duplicates {sorted(missing)}")
        if query["kind"] == "file":
            expect = {
                mid
                for mid, mem in by_id.items()
                if mem["project"] == query["project"]
                and query["query"] in mem["file_refs"]
                and mid not in stale
            }
            if set(rel) != expect:
                problem(f"queries: {qid} file query relevant {sorted(rel)} != {sorted(expect)}")

    # ---------------------------------------------------------------- context
    contexts = load(base, "context.jsonl")
    cids = set()
    for ctx in contexts:
        ctx_fields = ["id", "project", "file", "needed", "must_not"]
        if not keys_are("context", ctx, ctx_fields, ["error", "branch"]):
            continue
        cid = ctx["id"]
        if cid in cids:
            problem(f"context: duplicate id {cid}")
        cids.add(cid)
        if ctx["project"] not in PROJECTS:
            problem(f"context: {cid} unknown project")
        if not isinstance(ctx["needed"], list) or not ctx["needed"]:
            problem(f"context: {cid} needed must be a non-empty list")
            continue
        if not isinstance(ctx["must_not"], list):
            problem(f"context: {cid} must_not must be a list")
            continue
        for x in ctx["needed"] + ctx["must_not"]:
            if known(f"context {cid}", x) and by_id[x]["project"] != ctx["project"]:
                problem(f"context: {cid} {x} is from another project")
        for x in ctx["needed"]:
            if x in stale:
                problem(f"context: {cid} needs stale memory {x}")
        overlap = set(ctx["needed"]) & set(ctx["must_not"])
        if overlap:
            problem(f"context: {cid} ids both needed and must_not: {sorted(overlap)}")
        for x in ctx["must_not"]:
            if group_members(x) & set(ctx["needed"]) - {x}:
                problem(f"context: {cid} must_not {x} duplicates a needed memory")

    # ---------------------------------------------------------------- temporal
    temporal = load(base, "temporal.jsonl")
    fields = [
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
    for item in temporal:
        if not keys_are("temporal", item, fields):
            continue
        mid = item["memory"]
        if not known("temporal", mid):
            continue
        tag = f"temporal: {mid} {item['phrase']!r}"
        if item["phrase"].lower() not in by_id[mid]["content"].lower():
            problem(f"{tag}: phrase does not occur in the memory content")
        stamp = parse_time(by_id[mid]["created_at"])
        if stamp is None:
            continue
        local = stamp.date()
        utc = stamp.astimezone(UTC_ZONE).date()
        if item["local_date"] != local.isoformat():
            problem(f"{tag}: local_date should be {local}")
        if item["utc_date"] != utc.isoformat():
            problem(f"{tag}: utc_date should be {utc}")
        resolved = resolve_phrase(item["phrase"], local)
        if resolved is None:
            problem(f"{tag}: phrase is not in the README table")
            continue
        start, end, vague = resolved
        if (item["expected_start"], item["expected_end"]) != (start.isoformat(), end.isoformat()):
            problem(f"{tag}: expected {start}..{end}")
        if item["vague"] is not vague:
            problem(f"{tag}: vague should be {vague}")
        want_answer = start.isoformat() if start == end else None
        if item["answer_date"] != want_answer:
            problem(f"{tag}: answer_date should be {want_answer}")

    # ---------------------------------------------------------------- not_counted
    for row in load(base, "not_counted.jsonl"):
        if not keys_are("not_counted", row, ["a", "b", "why"]):
            continue
        if not (known("not_counted", row["a"]) and known("not_counted", row["b"])):
            continue
        if by_id[row["a"]]["project"] != by_id[row["b"]]["project"]:
            problem(f"not_counted: {row['a']}/{row['b']} different projects")
        if tuple(sorted((row["a"], row["b"]))) in seen_pairs:
            problem(f"not_counted: {row['a']}/{row['b']} is already a labelled pair")

    for msg in problems:
        print("PROBLEM:", msg)
    counts = {
        "memories": len(mems),
        "pairs": len(pairs),
        "duplicates": len(dups),
        "dup_negatives": len(negs),
        "queries": len(queries),
        "context": len(contexts),
        "temporal": len(temporal),
        "stale": len(stale),
    }
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
