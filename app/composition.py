"""The composition root: builds every service from the settings and the data folder.

Nothing heavy happens here: models and Chroma load on first use. Every entry point (CLI,
tray) calls `open_engram` and `Engram.close`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from app.secrets import get_api_key
from app.settings import SETTINGS_FILE, Settings
from services.embeddings.base import Embedder
from services.indexing import ACTIVE_MODEL_KEY, Indexer, ModelChange, ReconcileReport
from services.lifecycle import Lifecycle, LifecyclePolicy
from services.memory_service import MemoryService
from services.metrics import SearchMetricsLog
from services.retrieval import HybridRetriever, Weights
from services.store import MemoryStore
from services.vectors import VectorIndex

log = logging.getLogger(__name__)
DATABASE_FILE = "engram.sqlite3"
CHROMA_FOLDER = "chroma"


def build_embedder(settings: Settings) -> Embedder:
    provider = settings.get("embedder.provider")
    if provider == "gguf":
        from services.embeddings.gguf import GGUFEmbedder

        return GGUFEmbedder(Path(settings.get("embedder.gguf_path")).expanduser())
    if provider == "openai":
        from services.embeddings.openai_http import OpenAIEmbedder

        return OpenAIEmbedder(settings.get("embedder.openai_url"),
                              settings.get("embedder.openai_model"),
                              api_key=get_api_key("embedder.openai"))
    from services.embeddings.onnx_minilm import OnnxMiniLMEmbedder

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
    indexer: Indexer
    retriever: HybridRetriever
    lifecycle: Lifecycle
    metrics: SearchMetricsLog
    service: MemoryService

    def model_change(self) -> ModelChange | None:
        """The pending change of embedding model, if the configured one is not active."""
        active = self.store.meta_get(ACTIVE_MODEL_KEY)
        if active is None or active == self.embedder.model_id:
            return None
        return ModelChange(self.store, self.vectors, None, self.embedder)

    def start_up(self) -> ReconcileReport:
        """Reconcile the indexes with the records (cheap unless they disagree)."""
        return self.indexer.reconcile()

    def close(self) -> None:
        self.store.close()


def open_engram(data_dir: Path, embedder: Embedder | None = None,
                settings: Settings | None = None) -> Engram:
    settings = settings or Settings(data_dir / SETTINGS_FILE)
    store = MemoryStore(data_dir / DATABASE_FILE,
                        busy_timeout_ms=settings.get("store.busy_timeout_ms"),
                        max_chunk_tokens=settings.get("chunking.max_tokens"))
    vectors = build_vectors(settings, data_dir)
    embedder = embedder or build_embedder(settings)
    indexer = Indexer(store, vectors, embedder)
    metrics = SearchMetricsLog(settings.get("metrics.retention_days"))
    weights = Weights(settings.get("retrieval.weight_dense"),
                      settings.get("retrieval.weight_lexical"),
                      settings.get("retrieval.weight_identifier"))
    retriever = HybridRetriever(store, vectors, embedder, weights,
                                settings.get("retrieval.candidates"), metrics)
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
    service = MemoryService(store, indexer, retriever, lifecycle)
    return Engram(data_dir, settings, store, vectors, embedder, indexer, retriever,
                  lifecycle, metrics, service)
