"""What each hook event gives a session, and the ledger kept of it:

- session start: one context block for the project, once — again only after the
  assistant's context was cleared or compacted (then the ledger starts again), never a
  second block beside the first (a resumed session still holds its block). Before any
  file is open the activity predicts little, so the project's key notes (its most used
  and most confident decisions, constraints, architecture and pitfalls) follow what
  it predicted in the relevant tier;
- prompt: the memories the prompt confidently needs (`relevance`) that the session
  was not given yet and did not write itself;
- a file read: the file's critical memories (the prediction's tier 1), each once;
- pre-compact / stop: the transcript is captured from where it was last read, and
  before a compaction the ledger starts again (what was given is summarised away).

A session's own memories (`Memory.session_id`) are never given back to it. What is
given is recorded in the ledger before the hook answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from services.activity.prediction import Candidate, Prediction, Reason
from services.activity.prediction_sources import PredictionSources
from services.assistants.blocks import MAX_CONTEXT_CHARS, Block, memories_block, session_block
from services.assistants.events import HookEvent
from services.assistants.ledger import SessionLedger
from services.assistants.relevance import confident_results, worth_searching
from services.context.assembly import ContextAssembler
from services.context.standing import AgainstFile, Replaced, standing
from services.memory import Memory
from services.search.retrieval import SearchResult
from services.storage.assistant_sessions import SessionRow
from services.types import MemoryType as T

MAX_PROMPT_CHARS = 2000  # what a search reads of a prompt (a pasted log is not a query)
KEY_TYPES = (T.DECISION, T.CONSTRAINT, T.ARCHITECTURE, T.PITFALL)
KEY_NOTES = 8
KEY_NOTE_SCORE = 0.5

Search = Callable[[str], list[SearchResult]]
# Reads a session's transcript from its offset; returns the offset read up to (None:
# nothing was read).
Capture = Callable[[SessionRow], int | None]


@dataclass(frozen=True)
class HookLimits:
    session_budget: int
    prompt_budget: int
    max_chars: int = MAX_CONTEXT_CHARS


def _not_for(ledger: SessionLedger, skip: set[str], memory: Memory) -> bool:
    return memory.id in skip or memory.session_id == ledger.session_id


def _without(prediction: Prediction, ledger: SessionLedger, skip: set[str]) -> Prediction:
    def keep(candidates: list[Candidate]) -> list[Candidate]:
        return [c for c in candidates if not _not_for(ledger, skip, c.memory)]

    return replace(
        prediction,
        critical=keep(prediction.critical),
        relevant=keep(prediction.relevant),
        background=keep(prediction.background),
        related=keep(prediction.related),
    )


def with_key_notes(prediction: Prediction, sources: PredictionSources) -> Prediction:
    """`prediction` with the project's key notes after its relevant tier (each memory
    once)."""
    placed = {c.memory.id for c in (*prediction.critical, *prediction.relevant)}
    placed |= {c.memory.id for c in prediction.background}
    notes = sources.of_types(prediction.project, prediction.at, KEY_TYPES, KEY_NOTES)
    reason = [Reason("project key note", KEY_NOTE_SCORE)]
    extra = [Candidate(m, KEY_NOTE_SCORE, reason) for m in notes if m.id not in placed]
    added = {c.memory.id for c in extra}
    return replace(
        prediction,
        relevant=[*prediction.relevant, *extra],
        related=[c for c in prediction.related if c.memory.id not in added],
    )


def session_context(
    ledger: SessionLedger,
    assembler: ContextAssembler,
    prediction: Prediction,
    limits: HookLimits,
    forgets_context: bool = False,
    profile: str | None = None,
    consent: bool = False,
) -> Block | None:
    """The session's context block, or None when it holds one already or none would
    hold a memory. `forgets_context`: the assistant's context was cleared or
    compacted."""
    if forgets_context:
        ledger.forget_given()
    if ledger.has_context:
        return None
    prediction = with_key_notes(prediction, PredictionSources(ledger.store))
    prediction = _without(prediction, ledger, ledger.given())
    block = session_block(
        assembler, prediction, limits.session_budget, limits.max_chars, profile, consent
    )
    if block is None:
        return None
    ledger.give(block.memory_ids, HookEvent.SESSION_START.value)
    ledger.mark_context_given()
    return block


def prompt_memories(
    ledger: SessionLedger,
    search: Search,
    prompt: str,
    limits: HookLimits,
    project: str | None = None,
) -> Block | None:
    """The memories `prompt` needs that the session was not given yet (None: none)."""
    if not worth_searching(prompt):
        return None
    # A note an open conflict says was replaced is not given; its replacement is.
    results = [r for r in search(prompt[:MAX_PROMPT_CHARS]) if r.outdated_by is None]
    skip = ledger.given() | {
        r.memory.id for r in results if r.memory.session_id == ledger.session_id
    }
    chosen = confident_results(results, skip)
    if not chosen:
        return None
    attributes = {"for": "prompt", "budget": str(limits.prompt_budget)}
    if project:
        attributes = {"project": project, **attributes}
    block = memories_block(
        [r.memory for r in chosen],
        limits.prompt_budget,
        "Engram's notes for this prompt (not given before in this session):",
        attributes,
        limits.max_chars,
    )
    if block is not None:
        ledger.give(block.memory_ids, HookEvent.PROMPT.value)
    return block


def file_memories(
    ledger: SessionLedger,
    prediction: Prediction,
    limits: HookLimits,
    replaced: Replaced | None = None,
    against_file: AgainstFile | None = None,
) -> Block | None:
    """The critical memories of the file `prediction` was made for, those the session
    was not given yet, as the context has them stand (a memory a current one replaces
    is given as that one; one the open file's manifest contradicts is not given)."""
    critical_only = replace(prediction, relevant=[], background=[], related=[])
    memories = [c.memory for c in standing(critical_only, replaced, against_file).tiers[0]]
    skip = ledger.given()
    memories = [m for m in memories if not _not_for(ledger, skip, m)]
    if not memories:
        return None
    attributes = {"for": "file", "budget": str(limits.prompt_budget)}
    if prediction.project:
        attributes = {"project": prediction.project, **attributes}
    where = f" `{prediction.current_file}`" if prediction.current_file else " this file"
    block = memories_block(
        memories,
        limits.prompt_budget,
        f"Engram's critical notes about{where}:",
        attributes,
        limits.max_chars,
    )
    if block is not None:
        ledger.give(block.memory_ids, HookEvent.TOOL_USE.value)
    return block


def capture_transcript(ledger: SessionLedger, capture: Capture) -> int | None:
    """Read the session's transcript from where it was last read; returns the new
    offset (None when the session has no transcript or nothing was read)."""
    row = ledger.row
    if row is None or not row.transcript_path:
        return None
    offset = capture(row)
    if offset is not None and offset != row.transcript_offset:
        ledger.transcript_read_to(offset)
    return offset
