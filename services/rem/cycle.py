"""Running consolidation operations: each is independent, records what ran and when
and what it changed (`rem_run`), and stores its findings; `auto` applies the recommended
option of each new finding (headless use) except suggestions, `dry_run` stores and
changes nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from services.llm.base import LLMCancelled
from services.memories.service import MemoryService
from services.memory import now_iso
from services.rem.actions import answer
from services.rem.ops.duplicates import duplicate_findings, find_duplicates
from services.storage.findings import Finding, FindingStore
from services.vectors.index import VectorIndex

Operation = Callable[["RemContext"], list[Finding]]


@dataclass
class RemContext:
    service: MemoryService
    vectors: VectorIndex
    model_id: str
    project: str | None = None
    now: datetime | None = None  # the cycle's "now" (benchmarks replay a fixed date)
    llm: Any | None = None  # an LLM (services.llm) for prose; None: derived summaries
    session_gap_minutes: float = 30.0
    notes: dict[str, Any] = field(default_factory=dict)
    dry_run: bool = False  # set by run_operations: operations that keep books write none


def duplicates_operation(context: RemContext) -> list[Finding]:
    pairs = find_duplicates(
        context.service.store, context.vectors, context.model_id, context.project
    )
    ids = sorted({i for p in pairs for i in (p.a, p.b)})
    memories = context.service.store.get_many(ids)
    return duplicate_findings(pairs, memories)


def retention_operation(context: RemContext) -> list[Finding]:
    """Tiers from retention, applied at once (no findings)."""
    from services.rem.ops.retention import apply_tiers

    context.notes["retention"] = apply_tiers(context.service.store, context.now)
    return []


def staleness_operation(context: RemContext) -> list[Finding]:
    from services.rem.ops.retention import staleness_findings

    return staleness_findings(context.service.store, context.now)


def clusters_operation(context: RemContext) -> list[Finding]:
    from services.rem.ops.clusters import cluster_findings, find_clusters

    clusters = find_clusters(
        context.service.store, context.vectors, context.model_id, context.project
    )
    return cluster_findings(clusters, context.llm)


def episodes_operation(context: RemContext) -> list[Finding]:
    """Summary and compressed levels for aging episodes, applied at once."""
    from services.rem.ops.clusters import episode_levels

    context.notes["episodes"] = episode_levels(context.service.store, context.now)
    return []


def links_operation(context: RemContext) -> list[Finding]:
    """Related and supersedes links, applied at once (links change no memory)."""
    from services.rem.ops.graph import refresh_links

    context.notes["links"] = refresh_links(
        context.service.store, context.vectors, context.model_id, context.project
    )
    return []


def communities_operation(context: RemContext) -> list[Finding]:
    """Louvain communities of the link graph with their summaries, stored at once; the
    report says what is new, merged, split and orphaned."""
    from services.rem.ops.graph import detect_communities

    context.notes["communities"] = detect_communities(
        context.service.store, context.project, context.llm
    )
    return []


def contradictions_operation(context: RemContext) -> list[Finding]:
    """Queue candidate pairs (neighbours and cues), judge them (cues, the LLM only to
    break ties), record contradictions; one finding each. Changes no memory: a loser is
    superseded only through an answer or `engram contradictions resolve`."""
    from services.knowledge.contradictions import run

    findings, context.notes["contradictions"] = run(
        context.service.store,
        context.vectors,
        context.model_id,
        context.llm,
        context.project,
        dry_run=context.dry_run,
    )
    return findings


def facts_operation(context: RemContext) -> list[Finding]:
    """Key, value and scope of what factual memories state: by rules, or by the LLM
    for a few a run; proposed for review (the model's readings are never recommended)."""
    from services.knowledge.facts import fact_findings

    return fact_findings(context.service.store, context.llm)


def extraction_operation(context: RemContext) -> list[Finding]:
    from services.rem.ops.extraction import extraction_findings

    return extraction_findings(context.service.store, context.now, context.session_gap_minutes)


# In the order a full cycle runs them: facts before the contradictions that compare them,
# links before the communities built on them.
OPERATIONS: dict[str, Operation] = {
    "retention": retention_operation,
    "staleness": staleness_operation,
    "duplicates": duplicates_operation,
    "facts": facts_operation,
    "contradictions": contradictions_operation,
    "links": links_operation,
    "clusters": clusters_operation,
    "communities": communities_operation,
    "episodes": episodes_operation,
    "extraction": extraction_operation,
}
# Operations that change things themselves (no findings): a dry run skips them.
APPLIED_AT_ONCE = frozenset({"retention", "links", "communities", "episodes"})
# Operations whose findings are suggestions: --auto never applies them.
SUGGESTIONS = frozenset({"extraction"})


@dataclass
class OperationReport:
    op: str
    seconds: float
    findings: list[Finding] = field(default_factory=list)
    applied: int = 0
    error: str | None = None
    changes: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "applied": self.applied,
            "changes": self.changes,
            "findings": [
                {
                    "id": f.id,
                    "kind": f.kind,
                    "memory_ids": f.memory_ids,
                    "recommended": f.recommended,
                    "summary": f.summary,
                }
                for f in self.findings
            ],
        }


