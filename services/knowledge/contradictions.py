"""Contradictions and supersession: memories that disagree, what holds now, and history.

**Candidates** (`contradiction_candidate`) are pairs to judge, queued and never judged on
the spot. A new or edited memory queues its best lexical matches in its project (a few
ms: one FTS query, no model, no vector). The REM `contradictions` operation, while idle,
queues the rest in bulk: each current memory's 20 nearest neighbours (cosine over the
project's vectors) that show a deterministic cue, and every pair the cues' index links —
the same subject (a code name, or rare words) with the same attribute (timeout, primary
database, log level…) — so imported memories are covered too.

**Judging** a pair combines the deterministic cues (`services.knowledge.cues`) with
the LLM's verdict (prompt `judge_contradiction`: contradiction, supersedes or compatible;
which one holds; a one-line reason). The cues carry the decision: their score flags a
pair at 0.5; the model moves it by ±0.15 and is asked only when that can change the
outcome (score within 0.15 of the threshold), within a time budget. The embedded model
is tiny (its verdicts are close to random), so it never decides alone: a pair only the
model pushed over the line is proposed with "skip" recommended. A judged pair is not
judged again until one of its memories changes (its content hash is kept).

**Contradictions** (`contradiction`): both memories (a is the earlier), the kind, which
one holds, when found, the evidence, and, once resolved, when, how (a_wins, b_wins,
both_valid, merged) and a note. Each unresolved one is a review finding and a tier-1
warning in assembled context. **Supersession keeps history**: the losing memory gets
`valid_to` and `superseded_by` (the winner gets `supersedes`); standard retrieval hides
it, deep and exhaustive modes still find it, and nothing is deleted.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from services.errors import NotFoundError, UserInputError
from services.knowledge.conflict_scorer import is_conflict, kind_of
from services.knowledge.cues import (
    VAGUE_ATTRIBUTES,
    Cues,
    Reading,
    compare,
    describe_conflict,
    holder,
    idf_weights,
    read,
)
from services.knowledge.pair_features import PairText, features, read_pair_text
from services.llm.base import LLMCancelled, LLMUnavailable, TimeBudget
from services.memory import Memory, now_iso, parse_time
from services.storage import contradictions as table
from services.storage.findings import Finding, FindingStore, Option
from services.storage.memories import MemoryStore, current_by_project
from services.text.words import sha256_hex

log = logging.getLogger(__name__)

NEIGHBOURS = 20  # nearest neighbours per memory (same project)
SCORED_NEIGHBOURS = 5  # of which the fitted scorer reads the closest (as fitted)
WRITE_CANDIDATES = 10  # lexical matches queued when a memory is written
FLAG_AT = 0.5  # combined score from which a pair is a contradiction
LLM_WEIGHT = 0.15  # how far the model's verdict moves the cues' score
LLM_SECONDS = 30.0  # model time per run, whatever the machine's load
LLM_MAX_TOKENS = 60  # a verdict, a holder and a short reason
NEAR_SIMILARITY = 0.8  # neighbours this close are queued on change wording alone
MAX_BUCKET = 200  # a cue bucket larger than this is too vague to pair up
RARE_SHARE = 0.05  # subject words in at most 5 % of a project's memories index pairs
RESOLUTIONS = ("a_wins", "b_wins", "both_valid", "merged")
KINDS = ("contradiction", "supersedes")


# --- records ------------------------------------------------------------------------------


@dataclass
class Contradiction:
    id: int
    a: str
    b: str
    kind: str
    holder: str | None
    detected_at: str
    evidence: dict[str, Any] = field(default_factory=dict)
    resolved_at: str | None = None
    resolution: str | None = None
    note: str | None = None

    @property
    def resolved(self) -> bool:
        return self.resolved_at is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "a": self.a,
            "b": self.b,
            "kind": self.kind,
            "holder": self.holder,
            "detected_at": self.detected_at,
            "evidence": self.evidence,
            "resolved_at": self.resolved_at,
            "resolution": self.resolution,
            "note": self.note,
        }


@dataclass
class Verdict:
    a: str
    b: str
    kind: str  # contradiction, supersedes, compatible
    holder: str | None
    score: float  # combined
    cue_score: float
    cues: Cues
    llm: dict[str, Any] | None = None  # the model's answer, when asked
    scorer: float | None = None  # the fitted scorer's probability, when it decided

    @property
    def flagged(self) -> bool:
        return self.kind in KINDS

    @property
    def by_cues(self) -> bool:
        """Whether the deterministic cues flag the pair. A pair only the fitted scorer
        (or the model) flagged is proposed with "skip" recommended, so `--auto` never
        acts on a statistical guess."""
        return self.cue_score >= FLAG_AT

    def evidence(self, content_hash: str) -> dict[str, Any]:
        return {
            "scorer": None if self.scorer is None else round(self.scorer, 3),
            "cues": self.cues.to_dict(),
            "cue_score": round(self.cue_score, 3),
            "score": round(self.score, 3),
            "llm": self.llm,
            "hash": content_hash,
        }


def _record(row: Sequence[Any]) -> Contradiction:
    id_, a, b, kind, holder_, detected, evidence, resolved, resolution, note = row
    return Contradiction(
        int(id_), a, b, kind, holder_, detected, table.decode_evidence(evidence), resolved,
        resolution, note,
    )  # fmt: skip


def ordered(a: Memory, b: Memory) -> tuple[Memory, Memory]:
    """The pair with the earlier memory first (by valid_from or created_at, then id)."""

    def when(memory: Memory) -> tuple[float, str]:
        stamp = memory.valid_from or memory.created_at
        try:
            return parse_time(stamp).timestamp(), memory.id
        except ValueError:
            return 0.0, memory.id

    return (a, b) if when(a) <= when(b) else (b, a)


def pair_hash(a: Memory, b: Memory) -> str:
    text = "\x00".join((a.title, a.content, b.title, b.content))
    return sha256_hex(text, 16)


def reading_of(memory: Memory) -> Reading:
    return read(
        memory.id,
        memory.title,
        memory.content,
        memory.file_refs,
        memory.valid_from or memory.created_at,
    )


# --- the queue ----------------------------------------------------------------------------


def queue(
    store: MemoryStore,
    pairs: Iterable[tuple[Memory, Memory, float | None, dict[str, Any] | None]],
) -> int:
    """Queue pairs (memory, memory, similarity, cues) for judging; a pair already
    queued is queued again only when one of its memories changed. Returns how many
    were queued now."""
    queued = 0
    now = now_iso()
    with store.writing():
        for first, second, similarity, cues in pairs:
            if first.id == second.id:
                continue
            a, b = ordered(first, second)
            digest = pair_hash(a, b)
            stored = table.candidate_payload(store, a.id, b.id)
            payload = json.dumps({"hash": digest, **(cues or {})}, ensure_ascii=False)
            if stored is False:
                table.insert_candidate(store, a.id, b.id, payload, similarity, now)
                queued += 1
                continue
            if json.loads(str(stored or "{}")).get("hash") != digest:
                table.requeue_candidate(store, a.id, b.id, payload, similarity, now)
                queued += 1
    return queued


def queue_on_write(store: MemoryStore, memory: Memory) -> int:
    """The cheap pass when a memory is added or edited: its best lexical matches in its
    project are queued (judged later, while idle). Never raises: a failure here must
    not fail the write."""
    try:
        hits = store.lexical(
            f"{memory.title} {memory.content}", WRITE_CANDIDATES + 1, memory.project
        )
        ids = [h.memory_id for h in hits if h.memory_id != memory.id][:WRITE_CANDIDATES]
        others = store.get_many(ids)
        current = [
            m for m in others.values() if m.superseded_by is None and m.project == memory.project
        ]
        return queue(store, ((memory, other, None, None) for other in current))
    except Exception as error:  # the write itself succeeded; the REM scan catches up
        log.warning("contradiction candidates of %s not queued: %s", memory.id, error)
        return 0


def pending(store: MemoryStore, limit: int | None = None) -> list[tuple[str, str]]:
    return table.waiting_candidates(store, limit)


def queued_count(store: MemoryStore) -> dict[str, int]:
    candidates, waiting = table.candidate_counts(store)
    return {"candidates": candidates, "waiting": waiting}


# --- the bulk scan --------------------------------------------------------------------------


def facts_of(store: MemoryStore) -> dict[str, tuple[str, str, str]]:
    """Structured facts (`fact` table): memory id → (key, scope, value)."""
    return {m: (k, scope, v) for m, k, scope, v in table.fact_rows(store)}


@dataclass
class Scan:
    memories: dict[str, Memory] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # unit length
    texts: dict[str, PairText] = field(default_factory=dict)
    readings: dict[str, Reading] = field(default_factory=dict)
    weights: dict[str | None, dict[str, float]] = field(default_factory=dict)
    pairs: dict[tuple[str, str], tuple[float | None, dict[str, Any]]] = field(default_factory=dict)
    facts: dict[str, tuple[str, str, str]] = field(default_factory=dict)


def nearest_neighbours(
    ids: list[str], vectors: dict[str, np.ndarray], k: int
) -> Iterable[tuple[str, str, float]]:
    """Each memory's `k` nearest neighbours among `ids` (cosine)."""
    present = [i for i in ids if i in vectors]
    if len(present) < 2:
        return
    matrix = np.stack([vectors[i] for i in present]).astype(np.float32)
    matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9, None)
    take = min(k, len(present) - 1)
    for start in range(0, len(present), 1024):
        scores = matrix[start : start + 1024] @ matrix.T
        for row in range(scores.shape[0]):
            scores[row, start + row] = -np.inf
        best = np.argpartition(-scores, take - 1, axis=1)[:, :take]
        for row, columns in enumerate(best):
            for column in columns.tolist():
                yield present[start + row], present[column], float(scores[row, column])


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
    import math

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
) -> Scan:
    """Read every current memory (of `project`, or all) and find the candidate pairs:
    nearest neighbours with a cue, and the pairs the cues' index links. Nothing is
    written (see `queue`)."""

    result = Scan(facts=facts_of(store))
    for name, memories in current_by_project(store, project).items():
        readings = {m.id: reading_of(m) for m in memories}
        weights = idf_weights(readings.values())
        result.memories.update((m.id, m) for m in memories)
        result.readings.update(readings)
        result.weights[name] = weights
        linked: dict[tuple[str, str], float | None] = {
            pair: None for pair in _index_pairs(readings, weights)
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
            for first, second, similarity in nearest_neighbours(list(readings), found, neighbours):
                key = (min(first, second), max(first, second))
                if linked.get(key) is None:
                    linked[key] = similarity
            closest = {
                (min(first, second), max(first, second))
                for first, second, _ in nearest_neighbours(list(readings), found, SCORED_NEIGHBOURS)
            }
        by_fact: dict[tuple[str, str], list[str]] = defaultdict(list)
        for memory_id in readings:
            if memory_id in result.facts:
                key_, scope, _ = result.facts[memory_id]
                by_fact[(key_, scope)].append(memory_id)
        for members in by_fact.values():
            for i, first in enumerate(members[:MAX_BUCKET]):
                for second in members[i + 1 : MAX_BUCKET]:
                    linked.setdefault((min(first, second), max(first, second)), None)
        for (first, second), near in linked.items():
            cues = compare(readings[first], readings[second], weights, result.facts)
            if _worth_queueing(cues, near) or (
                (first, second) in closest
                and near is not None
                and _scored(result, first, second, near, cues, weights)
            ):
                result.pairs[(first, second)] = (near, cues.to_dict())
    return result


def _text(found: Scan, memory: Memory) -> PairText:
    text = found.texts.get(memory.id)
    if text is None:
        text = found.texts[memory.id] = read_pair_text(memory)
    return text


def _scored(
    found: Scan, first: str, second: str, similarity: float, cues: Cues, weights: dict[str, float]
) -> bool:
    """Whether the fitted scorers flag the pair."""
    a, b = found.memories[first], found.memories[second]
    pair = features(_text(found, a), _text(found, b), similarity, cues, weights)
    return is_conflict(pair)[0]


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


# --- judging ----------------------------------------------------------------------------------


def ask_model(llm: Any, a: Memory, b: Memory, budget: TimeBudget | None) -> dict[str, Any] | None:
    """The model's verdict on a pair ({verdict, holds, reason}) or None ("no verdict").
    Raises LLMUnavailable / LLMTimeout / LLMCancelled like `ask_json`."""
    from services.llm.base import ask_json
    from services.llm.prompts import render, schema

    def day(memory: Memory) -> str:
        return (memory.valid_from or memory.created_at)[:10]

    prompt = render(
        "judge_contradiction",
        a_date=day(a),
        a_text=f"{a.title}. {a.content[:400]}",
        b_date=day(b),
        b_text=f"{b.title}. {b.content[:400]}",
    )
    answer = ask_json(
        llm, prompt, schema("judge_contradiction"), max_tokens=LLM_MAX_TOKENS, budget=budget
    )
    return parse_verdict(answer)


def parse_verdict(answer: Any) -> dict[str, Any] | None:
    """A model answer as {verdict, holds, reason}, or None when it is not usable
    (unknown verdict, a conflict that names no holder, or "both" hold a conflict)."""
    if not isinstance(answer, dict):
        return None
    verdict = str(answer.get("verdict", "")).strip().lower()
    holds = str(answer.get("holds", "")).strip().lower()
    reason = " ".join(str(answer.get("reason", "")).split())[:200]
    if verdict not in ("contradiction", "supersedes", "compatible"):
        return None
    if holds not in ("a", "b", "both"):
        return None
    if verdict == "compatible":
        holds = "both"
    elif holds == "both":
        return None  # a conflict where both hold is no answer
    return {
        "verdict": verdict,
        "holds": holds.upper() if holds != "both" else "both",
        "reason": reason,
    }


class Judge:
    """Judges pairs: cues first, the model (if any) only where it can tip the balance,
    within `budget`; a model that turns out unavailable is not asked again this run."""

    def __init__(self, llm: Any | None, budget: TimeBudget | None = None) -> None:
        self.llm = llm
        self.budget = budget or TimeBudget(LLM_SECONDS)
        self.asked = 0
        self.llm_note: str | None = None

    def judge(
        self,
        a: Memory,
        b: Memory,
        readings: tuple[Reading, Reading],
        weights: dict[str, float] | None = None,
        facts: dict[str, tuple[str, str, str]] | None = None,
        similarity: float | None = None,
        texts: tuple[PairText, PairText] | None = None,
    ) -> Verdict:
        a, b = ordered(a, b)
        reading_a, reading_b = readings if readings[0].id == a.id else readings[::-1]
        cues = compare(reading_a, reading_b, weights, facts)
        cue_score = cues.score()
        text_a, text_b = texts or (read_pair_text(a), read_pair_text(b))
        if similarity is not None:
            if text_a.memory.id != a.id:
                text_a, text_b = text_b, text_a
            found = features(text_a, text_b, similarity, cues, weights)
            flagged, scored = is_conflict(found)
            if flagged and cue_score < FLAG_AT:
                kind = kind_of(text_a, text_b, found)
                held = holder(reading_a, reading_b, cues)
                return Verdict(a.id, b.id, kind, held, scored, cue_score, cues, None, scored)
        answer: dict[str, Any] | None = None
        if self.llm is not None and abs(cue_score - FLAG_AT) < LLM_WEIGHT:
            answer = self._ask(a, b)
        vote = 0.0
        held = holder(reading_a, reading_b, cues)
        if answer is not None and answer["verdict"] == "compatible":
            vote = -1.0
        elif answer is not None and answer["holds"] == ("A" if held == a.id else "B"):
            # A conflict counts only with the holder the cues see (the memory that
            # replaces the other, else the later one): a tiny model answering by rote
            # ("contradiction, A") does not tip anything.
            vote = 1.0
        if answer is not None:
            answer = {**answer, "counted": vote != 0.0}
        score = cue_score + LLM_WEIGHT * vote
        if score < FLAG_AT:
            return Verdict(a.id, b.id, "compatible", None, score, cue_score, cues, answer)
        if cues.replaces or (cues.conflicts and reading_b.change_wording):
            kind = "supersedes"
        elif cues.conflicts or cues.fact:
            kind = "contradiction"
        else:  # negation or near paraphrase: the model's word for it, if it gave one
            kind = answer["verdict"] if answer is not None else "contradiction"
        return Verdict(a.id, b.id, kind, held, score, cue_score, cues, answer)

    def _ask(self, a: Memory, b: Memory) -> dict[str, Any] | None:
        if not self.budget.allows_a_call():
            return None
        try:
            answer = ask_model(self.llm, a, b, self.budget)
        except LLMCancelled:
            raise
        except LLMUnavailable as error:  # LLMTimeout too: the run's model time is up
            self.llm_note = str(error)
            from services.llm.base import LLMTimeout

            if not isinstance(error, LLMTimeout):
                self.llm = None
            return None
        self.asked += 1
        return answer


def judge_pending(
    store: MemoryStore,
    judge: Judge,
    found: Scan | None = None,
    write: bool = True,
    pairs: Iterable[tuple[str, str]] | None = None,
) -> list[Verdict]:
    """Judge the queued pairs (or `pairs`); with `write`, mark them judged and record the
    flagged ones in `contradiction`. Returns every verdict."""
    found = found or Scan(facts=facts_of(store))
    wanted = list(pairs) if pairs is not None else pending(store)
    missing = {i for pair in wanted for i in pair} - set(found.memories)
    found.memories.update(store.get_many(sorted(missing)))
    verdicts: list[Verdict] = []
    now = now_iso()
    for start in range(0, len(wanted), 200):
        batch = wanted[start : start + 200]
        judged: list[tuple[Verdict | None, str, str]] = []
        for first, second in batch:
            a, b = found.memories.get(first), found.memories.get(second)
            if a is None or b is None or a.superseded_by or b.superseded_by:
                judged.append((None, first, second))
                continue
            readings = tuple(found.readings.setdefault(m.id, reading_of(m)) for m in (a, b))
            weights = found.weights.get(a.project)
            texts = (_text(found, a), _text(found, b))
            verdict = judge.judge(
                a,
                b,
                (readings[0], readings[1]),
                weights,
                found.facts,
                similarity_of(found, a.id, b.id),
                texts,
            )
            verdicts.append(verdict)
            judged.append((verdict, first, second))
        if write:
            _store_verdicts(store, judged, found.memories, now)
    return verdicts


def _store_verdicts(
    store: MemoryStore,
    judged: list[tuple[Verdict | None, str, str]],
    memories: dict[str, Memory],
    now: str,
) -> None:
    with store.writing():
        for verdict, first, second in judged:
            if verdict is None:
                table.mark_judged(store, first, second, now)
                continue
            digest = pair_hash(memories[verdict.a], memories[verdict.b])
            evidence = verdict.evidence(digest)
            cues = json.dumps({"verdict": verdict.kind, **evidence})
            table.mark_judged(store, verdict.a, verdict.b, now, cues)
            if verdict.flagged:
                table.record_flag(
                    store, verdict.a, verdict.b, verdict.kind, verdict.holder, now,
                    json.dumps(evidence),
                )  # fmt: skip


# --- reading and resolving -------------------------------------------------------------------


def get(store: MemoryStore, contradiction_id: int) -> Contradiction:
    row = table.row_by_id(store, contradiction_id)
    if row is None:
        raise NotFoundError(f"no contradiction with id {contradiction_id}")
    return _record(row)


def for_pair(store: MemoryStore, a: str, b: str) -> Contradiction | None:
    row = table.row_for_pair(store, a, b)
    return None if row is None else _record(row)


def listing(
    store: MemoryStore, include_resolved: bool = False, project: str | None = None
) -> list[Contradiction]:
    """Contradictions whose memories both still exist (newest first); unresolved only
    unless `include_resolved`."""
    records = [_record(r) for r in table.rows(store, include_resolved)]
    memories = store.get_many({i for r in records for i in (r.a, r.b)})
    return [
        r
        for r in records
        if r.a in memories
        and r.b in memories
        and (project is None or memories[r.a].project == project)
    ]


def resolve(
    store: MemoryStore,
    contradiction_id: int,
    resolution: str,
    note: str | None = None,
    into: str | None = None,
    finding_answered: bool = False,
) -> bool:
    """Resolve a contradiction in one transaction. a_wins / b_wins: the loser gets
    `valid_to` (when the winner started to hold, or now) and `superseded_by`, the winner
    `supersedes`; both_valid: nothing changes and the pair is not proposed again;
    merged: both are superseded by the memory `into` when given (one that merges them),
    else only recorded. Its pending review finding is answered too. Returns True when
    memories changed."""
    if resolution not in RESOLUTIONS:
        raise UserInputError(
            f"unknown resolution {resolution!r} (choose from: {', '.join(RESOLUTIONS)})"
        )
    record = get(store, contradiction_id)
    if record.resolved:
        raise UserInputError(
            f"contradiction {contradiction_id} was already resolved ({record.resolution})"
        )
    present = store.get_many([record.a, record.b, *([into] if into else [])])
    if into and into not in present:
        raise NotFoundError(f"no memory with id {into!r}")
    if into and resolution != "merged":
        raise UserInputError("--into goes with --resolution merged")
    changed = False
    now = now_iso()
    with store.writing():
        if resolution in ("a_wins", "b_wins"):
            winner, loser = (record.a, record.b) if resolution == "a_wins" else (record.b, record.a)
            if winner in present and loser in present:
                changed = supersede(store, present[winner], present[loser], now)
        elif resolution == "merged" and into:
            for loser in (record.a, record.b):
                if loser in present and loser != into:
                    changed = supersede(store, present[into], present[loser], now) or changed
        table.mark_resolved(store, contradiction_id, now, resolution, note)
        if not finding_answered:
            findings = FindingStore(store)
            for finding in findings.pending("contradictions"):
                if finding.detail.get("contradiction") == contradiction_id:
                    option = resolution if resolution != "merged" else "both_valid"
                    findings.mark_answered(finding, option, applied=changed)
    return changed


def supersede(store: MemoryStore, winner: Memory, loser: Memory, now: str) -> bool:
    """`loser` no longer holds: it keeps its text and tier, gets `valid_to` and
    `superseded_by`; `winner` gets `supersedes` (unless it already names another)."""
    winner_start = winner.valid_from or winner.created_at
    loser_start = loser.valid_from or loser.created_at
    try:
        later = parse_time(winner_start) > parse_time(loser_start)
    except ValueError:
        later = False
    store.update(
        loser.id,
        {"superseded_by": winner.id, "valid_to": winner_start if later else now},
    )
    if winner.supersedes is None:
        store.update(winner.id, {"supersedes": loser.id})
    return True


# --- findings and warnings -----------------------------------------------------------------------


def _short(memory: Memory, limit: int = 90) -> str:
    text = " ".join(memory.content.split())
    first = text.split(". ")[0].rstrip(".")
    return first if len(first) <= limit else first[: limit - 1].rsplit(" ", 1)[0] + "…"


def options_for(record: Contradiction) -> list[Option]:
    return [
        Option(
            "a_wins",
            f"{record.a} holds",
            f"{record.b} no longer holds: it gets valid_to and superseded_by {record.a}, is "
            "hidden from standard searches and still found with --mode deep (never deleted)",
        ),
        Option(
            "b_wins",
            f"{record.b} holds",
            f"{record.a} no longer holds: it gets valid_to and superseded_by {record.b}, is "
            "hidden from standard searches and still found with --mode deep (never deleted)",
        ),
        Option("both_valid", "Both hold", "they do not conflict; do not propose them again"),
        Option("skip", "Skip", "decide later; the contradiction stays open"),
    ]


def finding_for(record: Contradiction, memories: dict[str, Memory]) -> Finding:
    a, b = memories[record.a], memories[record.b]
    evidence = record.evidence
    by_cues = float(evidence.get("cue_score", 0.0)) >= FLAG_AT
    recommended = "skip"
    if by_cues and record.holder in (record.a, record.b):
        recommended = "a_wins" if record.holder == record.a else "b_wins"
    what = "replaces" if record.kind == "supersedes" else "contradicts"
    conflicts = evidence.get("cues", {}).get("conflicts", [])
    about = f" ({describe_conflict(conflicts[0])})" if conflicts else ""
    return Finding(
        op="contradictions",
        kind=record.kind,
        summary=f"{b.id} {what} {a.id}{about}: “{_short(a, 70)}” vs “{_short(b, 70)}”",
        memory_ids=[record.a, record.b],
        options=options_for(record),
        recommended=recommended,
        detail={
            "contradiction": record.id,
            "holder": record.holder,
            "evidence": evidence,
        },
    )


def open_findings(store: MemoryStore, project: str | None = None) -> list[Finding]:
    """A finding for every unresolved contradiction of current memories (the finding
    store keeps those it already has)."""
    records = listing(store, project=project)
    memories = store.get_many({i for r in records for i in (r.a, r.b)})
    return [
        finding_for(r, memories)
        for r in records
        if not memories[r.a].superseded_by and not memories[r.b].superseded_by
    ]


def alerts(
    store: MemoryStore, project: str | None, memory_ids: Iterable[str] = (), limit: int = 3
) -> list[str]:
    """Tier-1 warnings: unresolved contradictions involving `memory_ids` first, then
    others of `project` (none without a project); one line each."""
    ids = set(memory_ids)
    records = [_record(r) for r in table.rows(store)]
    if not records:
        return []
    memories = store.get_many({i for r in records for i in (r.a, r.b)})
    live = [
        r
        for r in records
        if r.a in memories
        and r.b in memories
        and not memories[r.a].superseded_by
        and not memories[r.b].superseded_by
        and (r.a in ids or r.b in ids or (project is not None and memories[r.a].project == project))
    ]
    live.sort(key=lambda r: (not (r.a in ids or r.b in ids), -r.id))
    lines = []
    for record in live[:limit]:
        a, b = memories[record.a], memories[record.b]
        lines.append(
            f"⚠ {a.id} says “{_short(a)}”, {b.id} says “{_short(b)}” — unresolved "
            f"(`engram contradictions resolve {record.id}`)"
        )
    return lines


# --- the REM operation --------------------------------------------------------------------------


def run(
    store: MemoryStore,
    vectors: Any | None,
    model_id: str,
    llm: Any | None,
    project: str | None = None,
    dry_run: bool = False,
    budget: TimeBudget | None = None,
) -> tuple[list[Finding], dict[str, Any]]:
    """Queue candidates (bulk scan), judge every waiting pair, and return a finding per
    unresolved contradiction with what was done. `dry_run` writes nothing."""
    found = scan(store, vectors, model_id, project)
    judge = Judge(llm, budget)
    if dry_run:
        wanted = sorted({(min(a, b), max(a, b)) for a, b in [*found.pairs, *pending(store)]})
        verdicts = judge_pending(store, judge, found, write=False, pairs=wanted)
        findings = open_findings(store, project)
        for verdict in verdicts:
            if verdict.flagged:
                record = Contradiction(
                    0, verdict.a, verdict.b, verdict.kind, verdict.holder, now_iso(),
                    verdict.evidence(""),
                )  # fmt: skip
                findings.append(finding_for(record, found.memories))
        queued = len(wanted)
    else:
        queued = queue_scan(store, found)
        verdicts = judge_pending(store, judge, found)
        findings = open_findings(store, project)
    flagged = [v for v in verdicts if v.flagged]
    changes: dict[str, Any] = {
        "queued": queued,
        "judged": len(verdicts),
        "contradictions": sum(v.kind == "contradiction" for v in flagged),
        "supersedes": sum(v.kind == "supersedes" for v in flagged),
        "asked_llm": judge.asked,
    }
    if judge.llm_note:
        changes["llm_note"] = judge.llm_note[:200]
    return findings, changes
