"""Selections of the `memory` table: a `MemoryFilter` compiled to one SQL clause, the
memories that pass it (by page, by ids, counted), the lookups prediction is made of
(file references, branches, most used, frequent tags), and the search's (which projects a
query names, the memories written just before and after another).

`MemoryQueries` is a part of `MemoryStore` (`services.storage.memories`), the owner of
the `memory` table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import peewee as pw

from services.filters import MemoryFilter
from services.memory import Memory
from services.storage.database import MemoryRow, SqliteStore, batches
from services.storage.memory_rows import COLUMNS, columns_to_memory, row_to_memory

AROUND_TEXT = " \t\r\n"  # whitespace around a text that does not make it another text
_NEAR_IDS = 2_000  # ids an unknown one is compared with, for "did you mean"


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` are equal or one substitution, insertion, deletion or swap of
    two neighbours apart."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    start = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    if len(a) == len(b):
        substituted = a[start + 1 :] == b[start + 1 :]
        swapped = (
            a[start : start + 2] == b[start : start + 2][::-1] and a[start + 2 :] == b[start + 2 :]
        )
        return substituted or swapped
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1 :] == shorter[start:]


_DIGITS = re.compile(r"\d+")


def _unpadded(memory_id: str) -> str:
    """The id with each number's leading zeros dropped."""
    return _DIGITS.sub(lambda match: str(int(match.group())), memory_id)


