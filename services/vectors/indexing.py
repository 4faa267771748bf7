"""`Indexer`: keeps the vector index in step with SQLite.

Embeds new and changed memories (whole text, plus at most MAX_CHUNK_VECTORS chunks of a
long one; batches bounded in content, `content_batches`), reconciles the
index with the records at start (a record without a vector is queued, an orphan vector
is removed), rebuilds everything on `reindex`, and carries out a change of embedding
model step by step while the old vectors keep serving. A failing embedder or vector
store never loses a record: it stays queued (`embedded_model IS NULL`) and is embedded
later.

A damaged local index is set aside by `VectorIndex` and every memory queued again (the
user told once, through `notice`). Reconcile never deletes vectors wholesale: when most
of the index (or any of it, with no records at all) has no record, the database is more
likely damaged or replaced than the vectors stray, so they are kept and it says why.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from services.errors import EmbedderUnavailable, VectorStoreUnavailable
from services.memory import Memory
from services.storage.memories import MAX_CHUNK_VECTORS, MemoryStore
from services.vectors.embeddings.base import Embedder
from services.vectors.index import VectorIndex, VectorIndexDamaged, VectorItem

log = logging.getLogger(__name__)
ACTIVE_MODEL_KEY = "embedder.active_model"
ACTIVE_CONFIG_KEY = "embedder.active_config"
DIMENSION_KEY = "embedder.active_dimension"
# A batch embedded and written at once holds at most this much content (a longer memory
# is a batch alone: its whole text and at most MAX_CHUNK_VECTORS chunks), so a batch of
# big memories never holds thousands of chunks' texts and vectors at once.
BATCH_CONTENT_CHARS = 1_000_000
# Reconcile deletes orphan vectors only when they are at most this many, or at most half
# of the index: more means the records, not the vectors, are what went wrong.
ORPHANS_ALWAYS_REMOVED = 10


@dataclass(frozen=True)
class ReconcileReport:
    queued: int = 0
    orphans_removed: int = 0
    fts_rebuilt: bool = False
    embedded: int = 0
    orphans_kept: int = 0  # orphans not deleted: the database looks emptied or replaced
    set_aside: Path | None = None  # where a damaged vector index was moved


def memory_embedding_text(memory: Memory) -> str:
    return f"{memory.title}\n{memory.content}"


def content_batches(
    memories: Sequence[Memory], batch_size: int, max_chars: int = BATCH_CONTENT_CHARS
) -> Iterator[Sequence[Memory]]:
    """Consecutive memories in batches of at most `batch_size` whose content stays
    within `max_chars` (a longer memory alone)."""
    start = 0
    while start < len(memories):
        end, size = start, 0
        while end < len(memories) and end - start < batch_size:
            size += len(memories[end].content)
            if end > start and size > max_chars:
                break
            end += 1
        yield memories[start:end]
        start = end


def damage_notice(moved: Path, waiting: int) -> str:
    return (
        f"the vector index was damaged; set aside as {moved} and rebuilt from the database "
        f"({waiting} memories re-embedding; until then they are found by keywords)"
    )


def orphans_kept_notice(orphans: int, indexed: int, records: int) -> str:
    return (
        f"kept {orphans} of {indexed} vectors whose memories are not in the database "
        f"({records} memories there): the database may be damaged or replaced, so nothing "
        "was deleted; see `engram salvage` and `engram restore`, or run `engram reindex` "
        "if the database is right"
    )


class Indexer:
    def __init__(
        self,
        store: MemoryStore,
        vectors: VectorIndex,
        embedder: Embedder,
        notice: Callable[[str], None] = log.warning,
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.notice = notice  # what the user must be told (the CLI prints it)
        # Runs with each batch once its vectors are stored (the composition root judges
        # there which memories a new one replaces); a failure there is its own to log.
        self.on_indexed: Callable[[Sequence[Memory]], object] | None = None
        self._set_aside: Path | None = None
        if vectors.on_set_aside is None:  # the first indexer (not a model change's helper)
            vectors.on_set_aside = self._requeue_all

    def _requeue_all(self, moved: Path) -> None:
        """The index was set aside: every memory waits for a vector again."""
        self._set_aside = moved
        self.store.forget_vectors()
        self.notice(damage_notice(moved, self.store.count()))

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
        for batch in content_batches(memories, batch_size):
            try:
                items = self._items(batch, self.embedder)
                try:
                    self._upsert(items)
                except VectorIndexDamaged as damaged:
                    if damaged.set_aside_as is None:
                        raise
                    self._upsert(items)  # into the fresh, empty index
            except (EmbedderUnavailable, VectorStoreUnavailable) as error:
                log.warning("embedding postponed for %d memories: %s", len(memories) - done, error)
                return done
            self.store.mark_embedded([m.id for m in batch], self.model_id)
            done += len(batch)
            if self.on_indexed is not None:
                self.on_indexed(batch)
        if done and self.store.meta_get(ACTIVE_MODEL_KEY) is None:
            self.store.meta_set(ACTIVE_MODEL_KEY, self.model_id)
        if done and self.store.meta_get(DIMENSION_KEY) is None:
            self.store.meta_set(DIMENSION_KEY, str(self.embedder.dimension))
        return done

    def _upsert(self, items: dict[str | None, list[VectorItem]]) -> None:
        for project, project_items in items.items():
            self.vectors.upsert(self.model_id, project, project_items)

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
        """Cheap start-up check; does a full comparison only when counts disagree. A
        damaged index is set aside and every memory queued again."""
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
            if isinstance(error, VectorIndexDamaged) and error.set_aside_as is not None:
                return ReconcileReport(
                    queued=self.store.count(), fts_rebuilt=fts_rebuilt, set_aside=self._set_aside
                )
            log.warning("cannot reconcile vectors: %s", error)
            return ReconcileReport(fts_rebuilt=fts_rebuilt)
        embedded = self.store.embedded_ids(self.model_id)
        indexed = set().union(*in_index.values()) if in_index else set()
        missing = embedded - indexed
        if missing:
            self.store.mark_embedded(sorted(missing), None)
        strays = {name: sorted(ids - embedded) for name, ids in in_index.items()}
        orphans = sum(len(ids) for ids in strays.values())
        if orphans and self._orphans_look_like_lost_records(orphans, len(indexed)):
            self.notice(orphans_kept_notice(orphans, len(indexed), self.store.count()))
            return ReconcileReport(
                queued=len(missing), orphans_kept=orphans, fts_rebuilt=fts_rebuilt
            )
        for name, stray in strays.items():
            if stray:
                self.vectors.delete_ids_in(name, stray)
        if missing or orphans:
            # A routine repair (vectors of replaced or deleted memories, an embedding
            # interrupted): logged for the log file, not printed under a user's command.
            log.info(
                "reconciled vectors: %d queued for embedding, %d orphans removed",
                len(missing),
                orphans,
            )
        return ReconcileReport(
            queued=len(missing), orphans_removed=orphans, fts_rebuilt=fts_rebuilt
        )

    def _orphans_look_like_lost_records(self, orphans: int, indexed: int) -> bool:
        """More than a handful of orphans making up more than half the index, or any with
        no records at all: an emptied, truncated or replaced database, not stray vectors."""
        if self.store.count() == 0:
            return True
        return orphans > ORPHANS_ALWAYS_REMOVED and orphans * 2 > indexed

    def reindex(self) -> int:
        """Rebuild both indexes from SQLite; returns how many memories were embedded.
        A damaged index is set aside (not dropped); with no records at all the vectors
        are kept (an emptied database must not cost them)."""
        self.store.rebuild_fts()
        if self.store.count() == 0:
            log.warning("no memories in the database: the vector index is left as it is")
            return 0
        try:
            self.vectors.drop_model(self.model_id)
        except VectorIndexDamaged as damaged:
            if damaged.set_aside_as is None:
                log.warning("could not set the damaged vector index aside: %s", damaged)
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
            for part in content_batches(batch, batch_size):
                for project, items in indexer._items(part, self.target).items():
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
