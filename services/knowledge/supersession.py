"""What holds now, where memories are read: search ranks a memory that an open conflict
says was replaced below its replacement (and marks it "may be outdated — see X"); and
the user can declare that a memory replaces others, which applies at once (history
kept: `valid_to` and `superseded_by`, found again in deep and exhaustive modes). The
check a new memory gets as it is written is `write_check`'s."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

import numpy as np

from services.errors import NotFoundError, Problem, UserInputError
from services.filters import MemoryFilter
from services.knowledge import contradictions
from services.knowledge.conflict_records import (
    Contradiction,
    record_of,
)
from services.knowledge.conflict_scorer import THRESHOLD as SCORER_THRESHOLD
from services.memory import Memory, now_iso, written_at
from services.search.results import ScoreBreakdown
from services.search.retrieval import SearchResponse, SearchResult
from services.storage import contradictions as table
from services.storage.memories import MemoryStore
from services.text.identifiers import matches_file_ref, mentions
from services.text.stacktrace import error_in_text, share_of_error_words
from services.types import Tier

# Two later notes that replace one earlier note ("the floor is 3.9 now", then "3.9 is no
# longer supported; 3.10") are steps of one change when written at least a day apart.
CHAIN_STEP_S = 20 * 3600


def replaced_by(
    store: MemoryStore,
    memory_ids: Iterable[str],
    kinds: Collection[str] | None = None,
    records: Sequence[Contradiction] | None = None,
) -> dict[str, str]:
    """Memory id → the memory an open conflict says holds instead of it (for every
    open conflict with a holder that involves one of `memory_ids`). A holder that a
    later holder of the same replaced memory followed by 20 hours or more is replaced in
    turn by the newest of them: the floor raised twice makes the first raise history.
    Where several open conflicts name a holder for one memory, the surest names it (a
    loose look-alike flagged beside the real change must not stand in for it). With
    `kinds`, only open conflicts of those kinds count. `records`: the open conflicts
    about `memory_ids`, when the caller has read them already."""
    asked = list(dict.fromkeys(memory_ids))
    if records is None:
        records = _open_records(store, asked)
    found: dict[str, str] = {}
    surest: dict[str, float] = {}
    losers_of: dict[str, set[str]] = {}  # a holder among the asked → what it replaced
    for loser, holder, score in _replacements(records, kinds):
        if score > surest.get(loser, -1.0):
            found[loser], surest[loser] = holder, score
        losers_of.setdefault(holder, set()).add(loser)
    if losers_of:
        for holder, newer in _later_co_holders(store, losers_of, kinds).items():
            found.setdefault(holder, newer)
    return _through_confirmed(store, found)


# What the cues must have read in a step of a chain for search to follow it: a value the
# two give differently, or one the later names as replaced.
READ_STEP_KINDS = frozenset(
    {
        "different_value",
        "explicit_replacement",
        "moved_value",
        "reverted_release",
        "fact_key",
        "runtime_floor",
        "tested_versions",
    }
)


def _read_steps(records: Iterable[Contradiction]) -> set[tuple[str, str]]:
    """(replaced, holder) of the open conflicts whose values the cues read."""
    steps = set()
    for record in records:
        cues = record.evidence.get("cues")
        kinds = cues.get("kinds", []) if isinstance(cues, dict) else []
        if record.holder in (record.a, record.b) and READ_STEP_KINDS & set(kinds):
            steps.add((record.b if record.holder == record.a else record.a, record.holder))
    return steps


def _through_open(found: dict[str, str], steps: set[tuple[str, str]]) -> dict[str, str]:
    """`found` (from `replaced_by`) with each holder followed through the open proposals
    that replace it in turn, where the cues read the step's values (`steps`), as search
    ranks them: 5 s → 30 s and 30 s → 45 s make the 5 s note outdated by the 45 s one (a
    new user's import had left the 30 s note first and unmarked). A step only the scorer
    guessed is not followed: on eighth-dev a wrong guess after a right revert had put
    the stale note first (scoped MRR 0.887 → 0.857). The context follows chains of its
    own (`current_truth.current_holders`, which may stop before a member)."""
    ends: dict[str, str] = {}
    for loser, holder in found.items():
        seen = {loser, holder}
        while (nxt := found.get(holder)) is not None and nxt not in seen and (holder, nxt) in steps:
            holder = nxt
            seen.add(holder)
        ends[loser] = holder
    return ends


def _through_confirmed(store: MemoryStore, found: dict[str, str]) -> dict[str, str]:
    """`found` with each holder followed through the replacements the user confirmed to
    the memory that holds now: an open proposal says 1.82 is replaced by 1.83, and the
    user has since said 1.85 replaces 1.83, so 1.82 is outdated by 1.85. A holder that
    was deleted, or whose chain comes back to the memory it replaces, names nothing."""
    if not found:
        return found
    known = store.get_many(set(found.values()))
    ends: dict[str, str | None] = {}
    for holder in set(found.values()):
        chain = [holder]
        current = known.get(holder)
        while current is not None and current.superseded_by is not None:
            following = current.superseded_by
            if following in chain:
                current = None
                break
            chain.append(following)
            if following not in known:
                known.update(store.get_many([following]))
            current = known.get(following)
        ends[holder] = None if current is None else current.id
    return {
        loser: end
        for loser, holder in found.items()
        if (end := ends[holder]) is not None and end != loser
    }


def _open_records(store: MemoryStore, memory_ids: Sequence[str]) -> list[Contradiction]:
    """The open conflicts about `memory_ids`, newest first."""
    return [record_of(row) for row in table.open_rows_about(store, memory_ids)]


def _replacements(
    records: Iterable[Contradiction], kinds: Collection[str] | None = None
) -> list[tuple[str, str, float]]:
    """(replaced, holder, score) of every conflict of `records` with a holder (of
    `kinds`, when given); the score is the one recorded when it was found."""
    found: list[tuple[str, str, float]] = []
    for record in records:
        if kinds is not None and record.kind not in kinds:
            continue
        if record.holder in (record.a, record.b):
            loser = record.b if record.holder == record.a else record.a
            found.append((loser, record.holder, _sureness(record)))
    return found


def _sureness(record: Contradiction) -> float:
    """How sure a conflict's holder is, for choosing between holders of one memory: the
    score recorded when it was found, where a guess of the fitted scorer below the
    scorer's own bar (flagged through a gate's lower one) counts below anything the cues
    read in the wording. Such a guess had named a CI matrix note (0.86) the holder over
    the engines floor the cues read (0.80); a guess past the bar stays compared by score
    (cues reading a release revert too broadly, 0.80, must not outrank a 0.96 guess)."""
    score = record.evidence.get("score")
    recorded = float(score) if isinstance(score, int | float) else 0.0
    guessed = record.evidence.get("scorer")
    weak_guess = (
        record.scorer_guess and isinstance(guessed, int | float) and guessed < SCORER_THRESHOLD
    )
    return recorded + (0.0 if weak_guess else 1.0)


def _later_co_holders(
    store: MemoryStore, losers_of: dict[str, set[str]], kinds: Collection[str] | None = None
) -> dict[str, str]:
    """Holder → the newest other holder of a memory it replaced, written a chain step
    or more after it, and named by a conflict at least as sure as its own: a loose
    look-alike flagged against the same old note (a CI toolchain note beside the MSRV
    note that replaced the old toolchain) must not make the real replacement history."""
    replaced = {loser for losers in losers_of.values() for loser in losers}
    holders_of: dict[str, dict[str, float]] = {}
    for loser, holder, score in _replacements(_open_records(store, sorted(replaced)), kinds):
        if loser in replaced:
            known = holders_of.setdefault(loser, {})
            known[holder] = max(score, known.get(holder, -1.0))
    if not any(len(holders) > 1 for holders in holders_of.values()):
        return {}
    written = store.get_many(sorted({h for hs in holders_of.values() for h in hs}))
    newer: dict[str, str] = {}
    for holder, losers in losers_of.items():
        if holder not in written:
            continue
        rivals = [
            written[other]
            for loser in losers
            for other, score in holders_of.get(loser, {}).items()
            if other != holder
            and other in written
            and score >= holders_of[loser].get(holder, float("inf"))
        ]
        later = [m for m in rivals if written_at(m) - written_at(written[holder]) >= CHAIN_STEP_S]
        if later:
            newer[holder] = max(later, key=lambda m: (written_at(m), m.id)).id
    return newer


# The breakdown of a replacement the search did not find itself: no retriever scored it.
BROUGHT_IN = ScoreBreakdown(0.0, 0.0, 0.0, sources=("replacement",))


def current_first(
    store: MemoryStore, response: SearchResponse, limit: int, flt: MemoryFilter | None = None
) -> SearchResponse:
    """Each result an open conflict says was replaced moves just below its replacement
    (which joins the results when the search missed it and `flt`, the search's filter,
    admits it: a search before a date, of one type or in standard mode never gets a
    memory it excludes) and is marked `outdated_by`;
    one an open conflict without a holder disputes is marked `disagrees_with`.
    A replacement that only the fitted scorer guessed (no cue in the wording) may be
    wrong, and placed first it may answer another question: it is not brought in when
    the query named code that the result names and it does not (corpus-2k: a guess
    between template notes on two functions put the note on the other function first
    for 5 queries that named the first), nor moved up when the search is a pasted error
    that the result quotes more of (a fix for another error). A question naming no code
    still brings it in: on notes people write the replacement is often worded so that
    the question misses it (real-dev with corpus-2k beside it: R@5 0.954 → 0.939 when
    such guesses were never brought in). The result is marked all the same."""
    results = list(response.results)
    if not results:
        return response
    asked = [r.memory.id for r in results]
    records = _open_records(store, asked)
    if not records:
        return response
    disputes = _disputes(records, set(asked))
    if disputes:
        results = [
            replace(r, disagrees_with=disputes[r.memory.id]) if r.memory.id in disputes else r
            for r in results
        ]
        response = replace(response, results=results)
    outdated = _open_holders(store, asked, records)
    if not outdated:
        return response
    guessed = _guessed_replacements(records, outdated)
    found_ids = {r.memory.id for r in results}
    error = error_in_text(response.query)
    named = set(outdated.values())
    missing = sorted(named - found_ids)
    holders = {r.memory.id: r.memory for r in results if r.memory.id in named}
    holders.update(store.filter_ids(missing, flt or MemoryFilter()))
    ordered: list[SearchResult] = []
    placed: set[str] = set()
    for result in results:
        memory_id = result.memory.id
        if memory_id in placed:
            continue
        holder = outdated.get(memory_id)
        if (
            holder is not None
            and holder not in placed
            and holder in holders
            and (
                (memory_id, holder) not in guessed
                or (
                    _names_what_was_asked(holders[holder], result)
                    if holder not in found_ids
                    else not _quotes_less(holder, result, error, results)
                )
            )
        ):
            present = next((r for r in results if r.memory.id == holder), None)
            # brought in: ranked by the result it replaces, scored by none of the search
            winner = present or SearchResult(holders[holder], result.score, BROUGHT_IN)
            ordered.append(winner)
            placed.add(holder)
        if holder is not None:
            result = replace(result, outdated_by=holder)
        ordered.append(result)
        placed.add(memory_id)
    replaced_here: dict[str, list[str]] = {}
    for result in ordered:
        if result.outdated_by is not None:
            replaced_here.setdefault(result.outdated_by, []).append(result.memory.id)
    ordered = [
        replace(r, replaces=tuple(replaced_here[r.memory.id]))
        if r.memory.id in replaced_here
        else r
        for r in ordered
    ]
    return replace(response, results=ordered[: max(limit, len(results))])


def standing(store: MemoryStore, memory_id: str) -> tuple[str | None, tuple[str, ...]]:
    """What the open conflicts say of one memory, as search marks it: the memory that
    holds instead of it (`replaced_by`), and those it disagrees with where no holder is
    named."""
    records = _open_records(store, [memory_id])
    outdated = _open_holders(store, [memory_id], records).get(memory_id)
    return outdated, _disputes(records, {memory_id}).get(memory_id, ())


def _open_holders(
    store: MemoryStore, memory_ids: list[str], records: list[Contradiction]
) -> dict[str, str]:
    """Memory id → the memory that holds instead of it, as search marks it: `replaced_by`
    followed through the open steps the cues read."""
    return _through_open(replaced_by(store, memory_ids, records=records), _read_steps(records))


def _names_what_was_asked(holder: Memory, result: SearchResult) -> bool:
    """Whether `holder` names any of the code the query named that `result` names (or
    the query named none of it)."""
    asked = result.breakdown.matched_identifiers
    text = embedded_text(holder)
    return not asked or any(
        mentions(text, name) or matches_file_ref(name, holder.file_refs) for name in asked
    )


def _quotes_less(
    holder: str, result: SearchResult, error: str | None, results: list[SearchResult]
) -> bool:
    """Whether the search pasted an error that `result` quotes more of than `holder`:
    then the holder is about another error, whatever the guess says."""
    if error is None:
        return False
    other = next(r.memory for r in results if r.memory.id == holder)
    return share_of_error_words(error, embedded_text(other)) < share_of_error_words(
        error, embedded_text(result.memory)
    )


def _disputes(records: Iterable[Contradiction], asked: set[str]) -> dict[str, tuple[str, ...]]:
    """Memory id (of `asked`) → the memories it disagrees with in the open conflicts
    `records` that name no holder ("may contradict" proposals among them)."""
    found: dict[str, list[str]] = {}
    for record in records:
        if record.holder in (record.a, record.b):
            continue
        for side, other in ((record.a, record.b), (record.b, record.a)):
            if side in asked and other not in found.get(side, []):
                found.setdefault(side, []).append(other)
    return {memory_id: tuple(others) for memory_id, others in found.items()}


def _guessed_replacements(
    records: Iterable[Contradiction], outdated: dict[str, str]
) -> set[tuple[str, str]]:
    """The (replaced, holder) pairs of `outdated` whose open conflict in `records` is a
    scorer guess."""
    found = set()
    for record in records:
        if record.scorer_guess and record.holder in (record.a, record.b):
            loser = record.b if record.holder == record.a else record.a
            if outdated.get(loser) == record.holder:
                found.add((loser, record.holder))
    return found


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
        except NotFoundError as error:  # the store's "(did you mean …?)", if any, kept
            hint = str(error).removeprefix(f"no memory with id {loser_id!r}")
            message = f"no memory with id {loser_id}{hint} (nothing was changed)"
            raise NotFoundError(message) from None
        if loser.project != winner.project:
            raise UserInputError(
                f"{loser_id} is in project {loser.project!r}, {winner_id} in "
                f"{winner.project!r}: a memory replaces only memories of its own project"
            )
        losers.append(loser)
    now = now_iso()
    with store.writing():
        if _replaced_through(store, winner) & {loser.id for loser in losers}:
            # The user reverses a replacement ("the old note was right after all"): the
            # winner holds again rather than both replacing each other and neither
            # holding.
            store.update(winner.id, {"superseded_by": None, "valid_to": None})
            winner = store.get(winner.id)
        for loser in losers:
            if loser.supersedes == winner.id:
                store.update(loser.id, {"supersedes": None})
            record = contradictions.for_pair(store, winner.id, loser.id)
            if record is not None and not record.resolved:
                contradictions.settle(
                    store, record.id, now, "b_wins" if record.b == winner.id else "a_wins",
                    "declared by the user",
                )  # fmt: skip
            contradictions.supersede(store, winner, loser, now)
            winner = store.get(winner.id)
    return [store.get(loser.id) for loser in losers]


def reinstate(store: MemoryStore, memory_id: str) -> tuple[Memory, str | None]:
    """A replaced memory holds again beside what replaced it: both hold (a replacement
    declared or confirmed by mistake; reversing it instead is `declare` the other way).
    The pair's contradiction, if one was recorded, is settled as both valid, so the
    cycle does not propose it again. Returns the memory and what had replaced it."""
    memory = store.get(memory_id)
    if memory.superseded_by is None and memory.valid_to is None:
        raise UserInputError(f"{memory_id} is not replaced: it holds already (nothing was changed)")
    replacer = memory.superseded_by
    held: dict[str, object] = {"superseded_by": None, "valid_to": None}
    if memory.tier is Tier.ARCHIVED:
        held["tier"] = Tier.WARM.value  # a duplicates merge archives what it folds in
    with store.writing():
        store.update(memory.id, held)
        other = store.get_many([replacer]).get(replacer) if replacer else None
        if other is not None:
            if other.supersedes == memory.id:
                store.update(other.id, {"supersedes": None})
            record = contradictions.for_pair(store, memory.id, other.id)
            if record is not None:
                note = "declared by the user: both hold"
                contradictions.settle(store, record.id, now_iso(), "both_valid", note)
    return store.get(memory.id), replacer


def _replaced_through(store: MemoryStore, memory: Memory) -> set[str]:
    """The memories that replace `memory`, directly or down its chain."""
    found: set[str] = set()
    successor = memory.superseded_by
    while successor is not None and successor not in found and len(found) < 100:
        found.add(successor)
        replacing = store.get_many([successor]).get(successor)
        successor = replacing.superseded_by if replacing is not None else None
    return found


def embedded_text(memory: Memory) -> str:
    return f"{memory.title}\n{memory.content}"  # what the index embeds for a memory


def unit_vector(vector: object) -> np.ndarray:
    """`vector` scaled to length 1 (so a dot product is the cosine)."""
    array = np.asarray(vector, dtype=np.float32)
    return array / max(float(np.linalg.norm(array)), 1e-9)


def declared_problems(store: MemoryStore, memories: Sequence[Memory], where: str) -> list[Problem]:
    """What is wrong with the `supersedes` fields of memories about to be imported: a
    memory cannot replace itself or a memory of another project. A replaced memory that
    is neither stored nor imported is no problem (an export of part of a store names
    memories left out): the field is kept and nothing is applied."""
    incoming = {m.id: m for m in memories}
    wanted = {m.supersedes for m in memories if m.supersedes and m.supersedes not in incoming}
    stored = store.get_many(sorted(i for i in wanted if i))
    problems = []
    for memory in memories:
        target_id = memory.supersedes
        if not target_id or memory.superseded_by == target_id:
            continue
        target = incoming.get(target_id) or stored.get(target_id)
        if target is None:
            continue
        if target.id == memory.id:
            reason = "a memory cannot supersede itself"
        elif target.project != memory.project:
            reason = f"supersedes {target_id!r} of project {target.project!r} (another project)"
        else:
            continue
        problems.append(Problem(f"{where}: memory {memory.id}", reason))
    return problems


def apply_declared(store: MemoryStore, memories: Sequence[Memory]) -> list[Memory]:
    """After an import: each memory whose `supersedes` names a memory that still holds
    replaces it (as `declare` does), and so does each stored memory naming one of the
    imported memories (an earlier import of part of a store named a memory left out, now
    imported). Returns the memories that no longer hold."""
    replaced: list[Memory] = []
    imported = {memory.id for memory in memories}
    earlier = [m for m in store.declaring_replaced(imported) if m.id not in imported]
    for memory in [*memories, *earlier]:
        if not memory.supersedes:
            continue
        target = store.get_many([memory.supersedes]).get(memory.supersedes)
        if (
            target is not None
            and target.superseded_by is None
            and target.id != memory.id
            and target.project == memory.project
        ):
            replaced.extend(declare(store, memory.id, [target.id]))
    return replaced
