"""What each stage of the hybrid search is worth: real-dev queries (scoped, and unscoped
with corpus-2k beside them) and corpus-2k's queries, searched in-process with one stage
switched off or swapped for an alternative at a time.

    python bench/search_stages.py            # every variant, writes docs/benchmarks.md
    python bench/search_stages.py --only as-shipped,no-intent

A variant patches the running search (a weight, a module constant, a scoring method)
for its own run and restores it after; nothing is written to the data folders (searches
are not recorded). Folders: bench/.work/real-dev/data (built by bench/real_dev.py if
missing), a fresh copy of the embedded corpus-2k folder with real-dev imported beside it,
and the embedded corpus-2k folder. *natural* = real-dev's paraphrase, why, howto and
current-truth queries (questions in plain words, no identifier or error text).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import SHARED, embedded_data_dir, read_jsonl, table, update_doc
from real_dev import base, distractor_folder, query_scores

from app.composition import Engram, open_engram
from services.filters import MemoryFilter
from services.search import retrieval
from services.search.retrieval import HybridRetriever, RetrieverKind
from services.storage import fulltext

NATURAL = {"paraphrase", "why", "howto", "current-truth"}
Patch = Callable[[ExitStack, list[Engram]], None]


def _set(stack: ExitStack, target: Any, name: str, value: Any) -> None:
    old = getattr(target, name)
    setattr(target, name, value)
    stack.callback(setattr, target, name, old)


def _weights(**changes: float) -> Patch:
    def apply(stack: ExitStack, engrams: list[Engram]) -> None:
        for engram in engrams:
            retriever = engram.service.retriever
            _set(stack, retriever, "weights", dataclasses.replace(retriever.weights, **changes))

    return apply


def _no_hooks(stack: ExitStack, engrams: list[Engram]) -> None:
    for engram in engrams:
        _set(stack, engram.service, "result_hooks", ())


def _no_short_forms(stack: ExitStack, engrams: list[Engram]) -> None:
    _set(stack, retrieval, "other_forms", lambda text: [])


def _no_pruning(stack: ExitStack, engrams: list[Engram]) -> None:
    _set(stack, fulltext, "COMMON_TERM_SHARE", 1.0)
    _set(stack, fulltext, "MAX_MATCH_TERMS", 64)


def _candidates(count: int) -> Patch:
    def apply(stack: ExitStack, engrams: list[Engram]) -> None:
        for engram in engrams:
            _set(stack, engram.service.retriever, "candidates", count)

    return apply


def _question_stopwords(stack: ExitStack, engrams: list[Engram]) -> None:
    extra = "did does do would could can will has have had was were been his her him he she "
    extra += "they their them its go goes went"
    _set(stack, fulltext, "KEYWORD_STOPWORDS", fulltext.KEYWORD_STOPWORDS | set(extra.split()))


def _rescored(change: Callable[[retrieval.SearchResult, Any, float], float]) -> Patch:
    """Swap the lexical part of each score: `change(result, found, best_raw)` is the new
    normalised keyword score."""
    original = HybridRetriever._scored

    def scored(self: HybridRetriever, memory, found, identifiers, wanted, best, kind, *rest):  # type: ignore[no-untyped-def]
        result = original(self, memory, found, identifiers, wanted, best, kind, *rest)
        if kind is not RetrieverKind.HYBRID:
            return result
        lexical = change(result, found, best)
        delta = self.weights.lexical * (lexical - result.breakdown.lexical)
        return dataclasses.replace(result, score=result.score + delta)

    def apply(stack: ExitStack, engrams: list[Engram]) -> None:
        _set(stack, HybridRetriever, "_scored", scored)

    return apply


def _saturating(k: float) -> Patch:
    def lexical(result: retrieval.SearchResult, found: Any, best: float) -> float:
        raw = found.lexical.get(result.memory.id, (0.0, -1))[0]
        return float(raw / (raw + k)) if raw > 0 else 0.0

    return _rescored(lexical)


def _reordered(rescore: Callable[[list[retrieval.SearchResult]], list[float]]) -> Patch:
    original = HybridRetriever._ranked

    def ranked(self: HybridRetriever, query, identifiers, memories, found, kind, *rest):  # type: ignore[no-untyped-def]
        results = original(self, query, identifiers, memories, found, kind, *rest)
        if kind is not RetrieverKind.HYBRID or not results:
            return results
        scores = rescore(results)
        out = [dataclasses.replace(r, score=s) for r, s in zip(results, scores, strict=True)]
        out.sort(key=lambda r: (-r.score, r.memory.id))
        return out

    def apply(stack: ExitStack, engrams: list[Engram]) -> None:
        _set(stack, HybridRetriever, "_ranked", ranked)

    return apply


def _rank_fusion(results: list[retrieval.SearchResult]) -> list[float]:
    """Reciprocal-rank fusion (k = 60) of the dense and keyword orders, same weights."""
    dense = {
        r.memory.id: i for i, r in enumerate(sorted(results, key=lambda r: -r.breakdown.dense))
    }
    by_lexical = sorted(
        (r for r in results if r.breakdown.lexical > 0), key=lambda r: -r.breakdown.lexical
    )
    lexical = {r.memory.id: i for i, r in enumerate(by_lexical)}
    scores = []
    for r in results:
        score = 0.6 / (60 + dense[r.memory.id])
        if r.memory.id in lexical:
            score += 0.3 / (60 + lexical[r.memory.id])
        scores.append(score + (0.1 * r.breakdown.identifier + 0.1 * r.breakdown.intent) / 60)
    return scores


def _same_session(weight: float) -> Callable[[list[retrieval.SearchResult]], list[float]]:
    """Each result gains `weight` × the best score of another result from its session
    (memories written in one sitting tend to be about one thing)."""

    def rescore(results: list[retrieval.SearchResult]) -> list[float]:
        by_session: dict[str, list[float]] = defaultdict(list)
        for r in results:
            if r.memory.session_id:
                by_session[r.memory.session_id].append(r.score)
        scores = []
        for r in results:
            others = sorted(by_session.get(r.memory.session_id or "", []), reverse=True)
            if others and others[0] == r.score:
                others = others[1:]
            scores.append(r.score + (weight * others[0] if others else 0.0))
        return scores

    return rescore


def _feedback(top: int, beta: float) -> Patch:
    """Dense pseudo-relevance feedback: the query vector moves towards the mean of its
    `top` nearest memories' vectors (× `beta`) and the dense stage runs again."""
    original = HybridRetriever._find_candidates

    def find(self: HybridRetriever, query, identifiers, flt, pool, kind, flags, metrics):  # type: ignore[no-untyped-def]
        found = original(self, query, identifiers, flt, pool, kind, flags, metrics)
        if found.query_vector is None or not found.dense or self.embedder is None:
            return found
        nearest = sorted(found.dense, key=lambda i: -found.dense[i][0])[:top]
        memories = self.store.get_many(nearest)
        vectors = []
        for memory_id, memory in memories.items():
            got = self.vectors.vectors_for(self.embedder.model_id, memory.project, [memory_id])
            vectors.extend(np.asarray(v) for v in got.values())
        if not vectors:
            return found
        moved = np.asarray(found.query_vector) + beta * np.mean(vectors, axis=0)
        moved = moved / np.linalg.norm(moved)
        projects = None if flt.project is None else [flt.project]
        dense: dict[str, tuple[float, int]] = {}
        for hit in self.vectors.query(self.embedder.model_id, moved, pool, projects):
            dense.setdefault(hit.memory_id, (max(0.0, hit.similarity), hit.chunk_index))
        found.dense, found.query_vector = dense, moved
        return found

    def apply(stack: ExitStack, engrams: list[Engram]) -> None:
        _set(stack, HybridRetriever, "_find_candidates", find)

    return apply


