"""What holds now, where memories are read and written: search ranks a memory that an
open conflict says was replaced below its replacement (and marks it "may be outdated —
see X"); a new memory is checked at once against its nearest neighbours ("this may
replace X: …"); and the user can declare that a memory replaces others, which applies at
once (history kept: `valid_to` and `superseded_by`, found again in deep and exhaustive
modes)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from services.errors import EngramError, NotFoundError, Problem, UserInputError
from services.filters import MemoryFilter
from services.knowledge import contradictions
from services.knowledge.conflict_records import (
    FLAG_AT,
    SCORED_NEIGHBOURS,
    Contradiction,
    reading_of,
    record_of,
)
from services.knowledge.conflict_scorer import is_conflict, kind_of
from services.knowledge.cues import Cues, compare, describe_conflict
from services.knowledge.pair_features import CHANGE, PairText, features, read_pair_text
from services.knowledge.restatements import Vocabulary, restatement_of
from services.memory import Memory, now_iso, written_at
from services.search.retrieval import SearchResponse, SearchResult
from services.storage import contradictions as table
from services.storage.memories import MemoryStore, current_by_project
from services.text.identifiers import matches_file_ref, mentions
from services.text.stacktrace import error_in_text, share_of_error_words
from services.vectors.embeddings.base import Embedder
from services.vectors.index import VectorIndex

# Two later notes that replace one earlier note ("the floor is 3.9 now", then "3.9 is no
# longer supported; 3.10") are steps of one change when written at least a day apart.
CHAIN_STEP_S = 20 * 3600
ADDED = "when added"  # how a proposal recorded by `propose` says it was found


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
    return found


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
            found.append((loser, record.holder, _recorded_score(record.evidence)))
    return found


def _recorded_score(evidence: dict[str, object]) -> float:
    score = evidence.get("score")
    return float(score) if isinstance(score, int | float) else 0.0


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


def current_first(store: MemoryStore, response: SearchResponse, limit: int) -> SearchResponse:
    """Each result an open conflict says was replaced moves just below its replacement
    (which joins the results when the search missed it) and is marked `outdated_by`;
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
    outdated = replaced_by(store, asked, records=records)
    if not outdated:
        return response
    guessed = _guessed_replacements(records, outdated)
    found_ids = {r.memory.id for r in results}
    error = error_in_text(response.query)
    holders = store.get_many(sorted(set(outdated.values())))
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
            winner = present or SearchResult(holders[holder], result.score, result.breakdown)
            ordered.append(winner)
            placed.add(holder)
        if holder is not None:
            result = replace(result, outdated_by=holder)
        ordered.append(result)
        placed.add(memory_id)
    return replace(response, results=ordered[: max(limit, len(results))])


def _names_what_was_asked(holder: Memory, result: SearchResult) -> bool:
    """Whether `holder` names any of the code the query named that `result` names (or
    the query named none of it)."""
    asked = result.breakdown.matched_identifiers
    text = _text_of(holder)
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
    return share_of_error_words(error, _text_of(other)) < share_of_error_words(
        error, _text_of(result.memory)
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


@dataclass(frozen=True)
class ReplaceCandidate:
    """An older memory that a new one may replace, with the scorer's probability and
    the reason in words."""

    memory: Memory
    score: float
    kind: str  # supersedes or contradiction
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.memory.id,
            "title": self.memory.title,
            "score": round(self.score, 3),
            "kind": self.kind,
            "reason": self.reason,
        }


def likely_replaced(
    store: MemoryStore,
    vectors: VectorIndex,
    embedder: Embedder,
    memory: Memory,
    neighbours: int = SCORED_NEIGHBOURS,
) -> list[ReplaceCandidate]:
    """The current memories of `memory`'s project, written before it, that it may replace
    or contradict, best first. Candidates are its nearest neighbours in the vector index
    and its best keyword matches (a memory whose vector is still being written is found
    too); each is judged by the cues and the fitted scorers on its stored vector, or one
    embedded now when it has none yet (a few ms each). Nothing is changed."""
    vector = unit_vector(embedder.embed([_text_of(memory)])[0])
    try:
        hits = vectors.query(embedder.model_id, vector, neighbours * 3, [memory.project])
    except EngramError:  # no index yet: the keyword matches still count
        hits = []
    near = [h.memory_id for h in hits]
    lexical = store.lexical(f"{memory.title} {memory.content}", neighbours * 2, memory.project)
    ids = [i for i in dict.fromkeys([*near, *(h.memory_id for h in lexical)]) if i != memory.id]
    others = [
        m
        for m in store.get_many(ids).values()
        if m.superseded_by is None
        and m.project == memory.project
        and written_at(m) <= written_at(memory)
    ]
    if not others:
        return []
    try:
        stored = vectors.vectors_for(embedder.model_id, memory.project, [m.id for m in others])
    except EngramError:
        stored = {}
    missing = [m for m in others if m.id not in stored]
    if missing:
        fresh = embedder.embed([_text_of(m) for m in missing])
        stored.update((m.id, v) for m, v in zip(missing, fresh, strict=True))
    cosine = {m.id: float(unit_vector(stored[m.id]) @ vector) for m in others}
    closest = sorted(others, key=lambda m: -cosine[m.id])[:neighbours]
    new_text, new_reading = read_pair_text(memory), reading_of(memory)
    vocabulary = _project_vocabulary(store, memory)
    found = []
    for other in closest:
        old_text = read_pair_text(other)
        cues = compare(reading_of(other), new_reading)
        pair = features(old_text, new_text, cosine[other.id], cues)
        restated = restatement_of(other, memory, pair, vocabulary) if vocabulary else None
        flagged, score = is_conflict(pair, (old_text, new_text), restated=restated)
        if cues.score() >= FLAG_AT:
            flagged, score = True, max(score, cues.score())
        if flagged:
            kind = kind_of(old_text, new_text, pair)
            found.append(ReplaceCandidate(other, score, kind, why(old_text, new_text, cues)))
    return sorted(found, key=lambda c: -c.score)


