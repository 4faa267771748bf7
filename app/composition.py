"""The composition root: the one place that builds services from the settings and the
data folder. `open_engram` builds the store, vectors, embedders, retriever, lifecycle and
memory service; the `Engram` it returns builds, when asked, what an entry point needs
next: the language-model chain (`llm_runner`, from `app.llm`), the context assembler
(`assembler`), the prediction engine and the watch session. (The consolidation context
is still built in `app.rem.rem_context`.)

Nothing heavy happens here: models and Chroma load on first use, and each builder imports
its services when first called, so a command that only reads and writes memories does not
load the prediction, context, language-model or watcher code. Every entry point (CLI,
tray) calls `open_engram` and `Engram.close`.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.secrets import get_api_key
from app.settings import SETTINGS_FILE, Settings
from services.errors import UserInputError
from services.filters import MemoryFilter
from services.memories.lifecycle import Lifecycle, LifecyclePolicy
from services.memories.service import MemoryService
from services.memory import Memory
from services.search.retrieval import HybridRetriever, SearchResponse, Weights
from services.storage.backup import backup_if_due as write_backup_if_due
from services.storage.database import check_not_emptied
from services.storage.memories import MemoryStore
from services.storage.metrics import SearchMetricsLog
from services.text.incoming import IncomingText
from services.text.redact import Redactor, parse_allow, parse_patterns
from services.vectors.embeddings.base import Embedder
from services.vectors.index import VectorIndex
from services.vectors.indexing import (
    ACTIVE_CONFIG_KEY,
    ACTIVE_MODEL_KEY,
    Indexer,
    ModelChange,
    ReconcileReport,
)

if TYPE_CHECKING:
    from app.watch_session import WatchSession
    from services.activity.prediction import Prediction, PredictiveEngine
    from services.context.assembly import ContextAssembler, TierSplit
    from services.llm.runner import LLMRunner
    from services.text.dates import TimeRef

log = logging.getLogger(__name__)
DATABASE_FILE = "engram.sqlite3"
CHROMA_FOLDER = "chroma"
SWITCH_INTERVAL_S = 0.0005
NO_CHUNKS = 10**9  # chunking off: every memory is one chunk
TIER_KEYS = ("critical", "relevant", "background", "index")


# --- embedders and vectors ----------------------------------------------------------------

EMBEDDER_KEYS = (
    "embedder.provider",
    "embedder.gguf_path",
    "embedder.openai_url",
    "embedder.openai_model",
)


def embedder_config(settings: Settings) -> dict[str, str]:
    """The settings that identify the configured embedder (stored with its vectors)."""
    return {key: settings.get_str(key) for key in EMBEDDER_KEYS}


def missing_model_file(config: dict[str, str]) -> Path | None:
    """The GGUF file the embedder settings name when it is not there (nothing can be
    embedded with it), else None."""
    if config.get("embedder.provider", "onnx") != "gguf":
        return None
    path = Path(config.get("embedder.gguf_path", "")).expanduser()
    return None if path.is_file() else path


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
    if settings.get_str("vectors.backend") == "server":
        return VectorIndex(
            host=settings.get_str("vectors.host"), port=settings.get_int("vectors.port")
        )
    return VectorIndex(path=data_dir / CHROMA_FOLDER)


# --- policies from the settings ---------------------------------------------------------------


def retrieval_weights(settings: Settings) -> Weights:
    return Weights(
        settings.get_float("retrieval.weight_dense"),
        settings.get_float("retrieval.weight_lexical"),
        settings.get_float("retrieval.weight_identifier"),
        settings.get_float("retrieval.weight_intent"),
        settings.get_float("retrieval.weight_project"),
        settings.get_float("retrieval.weight_file"),
        settings.get_float("retrieval.weight_time"),
        settings.get_float("retrieval.weight_neighbour"),
        settings.get_float("retrieval.weight_says_when"),
        settings.get_float("retrieval.weight_says_change"),
        settings.get_float("retrieval.weight_speaker"),
    )


def incoming_text(settings: Settings) -> IncomingText:
    """The gate every incoming text passes: the size limit and, unless `privacy.redact`
    is off, the redaction of secrets (with the extra patterns and the allow list)."""
    redactor = None
    if settings.get_bool("privacy.redact"):
        redactor = Redactor(
            parse_patterns(settings.get_str("privacy.redact_patterns")),
            parse_allow(settings.get_str("privacy.redact_allow")),
            source="privacy.redact_patterns",
        )
    return IncomingText(redactor, settings.get_int("store.max_memory_bytes"))


def lifecycle_policy(settings: Settings) -> LifecyclePolicy:
    return LifecyclePolicy(
        use_boost=settings.get_float("lifecycle.use_boost"),
        confidence_max=settings.get_float("lifecycle.confidence_max"),
        decay_step=settings.get_float("lifecycle.decay_step"),
        decay_floor=settings.get_float("lifecycle.decay_floor"),
        decay_interval_days=settings.get_int("lifecycle.decay_interval_days"),
        archive_below=settings.get_float("lifecycle.archive_below"),
        archive_min_age_days=settings.get_int("lifecycle.archive_min_age_days"),
    )


def tier_split(settings: Settings) -> TierSplit:
    """The `context.share_*` settings normalised to sum to 1, so changing one share with
    `engram config set` takes from the others."""
    from services.context.assembly import TierSplit

    shares = [settings.get_float(f"context.share_{key}") for key in TIER_KEYS]
    total = sum(shares)
    if total <= 0:
        raise UserInputError("the context.share_* settings are all 0; give a tier a share")
    return TierSplit(*(share / total for share in shares))


# --- the Engram -------------------------------------------------------------------------------


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

    def __post_init__(self) -> None:
        self.indexer.on_indexed = self.judge_embedded

    def model_change(self) -> ModelChange | None:
        """The pending change of embedding model, when the configured model is not the one
        whose vectors serve searches. Until it completes, `embedder` (the old model)
        keeps embedding queries and new memories."""
        if self.target_embedder.model_id == self.embedder.model_id:
            return None
        return ModelChange(self.store, self.vectors, self.target_embedder, self.target_config)

    @property
    def read_only(self) -> bool:
        """The data folder or database cannot be written: reads work, writes say why."""
        return self.store.read_only

    def preload_embedder(self) -> None:
        """Load the embedding model on a thread while the caller goes on (a cold search
        overlaps it with opening the vector index); only the local model loads."""
        preload = getattr(self.embedder, "preload", None)
        if callable(preload):
            preload()

    def prepare_search(self) -> None:
        """A cold process about to search: the model loads on a thread while the vector
        index opens here, so the first search waits for the longer, not for both."""
        self.preload_embedder()
        self.vectors.open()

    def start_up(self) -> ReconcileReport:
        """Reconcile the indexes with the records (cheap unless they disagree); a
        read-only store is left as it is."""
        if self.read_only:
            return ReconcileReport()
        return self.indexer.reconcile()

    def backup_if_due(self) -> Path | None:
        """An automatic backup of the database when the newest is older than
        `backup.interval_hours` (and `backup.keep` is not 0); None when none was due."""
        if self.read_only:
            return None
        return write_backup_if_due(
            self.store.path,
            self.settings.get_int("backup.keep"),
            self.settings.get_float("backup.interval_hours"),
        )

    def llm_runner(
        self, *, auto_unload: bool = True, cancel: threading.Event | None = None
    ) -> LLMRunner:
        """A new runner over the configured provider chain (close it when done)."""
        from app.llm import build_llm_runner

        return build_llm_runner(self.settings, auto_unload=auto_unload, cancel=cancel)

    def assembler(self) -> ContextAssembler:
        """The assembler of the current settings (budget, tier shares), with tier-1
        warnings of unresolved contradictions and the resolved dates of relative phrases
        from the store."""
        from services.context.assembly import ContextAssembler
        from services.knowledge.declared_truth import contradicted_by_file

        split = tier_split(self.settings)
        return ContextAssembler(
            self.settings.get_int("context.budget"),
            split,
            alerts=self.contradiction_alerts,
            dates=self.memory_dates,
            replaced=self.replaced_among,
            against_file=contradicted_by_file,
        )

    def replaced_among(
        self, memories: Sequence[Memory], excluded: Collection[str] = ()
    ) -> dict[str, Memory]:
        """Which of `memories` an open conflict says a current memory replaces, and by
        which (none of `excluded` holding)."""
        from services.knowledge.current_truth import current_holders

        return current_holders(self.store, [m.id for m in memories], excluded)

    def judge_embedded(self, memories: Sequence[Memory]) -> None:
        """Record which memories the just-embedded ones replace (an open proposal)."""
        from services.knowledge.current_truth import judge_embedded

        judge_embedded(self.store, self.vectors, self.embedder, memories)

    def memory_dates(self, memory_ids: Sequence[str]) -> dict[str, list[TimeRef]]:
        """The stored resolutions of the relative dates of these memories."""
        from services.storage.time_index import load_times

        return load_times(self.store.database.connection(), memory_ids)

    def contradiction_alerts(self, prediction: Prediction) -> list[str]:
        """Tier-1 warnings: unresolved contradictions of the predicted memories."""
        # The cue module's regexes load when a context is first assembled.
        from services.knowledge.contradictions import alerts

        ids = [c.memory.id for c in (*prediction.critical, *prediction.relevant)]
        return alerts(self.store, prediction.project, ids)

    def predictive_engine(self) -> PredictiveEngine:
        from services.activity.prediction import PredictiveEngine

        return PredictiveEngine(self.store)

    def watch_session(
        self,
        roots: list[Path],
        report: Callable[[dict[str, Any]], None],
        notice: Callable[[str], None] | None = None,
        observer_factory: Callable[[], Any] | None = None,
        polling_factory: Callable[[], Any] | None = None,
    ) -> WatchSession:
        """Watchers on `roots` feeding a new prediction engine (call `start`). Secret
        files are never read and this data folder is never activity."""
        from app.activity import secret_patterns
        from app.watch_session import WatchSession
        from services.activity.watch_rules import PathRules

        patterns = secret_patterns(self)
        return WatchSession(
            self,
            self.predictive_engine(),
            roots,
            report,
            PathRules(secret_patterns=patterns, excluded_roots=(self.data_dir.resolve(),)),
            debounce_ms=self.settings.get_int("watch.debounce_ms"),
            storm_files=self.settings.get_int("watch.storm_files"),
            notice=notice,
            observer_factory=observer_factory,
            polling_factory=polling_factory,
        )

    def close(self) -> None:
        if not self.read_only:
            self.metrics.flush()
        self.retriever.close()
        self.vectors.close()
        self.store.close()


def current_first(
    store: MemoryStore, response: SearchResponse, limit: int, flt: MemoryFilter
) -> SearchResponse:
    """The result hook that ranks what holds now above what an open conflict says it
    replaced (loaded on the first search that needs it)."""
    from services.knowledge.supersession import current_first as rank

    return rank(store, response, limit, flt)


def later_change_first(
    vectors: VectorIndex, embedder: Embedder
) -> Callable[[MemoryStore, SearchResponse, int, MemoryFilter], SearchResponse]:
    """The result hook that puts a later change above the earlier note the search put
    first, where no open conflict links them yet (loaded on the first search)."""

    def hook(
        _store: MemoryStore, response: SearchResponse, _limit: int, _flt: MemoryFilter
    ) -> SearchResponse:
        from services.knowledge.later_first import later_change_first as rank

        return rank(vectors, embedder.model_id, response)

    return hook


def queue_contradiction_candidates(store: MemoryStore, memory: Memory) -> None:
    """The write hook that queues a written memory's contradiction candidates; the cue
    module's regexes load on the first write, not at start-up."""
    from services.knowledge.contradictions import queue_on_write

    queue_on_write(store, memory)


