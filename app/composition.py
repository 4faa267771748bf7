"""The composition root: builds every service from the settings and the data folder.

Nothing heavy happens here: models and Chroma load on first use. Every entry point (CLI,
tray) calls `open_engram` and `Engram.close`.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from app.secrets import get_api_key
from app.settings import SETTINGS_FILE, Settings
from services.memories.lifecycle import Lifecycle, LifecyclePolicy
from services.memories.service import MemoryService
from services.memory import Memory
from services.search.retrieval import HybridRetriever, Weights
from services.storage.memories import MemoryStore
from services.storage.metrics import SearchMetricsLog
from services.vectors.embeddings.base import Embedder
from services.vectors.index import VectorIndex
from services.vectors.indexing import (
    ACTIVE_CONFIG_KEY,
    ACTIVE_MODEL_KEY,
    Indexer,
    ModelChange,
    ReconcileReport,
)

log = logging.getLogger(__name__)
DATABASE_FILE = "engram.sqlite3"
CHROMA_FOLDER = "chroma"
SWITCH_INTERVAL_S = 0.0005
NO_CHUNKS = 10**9  # chunking off: every memory is one chunk


EMBEDDER_KEYS = (
    "embedder.provider",
    "embedder.gguf_path",
    "embedder.openai_url",
    "embedder.openai_model",
)


def embedder_config(settings: Settings) -> dict[str, str]:
    """The settings that identify the configured embedder (stored with its vectors)."""
    return {key: str(settings.get(key)) for key in EMBEDDER_KEYS}


def build_embedder(config: dict[str, str]) -> Embedder:
    provider = config.get("embedder.provider", "onnx")
    if provider == "gguf":
        from services.vectors.embeddings.gguf import GGUFEmbedder

        return GGUFEmbedder(Path(config.get("embedder.gguf_path", "")).expanduser())
    if provider == "openai":
        from services.vectors.embeddings.openai_http import OpenAIEmbedder

        return OpenAIEmbedder(
            config.get("embedder.openai_url", ""),
            config.get("embedder.openai_model", ""),
            api_key=get_api_key("embedder.openai"),
        )
    from services.vectors.embeddings.onnx_minilm import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder()


def build_vectors(settings: Settings, data_dir: Path) -> VectorIndex:
    if settings.get("vectors.backend") == "server":
        return VectorIndex(host=settings.get("vectors.host"), port=settings.get("vectors.port"))
    return VectorIndex(path=data_dir / CHROMA_FOLDER)


@dataclass
class Engram:
    data_dir: Path
    settings: Settings
    store: MemoryStore
    vectors: VectorIndex
    embedder: Embedder
    target_embedder: Embedder
    target_config: str
    indexer: Indexer
    retriever: HybridRetriever
    lifecycle: Lifecycle
    metrics: SearchMetricsLog
    service: MemoryService

    def model_change(self) -> ModelChange | None:
        """The pending change of embedding model, when the configured model is not the one
        whose vectors serve searches. Until it completes, `embedder` (the old model)
        keeps embedding queries and new memories."""
        if self.target_embedder.model_id == self.embedder.model_id:
            return None
        return ModelChange(self.store, self.vectors, self.target_embedder, self.target_config)

    def start_up(self) -> ReconcileReport:
        """Reconcile the indexes with the records (cheap unless they disagree)."""
        return self.indexer.reconcile()

    def close(self) -> None:
        self.metrics.flush()
        self.retriever.close()
        self.vectors.close()
        self.store.close()


def queue_contradiction_candidates(store: MemoryStore, memory: Memory) -> None:
    """The write hook that queues a written memory's contradiction candidates; the cue
    module's regexes load on the first write, not at start-up."""
    from services.knowledge.contradictions import queue_on_write

    queue_on_write(store, memory)


def open_engram(
    data_dir: Path,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    serving: Embedder | None = None,
) -> Engram:
    """Build the services. `embedder` replaces the configured model and `serving` the
    model of the existing vectors (tests use fast fakes for both)."""
    # A hybrid search embeds the query while a second thread runs the keyword stage;
    # with Python's default 5 ms switch interval the search thread can wait that long
    # for the GIL after each native call. 0.5 ms cut the 10k p95 by ~2 ms (bench notes).
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    settings = settings or Settings(data_dir / SETTINGS_FILE)
    store = MemoryStore(
        data_dir / DATABASE_FILE,
        busy_timeout_ms=settings.get("store.busy_timeout_ms"),
        max_chunk_tokens=(
            settings.get("chunking.max_tokens") if settings.get("chunking.enabled") else NO_CHUNKS
        ),
    )
    vectors = build_vectors(settings, data_dir)
    config = embedder_config(settings)
    target_config = json.dumps(config, sort_keys=True)
    target = embedder or build_embedder(config)
    embedder = target
    active = store.meta_get(ACTIVE_MODEL_KEY)
    if active is None:
        store.meta_set(ACTIVE_MODEL_KEY, target.model_id)
        store.meta_set(ACTIVE_CONFIG_KEY, target_config)
    elif active != target.model_id:
        stored = store.meta_get(ACTIVE_CONFIG_KEY)
        if serving is None and stored:
            serving = build_embedder(json.loads(stored))
        if serving is not None and serving.model_id == active:
            embedder = serving
        else:
            log.warning(
                "the vectors were made by %s, which cannot be rebuilt from the "
                "settings; they will be replaced",
                active,
            )
    indexer = Indexer(store, vectors, embedder)
    metrics = SearchMetricsLog(settings.get("metrics.retention_days"))
    weights = Weights(
        settings.get("retrieval.weight_dense"),
        settings.get("retrieval.weight_lexical"),
        settings.get("retrieval.weight_identifier"),
        settings.get("retrieval.weight_intent"),
    )
    retriever = HybridRetriever(
        store, vectors, embedder, weights, settings.get("retrieval.candidates"), metrics
    )
    policy = LifecyclePolicy(
        use_boost=settings.get("lifecycle.use_boost"),
        confidence_max=settings.get("lifecycle.confidence_max"),
        decay_step=settings.get("lifecycle.decay_step"),
        decay_floor=settings.get("lifecycle.decay_floor"),
        decay_interval_days=settings.get("lifecycle.decay_interval_days"),
        archive_below=settings.get("lifecycle.archive_below"),
        archive_min_age_days=settings.get("lifecycle.archive_min_age_days"),
    )
    lifecycle = Lifecycle(store, policy)
    service = MemoryService(
        store, indexer, retriever, lifecycle, write_hooks=[queue_contradiction_candidates]
    )
    return Engram(
        data_dir,
        settings,
        store,
        vectors,
        embedder,
        target,
        target_config,
        indexer,
        retriever,
        lifecycle,
        metrics,
        service,
    )
