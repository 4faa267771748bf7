"""The consolidation operations, each declared once: its name, the function that runs
it, whether it applies its own changes or proposes findings, whether those findings are
suggestions that `--auto` never applies, what answering one of its findings does, when
it is due by default, and a few words saying what it does. The cycle, the schedules,
the settings (`rem.schedule.<name>`), the CLI and the review read this table; nothing
else lists the operations.

`OPERATIONS` is in the order a full cycle runs them: facts before the contradictions
that compare them, links before the communities built on them.

The operations' modules are imported when an operation runs, not with this table (the
settings read it at every start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from services.rem import option_actions
from services.rem.context import RemContext
from services.rem.results import (
    Changes,
    CommunityReport,
    ContradictionCounts,
    EpisodeLevels,
    LinkCounts,
    OperationResult,
    TierMoves,
)
from services.rem.schedule import Schedule

if TYPE_CHECKING:
    from services.memories.service import MemoryService
    from services.storage.findings import Finding

Runner = Callable[[RemContext], OperationResult]
# Apply the chosen option of one of the operation's findings; True when memories changed.
AnswerAction = Callable[["MemoryService", "Finding", str], bool]


@dataclass(frozen=True)
class RemOperation:
    name: str
    run: Runner
    schedule: Schedule  # when it is due unless `rem.schedule.<name>` says otherwise
    description: str  # a few words: its schedule setting reads "When <description> runs"
    applies_itself: bool = False  # changes things itself, proposes nothing: a dry run skips it
    suggestion: bool = False  # its findings are suggestions: --auto never applies them
    apply: AnswerAction | None = None  # what choosing an option of its findings does
    changes: Callable[[dict[str, Any]], Changes] | None = None  # its recorded result, typed


# -- how each operation runs ----------------------------------------------------------------


def run_retention(context: RemContext) -> OperationResult:
    """Tiers from retention, applied at once (no findings)."""
    from services.rem.ops.retention import apply_tiers

    store = context.service.store
    return OperationResult(changes=apply_tiers(store, context.now, project=context.project))


def run_staleness(context: RemContext) -> OperationResult:
    from services.rem.ops.retention import staleness_findings

    store = context.service.store
    return OperationResult(staleness_findings(store, context.now, project=context.project))


def run_duplicates(context: RemContext) -> OperationResult:
    from services.rem.ops.duplicates import duplicate_findings, find_duplicates, member_vectors

    store = context.service.store
    pairs = find_duplicates(store, context.vectors, context.model_id, context.project)
    memories = store.get_many(sorted({i for p in pairs for i in (p.a, p.b)}))
    vectors = member_vectors(context.vectors, context.model_id, memories)
    return OperationResult(duplicate_findings(pairs, memories, vectors))


def run_facts(context: RemContext) -> OperationResult:
    """Key, value and scope of what factual memories state: by rules, or by the LLM
    for a few a run; proposed for review (the model's readings are never recommended)."""
    from services.knowledge.facts import fact_findings

    store = context.service.store
    return OperationResult(fact_findings(store, context.llm, project=context.project))


def run_contradictions(context: RemContext) -> OperationResult:
    """Queue candidate pairs (neighbours and cues), judge them (cues, the LLM only to
    break ties), record contradictions; one finding each. Changes no memory: a loser is
    superseded only through an answer or `engram contradictions resolve`."""
    from services.knowledge.contradictions import run

    findings, counts = run(
        context.service.store,
        context.vectors,
        context.model_id,
        context.llm,
        context.project,
        dry_run=context.dry_run,
    )
    return OperationResult(findings, ContradictionCounts.from_dict(counts))


def run_links(context: RemContext) -> OperationResult:
    """Related and supersedes links, applied at once (links change no memory)."""
    from services.rem.ops.graph import refresh_links

    store = context.service.store
    counts = refresh_links(store, context.vectors, context.model_id, context.project)
    return OperationResult(changes=counts)


def run_clusters(context: RemContext) -> OperationResult:
    from services.rem.ops.clusters import cluster_findings, find_clusters, open_disputes

    store = context.service.store
    clusters = find_clusters(store, context.vectors, context.model_id, context.project)
    disputes = open_disputes(store, clusters)
    return OperationResult(cluster_findings(clusters, context.llm, disputes=disputes))


def run_communities(context: RemContext) -> OperationResult:
    """Louvain communities of the link graph with their summaries, stored at once; the
    report says what is new, merged, split and orphaned."""
    from services.rem.ops.graph import detect_communities

    report = detect_communities(context.service.store, context.project, context.llm)
    return OperationResult(changes=report)


def run_episodes(context: RemContext) -> OperationResult:
    """Summary and compressed levels for aging episodes, applied at once."""
    from services.rem.ops.clusters import episode_levels

    store = context.service.store
    return OperationResult(changes=episode_levels(store, context.now, context.project))


def run_extraction(context: RemContext) -> OperationResult:
    from services.rem.ops.extraction import extraction_findings

    store = context.service.store
    found = extraction_findings(store, context.now, context.session_gap_minutes, context.project)
    return OperationResult(found)


# -- the operations ---------------------------------------------------------------------------

OPERATIONS: tuple[RemOperation, ...] = (
    RemOperation(
        "retention",
        run_retention,
        Schedule("interval", interval_hours=24),
        "retention and tiers",
        applies_itself=True,
        changes=TierMoves.from_dict,
    ),
    RemOperation(
        "staleness",
        run_staleness,
        Schedule("linear", every=5),
        "the staleness scan",
        apply=option_actions.answer_staleness,
    ),
    RemOperation(
        "duplicates",
        run_duplicates,
        Schedule("linear", every=10),
        "duplicate detection",
        apply=option_actions.answer_duplicates,
    ),
    RemOperation(
        "facts",
        run_facts,
        Schedule("linear", every=2, interval_hours=12),  # before contradictions
        "reading structured facts (key, value, scope) from memories",
        apply=option_actions.answer_facts,
    ),
    # Cheap without a model (a few seconds at 2k memories) and it feeds tier 1 of the
    # context: after every other work session, or every 12 h.
    RemOperation(
        "contradictions",
        run_contradictions,
        Schedule("linear", every=2, interval_hours=12),
        "judging contradiction candidates",
        apply=option_actions.answer_contradictions,
        changes=ContradictionCounts.from_dict,
    ),
    RemOperation(
        "links",
        run_links,
        Schedule("linear", every=5),
        "linking related memories",
        applies_itself=True,
        changes=LinkCounts.from_dict,
    ),
    RemOperation(
        "clusters",
        run_clusters,
        Schedule("linear", every=20),  # the context summaries
        "cluster summaries (the context summary)",
        apply=option_actions.answer_clusters,
    ),
    RemOperation(
        "communities",
        run_communities,
        Schedule("fibonacci"),
        "community detection",
        applies_itself=True,
        changes=CommunityReport.from_dict,
    ),
    RemOperation(
        "episodes",
        run_episodes,
        Schedule("interval", interval_hours=24),
        "episode summary levels",
        applies_itself=True,
        changes=EpisodeLevels.from_dict,
    ),
    RemOperation(
        "extraction",
        run_extraction,
        Schedule("logarithmic", base=10, scale=2),
        "knowledge extraction (suggestions)",
        suggestion=True,
        apply=option_actions.answer_extraction,
    ),
)
_BY_NAME = {operation.name: operation for operation in OPERATIONS}

# Findings proposed outside the cycle, by their op: what answering one does. Capture
# from assistant sessions proposes memories while a session runs, not in a cycle.
OUTSIDE_THE_CYCLE: dict[str, AnswerAction] = {"capture": option_actions.answer_capture}


def names() -> list[str]:
    """Every operation's name, in the order of a full cycle."""
    return list(_BY_NAME)


def find_operation(name: str) -> RemOperation | None:
    return _BY_NAME.get(name)


def answer_action(op: str) -> AnswerAction | None:
    """What answering a finding of `op` does: its operation's, or that of a source of
    findings outside the cycle; None when nothing is declared."""
    found = _BY_NAME.get(op)
    return found.apply if found is not None else OUTSIDE_THE_CYCLE.get(op)


def operation(name: str) -> RemOperation:
    """The operation called `name`; a clear error for an unknown one."""
    found = _BY_NAME.get(name)
    if found is None:
        from services.errors import UserInputError

        raise UserInputError(f"unknown operation {name!r} (choose from: {', '.join(_BY_NAME)})")
    return found


def default_schedules() -> dict[str, Schedule]:
    """Each operation's schedule when no setting changes it."""
    return {operation.name: operation.schedule for operation in OPERATIONS}