def run_operations(
    context: RemContext,
    ops: list[str] | None = None,
    auto: bool = False,
    dry_run: bool = False,
) -> list[OperationReport]:
    from services.errors import UserInputError

    names = ops or list(OPERATIONS)
    unknown = [n for n in names if n not in OPERATIONS]
    if unknown:
        raise UserInputError(
            f"unknown operation(s) {', '.join(unknown)} (choose from: {', '.join(OPERATIONS)})"
        )
    store = context.service.store
    findings = FindingStore(store)
    context.dry_run = dry_run
    reports: list[OperationReport] = []
    for name in names:
        started_at = now_iso()
        started = time.perf_counter()
        report = OperationReport(name, 0.0)
        try:
            applies_itself = name in APPLIED_AT_ONCE
            found = [] if (dry_run and applies_itself) else OPERATIONS[name](context)
            report.changes = context.notes.pop(name, {})
            report.findings = found if dry_run else findings.save(found)
            if auto and not dry_run and name not in SUGGESTIONS:
                # Every pending finding of this operation, also those an interrupted
                # earlier run stored but did not get to.
                for finding in findings.pending(name):
                    if finding.recommended == "skip":
                        continue
                    if answer(context.service, findings, finding, finding.recommended):
                        report.applied += 1
        except LLMCancelled:  # the user came back: nothing stored, due again next time
            report.error = "cancelled: stopped when the user came back"
            report.cancelled = True
        except Exception as error:  # one failing operation must not stop the others
            report.error = f"{type(error).__name__}: {error}"
        report.seconds = time.perf_counter() - started
        if not dry_run:
            with store.writing():
                store.database.execute_sql(
                    "INSERT INTO rem_run (op, started_at, seconds, findings, status, note, "
                    "result) VALUES (?,?,?,?,?,?,?)",
                    [
                        name,
                        started_at,
                        report.seconds,
                        len(report.findings),
                        "cancelled" if report.cancelled else ("failed" if report.error else "done"),
                        report.error,
                        json.dumps(report.changes, default=str),
                    ],
                )
        reports.append(report)
    return reports


def last_runs(context: RemContext) -> dict[str, dict[str, Any]]:
    """Each operation's latest run: when, how long, how many findings, its status and
    what it changed."""
    rows = context.service.store.database.execute_sql(
        "SELECT op, max(started_at), seconds, findings, status, result FROM rem_run GROUP BY op"
    ).fetchall()
    return {
        str(op): {
            "at": at,
            "seconds": seconds,
            "findings": count,
            "status": status,
            "changes": json.loads(result) if result else {},
        }
        for op, at, seconds, count, status, result in rows
    }


def describe_changes(op: str, changes: dict[str, Any]) -> str:
    """One line for what an operation that applies itself changed."""
    if op == "communities":
        return (
            f"{changes.get('communities', 0)} communities: {len(changes.get('new', []))} new, "
            f"{len(changes.get('merged', []))} merged, {len(changes.get('split', []))} split, "
            f"{len(changes.get('gone', []))} gone; {changes.get('orphans', 0)} orphans"
        )
    return ", ".join(
        f"{key} {value}" for key, value in changes.items() if not isinstance(value, list)
    )
