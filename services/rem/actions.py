"""Answering a finding: the chosen option's action and the answer, in one SQLite
transaction, so an interrupted answer leaves both as they were. Vectors of changed
memories are re-queued and follow (the store is the source of truth)."""

from __future__ import annotations

from services.errors import UserInputError
from services.memories.service import MemoryService
from services.storage.findings import Finding, FindingStore, Status
from services.types import Tier


def link(service: MemoryService, source: str, target: str, kind: str) -> None:
    from services.memory import now_iso

    service.store.database.execute_sql(
        "INSERT OR IGNORE INTO memory_link (source, target, kind, created_at) VALUES (?,?,?,?)",
        [source, target, kind, now_iso()],
    )


def answer(service: MemoryService, findings: FindingStore, finding: Finding, option: str) -> bool:
    """Apply `option` to `finding`. Returns True when memories changed. `skip` leaves the
    finding open."""
    finding.option(option)  # a clear error for an unknown option
    if finding.status is not Status.PENDING:
        raise UserInputError(f"finding {finding.id} was already answered ({finding.answer})")
    if option == "skip":
        return False
    with service.store.writing():
        changed = _apply(service, finding, option)
        findings.mark_answered(finding, option, applied=changed)
    return changed


def _apply(service: MemoryService, finding: Finding, option: str) -> bool:
    if option == "drop" and isinstance(finding.detail.get("context_todo"), str):
        return _drop_context_todo(service, finding)
    if finding.op == "contradictions" and option in ("a_wins", "b_wins", "both_valid"):
        return _resolve_contradiction(service, finding, option)
    if finding.op == "facts" and option == "accept":
        from services.knowledge.facts import accept_finding

        return accept_finding(service.store, finding)
    if finding.op == "duplicates" and option == "merge":
        return _merge(service, finding)
    if option == "archive":
        return _archive(service, finding)
    if finding.op == "clusters" and option == "create":
        return _consolidate(service, finding)
    if option == "create" and isinstance(finding.detail.get("memory"), dict):
        return _create_suggested(service, finding)
    if option in ("keep_both", "keep", "dismiss", "reject"):
        return False
    raise UserInputError(f"no action for option {option!r} of a {finding.op} finding")


def _merge(service: MemoryService, finding: Finding) -> bool:
    store = service.store
    present = store.get_many(finding.memory_ids)
    if len(present) < 2:
        return False  # already merged or deleted since the finding was made
    keep_id = finding.detail.get("keep")
    if keep_id not in present:
        from services.rem.ops.duplicates import keeper

        keep_id = keeper(list(present.values())).id
    kept = present[keep_id]
    tags = list(dict.fromkeys([*kept.tags, *(t for m in present.values() for t in m.tags)]))
    refs = list(
        dict.fromkeys([*kept.file_refs, *(r for m in present.values() for r in m.file_refs)])
    )
    if tags != kept.tags or refs != kept.file_refs:
        service.edit(keep_id, {"tags": tags, "file_refs": refs}, embed=False)
    for memory_id in present:
        if memory_id == keep_id:
            continue
        store.update(memory_id, {"superseded_by": keep_id, "tier": Tier.ARCHIVED.value})
        link(service, keep_id, memory_id, "consolidates")
    return True


def _archive(service: MemoryService, finding: Finding) -> bool:
    """Archive (never delete) the finding's memories that still exist."""
    changed = False
    for memory_id, memory in service.store.get_many(finding.memory_ids).items():
        if memory.tier is not Tier.ARCHIVED:
            service.store.update(memory_id, {"tier": Tier.ARCHIVED.value})
            changed = True
    return changed


def _consolidate(service: MemoryService, finding: Finding) -> bool:
    """Store a cluster's summary as a new memory that links to its sources."""
    present = service.store.get_many(finding.memory_ids)
    if len(present) < 2:
        return False
    detail = finding.detail
    memory = service.add(
        {
            "type": "fact",
            "title": detail.get("title") or "Summary",
            "content": detail["content"],
            "project": detail.get("project"),
            "tags": ["consolidated", *detail.get("tags", [])],
            "file_refs": detail.get("file_refs", []),
            "source": "automatic",
            "confidence": 0.7,
        },
        embed=False,
    )
    for source in present:
        link(service, memory.id, source, "consolidates")
    return True


def _create_suggested(service: MemoryService, finding: Finding) -> bool:
    """Store the memory a suggestion drafted (`detail["memory"]`, the fields of
    `engram add`) and link it to the memories it came from (`detail["link_kind"]`,
    "related" unless said)."""
    present = service.store.get_many(finding.memory_ids)
    if not present:
        return False  # its sources were deleted since the finding was made
    memory = service.add(
        {"source": "automatic", **finding.detail["memory"]},
        embed=False,
    )
    kind = str(finding.detail.get("link_kind") or "related")
    for source in present:
        link(service, memory.id, source, kind)
    return True


def _drop_context_todo(service: MemoryService, finding: Finding) -> bool:
    """Remove a todo from its project context, with a new snapshot of the context."""
    from services.knowledge.project_context import drop_todo

    return drop_todo(service.store, str(finding.detail["project"]), finding.detail["context_todo"])


def _resolve_contradiction(service: MemoryService, finding: Finding, option: str) -> bool:
    """a_wins / b_wins: the loser is superseded (valid_to, superseded_by; kept);
    both_valid: recorded, not proposed again."""
    from services.knowledge.contradictions import for_pair, resolve

    record = for_pair(service.store, finding.memory_ids[0], finding.memory_ids[1])
    if record is None or record.resolved:
        return False  # resolved meanwhile (`engram contradictions resolve`)
    return resolve(service.store, record.id, option, "answered in review", finding_answered=True)
