"""The bulk scan of the REM `contradictions` operation: each current memory's nearest
neighbours (cosine over the project's vectors) and the pairs the cues' index links (same
subject, same attribute), kept when a deterministic cue fires or the fitted scorers
(`conflict_scorer`) flag them; nothing is written here (`queue_scan` queues)."""

from __future__ import annotations

import json
import logging
import math
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from services.knowledge.conflict_records import (
    MAX_BUCKET,
    MAX_SCORED_FLAGS,
    NEAR_SIMILARITY,
    NEIGHBOURS,
    RARE_SHARE,
    SCORED_NEIGHBOURS,
    facts_of,
    ordered,
    pair_hash,
    queue,
    reading_of,
)
from services.knowledge.conflict_scorer import defaults_disagree, is_conflict
from services.knowledge.cues import (
    VAGUE_ATTRIBUTES,
    Cues,
    compare,
)
from services.knowledge.pair_features import PairText, features, read_pair_text
from services.knowledge.reading import Reading
from services.knowledge.restatements import Vocabulary, restatement_of
from services.knowledge.runtime_floors import successive_steps
from services.knowledge.tested_versions import successive_steps as tested_steps
from services.memory import Memory
from services.storage import contradictions as table
from services.storage.memories import MemoryStore, current_by_project
from services.types import MemoryType

log = logging.getLogger(__name__)


@dataclass
class Scan:
    memories: dict[str, Memory] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # unit length
    texts: dict[str, PairText] = field(default_factory=dict)
    scored: set[tuple[str, str]] = field(default_factory=set)  # the scorer may flag these
    scanned: bool = False  # candidates came from a scan (else: judge what is queued)
    readings: dict[str, Reading] = field(default_factory=dict)
    weights: dict[str | None, dict[str, float]] = field(default_factory=dict)
    pairs: dict[tuple[str, str], tuple[float | None, dict[str, Any]]] = field(default_factory=dict)
    facts: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    vocabularies: dict[str | None, Vocabulary] = field(default_factory=dict)
    # each note and the next to state another runtime floor or CI-tested set
    # (`successive_steps`); None when nothing was scanned: then any two that differ
    version_steps: set[tuple[str, str]] | None = None

    def vocabulary(self, project: str | None) -> Vocabulary | None:
        """The vocabulary of `project`'s current memories, when a scan read them all
        (the pairs judged alone have no project around them to read rare words from)."""
        if not self.scanned:
            return None
        if project not in self.vocabularies:
            members = (m for m in self.memories.values() if m.project == project)
            self.vocabularies[project] = Vocabulary(members)
        return self.vocabularies[project]

    def restated(self, a: Memory, b: Memory, pair: dict[str, float]) -> float | None:
        """The restatement scorer's probability for two memories of a scanned project
        (`is_conflict`'s `restated`), else None."""
        vocabulary = self.vocabulary(a.project)
        return None if vocabulary is None else restatement_of(a, b, pair, vocabulary)


def nearest_neighbours(
    ids: list[str],
    vectors: dict[str, np.ndarray],
    k: int,
    of: Collection[str] | None = None,
) -> Iterable[tuple[str, str, float]]:
    """Each memory's `k` nearest neighbours among `ids` (cosine); only those of the
    memories in `of`, when given."""
    present = [i for i in ids if i in vectors]
    if len(present) < 2:
        return
    matrix = np.stack([vectors[i] for i in present]).astype(np.float32)
    matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9, None)
    rows = (
        list(range(len(present)))
        if of is None
        else [row for row, memory_id in enumerate(present) if memory_id in of]
    )
    take = min(k, len(present) - 1)
    for start in range(0, len(rows), 1024):
        chunk = rows[start : start + 1024]
        scores = matrix[chunk] @ matrix.T
        for row, own in enumerate(chunk):
            scores[row, own] = -np.inf
        best = np.argpartition(-scores, take - 1, axis=1)[:, :take]
        for row, columns in enumerate(best):
            for column in columns.tolist():
                yield present[chunk[row]], present[column], float(scores[row, column])


