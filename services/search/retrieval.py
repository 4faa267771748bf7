"""`HybridRetriever`: dense (Chroma) + lexical (FTS5 BM25) + code-identifier match.

score = α·dense + β·bm25_normalised + γ·identifier_match + δ·type_intent + ε·named_project
+ ζ·named_file + η·asked_time + θ·says_when + μ·says_change + ν·speaker + λ·neighbour
(the `retrieval.weight_*` settings), where
type_intent is 1 when the query's wording asks for the memory's type ("design decisions
behind …", see `intent`), named_project is 1 when a search over every project names the
memory's project ("how do I cut a pydantic release"), named_file is 1 when the query
names a file the memory's `file_refs` list (`pydantic/networks.py`), asked_time is 1 when
the memory was written on the days the query asks about ("on 9 November, 2022", "in April
2022", "last week"), says_when is 1 when a question asks when ("when did…", "how long
ago…") and the memory holds a dated phrase ("two days ago", "last Friday": what answers
it), says_change is 1 when a search asks what holds now ("… now", "is it still …?") and
the memory is worded as a change ("moved off pdm", "no longer supported": where the
current answer is written, `change_wording`), speaker is 1 when the memory is a
conversation turn ("Caroline: I went…") spoken by a person the query names
(`speakers`), and neighbour is the best score among the memories written right before
and after it (`neighbours`: the turns of one conversation share a context). The priors
are read once a search (`priors`).
Candidates come from all three sources, are filtered once in SQLite, scored on every
component (a lexical-only candidate still gets its dense similarity), de-duplicated by
memory, and returned with their score breakdown. When the embedder is down the search
falls back to lexical only; without FTS5, to dense only; each fallback is logged and
flagged in the search metrics.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, OrderedDict, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from services.errors import EmbedderUnavailable, VectorStoreUnavailable
from services.filters import MemoryFilter
from services.memory import Memory
from services.search.answers import answers_after_questions
from services.search.intent import intended_types
from services.search.neighbours import with_neighbours_in_time
from services.search.priors import Priors, read_priors
from services.search.results import RetrieverKind as RetrieverKind
from services.search.results import ScoreBreakdown as ScoreBreakdown
from services.search.results import SearchResponse as SearchResponse
from services.search.results import SearchResult as SearchResult
from services.search.results import Weights as Weights
from services.storage.fulltext import fts_terms
from services.storage.memories import MemoryStore
from services.storage.metrics import SearchMetrics, SearchMetricsLog
from services.text.acronyms import spelled_out_acronyms
from services.text.chunking import MAX_CHUNKS
from services.text.identifiers import (
    matches_file_ref,
    mentions,
    names_family_of,
    query_identifiers,
)
from services.text.short_forms import other_forms
from services.text.stacktrace import key_line
from services.types import MemoryType
from services.vectors.embeddings.base import Embedder, Vectors
from services.vectors.index import VectorHit, VectorIndex

log = logging.getLogger(__name__)


MAX_QUERY_IDENTIFIERS = 8
QUERY_VECTOR_CACHE = 256
# Queries again for more vectors when long memories crowded the nearest ones (`_nearest`).
DENSE_REQUERIES = 2
# A query of this many words or more that a memory holds as written is a quoted line
# (an error, a log line): that memory is the best keyword hit (`_quoted_whole`).
QUOTED_LINE_WORDS = 5
IDENTIFIER_CANDIDATES = 20
# A search over every project draws each stage's candidates from all of them, so one
# project's right answer competes with every other project's look-alikes for the same
# slots: it takes twice the candidates. Unscoped beside corpus-2k, 30 → 60 a stage:
# real-dev R@5 0.945 → 0.954, third 0.967 → 0.983, ninth 0.923 → 0.935, MRR within
# −0.003..+0.005 on the eight development sets (leave-one-set-out picks 60 in seven
# folds, 45 in one); p50 at 10k unchanged within noise. Scoped searches keep theirs.
UNSCOPED_CANDIDATES_FACTOR = 2
MAX_QUERY_EMBED_CHARS = 160
# A question in plain words (no code names) that shares words with a memory whose
# meaning is far from it has met a coincidence ("server", "host", "keys"): its keyword
# score counts in proportion to the meaning, in full from this cosine up. Chosen
# project-held-out on real-dev (every fold picked 0.3 or 0.35; mean MRR of scoped and
# unscoped 0.906 -> 0.910); queries naming code keep their keyword score whole, and so
# does a memory whose vector is still being written (there is no meaning to judge by).
PLAIN_QUESTION_MEANING_FLOOR = 0.3


def focused_query(query: str) -> str:
    """What to embed and match by keywords: the key line of a pasted traceback (its
    frames are noise), else the query, cut to a length the model can use."""
    return (key_line(query) or query)[:MAX_QUERY_EMBED_CHARS]


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


@dataclass
class _Candidates:
    """What the stages found: best (score, chunk) per memory from the vectors and from
    BM25, the memories naming a query identifier, and the query vector (None when the
    embedder or the index is down, or the search is lexical)."""

    dense: dict[str, tuple[float, int]] = field(default_factory=dict)
    lexical: dict[str, tuple[float, int]] = field(default_factory=dict)
    identifier_ids: set[str] = field(default_factory=set)
    quoted: set[str] = field(default_factory=set)  # hold the query as written (`_quoted_whole`)
    query_vector: Vectors | None = None

    def ids(self) -> list[str]:
        return list(dict.fromkeys([*self.dense, *self.lexical, *self.identifier_ids]))


class HybridRetriever:
    def __init__(
        self,
        store: MemoryStore,
        vectors: VectorIndex,
        embedder: Embedder | None,
        weights: Weights,
        candidates: int,
        metrics_log: SearchMetricsLog | None = None,
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.weights = weights
        self.candidates = candidates
        self.metrics_log = metrics_log
        self._pool: ThreadPoolExecutor | None = None
        # Type-ahead and repeated questions embed the same text again and again.
        self._query_vectors: OrderedDict[tuple[str, str], Vectors] = OrderedDict()

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-lexical")
        return self._pool

    def clear_query_cache(self) -> None:
        """Forget cached query vectors (benchmarks measure the embedding too)."""
        self._query_vectors.clear()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _embed_query(self, query: str, flags: list[str]) -> Vectors | None:
        if self.embedder is None:
            flags.append("embedder_unavailable")
            return None
        key = (self.embedder.model_id, focused_query(query))
        cached = self._query_vectors.get(key)
        if cached is not None:
            self._query_vectors.move_to_end(key)
            return cached
        try:
            vector: Vectors = self.embedder.embed([key[1]])[0]
        except EmbedderUnavailable as error:
            log.warning("embedder unavailable, searching lexically only: %s", error)
            flags.append("embedder_unavailable")
            return None
        self._query_vectors[key] = vector
        if len(self._query_vectors) > QUERY_VECTOR_CACHE:
            self._query_vectors.popitem(last=False)
        return vector

    def _dense_stage(
        self,
        query: str,
        pool: int,
        projects: list[str] | None,
        flags: list[str],
        metrics: SearchMetrics,
    ) -> tuple[dict[str, tuple[float, int]], Vectors | None]:
        """Embed the query and find the nearest vectors: best (similarity, chunk) per
        memory, and the query vector (None when the embedder or index is down)."""
        dense: dict[str, tuple[float, int]] = {}
        stage = time.perf_counter()
        query_vector = self._embed_query(query, flags)
        metrics.embed_ms = _ms(stage)
        stage = time.perf_counter()
        if query_vector is not None and self.embedder is not None:
            try:
                for hit in self._nearest(query_vector, pool, projects):
                    if hit.memory_id not in dense:
                        dense[hit.memory_id] = (max(0.0, hit.similarity), hit.chunk_index)
            except VectorStoreUnavailable as error:
                log.warning("vector index unavailable, searching lexically only: %s", error)
                flags.append("vectors_unavailable")
                query_vector = None
        metrics.dense_ms = _ms(stage)
        metrics.dense_count = len(dense)
        return dense, query_vector

    def _nearest(self, vector: Vectors, pool: int, projects: list[str] | None) -> list[VectorHit]:
        """The nearest vectors, enough of them for `pool` memories where that many exist:
        a long memory has a vector per chunk (up to `MAX_CHUNKS`), and a pasted log's
        chunks can fill every place of the first query."""
        assert self.embedder is not None
        wanted = pool
        for _ in range(DENSE_REQUERIES + 1):
            hits = self.vectors.query(self.embedder.model_id, vector, wanted, projects)
            per_memory = Counter(hit.memory_id for hit in hits)
            crowding = sum(1 for count in per_memory.values() if count > 1)
            if len(per_memory) >= pool or len(hits) < wanted or not crowding:
                break
            wanted += crowding * (MAX_CHUNKS + 1)
        return hits

    def _lexical_stage(
        self,
        query: str,
        identifiers: list[str],
        pool: int,
        project: str | None,
        flags: list[str],
        metrics: SearchMetrics,
    ) -> tuple[dict[str, tuple[float, int]], set[str], set[str]]:
        """BM25 hits (score, chunk) per memory, the memories naming an identifier, and
        those holding the query as written (`_quoted_whole`)."""
        lexical: dict[str, tuple[float, int]] = {}
        identifier_ids: set[str] = set()
        quoted: set[str] = set()
        stage = time.perf_counter()
        if not self.store.fts_available():
            log.warning("full-text index unavailable, searching by vectors only")
            flags.append("fts_unavailable")
        else:
            error_line = key_line(query)
            extra = [] if error_line else spelled_out_acronyms(query) + other_forms(query)
            for hit in self.store.lexical(error_line or query, pool, project, extra):
                lexical[hit.memory_id] = (hit.score, hit.chunk_index)
            quoted = self._quoted_whole(error_line or query, lexical, project)
            for identifier in identifiers:
                phrase = identifier.rsplit("/", 1)[-1]
                identifier_ids.update(
                    self.store.phrase_candidates(phrase, IDENTIFIER_CANDIDATES, project)
                )
        metrics.lexical_ms = _ms(stage)
        metrics.lexical_count = len(lexical)
        metrics.identifier_count = len(identifier_ids)
        return lexical, identifier_ids, quoted

    def _quoted_whole(
        self, text: str, lexical: dict[str, tuple[float, int]], project: str | None
    ) -> set[str]:
        """Memories that hold a line of `QUOTED_LINE_WORDS` or more words as written
        score as the best keyword hit, whatever their meaning's score: BM25 ranks a 3 MB
        pasted log that quotes the line below short notes sharing one of its words (the
        line past the log's chunks is in its whole-memory row only, which BM25 weighs by
        its length), and the log's vectors are far from one line of it."""
        if len(fts_terms(text, QUOTED_LINE_WORDS)) < QUOTED_LINE_WORDS:
            return set()
        best = max((score for score, _ in lexical.values()), default=0.0)
        quoted = set(self.store.phrase_candidates(text, IDENTIFIER_CANDIDATES, project))
        for memory_id in quoted:
            lexical[memory_id] = (best, lexical.get(memory_id, (0.0, -1))[1])
        return quoted

    def search(
        self,
        query: str,
        flt: MemoryFilter | None = None,
        limit: int = 10,
        kind: RetrieverKind = RetrieverKind.HYBRID,
    ) -> SearchResponse:
        """The `limit` best memories passing `flt`, with their score breakdowns: find
        candidates, load those that pass the filter in one query, score and rank them,
        record the metrics."""
        flt = flt or MemoryFilter()
        metrics = SearchMetrics(retriever=kind.value, mode=flt.mode.value, query_chars=len(query))
        flags: list[str] = []
        started = time.perf_counter()
        identifiers = (
            query_identifiers(query)[:MAX_QUERY_IDENTIFIERS] if kind is RetrieverKind.HYBRID else []
        )
        factor = UNSCOPED_CANDIDATES_FACTOR if flt.project is None else 1
        pool = max(self.candidates * factor, limit * 2)
        found = self._find_candidates(query, identifiers, flt, pool, kind, flags, metrics)

        stage = time.perf_counter()
        memories = self.store.filter_ids(found.ids(), flt)
        if kind is RetrieverKind.HYBRID and found.query_vector is not None:
            self._fill_dense(found.query_vector, memories, found.dense)
        priors = (
            read_priors(self.store, self.weights, query, flt, memories)
            if kind is RetrieverKind.HYBRID
            else Priors()
        )
        ranked = self._ranked(query, identifiers, memories, found, kind, priors)
        if kind is RetrieverKind.HYBRID:
            ranked = with_neighbours_in_time(self.store, ranked, self.weights.neighbour, limit)
        results = answers_after_questions(self.store, ranked, flt, limit)
        metrics.merge_ms = _ms(stage)
        metrics.total_ms = _ms(started)
        metrics.result_count = len(results)
        metrics.top_similarity = max((s for s, _ in found.dense.values()), default=None)
        metrics.flags = flags
        if self.metrics_log is not None:
            self.metrics_log.record(metrics, query, flt.project)
        return SearchResponse(results, metrics, flags, query)

    def _find_candidates(
        self,
        query: str,
        identifiers: list[str],
        flt: MemoryFilter,
        pool: int,
        kind: RetrieverKind,
        flags: list[str],
        metrics: SearchMetrics,
    ) -> _Candidates:
        """Run the stages `kind` uses. The lexical stage (SQLite) runs beside the query
        embedding (onnxruntime); both release the GIL, so a hybrid search costs about the
        slower of the two."""
        found = _Candidates()
        lexical_flags: list[str] = []
        lexical_job = None
        if kind is RetrieverKind.HYBRID:
            lexical_job = self._executor().submit(
                self._lexical_stage,
                query,
                identifiers,
                pool,
                flt.project,
                lexical_flags,
                metrics,
            )
        if kind in (RetrieverKind.HYBRID, RetrieverKind.DENSE):
            projects = None if flt.project is None else [flt.project]
            found.dense, found.query_vector = self._dense_stage(
                query, pool, projects, flags, metrics
            )
        if lexical_job is not None:
            found.lexical, found.identifier_ids, found.quoted = lexical_job.result()
        elif kind is RetrieverKind.LEXICAL:
            found.lexical, found.identifier_ids, found.quoted = self._lexical_stage(
                query, identifiers, pool, flt.project, lexical_flags, metrics
            )
        flags.extend(lexical_flags)
        if kind is RetrieverKind.HYBRID and found.query_vector is None:
            flags.append("fallback_lexical")
        return found

    def _ranked(
        self,
        query: str,
        identifiers: list[str],
        memories: dict[str, Memory],
        found: _Candidates,
        kind: RetrieverKind,
        priors: Priors,
    ) -> list[SearchResult]:
        """Every memory scored on every component, best first."""
        wanted_types = intended_types(query) if kind is RetrieverKind.HYBRID else frozenset()
        best_lexical = max((score for score, _ in found.lexical.values()), default=0.0)
        results = [
            self._scored(memory, found, identifiers, wanted_types, best_lexical, kind, priors)
            for memory in memories.values()
        ]
        results.sort(key=lambda r: (-r.score, -r.memory.confidence, r.memory.id))
        return results

    def _scored(
        self,
        memory: Memory,
        found: _Candidates,
        identifiers: list[str],
        wanted_types: frozenset[MemoryType],
        best_lexical: float,
        kind: RetrieverKind,
        priors: Priors,
    ) -> SearchResult:
        """One memory's score and its breakdown."""
        dense_score, dense_chunk = found.dense.get(memory.id, (0.0, -1))
        raw_lexical, lexical_chunk = found.lexical.get(memory.id, (0.0, -1))
        lexical_score = raw_lexical / best_lexical if best_lexical > 0 else 0.0
        floor = PLAIN_QUESTION_MEANING_FLOOR
        plain_question = kind is RetrieverKind.HYBRID and not identifiers
        judged = memory.id in found.dense and memory.id not in found.quoted  # by its vector
        if plain_question and floor > 0 and judged:
            lexical_score *= min(1.0, dense_score / floor)
        in_files = {i for i in identifiers if matches_file_ref(i, memory.file_refs)}
        matched = tuple(i for i in identifiers if i in in_files or _text_mentions(memory, i))
        identifier_score = len(matched) / len(identifiers) if identifiers else 0.0
        if memory.id in found.quoted:  # it holds the query's line as written
            identifier_score = 1.0
        intent_score = 1.0 if memory.type in wanted_types else 0.0
        project_score = float(memory.project is not None and memory.project in priors.named)
        file_score = float(bool(in_files))
        time_score = float(priors.written_then(memory))
        when_score = float(memory.id in priors.dated)
        change_score = float(memory.id in priors.changed)
        speaker_score = float(memory.id in priors.spoken)
        if kind is RetrieverKind.DENSE:
            total = dense_score
        elif kind is RetrieverKind.LEXICAL:
            total = lexical_score
        else:
            total = (
                self.weights.lexical * lexical_score
                + self.weights.identifier * identifier_score
                + self.weights.intent * intent_score
                + self.weights.project * project_score
                + self.weights.file * file_score
                + self.weights.time * time_score
                + self.weights.says_when * when_score
                + self.weights.says_change * change_score
                + self.weights.speaker * speaker_score
            )
            if found.query_vector is not None:
                total += self.weights.dense * dense_score
        sources = tuple(
            name
            for name, present in (
                ("dense", memory.id in found.dense),
                ("lexical", memory.id in found.lexical),
                ("identifier", bool(matched)),
            )
            if present
        )
        best_chunk = lexical_chunk if raw_lexical and lexical_chunk >= 0 else dense_chunk
        breakdown = ScoreBreakdown(
            dense_score,
            lexical_score,
            identifier_score,
            intent_score,
            matched,
            best_chunk,
            sources,
            project_score,
            file_score,
            time_score,
            says_when=when_score,
            says_change=change_score,
            speaker=speaker_score,
        )
        return SearchResult(memory, total, breakdown)

    def _fill_dense(
        self,
        query_vector: Vectors,
        memories: dict[str, Memory],
        dense: dict[str, tuple[float, int]],
    ) -> None:
        """Give lexical/identifier-only candidates their dense similarity too."""
        if self.embedder is None:
            return
        missing: dict[str | None, list[str]] = defaultdict(list)
        for memory_id, memory in memories.items():
            if memory_id not in dense:
                missing[memory.project].append(memory_id)
        for project, ids in missing.items():
            try:
                found = self.vectors.vectors_for(self.embedder.model_id, project, ids)
            except Exception as error:  # a failed rescoring must not fail the search
                log.warning("could not fetch vectors for rescoring: %s", error)
                return
            for memory_id, vector in found.items():
                similarity = float(np.dot(vector, query_vector))
                dense[memory_id] = (max(0.0, similarity), -1)


def _text_mentions(memory: Memory, identifier: str) -> bool:
    return (
        mentions(memory.content, identifier)
        or mentions(memory.title, identifier)
        or (identifier in memory.tags)
        or names_family_of(memory.content, identifier)
    )
