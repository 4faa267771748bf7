#!/usr/bin/env python3
"""Validate the fifteenth-dev evaluation set. Standard library only.

    python check.py [DIR]

DIR defaults to the directory this file lives in. Prints every problem found and
exits 1 if there is any, 0 otherwise.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

PROJECTS = {"structlog", "zap", "commander.js"}
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
LABELS = {"contradiction", "supersedes", "compatible"}
QUERY_KINDS = {"paraphrase", "identifier", "error", "file", "howto", "why", "current-truth"}
DUP_KINDS = {"near", "exact"}
EXPECTED_ROWS = {
    "memories.jsonl": None,
    "pairs.jsonl": 45,
    "duplicates.jsonl": 11,
    "dup_negatives.jsonl": 12,
    "queries.jsonl": 50,
    "context.jsonl": 25,
    "temporal.jsonl": 19,
}
MIN_LABELS = {"supersedes": 22, "contradiction": 8, "compatible": 11}
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
SECRET_PATTERNS = [
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9]{16,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\bpypi-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{30,}"),
    re.compile(r"(?i)(password|token|secret|api[_-]?key)\s*[=:]\s*['\"][^'\"\s]{12,}['\"]"),
]

problems: list[str] = []


def err(msg: str) -> None:
    problems.append(msg)


def load(path: Path) -> list[dict]:
    rows = []
    if not path.exists():
        err(f"{path.name}: missing")
        return rows
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                err(f"{path.name}:{n}: empty line")
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                err(f"{path.name}:{n}: invalid JSON ({e})")
                continue
            if not isinstance(obj, dict):
                err(f"{path.name}:{n}: not an object")
                continue
            rows.append(obj)
    return rows


def parse_ts(s: object) -> datetime | None:
    if not isinstance(s, str):
        return None
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?([+-]\d{2}:\d{2}|Z)", s):
        return None
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo is not None else None


def parse_day(s: object) -> date | None:
    if not isinstance(s, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
        return None
    try:
        return date.fromisoformat(s)
    except ValueError:
        return None


def resolve(phrase: str, d: date) -> tuple[date, date, bool] | None:
    """Second, independent implementation of the resolution rules in README.md."""
    p = phrase.lower().strip()
    if p in {"today", "this morning", "this afternoon", "this evening", "tonight", "earlier today"}:
        return d, d, False
    if p in {"yesterday", "last night"}:
        return d - timedelta(days=1), d - timedelta(days=1), False
    if p == "the day before yesterday":
        return d - timedelta(days=2), d - timedelta(days=2), False
    m = re.fullmatch(r"(\d+|two|three|four|five|six) days ago", p)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else NUMBERS[m.group(1)]
        return d - timedelta(days=n), d - timedelta(days=n), False
    if p == "a week ago":
        return d - timedelta(days=7), d - timedelta(days=7), False
    if p == "two weeks ago":
        return d - timedelta(days=14), d - timedelta(days=14), False
    if p == "a couple of days ago":
        return d - timedelta(days=3), d - timedelta(days=2), True
    if p == "the other day":
        return d - timedelta(days=7), d - timedelta(days=1), True
    monday = d - timedelta(days=d.weekday())
    if p == "last week":
        return monday - timedelta(days=7), monday - timedelta(days=1), False
    if p == "last sprint":
        return monday - timedelta(days=14), monday - timedelta(days=1), True
    if p == "over the weekend":
        back = (d.weekday() - 5) % 7 or 7
        sat = d - timedelta(days=back)
        sun = sat + timedelta(days=1)
        if sun >= d:
            sat, sun = sat - timedelta(days=7), sun - timedelta(days=7)
        return sat, sun, False
    m = re.fullmatch(r"(last|next) (" + "|".join(WEEKDAYS) + ")", p)
    if m:
        wd = WEEKDAYS.index(m.group(2))
        if m.group(1) == "last":
            back = (d.weekday() - wd) % 7 or 7
            x = d - timedelta(days=back)
        else:
            fwd = (wd - d.weekday()) % 7 or 7
            x = d + timedelta(days=fwd)
        return x, x, False
    m = re.fullmatch(r"on the (\d{1,2})(st|nd|rd|th)", p)
    if m:
        day = int(m.group(1))
        y, mo = d.year, d.month
        for _ in range(13):
            try:
                x = date(y, mo, day)
            except ValueError:
                x = None
            if x is not None and x <= d:
                return x, x, False
            mo -= 1
            if mo == 0:
                y, mo = y - 1, 12
        return None
    if p == "the end of last month":
        last = d.replace(day=1) - timedelta(days=1)
        return last - timedelta(days=6), last, True
    return None


def main(root: Path) -> int:
    files = {name: load(root / name) for name in EXPECTED_ROWS}

    # ---------------- memories
    mems = files["memories.jsonl"]
    byid: dict[str, dict] = {}
    prev_ts = None
    for n, m in enumerate(mems, 1):
        mid = m.get("id")
        where = f"memories.jsonl:{n} ({mid})"
        if mid != f"fi-m{n:03d}":
            err(f"{where}: id should be fi-m{n:03d} (ids are sequential in creation order)")
        if mid in byid:
            err(f"{where}: duplicate id")
        byid[mid] = m
        for key, typ in (
            ("project", str),
            ("type", str),
            ("title", str),
            ("content", str),
            ("created_at", str),
            ("tags", list),
            ("file_refs", list),
        ):
            if not isinstance(m.get(key), typ):
                err(f"{where}: field {key!r} missing or not {typ.__name__}")
        extra = set(m) - {
            "id",
            "project",
            "type",
            "title",
            "content",
            "created_at",
            "tags",
            "file_refs",
        }
        if extra:
            err(f"{where}: unexpected fields {sorted(extra)}")
        if m.get("project") not in PROJECTS:
            err(f"{where}: unknown project {m.get('project')!r}")
        if m.get("type") not in TYPES:
            err(f"{where}: unknown type {m.get('type')!r}")
        ts = parse_ts(m.get("created_at"))
        if ts is None:
            err(f"{where}: created_at is not ISO-8601 with a UTC offset: {m.get('created_at')!r}")
        else:
            if not (datetime(2024, 1, 1, tzinfo=UTC) <= ts < datetime(2027, 1, 1, tzinfo=UTC)):
                err(f"{where}: created_at outside 2024-2026")
            if prev_ts is not None and ts < prev_ts:
                err(f"{where}: not sorted by created_at")
            prev_ts = ts
        content = m.get("content") or ""
        words = len(content.split())
        if not 10 <= words <= 150:
            err(f"{where}: content has {words} words (expected 10-150)")
        if not (m.get("title") or "").strip():
            err(f"{where}: empty title")
        for t in m.get("tags") or []:
            if not isinstance(t, str) or not t:
                err(f"{where}: bad tag {t!r}")
        for fr in m.get("file_refs") or []:
            if not isinstance(fr, str) or not fr or fr.startswith("/") or " " in fr:
                err(f"{where}: bad file_ref {fr!r}")
        for pat in SECRET_PATTERNS:
            if pat.search(content):
                err(f"{where}: content looks like it contains a real secret ({pat.pattern})")
    if len(Counter(m.get("project") for m in mems)) != len(PROJECTS):
        err("memories.jsonl: not every project is represented")

    def mem(mid: object, where: str) -> dict | None:
        if mid not in byid:
            err(f"{where}: unknown memory id {mid!r}")
            return None
        return byid[mid]

    def ts_of(mid: str) -> datetime:
        return parse_ts(byid[mid]["created_at"]) or datetime.min.replace(tzinfo=UTC)

    # ---------------- pairs
    pairs = files["pairs.jsonl"]
    seen_pairs = set()
    stale: set[str] = set()
    superseded_by: dict[str, set[str]] = {}
    replacers: set[str] = set()
    conflict_members: set[str] = set()
    for n, p in enumerate(pairs, 1):
        where = f"pairs.jsonl:{n}"
        a, b, label, holder = p.get("a"), p.get("b"), p.get("label"), p.get("holder", "MISSING")
        if set(p) != {"a", "b", "label", "holder", "why"}:
            err(f"{where}: fields must be exactly a, b, label, holder, why")
        ma, mb = mem(a, where), mem(b, where)
        if label not in LABELS:
            err(f"{where}: bad label {label!r}")
        if not isinstance(p.get("why"), str) or not p["why"].strip():
            err(f"{where}: missing why")
        if ma is None or mb is None:
            continue
        if a == b:
            err(f"{where}: a == b")
        if ma["project"] != mb["project"]:
            err(f"{where}: pair crosses projects")
        key = frozenset((a, b))
        if key in seen_pairs:
            err(f"{where}: pair listed twice")
        seen_pairs.add(key)
        if ts_of(b) < ts_of(a):
            err(f"{where}: a must be the earlier memory")
        if label == "supersedes":
            if not ts_of(b) > ts_of(a):
                err(f"{where}: supersedes but b is not strictly later than a")
            if holder != b:
                err(f"{where}: supersedes holder must be b")
            stale.add(a)
            superseded_by.setdefault(a, set()).add(b)
            replacers.add(b)
            conflict_members |= {a, b}
        elif label == "contradiction":
            if holder not in (a, b, None):
                err(f"{where}: contradiction holder must be a, b or null")
            if holder is not None:
                stale.add(b if holder == a else a)
            conflict_members |= {a, b}
        elif label == "compatible" and holder is not None:
            err(f"{where}: compatible pairs have holder null")
    label_counts = Counter(p.get("label") for p in pairs)
    for lab, mn in MIN_LABELS.items():
        if label_counts[lab] < mn:
            err(f"pairs.jsonl: {label_counts[lab]} {lab} pairs, need at least {mn}")

    # ---------------- duplicates
    dups = files["duplicates.jsonl"]
    group_of: dict[str, int] = {}
    for n, g in enumerate(dups, 1):
        where = f"duplicates.jsonl:{n}"
        ids = g.get("group")
        if g.get("kind") not in DUP_KINDS:
            err(f"{where}: bad kind {g.get('kind')!r}")
        if not isinstance(ids, list) or len(ids) < 2:
            err(f"{where}: group needs at least 2 ids")
            continue
        ms = [mem(i, where) for i in ids]
        if any(x is None for x in ms):
            continue
        if len({x["project"] for x in ms}) != 1:
            err(f"{where}: group crosses projects")
        for i in ids:
            if i in group_of:
                err(f"{where}: {i} already in group {group_of[i]}")
            group_of[i] = n
            if i in conflict_members:
                err(
                    f"{where}: {i} is in a supersedes/contradiction pair; "
                    "its duplicate would inherit the conflict"
                )
        contents = {x["content"] for x in ms}
        if g.get("kind") == "exact" and len(contents) != 1:
            err(f"{where}: exact group with differing content")
        if g.get("kind") == "near" and len(contents) != len(ms):
            err(f"{where}: near group with identical content (should be exact)")
    # identical content outside exact groups
    by_content: dict[str, list[str]] = {}
    for m in mems:
        by_content.setdefault(m["content"], []).append(m["id"])
    for ids in by_content.values():
        if len(ids) > 1:
            gs = {group_of.get(i) for i in ids}
            if len(gs) != 1 or None in gs:
                err(f"memories {ids} have identical content but are not one exact duplicate group")

    for n, d in enumerate(files["dup_negatives.jsonl"], 1):
        where = f"dup_negatives.jsonl:{n}"
        a, b = d.get("a"), d.get("b")
        ma, mb = mem(a, where), mem(b, where)
        if not isinstance(d.get("why"), str) or not d["why"].strip():
            err(f"{where}: missing why")
        if ma is None or mb is None:
            continue
        if a == b or ma["project"] != mb["project"]:
            err(f"{where}: must be two memories of one project")
        if a in group_of and group_of.get(a) == group_of.get(b):
            err(f"{where}: a and b are in the same duplicate group")

    # ---------------- queries
    queries = files["queries.jsonl"]
    qids = set()
    qkinds = Counter()
    for n, q in enumerate(queries, 1):
        where = f"queries.jsonl:{n} ({q.get('id')})"
        if q.get("id") != f"fi-q{n:03d}":
            err(f"{where}: id should be fi-q{n:03d}")
        if q.get("id") in qids:
            err(f"{where}: duplicate id")
        qids.add(q.get("id"))
        kind = q.get("kind")
        qkinds[kind] += 1
        if kind not in QUERY_KINDS:
            err(f"{where}: bad kind {kind!r}")
        if q.get("project") not in PROJECTS:
            err(f"{where}: bad project")
        if not isinstance(q.get("query"), str) or not q["query"].strip():
            err(f"{where}: empty query")
        rel = q.get("relevant")
        if not isinstance(rel, list) or not rel:
            err(f"{where}: relevant must be a non-empty list")
            continue
        for r in rel:
            m = mem(r, where)
            if m and m["project"] != q.get("project"):
                err(f"{where}: relevant {r} is from another project")
            if r in stale:
                err(f"{where}: relevant {r} is superseded or a contradicted (wrong) note")
        if kind == "current-truth" and not any(r in replacers for r in rel):
            err(f"{where}: current-truth query has no replacing note among relevant")
        if kind == "file":
            path = q["query"].strip()
            expect = {
                m["id"]
                for m in mems
                if m["project"] == q.get("project")
                and path in m["file_refs"]
                and m["id"] not in stale
            }
            if set(rel) != expect:
                err(
                    f"{where}: file query relevant {sorted(rel)} != "
                    f"memories referencing {path} {sorted(expect)}"
                )

    # ---------------- context
    for n, c in enumerate(files["context.jsonl"], 1):
        where = f"context.jsonl:{n} ({c.get('id')})"
        if c.get("id") != f"fi-c{n:03d}":
            err(f"{where}: id should be fi-c{n:03d}")
        if c.get("project") not in PROJECTS:
            err(f"{where}: bad project")
        if not isinstance(c.get("file"), str) or not c["file"] or c["file"].startswith("/"):
            err(f"{where}: bad file")
        for opt in ("error", "branch"):
            if opt in c and (not isinstance(c[opt], str) or not c[opt].strip()):
                err(f"{where}: {opt} present but empty")
        needed, must_not = c.get("needed"), c.get("must_not")
        if not isinstance(needed, list) or not needed or not isinstance(must_not, list):
            err(f"{where}: needed must be a non-empty list and must_not a list")
            continue
        if set(needed) & set(must_not):
            err(f"{where}: ids both needed and must_not")
        for i in needed + must_not:
            m = mem(i, where)
            if m and m["project"] != c.get("project"):
                err(f"{where}: {i} from another project")
        for i in needed:
            if i in stale:
                err(f"{where}: needed {i} is superseded or contradicted")
        gs = [group_of[i] for i in needed if i in group_of]
        if len(gs) != len(set(gs)):
            err(f"{where}: two members of one duplicate group in needed (list one)")

    # ---------------- temporal
    for n, t in enumerate(files["temporal.jsonl"], 1):
        where = f"temporal.jsonl:{n}"
        m = mem(t.get("memory"), where)
        if m is None:
            continue
        phrase = t.get("phrase")
        if not isinstance(phrase, str) or phrase.lower() not in m["content"].lower():
            err(f"{where}: phrase {phrase!r} not found in memory content")
            continue
        start, end = parse_day(t.get("expected_start")), parse_day(t.get("expected_end"))
        if start is None or end is None or start > end:
            err(f"{where}: bad expected_start/expected_end")
            continue
        if not isinstance(t.get("question"), str) or not t["question"].strip():
            err(f"{where}: missing question")
        ans = t.get("answer_date")
        if start == end and ans != start.isoformat():
            err(f"{where}: answer_date should be {start.isoformat()}")
        if start != end and ans is not None:
            err(f"{where}: answer_date should be null for ranges")
        if not isinstance(t.get("vague"), bool):
            err(f"{where}: vague must be a boolean")
        ts = parse_ts(m["created_at"])
        if ts is None:
            continue
        local = ts.date()
        utc = ts.astimezone(UTC).date()
        if t.get("local_date") != local.isoformat() or t.get("utc_date") != utc.isoformat():
            err(f"{where}: local_date/utc_date do not match created_at")
        got = resolve(phrase, local)
        if got is None:
            err(f"{where}: no resolution rule for phrase {phrase!r}")
        elif (got[0], got[1]) != (start, end) or got[2] != t.get("vague"):
            err(
                f"{where}: expected {start}..{end} vague={t.get('vague')}, "
                f"rules give {got[0]}..{got[1]} vague={got[2]}"
            )

    # ---------------- counts in README
    counts = {f"{name}": len(rows) for name, rows in files.items()}
    for p in sorted(PROJECTS):
        counts[f"memories: {p}"] = sum(1 for m in mems if m.get("project") == p)
    for lab in sorted(LABELS):
        counts[f"pairs: {lab}"] = label_counts[lab]
    for k in sorted(QUERY_KINDS):
        counts[f"queries: {k}"] = qkinds[k]
    counts["duplicates: exact"] = sum(1 for g in dups if g.get("kind") == "exact")
    counts["duplicates: near"] = sum(1 for g in dups if g.get("kind") == "near")
    counts["temporal: vague"] = sum(1 for t in files["temporal.jsonl"] if t.get("vague") is True)
    counts["temporal: local date differs from UTC date"] = sum(
        1 for t in files["temporal.jsonl"] if t.get("local_date") != t.get("utc_date")
    )
    for name, expect in EXPECTED_ROWS.items():
        if expect is not None and counts[name] != expect:
            err(f"{name}: {counts[name]} rows, expected {expect}")
    readme = root / "README.md"
    if not readme.exists():
        err("README.md: missing")
    else:
        table = {}
        for line in readme.read_text(encoding="utf-8").splitlines():
            mm = re.fullmatch(r"\|\s*`([^`]+)`\s*\|\s*(\d+)\s*\|", line.strip())
            if mm:
                table[mm.group(1)] = int(mm.group(2))
        for k, v in counts.items():
            if k not in table:
                err(f"README.md: count for `{k}` missing from the counts table")
            elif table[k] != v:
                err(f"README.md: `{k}` says {table[k]}, actual {v}")
        for k in table:
            if k not in counts:
                err(f"README.md: unknown count row `{k}`")

    for p_ in problems:
        print("PROBLEM:", p_)
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print("OK: " + ", ".join(f"{k}={v}" for k, v in counts.items() if "." in k))
    return 0


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    sys.exit(main(root))