def _project_vocabulary(store: MemoryStore, memory: Memory) -> Vocabulary | None:
    """The words of `memory`'s project, for the restatement scorer to tell its rare ones
    (one incident told again reads as a replacement without them); none for a project
    too large to read on every add, as the embed-time scan skips those."""
    if store.count(MemoryFilter(project=memory.project)) > contradictions.NEW_SCAN_LIMIT:
        return None
    members = current_by_project(store, memory.project).get(memory.project, [])
    return Vocabulary([*members, memory])


def propose(store: MemoryStore, memory: Memory, candidates: Sequence[ReplaceCandidate]) -> int:
    """Record `candidates` (found when `memory` was added, not confirmed) as open
    proposals, as the idle cycle records what it finds: search ranks `memory` above a
    memory it may replace and marks that one "may be outdated" until the user or the
    review says, and the review lists each. A memory it may contradict gets no holder:
    which of two notes that merely disagree is right is for the user to say. A pair
    already recorded (judged as the memory was embedded, or decided) is left as it was.
    Returns how many were recorded."""
    now = now_iso()
    recorded = 0
    with store.writing():
        for candidate in candidates:
            earlier, later = contradictions.ordered(candidate.memory, memory)
            if table.row_for_pair(store, earlier.id, later.id) is not None:
                continue  # already judged (the cues' reading says more) or decided
            holder = memory.id if candidate.kind == "supersedes" else None
            evidence = {
                "score": round(candidate.score, 3),
                "reason": candidate.reason,
                "judged": ADDED,
                "hash": contradictions.pair_hash(earlier, later),
            }
            table.record_flag(
                store, earlier.id, later.id, candidate.kind, holder, now, json.dumps(evidence)
            )
            recorded += 1
    return recorded


def _text_of(memory: Memory) -> str:
    return f"{memory.title}\n{memory.content}"  # what the index embeds for a memory


def unit_vector(vector: object) -> np.ndarray:
    """`vector` scaled to length 1 (so a dot product is the cosine)."""
    array = np.asarray(vector, dtype=np.float32)
    return array / max(float(np.linalg.norm(array)), 1e-9)


def why(earlier: PairText, later: PairText, cues: Cues) -> str:
    """The reason a pair looks like a change, in a few words a person can check."""
    reasons = [describe_conflict(conflict) for conflict in cues.conflicts[:1]]
    change = CHANGE.search(later.plain)
    if change:
        reasons.append(f"the new one says “{change.group(0)}”")
    step = _version_step(earlier.versions, later.versions - earlier.versions)
    if step and not cues.conflicts:
        reasons.append(step)
    if not reasons:
        reasons.append("same subject, different statement")
    return "; ".join(reasons)


def _version_step(old: Iterable[str], new: Iterable[str]) -> str | None:
    """ "3.8 → 3.10": the highest old and new versions of one major number, if any."""

    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split(".") if part.isdigit())

    for major in sorted({key(v)[:1] for v in new} & {key(v)[:1] for v in old}, reverse=True):
        before = max((v for v in old if key(v)[:1] == major), key=key)
        after = max((v for v in new if key(v)[:1] == major), key=key)
        if key(after) != key(before):
            return f"{before} → {after}"
    return None


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
    replaces it (as `declare` does). Returns the memories that no longer hold."""
    replaced: list[Memory] = []
    for memory in memories:
        if not memory.supersedes:
            continue
        target = store.get_many([memory.supersedes]).get(memory.supersedes)
        if target is not None and target.superseded_by is None and target.id != memory.id:
            replaced.extend(declare(store, memory.id, [target.id]))
    return replaced
