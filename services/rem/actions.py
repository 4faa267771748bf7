"""Answering a finding: the chosen option's action and the answer, in one SQLite
transaction, so an interrupted answer leaves both as they were. The action is the one
the finding's operation declares (`services.rem.registry`: its `apply`, or for findings
proposed outside the cycle, `OUTSIDE_THE_CYCLE`). Vectors of changed memories are
re-queued and follow (the store is the source of truth)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.errors import UserInputError
from services.rem.option_actions import no_action
from services.rem.registry import answer_action
from services.storage.findings import Finding, FindingStore, Status

if TYPE_CHECKING:
    from services.memories.service import MemoryService

# Options that record the answer and change no memory, whatever the operation.
RECORDED_ONLY = frozenset({"keep_both", "keep", "dismiss", "reject"})
# Operations whose findings act on what their memories say (a summary, a merge, a
# resolution, a fact): out of date once one of those memories no longer holds. Retention
# findings are about retiring memories, superseded ones among them.
BUILDS_ON_THE_MEMORIES = frozenset({"clusters", "duplicates", "contradictions", "facts"})


def answer(service: MemoryService, findings: FindingStore, finding: Finding, option: str) -> bool:
    """Apply `option` to `finding`. Returns True when memories changed. `skip` leaves the
    finding open."""
    finding.option(option)  # a clear error for an unknown option
    if finding.status is not Status.PENDING:
        raise UserInputError(f"finding {finding.id} was already answered ({finding.answer})")
    if option == "skip":
        return False
    if option not in RECORDED_ONLY and finding.op in BUILDS_ON_THE_MEMORIES:
        gone = _out_of_date(service, finding, option)
        if gone:
            with service.store.writing():
                findings.mark_answered(finding, option, applied=False)
            raise UserInputError(
                f"finding {finding.id} is out of date: {gone}; nothing was changed and it is "
                "dismissed (the next `engram rem run` looks again)"
            )
    with service.store.writing():
        changed = _apply(service, finding, option)
        findings.mark_answered(finding, option, applied=changed)
    return changed


def _apply(service: MemoryService, finding: Finding, option: str) -> bool:
    if option in RECORDED_ONLY:
        return False
    apply = answer_action(finding.op)
    if apply is None:
        raise no_action(finding, option)
    return apply(service, finding, option)


def _out_of_date(service: MemoryService, finding: Finding, option: str) -> str | None:
    """Why acting on `finding` now would act on what no longer holds: one of its
    memories was deleted or replaced since it was proposed (a summary of three timeout
    notes accepted after two were superseded would bring them back as current). Saying
    which of two conflicting notes holds needs only both to exist: on a chain 3.9 →
    3.10 → 3.11, "3.10 replaced 3.9" is still history to record once 3.11 has replaced
    3.10, and resolving keeps the history a replaced note has
    (`conflict_resolution.ends_it`)."""
    found = service.store.get_many(finding.memory_ids)
    for memory_id in finding.memory_ids:
        memory = found.get(memory_id)
        if memory is None:
            return f"{memory_id} was deleted"
        if memory.superseded_by and not _says_which_holds(finding, option):
            return f"{memory_id} no longer holds (replaced by {memory.superseded_by})"
    return None


def _says_which_holds(finding: Finding, option: str) -> bool:
    return finding.op == "contradictions" and option in ("a_wins", "b_wins")