def _index_pairs(readings: dict[str, Reading], weights: dict[str, float]) -> set[tuple[str, str]]:
    """Pairs the cues' index links: the same attribute and the same subject key (a code
    name, else a rare subject word)."""
    buckets: dict[tuple[str, str], list[str]] = defaultdict(list)
    rare_above = max(weights.values(), default=0.0)
    cutoff = _rare_cutoff(len(readings))
    for memory_id, reading in readings.items():
        attributes = {s.attribute for s in reading.statements} - VAGUE_ATTRIBUTES
        if not attributes:
            continue
        if reading.names:
            keys = {f"n:{n}" for n in reading.names}
        else:
            keys = {f"w:{w}" for w in reading.words if weights.get(w, rare_above) >= cutoff}
        for attribute in attributes:
            for key in keys:
                buckets[(attribute, key)].append(memory_id)
    pairs: set[tuple[str, str]] = set()
    for members in buckets.values():
        if len(members) < 2 or len(members) > MAX_BUCKET:
            continue
        for i, first in enumerate(members):
            for second in members[i + 1 :]:
                pairs.add((min(first, second), max(first, second)))
    return pairs


def candidate_pairs(
    ids: list[str],
    vectors: dict[str, np.ndarray],
    readings: dict[str, Reading],
    weights: dict[str, float],
    neighbours: int = NEIGHBOURS,
) -> set[tuple[str, str]]:
    """The pairs of one project worth scoring: each memory's nearest neighbours by
    cosine, and every pair the cues' index links (same subject, same attribute)."""
    pairs = set(_index_pairs({i: readings[i] for i in ids if i in readings}, weights))
    for first, second, _ in nearest_neighbours(ids, vectors, neighbours):
        pairs.add((min(first, second), max(first, second)))
    return pairs


def _rare_cutoff(total: int) -> float:
    """The idf weight of a word in RARE_SHARE of `total` memories (see idf_weights)."""
    count = max(1.0, RARE_SHARE * total)
    return math.log((1 + total) / (1 + count)) + 0.1


def _worth_queueing(cues: Cues, similarity: float | None) -> bool:
    if cues.conflicts or cues.replaces or cues.negation or cues.fact:
        return cues.score() > 0.0 or bool(cues.fact)
    return similarity is not None and similarity >= NEAR_SIMILARITY and bool(cues.change_wording)


def scan(
    store: MemoryStore,
    vectors: Any | None,
    model_id: str,
    project: str | None = None,
    neighbours: int = NEIGHBOURS,
    touching: Collection[str] | None = None,
    scored_cap: int = MAX_SCORED_FLAGS,
) -> Scan:
    """Read every current memory (of `project`, or all) and find the candidate pairs:
    nearest neighbours with a cue, and the pairs the cues' index links. With
    `touching`, only pairs with one of those memories (their own nearest neighbours,
    not the memories they are nearest to). At most `scored_cap` pairs only the scorer
    would flag, a project. Nothing is written (see `queue`)."""

    version_steps: set[tuple[str, str]] = set()
    result = Scan(facts=facts_of(store), scanned=True, version_steps=version_steps)
    for name, memories in current_by_project(store, project).items():
        readings = {m.id: reading_of(m) for m in memories}
        weights = idf_weights(readings.values())
        result.memories.update((m.id, m) for m in memories)
        result.readings.update(readings)
        result.weights[name] = weights
        # an episode records what happened then: a later floor does not make it untrue
        lasting = [m for m in memories if m.type is not MemoryType.EPISODE]
        steps = successive_steps(
            (m.id, readings[m.id].created_at, readings[m.id].floors) for m in lasting
        ) | tested_steps((m.id, readings[m.id].created_at, readings[m.id].tested) for m in lasting)
        version_steps.update(steps)
        linked: dict[tuple[str, str], float | None] = {
            pair: None
            for pair in _index_pairs(readings, weights) | steps
            if touching is None or pair[0] in touching or pair[1] in touching
        }
        closest: set[tuple[str, str]] = set()
        if vectors is not None:
            try:
                found = vectors.vectors_for(model_id, name, [m.id for m in memories])
            except Exception as error:  # no vectors: the index's pairs still count
                log.warning("contradictions: no vectors for %s: %s", name, error)
                found = {}
            for memory_id, vector in found.items():
                array = np.asarray(vector, dtype=np.float32)
                result.vectors[memory_id] = array / max(float(np.linalg.norm(array)), 1e-9)
            ids = list(readings)
            for first, second, similarity in nearest_neighbours(ids, found, neighbours, touching):
                key = (min(first, second), max(first, second))
                if linked.get(key) is None:
                    linked[key] = similarity
            closest = {
                (min(first, second), max(first, second))
                for first, second, _ in nearest_neighbours(ids, found, SCORED_NEIGHBOURS, touching)
            }
        by_fact: dict[tuple[str, str], list[str]] = defaultdict(list)
        for memory_id in readings:
            if memory_id in result.facts:
                key_, scope, _ = result.facts[memory_id]
                by_fact[(key_, scope)].append(memory_id)
        for members in by_fact.values():
            for i, first in enumerate(members[:MAX_BUCKET]):
                for second in members[i + 1 : MAX_BUCKET]:
                    if touching is None or first in touching or second in touching:
                        linked.setdefault((min(first, second), max(first, second)), None)
        scored: list[tuple[float, tuple[str, str], float | None, Cues]] = []
        for (first, second), near in linked.items():
            cues = compare(readings[first], readings[second], weights, result.facts, version_steps)
            if _worth_queueing(cues, near):
                result.pairs[(first, second)] = (near, cues.to_dict())
                if (first, second) in closest:
                    result.scored.add((first, second))  # a cue found something: no cap
            elif (first, second) in closest and near is not None:
                flagged, likely = _scored(result, first, second, near, cues, weights)
                if flagged and not _judged_as_is(store, result, first, second):
                    scored.append((likely, (first, second), near, cues))
        # The scorer's guesses are for review: at most MAX_SCORED_FLAGS a project and
        # run, the likeliest first, so notes written from one template cannot flood it.
        for _, key, near, cues in sorted(scored, key=lambda item: -item[0])[:scored_cap]:
            result.pairs[key] = (near, cues.to_dict())
            result.scored.add(key)
    return result


