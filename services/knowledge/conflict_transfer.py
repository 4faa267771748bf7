"""Conflict records in export and import, so that what the user judged (which note
holds, both valid, merged) travels with the notes it was judged on. Without them a cycle
after moving to a new machine asked again about every pair the user had settled as both
valid, and the review's history was gone.

An export document lists the records between its memories, open or settled
(`exported`). An import checks the section together with the memories, before anything
is stored, and names every problem by its place (`read_section`); it then writes what
the store does not already know (`restore`): a pair the store has settled keeps the
store's answer, an open one takes the file's answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.errors import Problem
from services.knowledge.conflict_records import KINDS, RESOLUTIONS, record_of
from services.memory import Memory, parse_time
from services.storage import contradictions as table
from services.storage.memories import MemoryStore

SECTION = "contradictions"


@dataclass(frozen=True)
class PairRecord:
    """One conflict record as an export holds it (the store's id left out)."""

    a: str
    b: str
    kind: str
    holder: str | None
    detected_at: str
    evidence: dict[str, Any]
    resolved_at: str | None
    resolution: str | None
    note: str | None

    def row(self, renamed: Mapping[str, str]) -> tuple[Any, ...]:
        """The record as `table.restore_row` takes it, its memories renamed where the
        import stored a record as a copy the store already held."""
        a, b = renamed.get(self.a, self.a), renamed.get(self.b, self.b)
        holder = None if self.holder is None else renamed.get(self.holder, self.holder)
        evidence = json.dumps(self.evidence, ensure_ascii=False)
        return (a, b, self.kind, holder, self.detected_at, evidence, self.resolved_at,
                self.resolution, self.note)  # fmt: skip


def exported(store: MemoryStore, memories: Iterable[Memory]) -> list[dict[str, Any]]:
    """The conflict records whose two memories are both among `memories`, oldest first."""
    ids = {m.id for m in memories}
    found = []
    for row in reversed(table.rows(store, include_resolved=True)):
        record = record_of(row).to_dict()
        if record["a"] in ids and record["b"] in ids:
            del record["id"]
            found.append(record)
    return found


def read_section(
    section: Any,
    where: str,
    in_file: set[str],
    stored: Callable[[Iterable[str]], set[str]],
) -> tuple[list[PairRecord], list[Problem]]:
    """The section's records and every problem with them. A record must name two
    memories of the file (or, on an import into a store that has them, of the store),
    a known kind, a holder that is one of the two or none, and a resolution only with
    the time it was made."""
    if section is None:
        return [], []
    if not isinstance(section, list):
        return [], [Problem(f"{where}: {SECTION}", "must be a list of conflict records")]
    named: set[str] = set()
    for item in section:
        if isinstance(item, dict):
            named.update(item[side] for side in ("a", "b") if isinstance(item.get(side), str))
    known = in_file | stored(sorted(named - in_file))
    records: list[PairRecord] = []
    problems: list[Problem] = []
    for index, item in enumerate(section):
        place = f"{where}: {SECTION}[{index}]"
        found = _problems(item, known)
        if found:
            problems.extend(Problem(place, what) for what in found)
            continue
        records.append(
            PairRecord(
                item["a"],
                item["b"],
                item["kind"],
                item.get("holder"),
                item["detected_at"],
                item.get("evidence") or {},
                item.get("resolved_at"),
                item.get("resolution"),
                item.get("note"),
            )
        )
    return records, problems


def _problems(item: Any, known: set[str]) -> list[str]:
    if not isinstance(item, dict):
        return ["must be an object with 'a', 'b', 'kind' and 'detected_at'"]
    found: list[str] = []
    sides = [item.get("a"), item.get("b")]
    for side, value in zip(("a", "b"), sides, strict=True):
        if not isinstance(value, str) or not value:
            found.append(f"'{side}' must be a memory id")
        elif value not in known:
            found.append(f"'{side}' {value!r} is no memory of the file or the store")
    if sides[0] == sides[1] and isinstance(sides[0], str):
        found.append("'a' and 'b' are the same memory")
    if item.get("kind") not in KINDS:
        found.append(f"'kind' must be one of {', '.join(KINDS)}")
    holder = item.get("holder")
    if holder is not None and holder not in sides:
        found.append("'holder' must be the memory in 'a' or in 'b', or null")
    resolution, resolved_at = item.get("resolution"), item.get("resolved_at")
    if resolution is not None and resolution not in RESOLUTIONS:
        found.append(f"'resolution' must be one of {', '.join(RESOLUTIONS)} or null")
    if (resolution is None) != (resolved_at is None):
        found.append("'resolution' and 'resolved_at' go together")
    for name in ("detected_at", "resolved_at"):
        value = item.get(name)
        if value is None and name == "resolved_at":
            continue
        if not isinstance(value, str) or not _is_time(value):
            found.append(f"'{name}' must be an ISO-8601 time")
    if not isinstance(item.get("evidence") or {}, dict):
        found.append("'evidence' must be an object")
    if item.get("note") is not None and not isinstance(item.get("note"), str):
        found.append("'note' must be text or null")
    return found


def _is_time(value: str) -> bool:
    try:
        parse_time(value)
    except ValueError:
        return False
    return True


def restore(store: MemoryStore, records: Sequence[PairRecord], renamed: Mapping[str, str]) -> int:
    """Write the records the store lacks, in one transaction; how many were written."""
    written = 0
    with store.writing():
        for record in records:
            row = record.row(renamed)
            if row[0] != row[1] and table.restore_row(store, row):
                written += 1
    return written
