"""The lexical index: owner of the FTS5 table `memory_fts` (one row per memory and one
per chunk of a long memory, with the project as a token column), the words of a search
(`fts_terms`, `fts_query`) and BM25 search with the pruning of very common words.

`FullTextIndex` is a part of `MemoryStore`, which writes these rows in the same
transaction as the memory they index (`services.storage.memories`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import peewee as pw

from services.memory import Memory
from services.storage.database import SqliteStore
from services.storage.migrations import FTS_TABLE_SQL, project_token
from services.text.chunking import Chunk
from services.text.words import KEYWORD_STOPWORDS

_FTS_WORD = re.compile(r"\w+", re.UNICODE)

# Words found in more than this share of the searched memories add almost nothing to
# BM25 but make FTS5 rank most rows; they are left out of the match (see `lexical`),
# and of the rest only the rarest MAX_MATCH_TERMS are matched. At 100k memories this
# took the keyword stage's p95 from 50 to 30 ms for 0.855 → 0.853 lexical recall@10.
COMMON_TERM_SHARE = 0.25
MAX_MATCH_TERMS = 8
PRUNE_FROM_ROWS = 1000
_DF_CACHE_LIMIT = 50_000


_BM25 = "bm25(memory_fts, 4.0, 1.0, 2.0, 2.0, 0.0)"  # title, content, tags, refs, project


@dataclass(frozen=True)
class LexicalHit:
    memory_id: str
    chunk_index: int
    score: float  # -bm25(): larger is better


def fts_terms(text: str, max_terms: int = 64) -> list[str]:
    """The first `max_terms` distinct search words of free text, without stopwords, in
    order. Reads the text only until it has them: a 5 MB memory costs no more than its
    start."""
    terms: dict[str, None] = {}  # ordered and with O(1) membership
    if max_terms <= 0:
        return []
    for match in _FTS_WORD.finditer(text.lower()):
        for part in match.group().split("_"):
            if part and part not in KEYWORD_STOPWORDS and part not in terms:
                terms[part] = None
                if len(terms) >= max_terms:
                    return list(terms)
    return list(terms)


def fts_query(text: str, max_terms: int = 64) -> str | None:
    """An FTS5 MATCH expression (OR of quoted terms) for free text, or None if empty."""
    terms = fts_terms(text, max_terms)
    return " OR ".join(f'"{term}"' for term in terms) if terms else None


def _best_per_memory(rows: Sequence[tuple[str, int, float]]) -> dict[str, LexicalHit]:
    """The first (best ranked) row of each memory, in rank order."""
    best: dict[str, LexicalHit] = {}
    for memory_id, chunk_idx, rank in rows:
        if memory_id not in best:
            best[memory_id] = LexicalHit(memory_id, int(chunk_idx), -float(rank))
    return best


class FullTextIndex(SqliteStore):
    """The `memory_fts` rows of the memories and BM25 search over them."""

    _fts_ok: bool | None
    _df_cache: dict[tuple[str, str], int]
    _term_projects: dict[str, dict[str, int]]
    _project_sizes: dict[str, int] | None

    # --- writes (inside the caller's transaction) -------------------------------------------

    def _fts_insert(self, memory: Memory, chunks: Sequence[Chunk]) -> None:
        """The rows of one memory: the whole of it, and each chunk when there are several."""
        if not self.fts_available():
            return
        self._forget_counts()  # they move with every write (a small store's most)
        project = project_token(memory.project)
        rows = [
            (
                memory.title,
                memory.content,
                " ".join(memory.tags),
                " ".join(memory.file_refs),
                project,
                memory.id,
                -1,
            )
        ]
        if len(chunks) > 1:
            rows.extend(
                (memory.title, chunk.text, "", "", project, memory.id, chunk.index)
                for chunk in chunks
            )
        self.database.connection().executemany(
            "INSERT INTO memory_fts (title, content, tags, refs, project, memory_id, chunk_idx) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    def _forget_counts(self) -> None:
        self._df_cache.clear()
        self._term_projects.clear()
        self._project_sizes = None

    def _fts_delete(self, memory_id: str) -> None:
        self._forget_counts()
        if self.fts_available():
            self.database.execute_sql("DELETE FROM memory_fts WHERE memory_id = ?", (memory_id,))

    def _fts_recreate(self) -> None:
        """An empty lexical index as the migrations leave it (the rows follow)."""
        self.database.execute_sql("DROP TABLE IF EXISTS memory_fts")
        self.database.execute_sql(FTS_TABLE_SQL)
        self._fts_ok = True
        self._forget_counts()

    # --- reads ------------------------------------------------------------------------------

    def fts_available(self) -> bool:
        """Whether the FTS5 table is usable; checked on every call (it is cheap) since the
        table can be dropped or rebuilt while the store is open."""
        try:
            self.database.execute_sql("SELECT 1 FROM memory_fts LIMIT 1")
            self._fts_ok = True
        except (pw.OperationalError, sqlite3.OperationalError):
            self._fts_ok = False
        return self._fts_ok

    def _document_frequency(self, scope: str, term: str) -> int:
        """Rows of the FTS index in `scope` (a project column filter, or "") containing
        `term`; cached, since it changes slowly and only matters roughly."""
        key = (scope, term)
        cached = self._df_cache.get(key)
        if cached is None:
            if len(self._df_cache) > _DF_CACHE_LIMIT:
                self._df_cache.clear()
            expression = f'{scope}"{term}"' if term else scope.removesuffix(" AND ")
            row = self.database.execute_sql(
                "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", [expression]
            ).fetchone()
            cached = self._df_cache[key] = int(row[0])
        return cached

    def _selective_terms(self, terms: list[str], scope: str) -> list[str]:
        """Leave out terms that occur in most rows, keeping at least the two rarest."""
        if len(terms) <= 2:
            return terms
        total = self._document_frequency(scope, "") if scope else self._whole_rows()
        if total < PRUNE_FROM_ROWS:
            return terms  # ranking every match is cheap; keep BM25 exact
        frequency = {term: self._document_frequency(scope, term) for term in terms}
        kept = [t for t in terms if 0 < frequency[t] <= COMMON_TERM_SHARE * max(total, 1)]
        if len(kept) < 2:
            present = sorted((t for t in terms if frequency[t]), key=frequency.__getitem__)
            kept = present[:2]
        if len(kept) > MAX_MATCH_TERMS:  # the rarest words carry BM25; the rest cost time
            rarest = set(sorted(kept, key=lambda t: (frequency[t], t))[:MAX_MATCH_TERMS])
            kept = [t for t in kept if t in rarest]
        return kept

    def lexical(
        self, text: str, limit: int, project: str | None = None, extra: Sequence[str] = ()
    ) -> list[LexicalHit]:
        """Best BM25 hits for free text, one per memory (its best row). Very common
        words are left out of the match: they barely move BM25 and cost the most.
        `extra` words (acronyms the text spells out, the other forms of its abbreviated
        words) join the match after that choice, so a rare one cannot push the text's
        own words out."""
        if not self.fts_available():
            return []
        scope = f"project : {project_token(project)} AND " if project is not None else ""
        with self._reading():
            terms = self._selective_terms(fts_terms(text), scope)
            terms += [t for t in fts_terms(" ".join(extra)) if t not in terms]
            if not terms:
                return []
            expression = scope + "(" + " OR ".join(f'"{term}"' for term in terms) + ")"
            rows = self.database.execute_sql(
                f"SELECT memory_id, chunk_idx, {_BM25} AS rank "
                "FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT ?",
                [expression, limit * 4],
            ).fetchall()
            best = _best_per_memory(rows)
            if len(best) < limit and len(rows) == limit * 4:
                # One long memory's chunks filled the rows (a pasted 2 MB log matches
                # a word in every chunk): rank each memory by its best row instead.
                best = _best_per_memory(
                    self.database.execute_sql(
                        "WITH hits AS MATERIALIZED ("
                        f"SELECT memory_id, chunk_idx, {_BM25} AS rank "
                        "FROM memory_fts WHERE memory_fts MATCH ?) "
                        "SELECT memory_id, chunk_idx, min(rank) FROM hits "
                        "GROUP BY memory_id ORDER BY min(rank) LIMIT ?",
                        [expression, limit],
                    ).fetchall()
                )
        return list(best.values())[:limit]

    def phrase_candidates(self, phrase: str, limit: int, project: str | None) -> list[str]:
        """Memory ids whose text contains the words of `phrase` in order (identifier lookup)."""
        words = [w for part in _FTS_WORD.findall(phrase.lower()) for w in part.split("_") if w]
        if not words or not self.fts_available():
            return []
        expression = '"' + " ".join(words) + '"'
        if project is not None:
            expression = f"project : {project_token(project)} AND {expression}"
        sql = "SELECT DISTINCT memory_id FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?"
        with self._reading():
            rows = self.database.execute_sql(sql, [expression, limit]).fetchall()
        return [str(row[0]) for row in rows]

    def term_counts(
        self, projects: Sequence[str], terms: Sequence[str]
    ) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
        """Memories in each of `projects` and in all (key ""), and memories holding
        each of `terms` by (project or "", term). Only the terms the keyword stage would
        match are counted (the rarest, not in most rows): the others say little about
        where a question belongs. Counts are cached until the next write."""
        if not self.fts_available():
            return {}, {}
        with self._reading():
            total = self._whole_rows()
            kept = [
                t
                for t in self._selective_terms(list(terms), "")
                if total < PRUNE_FROM_ROWS or self._document_frequency("", t) <= 0.05 * total
            ]
            by_project = self._memories_by_project()
            tokens = {project_token(p): p for p in projects}
            rows = {"": sum(by_project.values()), **{p: by_project.get(p, 0) for p in projects}}
            holding: dict[tuple[str, str], int] = {}
            for term in kept:
                counts = self._term_by_project(term)
                holding[("", term)] = sum(counts.values())
                for token, project in tokens.items():
                    holding[(project, term)] = counts.get(token, 0)
        return rows, holding

    def _whole_rows(self) -> int:
        """`fts_row_count`, cached until the next write like the term counts."""
        cached = self._df_cache.get(("#rows", ""))
        if cached is None:
            cached = self._df_cache[("#rows", "")] = self.fts_row_count()
        return cached

    def _memories_by_project(self) -> dict[str, int]:
        if self._project_sizes is None:
            found = self.database.execute_sql(
                "SELECT project, count(*) FROM memory GROUP BY project"
            ).fetchall()
            self._project_sizes = {p: int(n) for p, n in found if p is not None}
            self._project_sizes[""] = sum(int(n) for p, n in found if p is None)
        return self._project_sizes

    def _term_by_project(self, term: str) -> dict[str, int]:
        """Project token → memories whose whole-memory row holds `term`."""
        if term not in self._term_projects:
            found = self.database.execute_sql(
                "SELECT project, count(*) FROM memory_fts WHERE memory_fts MATCH ? "
                "AND chunk_idx = -1 GROUP BY project",
                [f'"{term}"'],
            ).fetchall()
            self._term_projects[term] = {token: int(n) for token, n in found}
        return self._term_projects[term]

    def fts_row_count(self) -> int:
        if not self.fts_available():
            return 0
        with self._reading():
            row = self.database.execute_sql(
                "SELECT count(*) FROM memory_fts WHERE chunk_idx = -1"
            ).fetchone()
        return int(row[0])
