"""The check a memory gets as it is written (`engram add`, the MCP add, the tray's add
dialog): which current memories of its project it may replace or contradict ("this may
replace X: <reason>"), kept as open proposals until someone decides (`propose`), and
which it may say again ("this may repeat X"), for the idle cycle's duplicates review to
merge. The same scorers judge as in the idle cycle, over the project's vocabulary where
the project is small enough to read on every add."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from services.errors import EngramError
from services.filters import MemoryFilter
from services.knowledge import contradictions
from services.knowledge.claim_polarity import clashing_terms, read_polarity
from services.knowledge.conflict_judge import change_kind
from services.knowledge.conflict_records import (
    FLAG_AT,
    SCORED_NEIGHBOURS,
    reading_of,
    record_of,
    what_differs,
)
from services.knowledge.conflict_resolution import settle
from services.knowledge.conflict_scorer import (
    DUPLICATE_THRESHOLD,
    duplicate_probability,
    is_conflict,
)
from services.knowledge.cues import Cues, compare
from services.knowledge.current_truth import replacement
from services.knowledge.default_claims import defaults_clash
from services.knowledge.owner_swap import swapped_values
from services.knowledge.pair_features import (
    CHANGE,
    PairText,
    features,
    read_pair_text,
    same_frame_other_subject,
)
from services.knowledge.restatements import (
    RESTATEMENT_THRESHOLD,
    Vocabulary,
    lengths_apart,
    restatement_of,
)
from services.knowledge.supersession import embedded_text, unit_vector
from services.memory import Memory, now_iso, written_at
from services.storage import contradictions as table
from services.storage.memories import MemoryStore, current_by_project
from services.storage.query_terms import stem
from services.vectors.embeddings.base import Embedder
from services.vectors.index import VectorIndex

ADDED = "when added"  # how a proposal recorded by `propose` says it was found
DECLINED = "the user said it does not replace it, when adding it"


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


@dataclass(frozen=True)
class RepeatCandidate:
    """An older memory that a new one may say again, with the surer scorer's
    probability."""

    memory: Memory
    score: float

    def to_dict(self) -> dict[str, object]:
        return {"id": self.memory.id, "title": self.memory.title, "score": round(self.score, 3)}


@dataclass(frozen=True)
class AddedCheck:
    """What `check_added` found: memories the new one may replace, and ones it may
    repeat."""

    replaces: list[ReplaceCandidate]
    repeats: list[RepeatCandidate]


def check_added(
    store: MemoryStore,
    vectors: VectorIndex,
    embedder: Embedder,
    memory: Memory,
    neighbours: int = SCORED_NEIGHBOURS,
) -> AddedCheck:
    """The current memories of `memory`'s project, written before it, that it may replace
    or contradict, and those it may say again, best first. Candidates are its nearest
    neighbours in the vector index and its best keyword matches (a memory whose vector is
    still being written is found too); each is judged by the cues and the fitted scorers
    on its stored vector, or one embedded now when it has none yet (a few ms each), as
    the idle cycle's contradictions and duplicates operations would judge the pair.
    Nothing is changed."""
    vector = unit_vector(embedder.embed([embedded_text(memory)])[0])
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
        return AddedCheck([], [])
    try:
        stored = vectors.vectors_for(embedder.model_id, memory.project, [m.id for m in others])
    except EngramError:
        stored = {}
    missing = [m for m in others if m.id not in stored]
    if missing:
        fresh = embedder.embed([embedded_text(m) for m in missing])
        stored.update((m.id, v) for m, v in zip(missing, fresh, strict=True))
    cosine = {m.id: float(unit_vector(stored[m.id]) @ vector) for m in others}
    closest = sorted(others, key=lambda m: -cosine[m.id])[:neighbours]
    new_text, new_reading = read_pair_text(memory), reading_of(memory)
    vocabulary = _project_vocabulary(store, memory)
    found, repeats = [], []
    for other in closest:
        old_text = read_pair_text(other)
        cues = compare(reading_of(other), new_reading)
        pair = features(old_text, new_text, cosine[other.id], cues)
        restated = None if vocabulary is None else restatement_of(other, memory, pair, vocabulary)
        flagged, score = is_conflict(pair, (old_text, new_text), restated=restated)
        if cues.score() >= FLAG_AT:
            flagged, score = True, max(score, cues.score())
        if flagged:
            kind = change_kind(old_text, new_text, pair, cues)
            found.append(ReplaceCandidate(other, score, kind, why(old_text, new_text, cues)))
            continue
        # What the pass run as the memory is embedded records (`current_truth`): a later
        # note retiring a name the earlier one relies on ("`make deploy` is gone").
        unit = {other.id: unit_vector(stored[other.id]), memory.id: vector}
        recorded = replacement(other, memory, unit)
        if recorded is not None:
            found.append(_recorded_candidate(other, recorded[2], why(old_text, new_text, cues)))
            continue
        said_again = _said_again(pair, restated, (old_text, new_text))
        if said_again is not None and not lengths_apart(other, memory):
            repeats.append(RepeatCandidate(other, said_again))
    return AddedCheck(
        sorted(found, key=lambda c: -c.score), sorted(repeats, key=lambda c: -c.score)
    )


def _recorded_candidate(
    other: Memory, evidence: dict[str, object], reason: str
) -> ReplaceCandidate:
    """A replacement the embed-time pass records, with its score and, when the new note
    retires names the other relies on, those names as the reason."""
    retired = evidence.get("retired")
    if isinstance(retired, list) and retired:
        names = [str(n) for n in retired]
        # "make" and "make deploy": the longer name says which
        said = [n for n in names if not any(o != n and n in o.split() for o in names)]
        reason = f"the new one retires {', '.join(said)}"
    score = evidence.get("score")
    return ReplaceCandidate(
        other, float(score) if isinstance(score, int | float) else 0.0, "supersedes", reason
    )


def _said_again(
    pair: dict[str, float], restated: float | None, texts: tuple[PairText, PairText]
) -> float | None:
    """How sure the fitted scorers are that the two say one thing (the surer of the
    duplicate and the restatement scorer), when either claims the pair; None when
    neither does, or when the two say it of different code."""
    likely = duplicate_probability(pair)
    again = restated if restated is not None else 0.0
    if likely < DUPLICATE_THRESHOLD and again < RESTATEMENT_THRESHOLD:
        return None
    if same_frame_other_subject(*texts):
        return None
    return max(likely, again)


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


def declined(store: MemoryStore, memory: Memory, candidates: Sequence[ReplaceCandidate]) -> int:
    """The user said `memory` does not replace `candidates`: each pair is resolved as
    both holding (a proposal the embed-time pass recorded included), so neither search
    nor the idle cycle says otherwise again. Returns how many were resolved."""
    now = now_iso()
    resolved = 0
    with store.writing():
        for candidate in candidates:
            earlier, later = contradictions.ordered(candidate.memory, memory)
            row = table.row_for_pair(store, earlier.id, later.id)
            if row is None:
                evidence = {"score": round(candidate.score, 3), "judged": ADDED}
                table.record_flag(
                    store, earlier.id, later.id, candidate.kind, None, now, json.dumps(evidence)
                )
                row = table.row_for_pair(store, earlier.id, later.id)
            record = record_of(row) if row is not None else None
            if record is not None and not record.resolved:
                settle(store, record.id, now, "both_valid", DECLINED)
                resolved += 1
    return resolved


def why(earlier: PairText, later: PairText, cues: Cues) -> str:
    """The reason a pair looks like a change, in a few words a person can check."""
    swapped = swapped_values(earlier.sequence, later.sequence)
    differs = (
        what_differs(cues.to_dict())
        or defaults_clash(earlier.defaults, later.defaults)
        or (f"{swapped[0]} → {swapped[1]}" if swapped else None)
    )
    reasons = [differs] if differs else []
    change = CHANGE.search(later.plain)
    if change:
        reasons.append(f"the new one says “{change.group(0)}”")
    step = _version_step(earlier.versions, later.versions - earlier.versions)
    if step and not differs:
        reasons.append(step)
    if not reasons:
        reasons.append(_guess_read(earlier, later))
    return "; ".join(reasons)


def _as_written(term: str, text: str) -> str:
    """A stemmed term ("undefin") as a word of `text` writes it ("undefined")."""
    return next((w for w in re.findall(r"[a-z][\w-]*", text) if stem(w) == term), term)


def _guess_read(earlier: PairText, later: PairText) -> str:
    """What a flag of the fitted scorer alone rests on, as far as the words show it: a
    term one note negates and the other affirms, other numbers, or one title."""
    negated = clashing_terms(
        read_polarity(earlier.memory.title, earlier.memory.content),
        read_polarity(later.memory.title, later.memory.content),
    )
    if negated:
        said = f"{earlier.plain} {later.plain}"
        terms = ", ".join(_as_written(term, said) for term in sorted(negated)[:2])
        return f"one says not what the other says of {terms} (a guess: check both)"
    numbers = sorted(earlier.numbers - later.numbers), sorted(later.numbers - earlier.numbers)
    if numbers[0] and numbers[1]:
        shown = (", ".join(side[:3]) for side in numbers)
        return "other numbers: {} vs {} (a guess: check both)".format(*shown)
    if earlier.title_words and earlier.title_words == later.title_words:
        return "the same title, a later statement (a guess: check both)"
    return "alike notes that read as saying different things (a guess: check both)"


def _version_step(old: Iterable[str], new: Iterable[str]) -> str | None:
    """ "3.8 → 3.10": the highest old and new versions of one major number, where the
    new is the higher, if any."""

    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split(".") if part.isdigit())

    for major in sorted({key(v)[:1] for v in new} & {key(v)[:1] for v in old}, reverse=True):
        before = max((v for v in old if key(v)[:1] == major), key=key)
        after = max((v for v in new if key(v)[:1] == major), key=key)
        if key(after) > key(before):  # "2.5 → 2.0.25" pairs two products' versions
            return f"{before} → {after}"
    return None
