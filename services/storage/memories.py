"""`MemoryStore`: memories in SQLite, the source of truth, with their chunks and the FTS5
lexical index kept in the same transactions so the two never drift apart.

It knows nothing of vectors: `embedded_model` on each row says which embedding model has
indexed it (NULL means the record waits for embedding).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter, defaultdict, namedtuple
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import peewee as pw

from services.errors import NotFoundError, UserInputError
from services.filters import MemoryFilter
from services.memory import Memory, now_iso, parse_time, title_from_content
from services.storage.database import (
    ChunkRow,
    MemoryRow,
    MetaRow,
    UsageEventRow,
    describe_sqlite_error,
    open_database,
)
from services.storage.migrations import FTS_TABLE_SQL, project_token
from services.text.chunking import Chunk, chunk_content
from services.text.words import STOPWORDS
from services.types import MemoryType, Scope, Source, Tier, UsageEvent

_FTS_WORD = re.compile(r"\w+", re.UNICODE)
# A huge memory (a pasted log) gets vectors for its first chunks only; every chunk stays
# searchable by keywords. Embedding costs ~40 ms a chunk on two cores.
MAX_CHUNK_VECTORS = 256
_TEXT_FIELDS = {"title", "content", "tags", "file_refs"}


@dataclass(frozen=True)
class LexicalHit:
    memory_id: str
    chunk_index: int
    score: float  # -bm25(): larger is better


def fts_terms(text: str, max_terms: int = 64) -> list[str]:
    """The distinct search words of free text, without stopwords, in order."""
    terms: list[str] = []
    for word in _FTS_WORD.findall(text.lower()):
        for part in word.split("_"):
            if part and part not in STOPWORDS and part not in terms:
                terms.append(part)
    return terms[:max_terms]


def fts_query(text: str, max_terms: int = 64) -> str | None:
    """An FTS5 MATCH expression (OR of quoted terms) for free text, or None if empty."""
    terms = fts_terms(text, max_terms)
    return " OR ".join(f'"{term}"' for term in terms) if terms else None


# Words found in more than this share of the searched memories add almost nothing to
# BM25 but make FTS5 rank most rows; they are left out of the match (see `lexical`),
# and of the rest only the rarest MAX_MATCH_TERMS are matched. At 100k memories this
# took the keyword stage's p95 from 50 to 30 ms for 0.855 → 0.853 lexical recall@10.
COMMON_TERM_SHARE = 0.25
MAX_MATCH_TERMS = 8
PRUNE_FROM_ROWS = 1000
_DF_CACHE_LIMIT = 50_000


_COLUMN_NAMES = tuple(MemoryRow._meta.sorted_field_names)
_COLUMNS = ", ".join(f"t1.{name}" for name in _COLUMN_NAMES)
_ColumnRow = namedtuple("_ColumnRow", _COLUMN_NAMES)  # type: ignore[misc]


def _row_to_memory(row: Any) -> Memory:
    """A Memory from a MemoryRow or a named tuple of its columns."""
    return Memory(
        id=row.id,
        type=MemoryType(row.type),
        title=row.title,
        content=row.content,
        project=row.project,
        summary=row.summary,
        compressed=row.compressed,
        index_line=row.index_line,
        tags=json.loads(row.tags),
        file_refs=json.loads(row.file_refs),
        confidence=row.confidence,
        source=Source(row.source),
        session_id=row.session_id,
        task_id=row.task_id,
        role=row.role,
        branch=row.branch,
        scope=Scope(row.scope),
        created_at=row.created_at,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        last_accessed=row.last_accessed,
        retrieval_count=row.retrieval_count,
        citation_count=row.citation_count,
        ignore_count=row.ignore_count,
        use_count=row.use_count,
        supersedes=row.supersedes,
        superseded_by=row.superseded_by,
        tier=Tier(row.tier),
    )


def _memory_to_row_values(memory: Memory) -> dict[str, Any]:
    values = memory.to_dict()
    values["tags"] = json.dumps(memory.tags, ensure_ascii=False)
    values["file_refs"] = json.dumps(memory.file_refs, ensure_ascii=False)
    values["created_ts"] = parse_time(memory.created_at).timestamp()
    values["updated_at"] = now_iso()
    values["embedded_model"] = None
    values["staged_model"] = None
    return values


class MemoryStore:
    """CRUD, filtering and lexical search over the memories in one SQLite file."""

    def __init__(self, path: Path, busy_timeout_ms: int = 5000, max_chunk_tokens: int = 500):
        self.path = path
        self.max_chunk_tokens = max_chunk_tokens
        self.database = open_database(path, busy_timeout_ms)
        self._fts_ok: bool | None = None
        self._df_cache: dict[tuple[str, str], int] = {}

    def close(self) -> None:
        if not self.database.is_closed():
            self.database.close()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """One atomic write; SQLite failures become a StoreUnavailable naming the file."""
        try:
            with self.database.atomic():
                yield
        except (pw.DatabaseError, sqlite3.DatabaseError) as error:
            if isinstance(error, pw.IntegrityError | sqlite3.IntegrityError):
                raise
            raise describe_sqlite_error(error, self.path) from error

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except (pw.DatabaseError, sqlite3.DatabaseError) as error:  # locked, corrupt
            raise describe_sqlite_error(error, self.path) from error

    # --- writes -------------------------------------------------------------------------

    def _insert(self, memory: Memory) -> None:
        MemoryRow.insert(**_memory_to_row_values(memory)).execute()
        self._index_text(memory)

    def _index_text(self, memory: Memory) -> None:
        # Resolved dates of "yesterday", "last Tuesday"… (services.text.dates), same transaction.
        from services.storage.time_index import index_times  # dateparser: on first write

        index_times(self.database.connection(), memory.id, memory.content, memory.created_at)
        chunks = chunk_content(memory.content, self.max_chunk_tokens)
        if len(chunks) > 1:
            ChunkRow.insert_many(
                [
                    {
                        "memory_id": memory.id,
                        "idx": chunk.index,
                        "kind": chunk.kind,
                        "language": chunk.language,
                        "text": chunk.text,
                        "token_count": chunk.token_count,
                    }
                    for chunk in chunks
                ]
            ).execute()
        if not self.fts_available():
            return
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

    def _unindex_text(self, memory_id: str) -> None:
        from services.storage.time_index import unindex_times

        unindex_times(self.database.connection(), memory_id)
        ChunkRow.delete().where(ChunkRow.memory_id == memory_id).execute()
        if self.fts_available():
            self.database.execute_sql("DELETE FROM memory_fts WHERE memory_id = ?", (memory_id,))

    def add(self, memory: Memory) -> Memory:
        """Store one new memory; an existing id is an error."""
        with self.writing():
            if MemoryRow.get_or_none(MemoryRow.id == memory.id) is not None:
                raise UserInputError(f"a memory with id {memory.id!r} already exists")
            self._insert(memory)
        return memory

    def add_many(
        self, memories: Sequence[Memory], replace: bool = False, skip_existing: bool = False
    ) -> tuple[list[Memory], list[str]]:
        """Store many memories in one transaction: all or nothing.

        Existing ids are an error unless `replace` (overwrite) or `skip_existing`.
        Returns (stored, skipped ids).
        """
        repeated = sorted(i for i, n in Counter(m.id for m in memories).items() if n > 1)
        if repeated:
            raise UserInputError(f"ids given more than once: {', '.join(repeated[:10])}")
        existing = self.existing_ids([m.id for m in memories])
        if existing and not (replace or skip_existing):
            shown = ", ".join(sorted(existing)[:10])
            raise UserInputError(
                f"{len(existing)} memories already exist ({shown}); "
                "use --replace to overwrite them or --skip-existing to keep them"
            )
        stored: list[Memory] = []
        skipped: list[str] = []
        with self.writing():
            for memory in memories:
                if memory.id in existing:
                    if skip_existing:
                        skipped.append(memory.id)
                        continue
                    self._delete_rows(memory.id)
                self._insert(memory)
                stored.append(memory)
        return stored, skipped

    def update(self, memory_id: str, changes: dict[str, Any]) -> Memory:
        """Apply validated field changes; text changes re-chunk and re-queue embedding."""
        current = self.get(memory_id)
        data = current.to_dict()
        if (
            "content" in changes
            and "title" not in changes
            and current.title == title_from_content(current.content)
        ):
            data.pop("title")  # a derived title follows the new content
        data.update(changes)
        from services.memory import memory_from_dict

        updated, problems = memory_from_dict(data, where=memory_id)
        if updated is None:
            raise UserInputError("; ".join(p.reason for p in problems))
        text_changed = any(
            getattr(updated, name) != getattr(current, name) for name in _TEXT_FIELDS
        )
        values = _memory_to_row_values(updated)
        with self.writing():
            # Vectors live in per-project collections: a move re-queues them too.
            if not text_changed and updated.project == current.project:
                values.pop("embedded_model")
                values.pop("staged_model")
            MemoryRow.update(**values).where(MemoryRow.id == memory_id).execute()
            if text_changed or updated.project != current.project:
                self._unindex_text(memory_id)
                self._index_text(updated)
            elif updated.created_at != current.created_at:  # dates resolve against it
                connection = self.database.connection()
                from services.storage.time_index import index_times

                index_times(connection, memory_id, updated.content, updated.created_at)
        return updated

    def _delete_rows(self, memory_id: str) -> None:
        self._unindex_text(memory_id)
        MemoryRow.delete().where(MemoryRow.id == memory_id).execute()

    def delete(self, memory_id: str) -> None:
        with self.writing():
            if MemoryRow.get_or_none(MemoryRow.id == memory_id) is None:
                raise NotFoundError(f"no memory with id {memory_id!r}")
            self._delete_rows(memory_id)
            # Its links go with it (consolidation's graph never points at nothing).
            self.database.execute_sql(
                "DELETE FROM memory_link WHERE source = ? OR target = ?", [memory_id, memory_id]
            )

    # --- reads --------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        with self._reading():
            row = MemoryRow.get_or_none(MemoryRow.id == memory_id)
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return _row_to_memory(row)

    def get_many(self, ids: Iterable[str]) -> dict[str, Memory]:
        wanted = list(dict.fromkeys(ids))
        found: dict[str, Memory] = {}
        with self._reading():
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                for row in MemoryRow.select().where(MemoryRow.id.in_(batch)):
                    found[row.id] = _row_to_memory(row)
        return found

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        wanted = list(dict.fromkeys(ids))
        found: set[str] = set()
        with self._reading():
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                query = MemoryRow.select(MemoryRow.id).where(MemoryRow.id.in_(batch))
                found.update(row.id for row in query)
        return found

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
            return [_row_to_memory(row) for row in select]

    def iter_all(self, batch_size: int = 1000) -> Iterator[Memory]:
        """Every memory, oldest first, read in batches (export, reindex)."""
        last_ts, last_id = float("-inf"), ""
        while True:
            with self._reading():
                rows = list(
                    MemoryRow.select()
                    .where(
                        (MemoryRow.created_ts > last_ts)
                        | ((MemoryRow.created_ts == last_ts) & (MemoryRow.id > last_id))
                    )
                    .order_by(MemoryRow.created_ts, MemoryRow.id)
                    .limit(batch_size)
                )
            if not rows:
                return
            for row in rows:
                yield _row_to_memory(row)
            last_ts, last_id = rows[-1].created_ts, rows[-1].id

    def filter_ids(self, ids: Sequence[str], flt: MemoryFilter) -> dict[str, Memory]:
        """Those of `ids` that pass `flt`, loaded."""
        found: dict[str, Memory] = {}
        with self._reading():
            for start in range(0, len(ids), 500):
                batch = list(ids[start : start + 500])
                marks = ", ".join("?" for _ in batch)
                clause, params = self._filter_sql(flt)
                cursor = self.database.execute_sql(
                    f"SELECT {_COLUMNS} FROM memory t1 INDEXED BY sqlite_autoindex_memory_1 "
                    f"WHERE t1.id IN ({marks}) AND {clause}",
                    [*batch, *params],
                )
                for values in cursor.fetchall():
                    row: Any = _ColumnRow(*values)
                    found[row.id] = _row_to_memory(row)
        return found

    def count(self, flt: MemoryFilter | None = None) -> int:
        with self._reading():
            if flt is None:
                return int(MemoryRow.select().count())
            return int(MemoryRow.select().where(*self._where(flt)).count())

    def chunks(self, memory_id: str) -> list[Chunk]:
        """The stored chunks of a memory; a memory that fits in one chunk has none."""
        with self._reading():
            rows = ChunkRow.select().where(ChunkRow.memory_id == memory_id).order_by(ChunkRow.idx)
            return [Chunk(r.idx, r.kind, r.text, r.token_count, r.language) for r in rows]

    def chunks_for(self, memory_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        result: dict[str, list[Chunk]] = {}
        with self._reading():
            for start in range(0, len(memory_ids), 500):
                batch = list(memory_ids[start : start + 500])
                rows = (
                    ChunkRow.select()
                    .where(ChunkRow.memory_id.in_(batch))
                    .order_by(ChunkRow.memory_id, ChunkRow.idx)
                )
                for r in rows:
                    result.setdefault(r.memory_id, []).append(
                        Chunk(r.idx, r.kind, r.text, r.token_count, r.language)
                    )
        return result

    # --- lexical index ------------------------------------------------------------------

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
        total = self._document_frequency(scope, "") if scope else self.fts_row_count()
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

    def lexical(self, text: str, limit: int, project: str | None = None) -> list[LexicalHit]:
        """Best BM25 hits for free text, one per memory (its best row). Very common
        words are left out of the match: they barely move BM25 and cost the most."""
        if not self.fts_available():
            return []
        scope = f"project : {project_token(project)} AND " if project is not None else ""
        with self._reading():
            terms = self._selective_terms(fts_terms(text), scope)
            if not terms:
                return []
            expression = scope + "(" + " OR ".join(f'"{term}"' for term in terms) + ")"
            rows = self.database.execute_sql(
                "SELECT memory_id, chunk_idx, bm25(memory_fts, 4.0, 1.0, 2.0, 2.0, 0.0) AS rank "
                "FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT ?",
                [expression, limit * 4],
            ).fetchall()
        best: dict[str, LexicalHit] = {}
        for memory_id, chunk_idx, rank in rows:
            if memory_id not in best:
                best[memory_id] = LexicalHit(memory_id, int(chunk_idx), -float(rank))
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

    def rebuild_fts(self) -> int:
        """Recreate the lexical index and the chunks from the records; returns the count."""
        count = 0
        with self.writing():
            self.database.execute_sql("DROP TABLE IF EXISTS memory_fts")
            self.database.execute_sql(FTS_TABLE_SQL)
            self._fts_ok = True
            ChunkRow.delete().execute()
            for row in MemoryRow.select():
                self._index_text(_row_to_memory(row))
                count += 1
        return count

    def fts_row_count(self) -> int:
        if not self.fts_available():
            return 0
        with self._reading():
            row = self.database.execute_sql(
                "SELECT count(*) FROM memory_fts WHERE chunk_idx = -1"
            ).fetchone()
        return int(row[0])

    # --- embedding bookkeeping ------------------------------------------------------------

    def pending_embedding(self, model_id: str, limit: int) -> list[Memory]:
        with self._reading():
            rows = (
                MemoryRow.select()
                .where(MemoryRow.embedded_model.is_null() | (MemoryRow.embedded_model != model_id))
                .order_by(MemoryRow.created_ts)
                .limit(limit)
            )
            return [_row_to_memory(row) for row in rows]

    def pending_count(self, model_id: str) -> int:
        with self._reading():
            return int(
                MemoryRow.select()
                .where(MemoryRow.embedded_model.is_null() | (MemoryRow.embedded_model != model_id))
                .count()
            )

    def mark_embedded(self, ids: Sequence[str], model_id: str | None) -> None:
        with self.writing():
            for start in range(0, len(ids), 500):
                batch = list(ids[start : start + 500])
                MemoryRow.update(embedded_model=model_id).where(MemoryRow.id.in_(batch)).execute()

    def unstaged(self, model_id: str, limit: int) -> list[Memory]:
        """Memories not yet embedded by `model_id` during a model change."""
        with self._reading():
            rows = (
                MemoryRow.select()
                .where(MemoryRow.staged_model.is_null() | (MemoryRow.staged_model != model_id))
                .order_by(MemoryRow.created_ts)
                .limit(limit)
            )
            return [_row_to_memory(row) for row in rows]

    def unstaged_count(self, model_id: str) -> int:
        with self._reading():
            return int(
                MemoryRow.select()
                .where(MemoryRow.staged_model.is_null() | (MemoryRow.staged_model != model_id))
                .count()
            )

    def mark_staged(self, ids: Sequence[str], model_id: str) -> None:
        with self.writing():
            for start in range(0, len(ids), 500):
                batch = list(ids[start : start + 500])
                MemoryRow.update(staged_model=model_id).where(MemoryRow.id.in_(batch)).execute()

    def promote_staged(self, model_id: str) -> None:
        """Finish a model change: staged vectors become the serving ones."""
        with self.writing():
            MemoryRow.update(embedded_model=model_id, staged_model=None).where(
                MemoryRow.staged_model == model_id
            ).execute()
            MemoryRow.update(staged_model=None).execute()

    def clear_embedded(self) -> None:
        with self.writing():
            MemoryRow.update(embedded_model=None).execute()

    def expected_vector_count(self, model_id: str) -> int:
        """Vectors the index should hold for `model_id`: one per embedded memory plus one
        per embedded chunk (at most MAX_CHUNK_VECTORS per memory)."""
        with self._reading():
            row = self.database.execute_sql(
                "SELECT (SELECT count(*) FROM memory WHERE embedded_model = ?) + "
                "(SELECT count(*) FROM chunk c JOIN memory m ON m.id = c.memory_id "
                "WHERE m.embedded_model = ? AND c.idx < ?)",
                (model_id, model_id, MAX_CHUNK_VECTORS),
            ).fetchone()
        return int(row[0])

    def pending_vector_count(self, model_id: str) -> int:
        """Vectors still to compute for `model_id` (memories and their chunks): the
        measure of embedding work waiting."""
        with self._reading():
            row = self.database.execute_sql(
                "SELECT (SELECT count(*) FROM memory WHERE embedded_model IS NULL "
                "OR embedded_model != ?) + (SELECT count(*) FROM chunk c JOIN memory m "
                "ON m.id = c.memory_id WHERE (m.embedded_model IS NULL OR "
                "m.embedded_model != ?) AND c.idx < ?)",
                (model_id, model_id, MAX_CHUNK_VECTORS),
            ).fetchone()
        return int(row[0])

    def embedded_ids(self, model_id: str) -> set[str]:
        with self._reading():
            rows = MemoryRow.select(MemoryRow.id).where(MemoryRow.embedded_model == model_id)
            return {row.id for row in rows}

    def all_ids(self) -> set[str]:
        with self._reading():
            return {row.id for row in MemoryRow.select(MemoryRow.id)}

    def generation(self) -> tuple[int, int]:
        """Changes when any connection commits a write: caches key on it."""
        connection = self.database.connection()
        with self._reading():
            version = connection.execute("PRAGMA data_version").fetchone()[0]
        return int(version), int(connection.total_changes)

    # --- meta and usage -------------------------------------------------------------------

    def meta_get(self, key: str) -> str | None:
        with self._reading():
            row = MetaRow.get_or_none(MetaRow.key == key)
        return None if row is None else str(row.value)

    def meta_set(self, key: str, value: str) -> None:
        with self.writing():
            MetaRow.insert(key=key, value=value).on_conflict_replace().execute()

    def record_usage(
        self,
        memory_ids: Sequence[str],
        event: UsageEvent,
        session_id: str | None = None,
        confidence_step: float = 0.0,
        confidence_max: float = 0.95,
    ) -> None:
        """Log a usage event and bump the matching counter (and confidence, on use)."""
        if not memory_ids:
            return
        at = datetime.now(UTC).isoformat(timespec="seconds")
        counter = {
            UsageEvent.RETRIEVED: MemoryRow.retrieval_count,
            UsageEvent.CITED: MemoryRow.citation_count,
            UsageEvent.IGNORED: MemoryRow.ignore_count,
            UsageEvent.USED: MemoryRow.use_count,
        }[event]
        with self.writing():
            UsageEventRow.insert_many(
                [
                    {"memory_id": m, "event": event.value, "session_id": session_id, "at": at}
                    for m in memory_ids
                ]
            ).execute()
            changes: dict[Any, Any] = {counter: counter + 1}
            if event in (UsageEvent.RETRIEVED, UsageEvent.CITED, UsageEvent.USED):
                changes[MemoryRow.last_accessed] = at
            if confidence_step:
                # Capped, but never lowered: a memory above the cap keeps its confidence.
                changes[MemoryRow.confidence] = pw.fn.MAX(
                    MemoryRow.confidence,
                    pw.fn.MIN(confidence_max, MemoryRow.confidence + confidence_step),
                )
            MemoryRow.update(changes).where(MemoryRow.id.in_(list(memory_ids))).execute()


def current_by_project(
    store: MemoryStore, project: str | None = None, consolidated: bool = True
) -> dict[str | None, list[Memory]]:
    """Current memories (not superseded, not archived) by project, oldest first; only
    `project`'s when given; without the consolidated summaries when `consolidated` is
    False."""
    by_project: dict[str | None, list[Memory]] = defaultdict(list)
    for memory in store.iter_all():
        if memory.superseded or memory.tier.value == "archived":
            continue
        if not consolidated and "consolidated" in memory.tags:
            continue
        if project is None or memory.project == project:
            by_project[memory.project].append(memory)
    return by_project
