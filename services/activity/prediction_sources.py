"""The lookups prediction is made of, each a cheap query on the store: memories that
mention an identifier, point at a path, belong to a branch, quote an error line; a
project's conventions, workflows and topics; what users cited after a signal.

Everything is "as of" a time: memories created later do not exist yet (a replayed
activity log is evaluated event by event).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import Any

from services.filters import MemoryFilter
from services.memory import Memory, now_iso
from services.storage.memories import MemoryStore
from services.text.identifiers import mentions
from services.types import MemoryType

PER_IDENTIFIER_LIMIT = 200


@dataclass(frozen=True)
class FileRefMatch:
    memory_id: str
    exact: bool  # the ref names this path (else a glob or folder matches it)


def ref_matches(ref: str, path: str) -> bool | None:
    """True when `ref` names `path` exactly, False when it matches by glob or as a folder
    prefix, None when it does not match."""
    ref = ref.strip().removeprefix("./")
    if ref == path:
        return True
    if any(ch in ref for ch in "*?["):
        if fnmatchcase(path, ref):
            return False
        if ref.endswith("/**") and path.startswith(ref[:-3] + "/"):
            return False
        return None
    if path.startswith(ref.rstrip("/") + "/"):
        return False
    return None


def module_of(path: str) -> str:
    """The folder of a path, the unit "same module" refers to."""
    return str(PurePosixPath(path).parent)


class PredictionSources:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._file_refs: dict[str | None, tuple[Any, list[tuple[str, list[str]]]]] = {}
        self._project_cache: dict[tuple[str | None, str], tuple[Any, Any]] = {}

    def _filter(self, project: str | None, before: datetime | None, **extra: Any) -> MemoryFilter:
        return MemoryFilter(project=project, created_before=before, **extra)

    def load(
        self, ids: list[str], project: str | None, before: datetime | None, **extra: Any
    ) -> dict[str, Memory]:
        """Those of `ids` that exist as of `before`, are current and belong to `project`."""
        if not ids:
            return {}
        return self.store.filter_ids(ids, self._filter(project, before, **extra))

    def mentioning(
        self, identifiers: list[str], project: str | None, before: datetime | None
    ) -> dict[str, list[str]]:
        """Memory id → the identifiers it mentions as whole tokens."""
        candidates: dict[str, list[str]] = {}
        for identifier in identifiers:
            for memory_id in self.store.phrase_candidates(
                identifier, PER_IDENTIFIER_LIMIT, project
            ):
                candidates.setdefault(memory_id, []).append(identifier)
        loaded = self.load(list(candidates), project, before)
        found: dict[str, list[str]] = {}
        for memory_id, memory in loaded.items():
            text = f"{memory.title}\n{memory.content}"
            named = [i for i in candidates[memory_id] if mentions(text, i)]
            if named:
                found[memory_id] = named
        return found

    def file_refs(self, project: str | None) -> list[tuple[str, list[str]]]:
        """(id, file_refs) of the project's current memories that point at files; cached
        until the store changes."""
        generation = self.store.generation()
        cached = self._file_refs.get(project)
        if cached is not None and cached[0] == generation:
            return cached[1]
        sql = (
            "SELECT id, file_refs FROM memory WHERE file_refs != '[]' "
            "AND superseded_by IS NULL AND tier != 'archived'"
        )
        params: list[Any] = []
        if project is not None:
            sql += " AND project = ?"
            params.append(project)
        rows = self.store.database.execute_sql(sql, params).fetchall()
        refs = [(str(memory_id), json.loads(raw)) for memory_id, raw in rows]
        self._file_refs[project] = (generation, refs)
        return refs

    def pointing_at(self, path: str, project: str | None) -> list[FileRefMatch]:
        """Memories whose file_refs name `path`, or a glob or folder that holds it."""
        matches: list[FileRefMatch] = []
        for memory_id, refs in self.file_refs(project):
            best: bool | None = None
            for ref in refs:
                result = ref_matches(ref, path)
                if result:
                    best = True
                    break
                if result is False:
                    best = False
            if best is not None:
                matches.append(FileRefMatch(memory_id, best))
        return matches

    def in_module(self, path: str, project: str | None, limit: int = 40) -> list[str]:
        """Memories pointing at another file of the same folder (related, not exact)."""
        folder = module_of(path)
        if folder in ("", "."):
            return []
        found: list[str] = []
        for memory_id, refs in self.file_refs(project):
            if any(ref != path and module_of(ref) == folder for ref in refs):
                found.append(memory_id)
                if len(found) >= limit:
                    break
        return found

    def on_branch(
        self, branch: str, slug: str, project: str | None, before: datetime | None
    ) -> list[str]:
        """Memories recorded on `branch` or tagged with its slug."""
        sql = (
            "SELECT id FROM memory t1 WHERE (t1.branch = ? OR EXISTS (SELECT 1 FROM "
            "json_each(t1.tags) WHERE value = ?))"
        )
        clause, params = self.store._filter_sql(self._filter(project, before))
        rows = self.store.database.execute_sql(
            f"{sql} AND {clause} ORDER BY t1.created_ts DESC LIMIT 200", [branch, slug, *params]
        ).fetchall()
        return [str(row[0]) for row in rows]

    def quoting(
        self, line: str, project: str | None, before: datetime | None, types: tuple[MemoryType, ...]
    ) -> list[str]:
        """Memories of `types` whose content quotes `line` verbatim."""
        if not line.strip():
            return []
        ids = self.store.phrase_candidates(line[:300], PER_IDENTIFIER_LIMIT, project)
        loaded = self.load(ids, project, before, types=types)
        return [m.id for m in loaded.values() if line in m.content or line in m.title]

    def similar_text(
        self,
        text: str,
        project: str | None,
        before: datetime | None,
        types: tuple[MemoryType, ...],
        limit: int,
    ) -> list[tuple[str, float]]:
        """Keyword (BM25) neighbours of `text` among memories of `types`."""
        hits = self.store.lexical(text, limit * 4, project)
        loaded = self.load([h.memory_id for h in hits], project, before, types=types)
        ranked = [(h.memory_id, h.score) for h in hits if h.memory_id in loaded]
        return ranked[:limit]

    def of_types(
        self,
        project: str | None,
        before: datetime | None,
        types: tuple[MemoryType, ...],
        limit: int,
    ) -> list[Memory]:
        """The project's memories of `types`, most used and most confident first."""
        flt = self._filter(project, before, types=types)
        clause, params = self.store._filter_sql(flt)
        from services.storage.memories import _COLUMNS, _ColumnRow, _row_to_memory

        rows = self.store.database.execute_sql(
            f"SELECT {_COLUMNS} FROM memory t1 WHERE {clause} ORDER BY "
            "(t1.citation_count + t1.use_count) DESC, t1.confidence DESC, t1.created_ts DESC "
            "LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [_row_to_memory(_ColumnRow(*values)) for values in rows]

    def topics(self, project: str | None, before: datetime | None, limit: int) -> list[str]:
        """The project's most frequent tags: what the user can ask about."""
        clause, params = self.store._filter_sql(self._filter(project, before))
        rows = self.store.database.execute_sql(
            "SELECT value, count(*) AS uses FROM memory t1, json_each(t1.tags) "
            f"WHERE {clause} GROUP BY value ORDER BY uses DESC, value LIMIT ?",
            [*params, limit * 3],
        ).fetchall()
        counts = Counter({str(tag): int(uses) for tag, uses in rows})
        return [tag for tag, _ in counts.most_common(limit)]

    def used_at_hour(self, project: str | None, hour: int, limit: int) -> list[str]:
        """Workflows the user retrieved, cited or used within an hour of `hour` (UTC)."""
        hours = [f"{(hour + delta) % 24:02d}" for delta in (-1, 0, 1)]
        sql = (
            "SELECT u.memory_id, count(*) AS uses FROM usage_event u JOIN memory m "
            "ON m.id = u.memory_id WHERE m.type = 'workflow' AND m.superseded_by IS NULL "
            "AND u.event != 'ignored' AND substr(u.at, 12, 2) IN (?, ?, ?)"
        )
        params: list[Any] = list(hours)
        if project is not None:
            sql += " AND m.project = ?"
            params.append(project)
        sql += " GROUP BY u.memory_id ORDER BY uses DESC LIMIT ?"
        rows = self.store.database.execute_sql(sql, [*params, limit]).fetchall()
        return [str(row[0]) for row in rows]

    # --- learning ------------------------------------------------------------------------

    def affinities(self, signals: list[str], limit: int = 20) -> dict[str, float]:
        """Memory id → learned weight for these signals (citations after them)."""
        if not signals:
            return {}
        marks = ", ".join("?" for _ in signals)
        rows = self.store.database.execute_sql(
            f"SELECT memory_id, sum(weight) AS w FROM signal_affinity WHERE signal IN ({marks}) "
            "GROUP BY memory_id ORDER BY w DESC LIMIT ?",
            [*signals, limit],
        ).fetchall()
        return {str(memory_id): float(weight) for memory_id, weight in rows}

    def learn(self, signals: list[str], memory_ids: list[str], weight: float = 1.0) -> None:
        """Credit `memory_ids` (cited or used) to the signals that preceded them."""
        if not signals or not memory_ids:
            return
        at = now_iso()
        with self.store.writing():
            self.store.database.connection().executemany(
                "INSERT INTO signal_affinity (signal, memory_id, weight, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (signal, memory_id) DO UPDATE SET "
                "weight = weight + excluded.weight, updated_at = excluded.updated_at",
                [(s, m, weight, at) for s in signals for m in memory_ids],
            )
