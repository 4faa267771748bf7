"""What holds now, where memories are read: search ranks a memory that an open conflict
says was replaced below its replacement (and marks it "may be outdated — see X"), and
the user can declare that a memory replaces others, which applies at once (history kept:
`valid_to` and `superseded_by`, found again in deep and exhaustive modes)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from services.errors import NotFoundError, UserInputError
from services.knowledge import contradictions
from services.knowledge.conflict_records import record_of
from services.memory import Memory, now_iso
from services.search.retrieval import SearchResponse, SearchResult
from services.storage import contradictions as table
from services.storage.memories import MemoryStore


def replaced_by(store: MemoryStore, memory_ids: Iterable[str]) -> dict[str, str]:
    """Memory id → the memory an open conflict says holds instead of it (for every
    open conflict with a holder that involves one of `memory_ids`)."""
    found: dict[str, str] = {}
    for row in table.open_rows_about(store, memory_ids):
        record = record_of(row)
        if record.holder in (record.a, record.b):
            loser = record.b if record.holder == record.a else record.a
            found.setdefault(loser, record.holder)
    return found


def current_first(store: MemoryStore, response: SearchResponse, limit: int) -> SearchResponse:
    """Each result an open conflict says was replaced moves just below its replacement
    (which joins the results when the search missed it) and is marked `outdated_by`."""
    results = list(response.results)
    if not results:
        return response
    outdated = replaced_by(store, [r.memory.id for r in results])
    if not outdated:
        return response
    holders = store.get_many(sorted(set(outdated.values())))
    ordered: list[SearchResult] = []
    placed: set[str] = set()
    for result in results:
        memory_id = result.memory.id
        if memory_id in placed:
            continue
        holder = outdated.get(memory_id)
        if holder is not None and holder not in placed and holder in holders:
            present = next((r for r in results if r.memory.id == holder), None)
            winner = present or SearchResult(holders[holder], result.score, result.breakdown)
            ordered.append(winner)
            placed.add(holder)
        if holder is not None:
            result = replace(result, outdated_by=holder)
        ordered.append(result)
        placed.add(memory_id)
    return replace(response, results=ordered[: max(limit, len(results))])


def declare(store: MemoryStore, winner_id: str, loser_ids: Iterable[str]) -> list[Memory]:
    """`winner_id` replaces each of `loser_ids`, at once; an open conflict between them
    is resolved for the winner. Returns the memories that no longer hold."""
    winner = store.get(winner_id)
    losers = []
    for loser_id in dict.fromkeys(loser_ids):
        if loser_id == winner_id:
            raise UserInputError(f"{winner_id} cannot replace itself")
        try:
            loser = store.get(loser_id)
        except NotFoundError:
            raise NotFoundError(f"no memory with id {loser_id} (nothing was changed)") from None
        if loser.project != winner.project:
            raise UserInputError(
                f"{loser_id} is in project {loser.project!r}, {winner_id} in "
                f"{winner.project!r}: a memory replaces only memories of its own project"
            )
        losers.append(loser)
    now = now_iso()
    with store.writing():
        for loser in losers:
            record = contradictions.for_pair(store, winner.id, loser.id)
            if record is not None and not record.resolved:
                table.mark_resolved(
                    store, record.id, now, "b_wins" if record.b == winner.id else "a_wins",
                    "declared by the user",
                )  # fmt: skip
            contradictions.supersede(store, winner, loser, now)
            winner = store.get(winner.id)
    return [store.get(loser.id) for loser in losers]