def _judged_as_is(store: MemoryStore, found: Scan, first: str, second: str) -> bool:
    """Whether the pair was judged before and neither memory changed since (so the
    run's few scorer places go to pairs not yet seen)."""
    a, b = ordered(found.memories[first], found.memories[second])
    stored = table.candidate_payload(store, a.id, b.id)
    return stored is not None and json.loads(stored).get("hash") == pair_hash(a, b)


def _text(found: Scan, memory: Memory) -> PairText:
    text = found.texts.get(memory.id)
    if text is None:
        text = found.texts[memory.id] = read_pair_text(memory)
    return text


def _scored(
    found: Scan, first: str, second: str, similarity: float, cues: Cues, weights: dict[str, float]
) -> tuple[bool, float]:
    """Whether the scorers flag the pair, and its place in the run's few: how likely a
    conflict it is, and above every likelihood when a reading of the wording flagged it
    (a rule is no guess to be capped)."""
    a, b = found.memories[first], found.memories[second]
    texts = (_text(found, a), _text(found, b))
    found_features = features(*texts, similarity, cues, weights)
    restated = found.restated(a, b, found_features)
    flagged, likely = is_conflict(found_features, texts, restated=restated)
    return flagged, likely + float(defaults_disagree(found_features))


def similarity_of(found: Scan, first: str, second: str) -> float | None:
    """Cosine of two memories' vectors, when both have one."""
    a, b = found.vectors.get(first), found.vectors.get(second)
    return None if a is None or b is None else float(a @ b)


def queue_scan(store: MemoryStore, found: Scan) -> int:
    memories = found.memories
    return queue(
        store,
        (
            (memories[a], memories[b], similarity, {"found": cues.get("kinds", [])})
            for (a, b), (similarity, cues) in found.pairs.items()
        ),
    )


def idf_weights(readings: Iterable[Reading]) -> dict[str, float]:
    """Inverse document frequency of the subject words of a project's memories."""
    counts: dict[str, int] = {}
    total = 0
    for reading in readings:
        total += 1
        for word in reading.words:
            counts[word] = counts.get(word, 0) + 1
    return {word: math.log((1 + total) / (1 + count)) + 0.1 for word, count in counts.items()}
