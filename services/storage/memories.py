"""`MemoryStore`: memories in SQLite, the source of truth, with their chunks and the FTS5
lexical index kept in the same transactions so the two never drift apart. Owner of the
`memory`, `chunk` and `meta` tables. Its parts, one module each: filtered selections
(`memory_queries`), the lexical index (`fulltext`, owner of `memory_fts`) and the
embedding bookkeeping (`embedding_state`); a usage event's row is `usage`'s.

It knows nothing of vectors: `embedded_model` on each row says which embedding model has
indexed it (NULL means the record waits for embedding).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import peewee as pw

from services.errors import NotFoundError, UserInputError
from services.memory import Memory, memory_from_dict, title_from_content
from services.storage import contradictions, links
from services.storage.database import (
    DEFAULT_BACKUP_KEEP,
    WRITE_WAIT_S,
    ChunkRow,
    MemoryRow,
    MetaRow,
    batches,
    open_database,
)
from services.storage.embedding_state import MAX_CHUNK_VECTORS, EmbeddingState
from services.storage.fulltext import FullTextIndex, LexicalHit, fts_query, fts_terms
from services.storage.memory_queries import AROUND_TEXT, MemoryQueries
from services.storage.memory_rows import memory_to_row_values, row_to_memory
from services.storage.usage import log_events
from services.text.chunking import Chunk, chunk_content
from services.types import Tier, UsageEvent

# Re-exported: importers of the store's search words and chunk limit keep working.
__all__ = [
    "MAX_CHUNK_VECTORS",
    "LexicalHit",
    "MemoryStore",
    "current_by_project",
    "fts_query",
    "fts_terms",
]

_TEXT_FIELDS = {"title", "content", "tags", "file_refs"}
_WORD = re.compile(r"\w", re.UNICODE)
PHRASE_WORDS = 12  # the opening words an exact copy is looked up by
COPY_CANDIDATES = 100


class MemoryStore(MemoryQueries, FullTextIndex, EmbeddingState):
    """CRUD, filtering and lexical search over the memories in one SQLite file."""

    def __init__(
        self,
        path: Path,
        busy_timeout_ms: int = 5000,
        max_chunk_tokens: int = 500,
        write_wait_s: float = WRITE_WAIT_S,
        backup_keep: int = DEFAULT_BACKUP_KEEP,
    ):
        self.path = path
        self.write_wait_s = write_wait_s
        self.max_chunk_tokens = max_chunk_tokens
        self.database = open_database(path, busy_timeout_ms, backup_keep)
        self._fts_ok: bool | None = None
        self._df_cache: dict[tuple[str, str], int] = {}
        self._term_projects: dict[str, dict[str, int]] = {}
        self._project_sizes: dict[str, int] | None = None

    def close(self) -> None:
        if not self.database.is_closed():
            self.database.close()

    # --- writes -------------------------------------------------------------------------

    def _insert(self, memory: Memory) -> None:
        MemoryRow.insert(**memory_to_row_values(memory)).execute()
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
        self._fts_insert(memory, chunks)

    def _unindex_text(self, memory_id: str) -> None:
        from services.storage.time_index import unindex_times

        unindex_times(self.database.connection(), memory_id)
        ChunkRow.delete().where(ChunkRow.memory_id == memory_id).execute()
        self._fts_delete(memory_id)

    def dated_among(self, memory_ids: Sequence[str]) -> set[str]:
        """Those of `memory_ids` whose text holds a dated phrase (`memory_time`)."""
        from services.storage.time_index import dated_among

        with self._reading():
            return dated_among(self.database.connection(), memory_ids)

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
                kept: tuple[str | None, str | None] | None = None
                if memory.id in existing:
                    if skip_existing:
                        skipped.append(memory.id)
                        continue
                    kept = self._vectors_still_valid(memory)
                    self._delete_rows(memory.id)
                self._insert(memory)
                if kept is not None:  # the same text in the same project: same vectors
                    MemoryRow.update(embedded_model=kept[0], staged_model=kept[1]).where(
                        MemoryRow.id == memory.id
                    ).execute()
                stored.append(memory)
        return stored, skipped

    def _vectors_still_valid(self, memory: Memory) -> tuple[str | None, str | None] | None:
        """(embedded, staged model) of the stored row `memory` replaces, when its vectors
        still fit `memory` (the same text in the same project: re-importing an export
        needs no re-embedding); else None."""
        row = MemoryRow.get_or_none(MemoryRow.id == memory.id)
        if row is None:
            return None
        current = row_to_memory(row)
        if current.project != memory.project or any(
            getattr(current, name) != getattr(memory, name) for name in _TEXT_FIELDS
        ):
            return None
        return row.embedded_model, row.staged_model

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

        updated, problems = memory_from_dict(data, where=memory_id)
        if updated is None:
            raise UserInputError("; ".join(p.reason for p in problems))
        text_changed = any(
            getattr(updated, name) != getattr(current, name) for name in _TEXT_FIELDS
        )
        values = memory_to_row_values(updated)
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

    def delete(self, memory_id: str) -> list[str]:
        """Delete a memory; returns the ids of the memories it had replaced that hold
        again (none when it was itself replaced: they pass to its replacement)."""
        with self.writing():
            deleted = MemoryRow.get_or_none(MemoryRow.id == memory_id)
            if deleted is None:
                raise NotFoundError(self.unknown_id(memory_id))
            successor = deleted.superseded_by
            self._delete_rows(memory_id)
            # Its links and conflicts go with it (nothing points at nothing). The
            # memories it had replaced hold again (superseded_by and valid_to cleared),
            # unless it was itself replaced: deleting the middle of a chain (Node 16 →
            # 18 → 20) leaves what it replaced replaced by what replaced it, not holding
            # beside the newest.
            links.remove_links_of(self, memory_id)
            contradictions.remove_about(self, memory_id)
            replaced = MemoryRow.superseded_by == memory_id
            freed = [row.id for row in MemoryRow.select(MemoryRow.id).where(replaced)]
            if successor is not None and freed:
                MemoryRow.update(superseded_by=successor).where(replaced).execute()
                MemoryRow.update(supersedes=freed[0]).where(
                    (MemoryRow.id == successor) & (MemoryRow.supersedes == memory_id)
                ).execute()
                freed = []
            else:
                MemoryRow.update(superseded_by=None, valid_to=None).where(replaced).execute()
            MemoryRow.update(supersedes=None).where(MemoryRow.supersedes == memory_id).execute()
        return freed

    def set_tiers(self, moves: Mapping[str, Sequence[str]]) -> None:
        """Give the memories of each tier (tier → ids) that tier, in one transaction,
        touching nothing else of them (not `updated_at`, text or vectors): retention
        moves many memories between hot, warm and cold at once."""
        with self.writing():
            for tier, ids in moves.items():
                for batch in batches(ids):
                    marks = ", ".join("?" for _ in batch)
                    self.database.execute_sql(
                        f"UPDATE memory SET tier = ? WHERE id IN ({marks})", [tier, *batch]
                    )

    # --- reads --------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        with self._reading():
            row = MemoryRow.get_or_none(MemoryRow.id == memory_id)
        if row is None:
            raise NotFoundError(self.unknown_id(memory_id))
        return row_to_memory(row)

    def current_with_text(self, project: str | None, content: str) -> list[Memory]:
        """Current (not superseded, not archived) memories of `project` whose text is
        `content`, but for whitespace around it (text read from stdin ends in a newline),
        oldest first: what storing `content` again would repeat. The keyword index finds
        the memories holding its first words in order; without it every memory of the
        project is read."""
        text = content.strip(AROUND_TEXT)
        opening = " ".join(text.split()[:PHRASE_WORDS])
        if not self.fts_available() or not _WORD.search(opening):
            return self._current_with_text_scan(project, text)
        found = self.phrase_candidates(opening, COPY_CANDIDATES, project)
        if len(found) >= COPY_CANDIDATES:  # a common opening: read them all
            return self._current_with_text_scan(project, text)
        copies = [
            m
            for m in self.get_many(found).values()
            if m.project == project
            and m.superseded_by is None
            and m.tier is not Tier.ARCHIVED
            and m.content.strip(AROUND_TEXT) == text
        ]
        return sorted(copies, key=lambda m: (m.created_at, m.id))

    def get_many(self, ids: Iterable[str]) -> dict[str, Memory]:
        wanted = list(dict.fromkeys(ids))
        found: dict[str, Memory] = {}
        with self._reading():
            for batch in batches(wanted):
                for row in MemoryRow.select().where(MemoryRow.id.in_(batch)):
                    found[row.id] = row_to_memory(row)
        return found

    def declaring_replaced(self, ids: Iterable[str]) -> list[Memory]:
        """The memories whose `supersedes` names one of `ids`."""
        found: list[Memory] = []
        with self._reading():
            for batch in batches(list(dict.fromkeys(ids))):
                rows = MemoryRow.select().where(MemoryRow.supersedes.in_(batch))
                found.extend(row_to_memory(row) for row in rows)
        return found

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        wanted = list(dict.fromkeys(ids))
        found: set[str] = set()
        with self._reading():
            for batch in batches(wanted):
                query = MemoryRow.select(MemoryRow.id).where(MemoryRow.id.in_(batch))
                found.update(row.id for row in query)
        return found

    def written_times(self) -> dict[str, str]:
        """Memory id → when its row was last written (added, imported or edited): when
        Engram got what it holds, which for an imported note is long after the note's
        own `created_at`."""
        with self._reading():
            query = MemoryRow.select(MemoryRow.id, MemoryRow.updated_at).tuples()
            return dict(query.iterator())

    def iter_all(self, batch_size: int = 1000, project: str | None = None) -> Iterator[Memory]:
        """Every memory (only `project`'s, when given), oldest first, read in batches
        (export, reindex)."""
        last_ts, last_id = float("-inf"), ""
        while True:
            with self._reading():
                rows = list(
                    MemoryRow.select()
                    .where(
                        (MemoryRow.created_ts > last_ts)
                        | ((MemoryRow.created_ts == last_ts) & (MemoryRow.id > last_id)),
                        True if project is None else MemoryRow.project == project,
                    )
                    .order_by(MemoryRow.created_ts, MemoryRow.id)
                    .limit(batch_size)
                )
            if not rows:
                return
            for row in rows:
                yield row_to_memory(row)
            last_ts, last_id = rows[-1].created_ts, rows[-1].id

    def chunks(self, memory_id: str) -> list[Chunk]:
        """The stored chunks of a memory; a memory that fits in one chunk has none."""
        with self._reading():
            rows = ChunkRow.select().where(ChunkRow.memory_id == memory_id).order_by(ChunkRow.idx)
            return [Chunk(r.idx, r.kind, r.text, r.token_count, r.language) for r in rows]

    def chunks_for(self, memory_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        result: dict[str, list[Chunk]] = {}
        with self._reading():
            for batch in batches(memory_ids):
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

    def rebuild_fts(self) -> int:
        """Recreate the lexical index and the chunks from the records; returns the count."""
        count = 0
        with self.writing():
            self._fts_recreate()
            ChunkRow.delete().execute()
            for row in MemoryRow.select():
                self._index_text(row_to_memory(row))
                count += 1
        return count

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
            log_events(memory_ids, event, session_id, at)
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

    # --- lifecycle --------------------------------------------------------------------------

    def decay_unused(self, since: str, step: float, floor: float) -> int:
        """Lower by `step` (never below `floor`) the confidence of the memories not archived
        and not accessed since `since`; returns how many changed."""
        unused = (MemoryRow.last_accessed.is_null()) | (MemoryRow.last_accessed < since)
        with self.writing():
            changed = (
                MemoryRow.update(
                    confidence=pw.fn.ROUND(pw.fn.MAX(floor, MemoryRow.confidence - step), 6)
                )
                .where(unused, MemoryRow.confidence > floor, MemoryRow.tier != Tier.ARCHIVED.value)
                .execute()
            )
        return int(changed)

    def archive_unused(self, below: float, created_before: float) -> int:
        """Archive the memories never used or cited, of confidence under `below`, created
        before the timestamp `created_before`; returns how many."""
        with self.writing():
            changed = (
                MemoryRow.update(tier=Tier.ARCHIVED.value)
                .where(
                    MemoryRow.confidence < below,
                    MemoryRow.use_count == 0,
                    MemoryRow.citation_count == 0,
                    MemoryRow.created_ts < created_before,
                    MemoryRow.tier != Tier.ARCHIVED.value,
                )
                .execute()
            )
        return int(changed)


def current_by_project(
    store: MemoryStore, project: str | None = None, consolidated: bool = True
) -> dict[str | None, list[Memory]]:
    """Current memories (not superseded, not archived) by project, oldest first; only
    `project`'s when given; without the consolidated summaries when `consolidated` is
    False."""
    by_project: dict[str | None, list[Memory]] = defaultdict(list)
    for memory in store.iter_all(project=project):
        if memory.superseded or memory.tier.value == "archived":
            continue
        if not consolidated and "consolidated" in memory.tags:
            continue
        if project is None or memory.project == project:
            by_project[memory.project].append(memory)
    return by_project
