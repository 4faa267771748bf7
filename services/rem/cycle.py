"""Running consolidation operations (`services.rem.registry` declares them): each is
independent, records what ran and when and what it changed (`rem_run`), and stores its
findings; `auto` applies the recommended option of each new finding (headless use)
except suggestions, `dry_run` stores and changes nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from services.errors import UserInputError
from services.llm.base import LLMCancelled
from services.memory import now_iso
from services.rem import registry
from services.rem.actions import answer
from services.rem.context import RemContext
from services.rem.results import Changes, OperationResult, describe_counts
from services.storage.findings import Finding, FindingStore
from services.storage.rem_runs import RemRun, latest_runs, record_run

__all__ = [
    "OperationReport",
    "RemContext",
    "describe_changes",
    "last_runs",
    "run_operations",
]


@dataclass
class OperationReport:
    op: str
    seconds: float
    findings: list[Finding] = field(default_factory=list)
    applied: int = 0
    out_of_date: int = 0  # `auto`: findings dismissed because their memories changed
    error: str | None = None
    outcome: Changes | None = None  # what it changed (or did), typed
    cancelled: bool = False

    @property
    def changes(self) -> dict[str, Any]:
        """What it changed, as JSON prints and `rem_run` keeps it ({}: nothing)."""
        return self.outcome.to_dict() if self.outcome is not None else {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "applied": self.applied,
            "out_of_date": self.out_of_date,
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
    every = registry.names()
    names = ops or every
    unknown = [n for n in names if registry.find_operation(n) is None]
    if unknown:
        raise UserInputError(
            f"unknown operation(s) {', '.join(unknown)} (choose from: {', '.join(every)})"
        )
    store = context.service.store
    findings = FindingStore(store)
    context.dry_run = dry_run
    reports: list[OperationReport] = []
    for name in names:
        operation = registry.operation(name)
        started_at = now_iso()
        started = time.perf_counter()
        report = OperationReport(name, 0.0)
        try:
            skipped = dry_run and operation.applies_itself
            result = OperationResult() if skipped else operation.run(context)
            report.outcome = result.changes
            report.findings = result.findings if dry_run else findings.save(result.findings)
            if auto and not dry_run and not operation.suggestion:
                # Every pending finding of this operation, also those an interrupted
                # earlier run stored but did not get to.
                for finding in findings.pending(name):
                    if finding.recommended == "skip":
                        continue
                    try:
                        if answer(context.service, findings, finding, finding.recommended):
                            report.applied += 1
                    except UserInputError:
                        # Its memories changed since it was proposed (an earlier finding
                        # of this run merged or replaced them): dismissed, looked at again
                        # next run; the other findings still get their answer.
                        report.out_of_date += 1
        except LLMCancelled:  # the user came back: nothing stored, due again next time
            report.error = "cancelled: stopped when the user came back"
            report.cancelled = True
        except Exception as error:  # one failing operation must not stop the others
            report.error = f"{type(error).__name__}: {error}"
        report.seconds = time.perf_counter() - started
        if not dry_run:
            status = "cancelled" if report.cancelled else ("failed" if report.error else "done")
            record_run(
                store,
                RemRun(
                    name,
                    started_at,
                    report.seconds,
                    len(report.findings),
                    status,
                    report.error,
                    report.changes,
                ),
            )
        reports.append(report)
    return reports


def last_runs(context: RemContext) -> dict[str, dict[str, Any]]:
    """Each operation's latest run: when, how long, how many findings, its status and
    what it changed."""
    return {
        run.op: {
            "at": run.started_at,
            "seconds": run.seconds,
            "findings": run.findings,
            "status": run.status,
            "changes": run.result,
        }
        for run in latest_runs(context.service.store)
    }


def describe_changes(op: str, changes: dict[str, Any]) -> str:
    """One line for what an operation changed, from its recorded result."""
    operation = registry.find_operation(op)
    if operation is None or operation.changes is None:
        return describe_counts(changes)
    return operation.changes(changes).describe()
