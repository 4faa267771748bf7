"""Contradiction records and the candidate queue: what a flagged pair is (`Contradiction`,
`Verdict`), queueing pairs to judge (on every write, in a few ms), reading flagged pairs,
and what the review and the assembled context show of them (findings, tier-1 warnings);
resolving them is `services.knowledge.conflict_resolution`. The tables
are owned by `services.storage.contradictions`; see `services.knowledge.contradictions`
for the whole flow."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.errors import NotFoundError
from services.knowledge.cues import (
    Cues,
    read,
)
from services.knowledge.reading import Reading
from services.knowledge.value_wording import describe_conflict
from services.memory import Memory, now_iso, written_at
from services.storage import contradictions as table
from services.storage.findings import Finding, Option
from services.storage.memories import MemoryStore
from services.text.redact import without_placeholders
from services.text.words import sha256_hex

log = logging.getLogger(__name__)

NEIGHBOURS = 20  # nearest neighbours per memory (same project)
SCORED_NEIGHBOURS = 5  # of which the fitted scorer reads the closest (as fitted)
MAX_SCORED_FLAGS = 12  # pairs only the scorer flags, a project and run (for review)
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

    @property
    def scorer_guess(self) -> bool:
        """Flagged by the judge's fitted scorer alone (no cue reached the bar): a guess
        for review."""
        cue_score = self.evidence.get("cue_score")
        return self.evidence.get("scorer") is not None and (
            not isinstance(cue_score, int | float) or cue_score < FLAG_AT
        )

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


def record_of(row: Sequence[Any]) -> Contradiction:
    id_, a, b, kind, holder_, detected, evidence, resolved, resolution, note = row
    return Contradiction(
        int(id_), a, b, kind, holder_, detected, table.decode_evidence(evidence), resolved,
        resolution, note,
    )  # fmt: skip


def ordered(a: Memory, b: Memory) -> tuple[Memory, Memory]:
    """The pair with the earlier memory first (by valid_from or created_at, then id)."""

    def when(memory: Memory) -> tuple[float, str]:
        return written_at(memory), memory.id

    return (a, b) if when(a) <= when(b) else (b, a)


def pair_hash(a: Memory, b: Memory) -> str:
    text = "\x00".join((a.title, a.content, b.title, b.content))
    return sha256_hex(text, 16)


def reading_of(memory: Memory) -> Reading:
    """The cues' reading of `memory`, kept for a memory read before (the embedding
    process judges every batch against the same project)."""
    return _reading(
        memory.id,
        without_placeholders(memory.title),
        without_placeholders(memory.content),
        tuple(memory.file_refs),
        memory.valid_from or memory.created_at,
    )


@functools.lru_cache(maxsize=4096)
def _reading(
    memory_id: str, title: str, content: str, file_refs: tuple[str, ...], created_at: str
) -> Reading:
    return read(memory_id, title, content, file_refs, created_at)


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
            if stored is None:
                table.insert_candidate(store, a.id, b.id, payload, similarity, now)
                queued += 1
                continue
            if json.loads(stored).get("hash") != digest:
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


def facts_of(store: MemoryStore) -> dict[str, tuple[str, str, str]]:
    """Structured facts (`fact` table): memory id → (key, scope, value)."""
    return {m: (k, scope, v) for m, k, scope, v in table.fact_rows(store)}


def get(store: MemoryStore, contradiction_id: int) -> Contradiction:
    row = table.row_by_id(store, contradiction_id)
    if row is None:
        raise NotFoundError(f"no contradiction with id {contradiction_id}")
    return record_of(row)


def for_pair(store: MemoryStore, a: str, b: str) -> Contradiction | None:
    row = table.row_for_pair(store, a, b)
    return None if row is None else record_of(row)


def listing(
    store: MemoryStore, include_resolved: bool = False, project: str | None = None
) -> list[Contradiction]:
    """Contradictions whose memories both still exist (newest first); unresolved only
    unless `include_resolved`."""
    records = [record_of(r) for r in table.rows(store, include_resolved)]
    memories = store.get_many({i for r in records for i in (r.a, r.b)})
    return [
        r
        for r in records
        if r.a in memories
        and r.b in memories
        and (project is None or memories[r.a].project == project)
    ]


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


def what_differs(cues: dict[str, Any]) -> str | None:
    """What a pair's cues (as recorded) read as differing, in a few words: the runtime
    floor or the versions CI tests that the later note moves on ("python floor: 3.8 →
    3.9", "go in CI: 1.21, 1.22 → 1.22, 1.23"), else the first conflicting attribute
    ("timeout: 5 s vs 30 s")."""
    for name, label in (("floor", "{} floor"), ("tested", "{}")):
        step = cues.get(name)
        if isinstance(step, dict) and {"runtime", "a", "b"} <= step.keys():
            return f"{label.format(step['runtime'])}: {step['a']} → {step['b']}"
    conflicts = cues.get("conflicts") or []
    return describe_conflict(conflicts[0]) if conflicts else None


def reason_of(evidence: dict[str, Any]) -> str | None:
    """What a recorded pair's evidence says differs: the cues' reading (`what_differs`),
    the reason written when it was flagged, or the names the later note retires ("the
    later note retires tox")."""
    differs = what_differs(evidence.get("cues", {})) or evidence.get("reason")
    retired = evidence.get("retired")
    if not differs and isinstance(retired, list) and retired:
        differs = "the later note retires " + ", ".join(str(name) for name in retired[:3])
    return str(differs) if differs else None


def finding_for(record: Contradiction, memories: dict[str, Memory]) -> Finding:
    a, b = memories[record.a], memories[record.b]
    evidence = record.evidence
    by_cues = float(evidence.get("cue_score", 0.0)) >= FLAG_AT
    recommended = "skip"
    if by_cues and record.holder in (record.a, record.b):
        recommended = "a_wins" if record.holder == record.a else "b_wins"
    what = "replaces" if record.kind == "supersedes" else "contradicts"
    differs = reason_of(evidence)
    about = f" ({differs})" if differs else ""
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
    """Tier-1 warnings: unresolved contradictions involving `memory_ids` (the memories
    the context holds), newest first; one line each. A disagreement between two other
    notes of the project is not this context's business: its ⚠ line would sit above
    memories it says nothing about. An open replacement (`supersedes`, with its holder)
    needs none: the context shows the holder in place of the memory it replaces, so the
    two are never side by side. `project` is kept for callers; it no longer widens."""
    ids = set(memory_ids)
    records = [
        record
        for record in (record_of(r) for r in table.rows(store))
        if not (record.kind == "supersedes" and record.holder)
    ]
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
        and (r.a in ids or r.b in ids)
    ]
    live.sort(key=lambda r: -r.id)
    lines = []
    for record in live[:limit]:
        a, b = memories[record.a], memories[record.b]
        lines.append(
            f"⚠ {a.id} says “{_short(a)}”, {b.id} says “{_short(b)}” — unresolved "
            f"(`engram contradictions resolve {record.id}`)"
        )
    return lines
