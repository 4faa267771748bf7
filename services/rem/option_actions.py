"""What choosing an option of a finding does, one function per operation (its `apply`
in `services.rem.registry`): merge duplicates, archive stale memories or done todos,
store a cluster summary or a drafted pattern or lesson, drop a todo from a project
context, settle a contradiction, keep a fact, store a memory captured from a session.
Each runs inside the transaction of the answer (`services.rem.actions.answer`) and
returns whether memories changed; an option it has no action for is refused.

Options that only record the answer (keep, keep_both, dismiss, reject) never get here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.errors import UserInputError
from services.storage.links import add_link
from services.types import Tier

if TYPE_CHECKING:
    from services.memories.service import MemoryService
    from services.storage.findings import Finding


def no_action(finding: Finding, option: str) -> UserInputError:
    return UserInputError(f"no action for option {option!r} of a {finding.op} finding")


# -- per operation ------------------------------------------------------------------------


def answer_duplicates(service: MemoryService, finding: Finding, option: str) -> bool:
    if option == "merge":
        return merge(service, finding)
    raise no_action(finding, option)


def answer_staleness(service: MemoryService, finding: Finding, option: str) -> bool:
    if option == "archive":
        return archive(service, finding)
    raise no_action(finding, option)


def answer_clusters(service: MemoryService, finding: Finding, option: str) -> bool:
    if option == "create":
        return consolidate(service, finding)
    raise no_action(finding, option)


def answer_extraction(service: MemoryService, finding: Finding, option: str) -> bool:
    """A todo of a project context is dropped from it, a todo memory archived, a
    drafted pattern or lesson stored."""
    if option == "drop" and isinstance(finding.detail.get("context_todo"), str):
        return drop_context_todo(service, finding)
    if option == "archive":
        return archive(service, finding)
    if option == "create" and isinstance(finding.detail.get("memory"), dict):
        return create_suggested(service, finding)
    raise no_action(finding, option)


def answer_contradictions(service: MemoryService, finding: Finding, option: str) -> bool:
    if option in ("a_wins", "b_wins", "both_valid"):
        return resolve_contradiction(service, finding, option)
    raise no_action(finding, option)


def answer_facts(service: MemoryService, finding: Finding, option: str) -> bool:
    if option == "accept":
        from services.knowledge.facts import accept_finding

        return accept_finding(service.store, finding)
    raise no_action(finding, option)


def answer_capture(service: MemoryService, finding: Finding, option: str) -> bool:
    """A memory captured from an assistant session (`services.knowledge.session_capture`)."""
    if option == "store":
        from services.knowledge.session_capture import accept_finding

        return accept_finding(service, finding)
    raise no_action(finding, option)


# -- the actions ----------------------------------------------------------------------------


def merge(service: MemoryService, finding: Finding) -> bool:
    """Keep one memory of a duplicate group (with the others' tags and files); the
    others are archived as superseded by it and linked from it."""
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
        add_link(store, keep_id, memory_id, "consolidates")
    return True


def archive(service: MemoryService, finding: Finding) -> bool:
    """Archive (never delete) the finding's memories that still exist."""
    changed = False
    for memory_id, memory in service.store.get_many(finding.memory_ids).items():
        if memory.tier is not Tier.ARCHIVED:
            service.store.update(memory_id, {"tier": Tier.ARCHIVED.value})
            changed = True
    return changed


def consolidate(service: MemoryService, finding: Finding) -> bool:
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
        add_link(service.store, memory.id, source, "consolidates")
    return True


def create_suggested(service: MemoryService, finding: Finding) -> bool:
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
        add_link(service.store, memory.id, source, kind)
    return True


def drop_context_todo(service: MemoryService, finding: Finding) -> bool:
    """Remove a todo from its project context, with a new snapshot of the context."""
    from services.knowledge.project_context import drop_todo

    return drop_todo(service.store, str(finding.detail["project"]), finding.detail["context_todo"])


def resolve_contradiction(service: MemoryService, finding: Finding, option: str) -> bool:
    """a_wins / b_wins: the loser is superseded (valid_to, superseded_by; kept);
    both_valid: recorded, not proposed again."""
    from services.knowledge.contradictions import for_pair, resolve

    record = for_pair(service.store, finding.memory_ids[0], finding.memory_ids[1])
    if record is None or record.resolved:
        return False  # resolved meanwhile (`engram contradictions resolve`)
    return resolve(service.store, record.id, option, "answered in review", finding_answered=True)