# --- open_engram ------------------------------------------------------------------------------


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
    store = _open_store(settings, data_dir)
    vectors = build_vectors(settings, data_dir)
    config = embedder_config(settings)
    target_config = json.dumps(config, sort_keys=True)
    target = embedder or build_embedder(config)
    active = _serving_embedder(store, target, target_config, serving)
    indexer = Indexer(store, vectors, active)
    metrics = SearchMetricsLog(settings.get_int("metrics.retention_days"))
    if store.read_only:
        metrics.batch_size = sys.maxsize  # nothing can be written: metrics are not kept
    retriever = HybridRetriever(
        store,
        vectors,
        active,
        retrieval_weights(settings),
        settings.get_int("retrieval.candidates"),
        metrics,
    )
    lifecycle = Lifecycle(store, lifecycle_policy(settings))
    service = MemoryService(
        store,
        indexer,
        retriever,
        lifecycle,
        write_hooks=[queue_contradiction_candidates],
        result_hooks=[current_first, later_change_first(vectors, active)],
        incoming=incoming_text(settings),
    )
    return Engram(
        data_dir,
        settings,
        store,
        vectors,
        active,
        target,
        target_config,
        indexer,
        retriever,
        lifecycle,
        metrics,
        service,
    )


def _open_store(settings: Settings, data_dir: Path) -> MemoryStore:
    """The store; a database emptied to 0 bytes where one existed (backups or vectors
    beside it) is refused as damaged rather than taken for a new, empty one."""
    busy_timeout_ms = settings.get_int("store.busy_timeout_ms")
    chunking = settings.get_bool("chunking.enabled")
    path = data_dir / DATABASE_FILE
    check_not_emptied(path, data_dir / CHROMA_FOLDER)
    return MemoryStore(
        path,
        busy_timeout_ms=busy_timeout_ms,
        write_wait_s=settings.get_float("store.write_wait_s"),
        max_chunk_tokens=settings.get_int("chunking.max_tokens") if chunking else NO_CHUNKS,
        backup_keep=settings.get_int("backup.keep"),
    )


def _serving_embedder(
    store: MemoryStore, target: Embedder, target_config: str, serving: Embedder | None
) -> Embedder:
    """The model whose vectors serve searches: the configured one (`target`), unless the
    stored vectors were made by another model that the stored configuration can still
    build — then that one, until the change of model completes (`Engram.model_change`)."""
    active = store.meta_get(ACTIVE_MODEL_KEY)
    if active is None and store.read_only:
        return target
    if active is None:
        store.meta_set(ACTIVE_MODEL_KEY, target.model_id)
        store.meta_set(ACTIVE_CONFIG_KEY, target_config)
        return target
    if active == target.model_id:
        return target
    stored = store.meta_get(ACTIVE_CONFIG_KEY)
    if serving is None and stored:
        serving = build_embedder(json.loads(stored))
    if serving is not None and serving.model_id == active:
        return serving
    log.warning(
        "the vectors were made by %s, which cannot be rebuilt from the settings; "
        "they will be replaced",
        active,
    )
    return target
