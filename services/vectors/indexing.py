"""`Indexer`: keeps the vector index in step with SQLite.

Embeds new and changed memories (whole text, plus chunks of long ones), reconciles the
index with the records at start (a record without a vector is queued, an orphan vector
is removed), rebuilds everything on `reindex`, and carries out a change of embedding
model step by step while the old vectors keep serving. A failing embedder or vector
store never loses a record: it stays queued (`embedded_model IS NULL`) and is embedded
later.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from services.errors import EmbedderUnavailable, VectorStoreUnavailable
from services.memory import Memory
from services.storage.memories import MAX_CHUNK_VECTORS, MemoryStore
from services.vectors.embeddings.base import Embedder
from services.vectors.index import VectorIndex, VectorItem

log = logging.getLogger(__name__)
ACTIVE_MODEL_KEY = "embedder.active_model"
ACTIVE_CONFIG_KEY = "embedder.active_config"
DIMENSION_KEY = "embedder.active_dimension"


@dataclass(frozen=True)
class ReconcileReport:
    queued: int = 0
    orphans_removed: int = 0
    fts_rebuilt: bool = False
    embedded: int = 0


def memory_embedding_text(memory: Memory) -> str:
    return f"{memory.title}\n{memory.content}"


class Indexer:
    def __init__(self, store: MemoryStore, vectors: VectorIndex, embedder: Embedder) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    def _items(
        self, memories: Sequence[Memory], embedder: Embedder
    ) -> dict[str | None, list[VectorItem]]:
        chunks = self.store.chunks_for([m.id for m in memories])
        keys: list[tuple[Memory, int]] = []
        texts: list[str] = []
        for memory in memories:
            keys.append((memory, -1))
            texts.append(memory_embedding_text(memory))
            for chunk in chunks.get(memory.id, [])[:MAX_CHUNK_VECTORS]:
                keys.append((memory, chunk.index))
                texts.append(f"{memory.title}\n{chunk.text}")
        vectors = embedder.embed(texts)
        by_project: dict[str | None, list[VectorItem]] = defaultdict(list)
        for (memory, chunk_index), vector in zip(keys, vectors, strict=True):
            by_project[memory.project].append(VectorItem(memory.id, chunk_index, vector.tolist()))
        return by_project

    def index(self, memories: Sequence[Memory], batch_size: int = 256) -> int:
        """Embed and store vectors for `memories`; returns how many were indexed.

        On an embedder or vector-store failure the records stay queued and a warning
        is logged; nothing is raised, nothing is lost.
        """
        done = 0
        for start in range(0, len(memories), batch_size):
            batch = memories[start : start + batch_size]
            try:
                for project, items in self._items(batch, self.embedder).items():
                    self.vectors.upsert(self.model_id, project, items)
            except (EmbedderUnavailable, VectorStoreUnavailable) as error:
                log.warning("embedding postponed for %d memories: %s", len(memories) - done, error)
                return done
            self.store.mark_embedded([m.id for m in batch], self.model_id)
            done += len(batch)
        if done and self.store.meta_get(ACTIVE_MODEL_KEY) is None:
            self.store.meta_set(ACTIVE_MODEL_KEY, self.model_id)
        if done and self.store.meta_get(DIMENSION_KEY) is None:
            self.store.meta_set(DIMENSION_KEY, str(self.embedder.dimension))
        return done

    def process_pending(self, limit: int | None = None, batch_size: int = 256) -> int:
        """Embed queued records (oldest first), up to `limit`; returns how many."""
        total = 0
        while limit is None or total < limit:
            size = batch_size if limit is None else min(batch_size, limit - total)
            pending = self.store.pending_embedding(self.model_id, size)
            if not pending:
                break
            done = self.index(pending, batch_size)
            total += done
            if done < len(pending):
                break
        return total

    def remove(self, memory: Memory) -> None:
        try:
            self.vectors.delete_memories(self.model_id, memory.project, [memory.id])
        except VectorStoreUnavailable as error:
            log.warning("vector of %s left behind (removed at next start): %s", memory.id, error)

    def reconcile(self) -> ReconcileReport:
        """Cheap start-up check; does a full comparison only when counts disagree."""
        fts_rebuilt = False
        if self.store.fts_available() and self.store.fts_row_count() != self.store.count():
            log.warning("lexical index out of step with the records: rebuilding it")
            self.store.rebuild_fts()
            fts_rebuilt = True
        try:
            if self.vectors.count(self.model_id) == self.store.expected_vector_count(self.model_id):
                return ReconcileReport(fts_rebuilt=fts_rebuilt)
            in_index = self.vectors.memory_ids(self.model_id)
        except VectorStoreUnavailable as error:
            log.warning("cannot reconcile vectors: %s", error)
            return ReconcileReport(fts_rebuilt=fts_rebuilt)
        embedded = self.store.embedded_ids(self.model_id)
        indexed = set().union(*in_index.values()) if in_index else set()
        missing = embedded - indexed
        if missing:
            self.store.mark_embedded(sorted(missing), None)
        orphans = 0
        for name, ids in in_index.items():
            stray = sorted(ids - embedded)
            if stray:
                self.vectors.delete_ids_in(name, stray)
                orphans += len(stray)
        if missing or orphans:
            log.warning(
                "reconciled vectors: %d queued for embedding, %d orphans removed",
                len(missing),
                orphans,
            )
        return ReconcileReport(
            queued=len(missing), orphans_removed=orphans, fts_rebuilt=fts_rebuilt
        )

    def reindex(self) -> int:
        """Rebuild both indexes from SQLite; returns how many memories were embedded."""
        self.store.rebuild_fts()
        try:
            self.vectors.drop_model(self.model_id)
        except VectorStoreUnavailable as error:
            log.warning("could not drop old vectors: %s", error)
        self.store.clear_embedded()
        return self.process_pending()


class ModelChange:
    """Re-embeds every memory with `target` while `serving` keeps answering searches.

    `step()` does one batch and returns how many memories remain; when none remain the
    target becomes the active model and the old vectors are dropped.
    """

    def __init__(
        self, store: MemoryStore, vectors: VectorIndex, target: Embedder, target_config: str = "{}"
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.target = target
        self.target_config = target_config

    def remaining(self) -> int:
        """Memories still to re-embed (0 once the target model is active)."""
        if self.store.meta_get(ACTIVE_MODEL_KEY) == self.target.model_id:
            return 0
        return self.store.unstaged_count(self.target.model_id)

    def step(self, batch_size: int = 256) -> int:
        batch = self.store.unstaged(self.target.model_id, batch_size)
        if batch:
            indexer = Indexer(self.store, self.vectors, self.target)
            for project, items in indexer._items(batch, self.target).items():
                self.vectors.upsert(self.target.model_id, project, items)
            self.store.mark_staged([m.id for m in batch], self.target.model_id)
            return max(1, self.remaining())
        self.store.promote_staged(self.target.model_id)
        old = self.store.meta_get(ACTIVE_MODEL_KEY)
        self.store.meta_set(ACTIVE_MODEL_KEY, self.target.model_id)
        self.store.meta_set(ACTIVE_CONFIG_KEY, self.target_config)
        self.store.meta_set(DIMENSION_KEY, str(self.target.dimension))
        if old and old != self.target.model_id:
            self.vectors.drop_model(old)
        return 0

    def run(self, batch_size: int = 256) -> None:
        while self.step(batch_size):
            pass
