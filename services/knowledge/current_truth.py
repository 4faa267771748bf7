"""What holds now, judged as soon as a memory has its vector: a later note that replaces
an earlier one is recorded then, so search and the assembled context leave out what no
longer holds before any consolidation has run, at the cost of one SQL lookup.

A note that replaced another is usually its near neighbour (the same file, setting or
error). When a memory is embedded, its nearest neighbours in its project are read as
the REM judge's first pass reads a pair (cues and the fitted scorer), and a pair in
which the later note is worded as a change ("dropped", "bumped to", "no longer", another
version weeks later), clashes with something the earlier says (a value, a version, a
negation) and is about the same code (a shared file or code name) is recorded as an
open `supersedes` conflict with the later note as holder. Nothing is superseded:
the record is a proposal the user sees in `engram contradictions list` and the
review, and can dismiss. Two notes that merely disagree
are left to the REM judge, and so are notes written in one sitting (nothing says which
came second) and episodes (records of what happened, never untrue later).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Mapping, Sequence

import numpy as np

from services.errors import EngramError
from services.knowledge import contradictions
from services.knowledge.conflict_records import ordered, pair_hash, reading_of
from services.knowledge.conflict_scorer import is_conflict, kind_of
from services.knowledge.cues import compare
from services.knowledge.pair_features import features, read_pair_text
from services.knowledge.retirement import retired_names
from services.knowledge.supersession import replaced_by, unit_vector
from services.memory import Memory, now_iso, written_at
from services.storage import contradictions as table
from services.storage.memories import MemoryStore
from services.text import words
from services.text.identifiers import mentions
from services.types import MemoryType
from services.vectors.embeddings.base import Embedder
from services.vectors.index import VectorIndex

log = logging.getLogger(__name__)

NEIGHBOURS = 6  # nearest memories of the project a newly embedded one is read against
SAME_SITTING_S = 20 * 3600  # closer than this, two notes have no order between them
MIN_COSINE = 0.35  # below this a pair is about different things (the scorer agrees)
SOURCE = "when embedded"
REPLACING = frozenset({"supersedes"})  # the open conflicts the context acts on
# The conflict scorer's flag is set for a pair that stands on its own; here the later
# note must also clash with the earlier about the same code, so a lower score is
# enough. Chosen leave-one-project-out on real-dev's neighbour pairs (each fold picked
# 0.8 or 0.85; held out: 23 labelled replacements found, was 20 at the scorer's own
# 0.92, with the same 3 wrong).
REPLACES_AT = 0.8
# A later note that retires a name the earlier one relies on is a replacement from a
# lower score. Chosen the same way (every fold picked 0.6; held out: 27 labelled
# replacements found, was 24 without this reading, the same 3 wrong).
RETIRED_AT = 0.6
# Two notes about one file, the later retiring a name the earlier relies on ("moved off
# pdm" against a pdm workflow, both about the Makefile and pyproject.toml): a tool
# migration words its new tool in other words, so the vectors and the scorer see little
# in common. From this score the reading counts when a file is shared.
RETIRED_WITH_FILE_AT = 0.3
_NAME = re.compile(r"[A-Za-z_][\w.:/-]*[A-Za-z0-9_]")
_QUALIFIER = re.compile(r"::|[./]")
MIN_PROGRAM = 3  # `tox -e py311` is about tox; `a -b` about nothing
MIN_LAST_SEGMENT = 4  # `axum_extra::extract::Host` is about `Host`; `a.b.io` is about nothing
_NAME_LIKE = re.compile(r"[A-Z_0-9]")
CLASH = (  # pair features that say the later note contradicts a statement of the earlier
    "value_conflict",
    "cue_replaces",
    "old_value_named",
    "versions_differ",
    "numbers_differ",
    "negation_differs",
    "opposites",
    "sentence_value_clash",
    "sentence_polarity_clash",
    "defaults_clash",
    "polarity_clash",
)


def judge_embedded(
    store: MemoryStore, vectors: VectorIndex, embedder: Embedder, memories: Sequence[Memory]
) -> int:
    """Record the replacements among `memories` (just embedded) and their neighbours,
    then judge their pairs as the REM cycle's first pass would (open conflicts for
    review, which search ranks by); returns how many pairs were recorded. Never raises:
    embedding must not fail because a judgement could not be made (the REM cycle judges
    the pair later)."""
    judgeable = [m for m in memories if _judgeable(m)]
    try:
        recorded = _judge(store, vectors, embedder, judgeable)
        return recorded + contradictions.judge_new(store, vectors, embedder.model_id, judgeable)
    except Exception as error:
        log.warning("replacements of %d embedded memories not judged: %s", len(memories), error)
        return 0


def current_holders(
    store: MemoryStore, memory_ids: Sequence[str], excluded: Collection[str] = ()
) -> dict[str, Memory]:
    """Memory id → the current memory an open supersession says replaces it (the context
    shows that one instead). Only a later note worded as a change replaces an earlier one
    here: which side of an open contradiction holds is a guess until the user says, so
    the context keeps both under its ⚠ line (letting the guess act cost needed notes on
    every hand-written set: real-dev 98 → 94 of 109 in tiers 1–2 after a cycle).
    `excluded` memories never hold (the open file contradicts them): a chain ending in
    one stops at the newest holder before it."""
    found = replaced_by(store, memory_ids, REPLACING)
    asked = set(found.values())
    while asked:  # a replacement replaced in turn: follow the chain to its end
        further = replaced_by(store, sorted(asked), REPLACING)
        asked = {h for loser, h in further.items() if loser not in found and h not in found}
        found.update((loser, h) for loser, h in further.items() if loser not in found)
    if not found:
        return {}
    holders = store.get_many(sorted(set(found.values())))
    latest: dict[str, Memory] = {}
    for loser in memory_ids:
        chain: list[str] = []
        holder = found.get(loser)
        while holder is not None and holder not in chain and len(chain) <= len(found):
            chain.append(holder)
            holder = found.get(holder)
        kept = next((i for i, h in enumerate(chain) if h in excluded), len(chain))
        newest = chain[kept - 1] if kept else None
        if newest is not None and newest in holders and holders[newest].superseded_by is None:
            latest[loser] = holders[newest]
    return latest


def _judgeable(memory: Memory) -> bool:
    return memory.superseded_by is None and memory.type is not MemoryType.EPISODE


def _judge(
    store: MemoryStore, vectors: VectorIndex, embedder: Embedder, memories: Sequence[Memory]
) -> int:
    by_project: dict[str | None, list[Memory]] = {}
    for memory in memories:
        by_project.setdefault(memory.project, []).append(memory)
    flags: list[tuple[Memory, Memory, dict[str, object]]] = []
    for project, group in by_project.items():
        own = _unit_vectors(vectors, embedder, project, [m.id for m in group])
        near: dict[str, list[str]] = {}
        for memory in group:
            if memory.id in own:
                hits = vectors.query(embedder.model_id, own[memory.id], 2 * NEIGHBOURS, [project])
                unique = dict.fromkeys(h.memory_id for h in hits if h.memory_id != memory.id)
                near[memory.id] = list(unique)[:NEIGHBOURS]  # a memory's chunks count once
        wanted = sorted({i for ids in near.values() for i in ids} - set(own))
        neighbours = store.get_many(wanted)
        neighbours.update((m.id, m) for m in group)
        unit = {**own, **_unit_vectors(vectors, embedder, project, wanted)}
        read: set[frozenset[str]] = set()  # a pair of mutual neighbours is read once
        for memory_id, ids in near.items():
            for other_id in ids:
                other = neighbours.get(other_id)
                pair = frozenset((memory_id, other_id))
                if other is None or not _judgeable(other) or other_id not in unit or pair in read:
                    continue
                read.add(pair)
                judged = replacement(neighbours[memory_id], other, unit)
                if judged is not None:
                    flags.append(judged)
    if not flags:
        return 0
    now = now_iso()
    with store.writing():
        for earlier, later, evidence in flags:
            table.record_flag(
                store, earlier.id, later.id, "supersedes", later.id, now, json.dumps(evidence)
            )
    return len(flags)


def replacement(
    first: Memory, second: Memory, unit: Mapping[str, np.ndarray]
) -> tuple[Memory, Memory, dict[str, object]] | None:
    """(earlier, later, evidence) when the later of the two replaces the earlier."""
    earlier, later = ordered(first, second)
    if written_at(later) - written_at(earlier) < SAME_SITTING_S:
        return None
    cosine = float(unit[earlier.id] @ unit[later.id])
    if cosine < MIN_COSINE:
        return None
    old, new = read_pair_text(earlier), read_pair_text(later)
    cues = compare(reading_of(earlier), reading_of(later))
    pair = features(old, new, cosine, cues)
    # One scoring at the lowest bar (below REPLACES_AT); the higher bars read the score.
    shares_file = bool(set(earlier.file_refs) & set(later.file_refs))
    low_bar = RETIRED_WITH_FILE_AT if shares_file else RETIRED_AT
    # Acting without review, a later note that alikes its twin replaces it only when it
    # says it changed something the earlier one does not already say changed: "newest
    # wins" would otherwise let a misremembered restatement, or a second account of
    # the same change, take the right note's place.
    unsaid = not new.change or bool(old.change)
    flagged_low, score = is_conflict(pair, (old, new), low_bar, any_claim_wins=unsaid)
    if kind_of(old, new, pair) != "supersedes" or not same_subject(earlier, later):
        return None
    # Change wording alone is not enough: "the timeout is 15 s now" does not replace
    # "the timeout counts from the send"; the later note must clash with something
    # the earlier one says — or retire something it relies on ("moved off pdm",
    # "`tcp_nodelay` is gone"), which the scorer, fitted before that reading, weighs
    # too little.
    flagged = flagged_low and score >= REPLACES_AT
    clashes = flagged and any(pair.get(name, 0.0) > 0 for name in CLASH)
    retired = sorted(retired_names(old, new)) if flagged_low else []
    if not clashes and not retired:
        return None
    evidence: dict[str, object] = {
        "scorer": round(score, 3),
        "cues": cues.to_dict(),
        "cue_score": round(cues.score(), 3),
        "score": round(score, 3),
        "llm": None,
        "hash": pair_hash(earlier, later),
        "judged": SOURCE,
        **({"retired": retired[:5]} if retired and not clashes else {}),
    }
    return earlier, later, evidence


def same_subject(earlier: Memory, later: Memory, by_file: bool = True) -> bool:
    """Whether two notes can be about the same thing: they share a file (unless not
    `by_file`: two helpers of one file are two subjects), or a code name, or one names
    what the other's qualified code name ends in, or one of them names no code at all (a
    template twin that says the same of `issue_refund` and of `price_for_plan` is two
    notes, not a change)."""
    if by_file and set(earlier.file_refs) & set(later.file_refs):
        return True
    first, second = _code_names(earlier), _code_names(later)
    if not first or not second or first & second:
        return True
    return (
        _named_in(earlier, later)
        or _named_in(later, earlier)
        or _program_named_in(earlier, later)
        or _program_named_in(later, earlier)
    )


def _program_named_in(named: Memory, memory: Memory) -> bool:
    """Whether `memory`'s text names the program of a command `named` writes as code:
    "`tox -e py311,style`" and "tox is no longer needed locally" are about one tool."""
    text = f"{memory.title}\n{memory.content}"
    for span in words.code_spans(f"{named.title}\n{named.content}", 2, 80):
        program, _, arguments = span.strip().partition(" ")
        if (
            arguments
            and len(program) >= MIN_PROGRAM
            and program.isalpha()
            and program.lower() not in words.STOPWORDS
            and mentions(text, program)
        ):
            return True
    return False


def _named_in(named: Memory, memory: Memory) -> bool:
    """Whether `memory`'s text names what a qualified code name of `named` ends in,
    written as code or not: "`axum_extra::extract::Host` now" and "Host, Scheme and
    OptionalPath are removed" are about one extractor. The end must read as a name (a
    capital, an underscore or a digit: `Host`, `model_copy`), not a plain word (`copy`
    of `io.copy`), and is matched as written."""
    text = f"{memory.title}\n{memory.content}"
    for span in words.code_spans(f"{named.title}\n{named.content}", 2, 80):
        for name in _NAME.findall(span):
            last = _QUALIFIER.split(name)[-1]
            if (
                last != name
                and len(last) >= MIN_LAST_SEGMENT
                and _NAME_LIKE.search(last)
                and mentions(text, last)
            ):
                return True
    return False


def _code_names(memory: Memory) -> set[str]:
    """The names in a memory's code spans (`requires-python = ">=3.8"` names
    `requires-python`), lower-cased; values and operators are not names."""
    spans = words.code_spans(f"{memory.title}\n{memory.content}", 2, 80)
    return {name.lower() for span in spans for name in _NAME.findall(span)}


def _unit_vectors(
    vectors: VectorIndex, embedder: Embedder, project: str | None, ids: Sequence[str]
) -> dict[str, np.ndarray]:
    if not ids:
        return {}
    try:
        stored = vectors.vectors_for(embedder.model_id, project, list(ids))
    except EngramError:
        return {}
    return {memory_id: unit_vector(vector) for memory_id, vector in stored.items()}
