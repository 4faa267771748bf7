"""Embedding bookkeeping: the `embedded_model` and `staged_model` columns of the `memory`
table (which model has indexed each memory, and which one a model change is building)
and the vector counts they imply, chunks included.

`EmbeddingState` is a part of `MemoryStore` (`services.storage.memories`), the owner of
the `memory` and `chunk` tables.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.memory import Memory
from services.storage.database import MemoryRow, SqliteStore, batches
from services.storage.memory_rows import row_to_memory

# A huge memory (a pasted log) gets vectors for its first chunks only; every chunk stays
# searchable by keywords. Embedding costs ~40 ms a chunk on two cores.
MAX_CHUNK_VECTORS = 256


class EmbeddingState(SqliteStore):
    """Which memories wait for embedding, by the serving model or a staged one."""

    def pending_embedding(self, model_id: str, limit: int) -> list[Memory]:
        with self._reading():
            rows = (
                MemoryRow.select()
                .where(MemoryRow.embedded_model.is_null() | (MemoryRow.embedded_model != model_id))
                .order_by(MemoryRow.created_ts)
                .limit(limit)
            )
            return [row_to_memory(row) for row in rows]

    def pending_count(self, model_id: str) -> int:
        with self._reading():
            return int(
                MemoryRow.select()
                .where(MemoryRow.embedded_model.is_null() | (MemoryRow.embedded_model != model_id))
                .count()
            )

    def mark_embedded(self, ids: Sequence[str], model_id: str | None) -> None:
        with self.writing():
            for batch in batches(ids):
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
            return [row_to_memory(row) for row in rows]

    def unstaged_count(self, model_id: str) -> int:
        with self._reading():
            return int(
                MemoryRow.select()
                .where(MemoryRow.staged_model.is_null() | (MemoryRow.staged_model != model_id))
                .count()
            )

    def mark_staged(self, ids: Sequence[str], model_id: str) -> None:
        with self.writing():
            for batch in batches(ids):
                MemoryRow.update(staged_model=model_id).where(MemoryRow.id.in_(batch)).execute()

    def promote_staged(self, model_id: str) -> None:
        """Finish a model change: staged vectors become the serving ones."""
        with self.writing():
            MemoryRow.update(embedded_model=model_id, staged_model=None).where(
                MemoryRow.staged_model == model_id
            ).execute()
            MemoryRow.update(staged_model=None).execute()

    def forget_vectors(self) -> None:
        """Every memory waits for embedding again, by every model (the vector index was
        lost: a model change in progress starts over too)."""
        with self.writing():
            MemoryRow.update(embedded_model=None, staged_model=None).execute()

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