def _plain_words(dense: float, lexical: float) -> Patch:
    """Other weights for a query with no identifier, path or error line in it."""
    original = HybridRetriever._ranked

    def ranked(self: HybridRetriever, query, identifiers, memories, found, kind, *rest):  # type: ignore[no-untyped-def]
        if identifiers or kind is not RetrieverKind.HYBRID:
            return original(self, query, identifiers, memories, found, kind, *rest)
        shipped = self.weights
        self.weights = dataclasses.replace(shipped, dense=dense, lexical=lexical)
        try:
            return original(self, query, identifiers, memories, found, kind, *rest)
        finally:
            self.weights = shipped

    def apply(stack: ExitStack, engrams: list[Engram]) -> None:
        _set(stack, HybridRetriever, "_ranked", ranked)

    return apply


def _no_meaning_floor(stack: ExitStack, engrams: list[Engram]) -> None:
    _set(stack, retrieval, "PLAIN_QUESTION_MEANING_FLOOR", 0.0)


def _nothing(stack: ExitStack, engrams: list[Engram]) -> None:
    return None


# name -> (what it changes, patch, retriever kind)
VARIANTS: dict[str, tuple[str, Patch, RetrieverKind]] = {
    "as-shipped": ("hybrid as shipped", _nothing, RetrieverKind.HYBRID),
    "dense-only": ("vectors only", _nothing, RetrieverKind.DENSE),
    "keywords-only": ("BM25 only", _nothing, RetrieverKind.LEXICAL),
    "no-identifier": (
        "no identifier match (γ = 0)",
        _weights(identifier=0.0),
        RetrieverKind.HYBRID,
    ),
    "no-intent": ("no type-intent prior (δ = 0)", _weights(intent=0.0), RetrieverKind.HYBRID),
    "no-named-project": (
        "no named-project prior (ε = 0)",
        _weights(project=0.0),
        RetrieverKind.HYBRID,
    ),
    "no-named-file": (
        "no named-file match (ζ = 0)",
        _weights(file=0.0),
        RetrieverKind.HYBRID,
    ),
    "no-says-when": (
        "no says-when prior for questions asking when (θ = 0)",
        _weights(says_when=0.0),
        RetrieverKind.HYBRID,
    ),
    "no-says-change": (
        "no says-what-changed prior for searches asking what holds now (μ = 0)",
        _weights(says_change=0.0),
        RetrieverKind.HYBRID,
    ),
    "says-change-0.05": (
        "says-what-changed prior at μ 0.05 (0.1)",
        _weights(says_change=0.05),
        RetrieverKind.HYBRID,
    ),
    "says-change-0.2": (
        "says-what-changed prior at μ 0.2 (0.1)",
        _weights(says_change=0.2),
        RetrieverKind.HYBRID,
    ),
    "no-speaker": (
        "no prior for turns spoken by a person the question names (ν = 0)",
        _weights(speaker=0.0),
        RetrieverKind.HYBRID,
    ),
    "no-short-forms": (
        "keyword stage without the other forms of abbreviated words (deps, env, binary)",
        _no_short_forms,
        RetrieverKind.HYBRID,
    ),
    "no-neighbours": (
        "no neighbours in time (λ = 0)",
        _weights(neighbour=0.0),
        RetrieverKind.HYBRID,
    ),
    "neighbours-0.1": (
        "neighbours in time at λ 0.1 (0.2)",
        _weights(neighbour=0.1),
        RetrieverKind.HYBRID,
    ),
    "neighbours-0.3": (
        "neighbours in time at λ 0.3 (0.2)",
        _weights(neighbour=0.3),
        RetrieverKind.HYBRID,
    ),
    "no-meaning-floor": (
        "plain questions keep keyword scores whole (no meaning floor)",
        _no_meaning_floor,
        RetrieverKind.HYBRID,
    ),
    "no-current-truth": ("no current-truth ordering", _no_hooks, RetrieverKind.HYBRID),
    "no-pruning": ("keyword stage matches every word", _no_pruning, RetrieverKind.HYBRID),
    "candidates-60": ("60 candidates per stage (30)", _candidates(60), RetrieverKind.HYBRID),
    "dense-0.7": (
        "α 0.7, β 0.2 (0.6, 0.3)",
        _weights(dense=0.7, lexical=0.2),
        RetrieverKind.HYBRID,
    ),
    "dense-0.5": ("α 0.5, β 0.4", _weights(dense=0.5, lexical=0.4), RetrieverKind.HYBRID),
    "plain-words-dense": (
        "α 0.8, β 0.2 for queries without identifiers",
        _plain_words(0.8, 0.2),
        RetrieverKind.HYBRID,
    ),
    "bm25-saturating": ("BM25 as raw/(raw+8), not ÷ best", _saturating(8.0), RetrieverKind.HYBRID),
    "rank-fusion": (
        "reciprocal-rank fusion (k 60)",
        _reordered(_rank_fusion),
        RetrieverKind.HYBRID,
    ),
    "feedback": (
        "dense pseudo-relevance feedback (top 3, ½)",
        _feedback(3, 0.5),
        RetrieverKind.HYBRID,
    ),
    "question-stopwords": (
        "auxiliaries and pronouns dropped from keywords",
        _question_stopwords,
        RetrieverKind.HYBRID,
    ),
    "same-session": (
        "+0.1 × best result of the same session",
        _reordered(_same_session(0.1)),
        RetrieverKind.HYBRID,
    ),
}


