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

from collections.abc import Sequence
from typing import Any

from services.filters import MemoryFilter
from services.knowledge.conflict_judge import Judge, ask_model, judge_pending, parse_verdict
from services.knowledge.conflict_records import (
    FLAG_AT,
    KINDS,
    LLM_MAX_TOKENS,
    LLM_SECONDS,
    LLM_WEIGHT,
    MAX_BUCKET,
    MAX_SCORED_FLAGS,
    NEAR_SIMILARITY,
    NEIGHBOURS,
    RARE_SHARE,
    RESOLUTIONS,
    SCORED_NEIGHBOURS,
    WRITE_CANDIDATES,
    Contradiction,
    Verdict,
    alerts,
    facts_of,
    finding_for,
    for_pair,
    get,
    listing,
    open_findings,
    options_for,
    ordered,
    pair_hash,
    pending,
    queue,
    queue_on_write,
    queued_count,
    reading_of,
    record_of,
)
from services.knowledge.conflict_resolution import resolve, settle, supersede
from services.knowledge.conflict_scan import (
    Scan,
    candidate_pairs,
    nearest_neighbours,
    queue_scan,
    scan,
    similarity_of,
)
from services.knowledge.cues import compare
from services.llm.base import LLM, TimeBudget
from services.memory import Memory, now_iso
from services.storage import contradictions as table
from services.storage.findings import Finding
from services.storage.memories import MemoryStore

__all__ = [
    "FLAG_AT", "KINDS", "LLM_MAX_TOKENS", "LLM_SECONDS", "LLM_WEIGHT", "MAX_BUCKET",
    "NEAR_SIMILARITY", "NEIGHBOURS", "RARE_SHARE", "RESOLUTIONS", "SCORED_NEIGHBOURS",
    "WRITE_CANDIDATES", "Contradiction", "Judge", "Scan", "Verdict", "alerts", "ask_model",
    "candidate_pairs", "compare", "facts_of", "finding_for", "for_pair", "get",
    "judge_new", "judge_pending", "listing", "nearest_neighbours", "open_findings", "options_for",
    "ordered", "pair_hash", "parse_verdict", "pending", "queue", "queue_on_write",
    "queue_scan", "queued_count", "reading_of", "resolve", "run", "scan", "settle",
    "similarity_of", "supersede",
]  # fmt: skip


def run(
    store: MemoryStore,
    vectors: Any | None,
    model_id: str,
    llm: LLM | None,
    project: str | None = None,
    dry_run: bool = False,
    budget: TimeBudget | None = None,
) -> tuple[list[Finding], dict[str, Any]]:
    """Queue candidates (bulk scan), judge every waiting pair, and return a finding per
    unresolved contradiction with what was done. `dry_run` writes nothing."""
    found = scan(store, vectors, model_id, project)
    judge = Judge(llm, budget or TimeBudget.for_work(LLM_SECONDS, len(found.memories)))
    if dry_run:
        wanted = sorted({(min(a, b), max(a, b)) for a, b in [*found.pairs, *pending(store)]})
        verdicts = judge_pending(store, judge, found, write=False, pairs=wanted)
        findings = open_findings(store, project)
        # A pair already open is judged again but is one finding, as a real run leaves it.
        shown = {finding.id for finding in findings}
        unseen = []
        for verdict in verdicts:
            if verdict.flagged:
                record = Contradiction(
                    0, verdict.a, verdict.b, verdict.kind, verdict.holder, now_iso(),
                    verdict.evidence(""),
                )  # fmt: skip
                finding = finding_for(record, found.memories)
                if finding.id not in shown:
                    shown.add(finding.id)
                    findings.append(finding)
                    unseen.append(verdict)
        judged, verdicts = len(verdicts), unseen
        queued = len(wanted)
    else:
        queued = queue_scan(store, found)
        verdicts = judge_pending(store, judge, found)
        judged = len(verdicts)
        findings = open_findings(store, project)
    flagged = [v for v in verdicts if v.flagged]
    changes: dict[str, Any] = {
        "queued": queued,
        "judged": judged,
        "contradictions": sum(v.kind == "contradiction" for v in flagged),
        "supersedes": sum(v.kind == "supersedes" for v in flagged),
        "asked_llm": judge.asked,
    }
    if judge.llm_note:
        changes["llm_note"] = judge.llm_note[:200]
    return findings, changes


# A project with more current memories than this is left to the REM cycle's scan: reading
# all of them again for every embedded batch would cost seconds in the background.
NEW_SCAN_LIMIT = 2000


def judge_new(store: MemoryStore, vectors: Any, model_id: str, memories: Sequence[Memory]) -> int:
    """Judge the pairs of just-embedded `memories` as the REM `contradictions` operation
    would, without a model, so an imported note that replaces or contradicts another is
    an open conflict (search ranks by it, the review lists it) before any cycle: their
    nearest neighbours and the cues' index pairs with them, plus their queued pairs. A
    pair whose cues a model's verdict could tip stays queued for the cycle. Returns how
    many pairs were flagged."""
    flagged = 0
    for project in sorted({m.project for m in memories}, key=lambda p: p or ""):
        ids = {m.id for m in memories if m.project == project}
        if store.count(MemoryFilter(project=project)) > NEW_SCAN_LIMIT:
            continue
        # The scorer's guesses wait for review: a project gets MAX_SCORED_FLAGS of them
        # from embedding at most (an import in batches would add that many a batch).
        room = max(0, MAX_SCORED_FLAGS - _guesses_waiting(store, project))
        found = scan(store, vectors, model_id, project, touching=ids, scored_cap=room)
        queue_scan(store, found)
        waiting = [pair for pair in pending(store) if pair[0] in ids or pair[1] in ids]
        verdicts = judge_pending(store, Judge(None), found, pairs=waiting, leave_for_model=True)
        flagged += sum(v.flagged for v in verdicts)
    return flagged


def _guesses_waiting(store: MemoryStore, project: str | None) -> int:
    """Open conflicts of `project` that only the judge's fitted scorer flagged (not the
    embed-time reading of a change, not what `engram add` proposed: those say how they
    were judged): the guesses waiting for review."""
    guesses = [
        record
        for record in (record_of(row) for row in table.rows(store))
        if record.scorer_guess and "judged" not in record.evidence
    ]
    if not guesses:
        return 0
    memories = store.get_many({r.a for r in guesses})
    return sum(1 for r in guesses if r.a in memories and memories[r.a].project == project)