class MemoryQueries(SqliteStore):
    """Filtered reads of the memories."""

    def unknown_id(self, memory_id: str) -> str:
        """ "no memory with id 'x'", with the stored id it is closest to when one is
        spelt almost the same (a typo in a copied id: "did you mean …?"). It looks at a
        bounded number of ids (`_NEAR_IDS`): a miss inside a loop (an out-of-date
        finding answered by `rem run --auto`) stays cheap at 100,000 memories."""
        import difflib

        prefix = memory_id.rsplit("-", 1)[0] if "-" in memory_id else memory_id[:3]
        with self._reading():
            # `startswith` is SQLite's LIKE: "SCR" finds the ids starting "scr-" too
            same_start = MemoryRow.select(MemoryRow.id).where(MemoryRow.id.startswith(prefix[:40]))
            ids = [str(row.id) for row in same_start.limit(_NEAR_IDS)]
            if not ids:  # the typo is in the project part: any id (of the first few)
                ids = [str(row.id) for row in MemoryRow.select(MemoryRow.id).limit(_NEAR_IDS)]
        wanted = memory_id.lower()
        # One slip of a key in a short id ("scr-2l" for "scr-21", "SCR-12") is under
        # difflib's bar, so the one id a single edit away counts first.
        near = [i for i in ids if i.lower() == wanted]  # only the case differs
        # "jinja-n3" for "jinja-n03": one number, padded; closer than "jinja-n39"
        near = near or [i for i in ids if _unpadded(i.lower()) == _unpadded(wanted)]
        near = near or [i for i in ids if _one_edit(wanted, i.lower())]
        if len(near) != 1:  # none, or several one slip away: the closest by difflib
            near = difflib.get_close_matches(memory_id, ids, n=1, cutoff=0.85)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return f"no memory with id {memory_id!r}{hint}"

    def _where(self, flt: MemoryFilter) -> list[Any]:
        return [pw.SQL(*self._filter_sql(flt))]

    def _filter_sql(self, flt: MemoryFilter) -> tuple[str, list[Any]]:
        """The filter as one raw SQL clause over table alias t1 (peewee compiles big IN
        lists slowly, and this is the search hot path)."""
        clauses: list[str] = []
        params: list[Any] = []

        def add(clause: str, *values: Any) -> None:
            clauses.append(clause)
            params.extend(values)

        def marks(count: int) -> str:
            return ", ".join("?" for _ in range(count))

        if flt.project is not None:
            add("t1.project = ?", flt.project)
        if flt.types:
            add(f"t1.type IN ({marks(len(flt.types))})", *[t.value for t in flt.types])
        if flt.tags:
            add(
                f"EXISTS (SELECT 1 FROM json_each(t1.tags) WHERE value IN "
                f"({marks(len(flt.tags))}))",
                *flt.tags,
            )
        if flt.created_after is not None:
            add("t1.created_ts >= ?", flt.created_after.timestamp())
        if flt.created_before is not None:
            add("t1.created_ts < ?", flt.created_before.timestamp())
        if flt.exclude_session is not None:
            add("(t1.session_id IS NULL OR t1.session_id != ?)", flt.exclude_session)
        if flt.min_confidence is not None:
            add("t1.confidence >= ?", flt.min_confidence)
        tiers = [t.value for t in flt.mode.tiers]
        if flt.mode.includes_superseded:
            # History stays findable in deep mode even after a superseded memory has
            # been archived (merges and the staleness review archive them).
            add(f"(t1.tier IN ({marks(len(tiers))}) OR t1.superseded_by IS NOT NULL)", *tiers)
        else:
            add(f"t1.tier IN ({marks(len(tiers))})", *tiers)
            add("t1.superseded_by IS NULL")
        if flt.ids:
            add(f"t1.id IN ({marks(len(flt.ids))})", *flt.ids)
        return " AND ".join(clauses), params

    def query(
        self,
        flt: MemoryFilter,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[Memory]:
        select = MemoryRow.select().where(*self._where(flt)).namedtuples()
        order = MemoryRow.created_ts.desc() if newest_first else MemoryRow.created_ts.asc()
        select = select.order_by(order, MemoryRow.id)
        if limit is not None:
            select = select.limit(limit).offset(offset)
        with self._reading():
            return [row_to_memory(row) for row in select]

    def filter_ids(self, ids: Sequence[str], flt: MemoryFilter) -> dict[str, Memory]:
        """Those of `ids` that pass `flt`, loaded."""
        found: dict[str, Memory] = {}
        with self._reading():
            for batch in batches(ids):
                marks = ", ".join("?" for _ in batch)
                clause, params = self._filter_sql(flt)
                cursor = self.database.execute_sql(
                    f"SELECT {COLUMNS} FROM memory t1 INDEXED BY sqlite_autoindex_memory_1 "
                    f"WHERE t1.id IN ({marks}) AND {clause}",
                    [*batch, *params],
                )
                for values in cursor.fetchall():
                    memory = columns_to_memory(values)
                    found[memory.id] = memory
        return found

    def projects_among(self, names: Iterable[str]) -> set[str]:
        """Which of `names` are projects that hold memories (the project index answers)."""
        wanted = list(dict.fromkeys(names))
        found: set[str] = set()
        with self._reading():
            for batch in batches(wanted):
                query = (
                    MemoryRow.select(MemoryRow.project)
                    .where(MemoryRow.project.in_(batch))
                    .distinct()
                )
                found.update(row.project for row in query if row.project is not None)
        return found

    def written_next(self, ids: Sequence[str], within_s: float) -> dict[str, str]:
        """Memory id → the memory of the same project written right after it (by time,
        then by order of writing, so turns imported with one timestamp keep their
        order), when that is at most `within_s` seconds later."""
        return {
            memory_id: after
            for memory_id, (_, after) in self._before_and_after(ids, within_s).items()
            if after is not None
        }

    def written_around(self, ids: Sequence[str], within_s: float) -> dict[str, tuple[str, ...]]:
        """Memory id → the memories of the same project written right before and right
        after it (as `written_next` orders them), each at most `within_s` seconds away."""
        found: dict[str, tuple[str, ...]] = {}
        for memory_id, pair in self._before_and_after(ids, within_s).items():
            around = tuple(neighbour for neighbour in pair if neighbour is not None)
            if around:
                found[memory_id] = around
        return found

    def _before_and_after(
        self, ids: Sequence[str], within_s: float
    ) -> dict[str, tuple[str | None, str | None]]:
        """Memory id → (written right before, written right after) in its project, each
        within `within_s` seconds: the rows near each memory read by the time index, in
        one query per batch of ids, ordered by time and then by order of writing."""
        wanted = list(dict.fromkeys(ids))
        rows: list[tuple[Any, ...]] = []
        with self._reading():
            for batch in batches(wanted, 400):  # two bounds a memory: under SQLite's limit
                marks = self.database.execute_sql(
                    f"SELECT created_ts FROM memory WHERE id IN ({', '.join('?' * len(batch))})",
                    batch,
                ).fetchall()
                if not marks:
                    continue
                ranges = " OR ".join("created_ts BETWEEN ? AND ?" for _ in marks)
                bounds = [b for (ts,) in marks for b in (ts - within_s, ts + within_s)]
                rows.extend(
                    self.database.execute_sql(
                        f"SELECT id, project, created_ts, rowid FROM memory WHERE {ranges}",
                        bounds,
                    ).fetchall()
                )
        timelines: dict[Any, list[tuple[float, int, str]]] = {}
        for memory_id, project, created_ts, rowid in set(rows):
            timelines.setdefault(project, []).append((created_ts, rowid, str(memory_id)))
        place: dict[str, tuple[list[tuple[float, int, str]], int]] = {}
        for timeline in timelines.values():
            timeline.sort()
            for index, (_, _, memory_id) in enumerate(timeline):
                place[memory_id] = (timeline, index)
        found: dict[str, tuple[str | None, str | None]] = {}
        for memory_id in wanted:
            if memory_id not in place:
                continue
            timeline, index = place[memory_id]
            at = timeline[index][0]
            before = timeline[index - 1] if index > 0 else None
            after = timeline[index + 1] if index + 1 < len(timeline) else None
            found[memory_id] = (
                before[2] if before and at - before[0] <= within_s else None,
                after[2] if after and after[0] - at <= within_s else None,
            )
        return found

    def _current_with_text_scan(self, project: str | None, content: str) -> list[Memory]:
        """`MemoryStore.current_with_text` by reading every memory of `project` (about
        0.1 s at 40,000): where the keyword index cannot narrow it down."""
        same_project = (
            MemoryRow.project.is_null() if project is None else (MemoryRow.project == project)
        )
        with self._reading():
            rows = (
                MemoryRow.select()
                .where(
                    pw.fn.trim(MemoryRow.content, AROUND_TEXT) == content.strip(AROUND_TEXT),
                    same_project,
                    MemoryRow.superseded_by.is_null(),
                    MemoryRow.tier != "archived",
                )
                .order_by(MemoryRow.created_ts, MemoryRow.id)
            )
            return [row_to_memory(row) for row in rows]

    def count(self, flt: MemoryFilter | None = None) -> int:
        with self._reading():
            if flt is None:
                return int(MemoryRow.select().count())
            return int(MemoryRow.select().where(*self._where(flt)).count())

    # --- prediction's lookups -------------------------------------------------------------

    def current_file_refs(self, project: str | None) -> list[tuple[str, list[str]]]:
        """(id, file_refs) of the current (not superseded, not archived) memories that
        point at files, of `project` when given."""
        sql = (
            "SELECT id, file_refs FROM memory WHERE file_refs != '[]' "
            "AND superseded_by IS NULL AND tier != 'archived'"
        )
        params: list[Any] = []
        if project is not None:
            sql += " AND project = ?"
            params.append(project)
        rows = self.database.execute_sql(sql, params).fetchall()
        return [(str(memory_id), json.loads(raw)) for memory_id, raw in rows]

    def on_branch(self, branch: str, slug: str, flt: MemoryFilter, limit: int = 200) -> list[str]:
        """Memories passing `flt` recorded on `branch` or tagged `slug`, newest first."""
        clause, params = self._filter_sql(flt)
        rows = self.database.execute_sql(
            "SELECT id FROM memory t1 WHERE (t1.branch = ? OR EXISTS (SELECT 1 FROM "
            f"json_each(t1.tags) WHERE value = ?)) AND {clause} "
            "ORDER BY t1.created_ts DESC LIMIT ?",
            [branch, slug, *params, limit],
        ).fetchall()
        return [str(row[0]) for row in rows]

    def most_used(self, flt: MemoryFilter, limit: int) -> list[Memory]:
        """Memories passing `flt`, most cited and used first, then most confident, newest."""
        clause, params = self._filter_sql(flt)
        rows = self.database.execute_sql(
            f"SELECT {COLUMNS} FROM memory t1 WHERE {clause} ORDER BY "
            "(t1.citation_count + t1.use_count) DESC, t1.confidence DESC, "
            "t1.created_ts DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [columns_to_memory(values) for values in rows]

    def tag_counts(self, flt: MemoryFilter, limit: int) -> list[tuple[str, int]]:
        """The most frequent tags of the memories passing `flt`, with their counts."""
        clause, params = self._filter_sql(flt)
        rows = self.database.execute_sql(
            "SELECT value, count(*) AS uses FROM memory t1, json_each(t1.tags) "
            f"WHERE {clause} GROUP BY value ORDER BY uses DESC, value LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [(str(tag), int(uses)) for tag, uses in rows]