@contextmanager
def variant(patch: Patch, engrams: list[Engram]) -> Iterator[None]:
    with ExitStack() as stack:
        patch(stack, engrams)
        yield


def searched(
    engram: Engram, queries: list[dict], scoped: bool, kind: RetrieverKind
) -> tuple[dict[str, list[str]], list[float]]:
    engram.service.retriever.clear_query_cache()
    ranked, times = {}, []
    for q in queries:
        flt = MemoryFilter(project=q.get("project") if scoped else None)
        started = time.perf_counter()
        results = engram.service.search(q["query"], flt, 10, kind).results
        times.append((time.perf_counter() - started) * 1000)
        ranked[q["id"]] = [r.memory.id for r in results]
    return ranked, times


def scores(
    queries: list[dict], ranked: dict[str, list[str]], natural: bool
) -> tuple[float, float, float]:
    chosen = [q for q in queries if not natural or q.get("kind") in NATURAL]
    values = [query_scores(q["relevant"], ranked[q["id"]]) for q in chosen]
    return tuple(float(np.mean([v[i] for v in values])) for i in range(3))  # type: ignore[return-value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated variants (default: all)")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")

    real = read_jsonl(SHARED / "real-dev" / "queries.jsonl")
    synthetic = read_jsonl(SHARED / "corpus-2k" / "queries.jsonl")
    folders = {
        "scoped": base(),
        "unscoped": distractor_folder(),
        "corpus-2k": embedded_data_dir(2000),
    }
    engrams = {label: open_engram(path) for label, path in folders.items()}
    runs = [("scoped", real, True), ("unscoped", real, False), ("corpus-2k", synthetic, True)]
    rows = []
    for name in names:
        label, patch, kind = VARIANTS[name]
        row: list[object] = [label]
        times: list[float] = []
        with variant(patch, list(engrams.values())):
            for folder, queries, scoped in runs:
                ranked, took = searched(engrams[folder], queries, scoped, kind)
                times.extend(took)
                r5, _r10, mrr = scores(queries, ranked, natural=False)
                row.extend([f"{r5:.3f}", f"{mrr:.3f}"])
                if folder != "corpus-2k":
                    _, n10, nmrr = scores(queries, ranked, natural=True)
                    row.append(f"{n10:.3f} / {nmrr:.3f}")
        row.append(f"{statistics.median(times):.1f}")
        rows.append(row)
        print(" | ".join(str(c) for c in row), flush=True)

    header = [
        "variant",
        "scoped R@5", "scoped MRR", "scoped natural R@10 / MRR",
        "unscoped R@5", "unscoped MRR", "unscoped natural R@10 / MRR",
        "corpus-2k R@5", "corpus-2k MRR", "p50 ms",
    ]  # fmt: skip
    body = (
        "Each row switches one stage of `engram search` off, or swaps it for an "
        "alternative, in-process; everything else as shipped. real-dev's 120 queries scoped "
        "to their project and unscoped with corpus-2k imported beside them, and corpus-2k's "
        "300 queries. *natural*: the 65 paraphrase, why, how-to and current-truth queries. "
        "The keyword stage stems with FTS5's Porter tokenizer; switching that off needs a "
        "reindex and is not measured here. p50 is per search over all three runs (query "
        "embedding included, no cache).\n\n" + table(header, rows)
    )
    update_doc(
        "search_stages",
        "## Search: what each stage is worth\n\n" + body,
        "python bench/search_stages.py",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
