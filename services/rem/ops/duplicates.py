"""Duplicates: memories of a project that state the same thing.

Exact duplicates share a content hash. Near duplicates are pairs whose vectors are
similar (cosine ≥ 0.80) and that pass three checks that tell a paraphrase from a
look-alike: the same memory type (a pitfall and its fix are not duplicates), mostly the
same code names (Jaccard ≥ 0.5 over backticked names), and the same numbers ("2 MB" vs
"1 MB now" is a change, not a duplicate). Similarity ≥ 0.90 with the checks passed is a
merge candidate; 0.85–0.90 is proposed for review with merge recommended.

People restating a fact use other numbers and names, so those checks miss paraphrases
(0 of real-dev's 20 near duplicates). Among each memory's 5 nearest neighbours, the
fitted duplicate scorer (`services.knowledge.conflict_scorer`) proposes the pairs it
claims and the conflict scorer does not flag (where both fire, the surer decides),
never two notes saying the same of different code nor two that count one thing
differently (`quantities`), at most 10 a project and run, with skip recommended; two
notes that are each other's nearest neighbour need a lower probability (0.85; every
leave-one-project-out fold on real-dev chose it). That scorer was fitted on real-dev,
where a duplicate is nearly always two notes of one type; on sets other people wrote,
half are one incident told as a pitfall and again as a lesson or fix, so the
restatement scorer (`knowledge.restatements`, fitted on every development set) may
claim a pair too, and takes it from the conflict scorer where it is the surer of the
two (`restatement_claims`: one incident told again under its title reads to the
conflict scorer as a replacement). A pair passing the strict checks is
left to the contradictions operation only when the conflict scorer fires and the
duplicate scorer does not. An identical title is a topic, not a sign of a duplicate
(`duplicate_probability`). Measured (pairs, precision / recall; bench/duplicates.py,
bench/real_dev.py --data DIR): real-dev 0.87 / 0.80; on seven sets others wrote, each
measured with restatement weights fitted without it, 0.70 / 0.43 (0.65 / 0.31 with the
duplicate scorer alone); held out, tenth-dev 1.00 / 0.75, eleventh-dev 1.00 / 1.00
and eighth-dev 1.00 / 0.38; corpus-2k 0.94 / 0.98.

Pairs become groups (surest pairs first); a pair that would put into one group two
notes that count one thing differently, or two that are neither a pair nor near in
meaning, is left out: paraphrases of one middle note can still disagree with each
other, or be about other things. Each group is one finding.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from services.knowledge.claim_polarity import clashing_terms, read_polarity
from services.knowledge.conflict_records import record_of
from services.knowledge.conflict_scan import idf_weights
from services.knowledge.conflict_scorer import (
    DUPLICATE_THRESHOLD,
    duplicate_probability,
    is_conflict,
)
from services.knowledge.contradictions import SCORED_NEIGHBOURS, nearest_neighbours, reading_of
from services.knowledge.cues import READ_CHARS, compare
from services.knowledge.current_truth import SOURCE as WRITTEN_WITHOUT_REVIEW
from services.knowledge.pair_features import (
    PairText,
    features,
    read_pair_text,
    same_frame_other_subject,
)
from services.knowledge.quantities import agreeing_counts, quantity_clash
from services.knowledge.reading import Reading
from services.knowledge.restatements import (
    RESTATEMENT_THRESHOLD,
    Vocabulary,
    lengths_apart,
    restatement_of,
)
from services.memory import Memory
from services.storage import contradictions as recorded_conflicts
from services.storage.findings import Finding, Option
from services.storage.memories import MemoryStore, current_by_project
from services.storage.query_terms import stem
from services.text import words
from services.text.identifiers import query_identifiers
from services.vectors.index import VectorIndex

REVIEW_SIMILARITY = 0.85
MAX_SCORED_PAIRS = 10  # scorer-proposed pairs a project and run
# Two notes that are each other's nearest neighbour in the project are proposed from a
# lower duplicate probability: a restatement is usually the closest note to the one it
# restates, and a look-alike usually has a closer twin elsewhere.
MUTUAL_DUPLICATE_THRESHOLD = 0.85
SAME_VALUES = 2  # counted values two notes give alike (`same_values`)
SAME_VALUES_COSINE = 0.5
MERGE_SIMILARITY = 0.90
NAME_OVERLAP = 0.5
# Numbers that state something: digits not inside a name (`UTF-8`, `v2`), with a unit,
# or two to ten spelled out ("one" is too often an article: "one by one").
_NUMBER = re.compile(
    r"(?<![\w.-])(?:\d+(?:\.\d+)?\s*(?:ms|s|m|h|d|%|mb|kb|gb|x)?(?![\w-])|"
    r"(?:two|three|four|five|six|seven|eight|nine|ten)\b)",
    re.IGNORECASE,
)


def content_hash(memory: Memory) -> str:
    return words.content_hash(memory.content)


def code_names(memory: Memory) -> set[str]:
    return set(words.code_spans(memory.content))


_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}  # fmt: skip


def numbers(memory: Memory) -> set[str]:
    """The numbers a memory states, spelled out or not ("three" and "3" are the same)."""
    found = set()
    for raw in _NUMBER.findall(memory.content):
        value = "".join(raw.lower().split())
        found.add(_WORDS.get(value, value))
    return found


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if (a | b) else 1.0


def same_fact(a: Memory, b: Memory) -> bool:
    """The checks a similar pair must pass to be a duplicate."""
    return (
        a.type == b.type
        and _jaccard(code_names(a), code_names(b)) >= NAME_OVERLAP
        and numbers(a) == numbers(b)
    )


@dataclass(frozen=True)
class DuplicatePair:
    a: str
    b: str
    similarity: float
    exact: bool
    scored: bool = False  # found by the fitted duplicate scorer, not by the strict checks


def similar_pairs(
    memories: list[Memory], vectors: dict[str, np.ndarray], threshold: float
) -> Iterable[tuple[str, str, float]]:
    """Pairs of the given memories whose vectors' cosine is at least `threshold`."""
    ids = [m.id for m in memories if m.id in vectors]
    if len(ids) < 2:
        return
    matrix = np.stack([vectors[i] for i in ids]).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.clip(norms, 1e-9, None)
    block = 1024  # bounded memory for large projects
    for start in range(0, len(ids), block):
        scores = matrix[start : start + block] @ matrix.T
        rows, columns = np.nonzero(scores >= threshold)
        for row, column in zip(rows.tolist(), columns.tolist(), strict=True):
            i = start + row
            if column > i:
                yield ids[i], ids[column], float(scores[row, column])


class _PairReader:
    """The fitted scorers' view of the pairs of one project's memories, read lazily."""

    def __init__(self, memories: Iterable[Memory]) -> None:
        self.by_id = {m.id: m for m in memories}
        self._texts: dict[str, PairText] = {}

    @cached_property
    def readings(self) -> dict[str, Reading]:
        return {memory_id: reading_of(m) for memory_id, m in self.by_id.items()}

    @cached_property
    def weights(self) -> dict[str, float]:
        return idf_weights(self.readings.values())

    @cached_property
    def vocabulary(self) -> Vocabulary:
        return Vocabulary(self.by_id.values())

    def restated(self, a: str, b: str, pair: dict[str, float]) -> float:
        """The restatement scorer's probability for a pair with these `features`."""
        return restatement_of(self.by_id[a], self.by_id[b], pair, self.vocabulary)

    def text(self, memory_id: str) -> PairText:
        if memory_id not in self._texts:
            self._texts[memory_id] = read_pair_text(self.by_id[memory_id])
        return self._texts[memory_id]

    def features(self, a: str, b: str, similarity: float) -> dict[str, float]:
        cues = compare(self.readings[a], self.readings[b], self.weights)
        return features(self.text(a), self.text(b), similarity, cues, self.weights)

    def conflicting(self, a: str, b: str, similarity: float) -> bool:
        """The conflict scorer flags the two and the duplicate scorer does not claim
        them: for a pair that passed the strict checks (same type, names and numbers),
        a change or a contradiction, not a duplicate to merge."""
        pair = self.features(a, b, similarity)
        return is_conflict(pair, (self.text(a), self.text(b)), any_claim_wins=True)[0]


def find_duplicates(
    store: MemoryStore, vectors: VectorIndex, model_id: str, project: str | None = None
) -> list[DuplicatePair]:
    """Exact and near duplicate pairs among current (not superseded, not archived)
    memories, within each project. A near pair the conflict scorer flags, or one the
    contradictions operation has judged a change or a contradiction (still open), is
    left to that operation: the review would otherwise offer to merge what it says
    replaces. (Replacements recorded as a memory was written are not taken as judged:
    they are made without review, and a true duplicate is sometimes among them.)"""
    pairs: dict[tuple[str, str], DuplicatePair] = {}
    for name, memories in current_by_project(store, project).items():
        reader = _PairReader(memories)
        by_id = reader.by_id
        judged = _judged_conflicts(store, by_id)
        by_hash: dict[str, list[str]] = defaultdict(list)
        for memory in memories:
            by_hash[content_hash(memory)].append(memory.id)
        for same in by_hash.values():
            for i, a in enumerate(same):
                for b in same[i + 1 :]:
                    key = (min(a, b), max(a, b))
                    pairs[key] = DuplicatePair(key[0], key[1], 1.0, True)
        found = vectors.vectors_for(model_id, name, [m.id for m in memories])
        for a, b, similarity in similar_pairs(memories, found, REVIEW_SIMILARITY):
            key = (min(a, b), max(a, b))
            if (
                key not in pairs
                and key not in judged
                and same_fact(by_id[a], by_id[b])
                and not reader.conflicting(*key, similarity)
            ):
                pairs[key] = DuplicatePair(key[0], key[1], similarity, False)
        for pair in scored_pairs(memories, found, reader):
            if (pair.a, pair.b) not in judged:
                pairs.setdefault((pair.a, pair.b), pair)
    return sorted(pairs.values(), key=lambda p: (p.a, p.b))


def _judged_conflicts(store: MemoryStore, memory_ids: Iterable[str]) -> set[tuple[str, str]]:
    """Open conflicts among `memory_ids` that the contradictions operation recorded on
    a reading of the wording (its cues). A flag of its fitted scorer alone is a guess
    for review, as a duplicate proposal is: it does not keep the pair from being one
    (twin notes about one thing are what the scorer takes for a change most often)."""
    records = map(record_of, recorded_conflicts.open_rows_about(store, memory_ids))
    return {
        (min(r.a, r.b), max(r.a, r.b))
        for r in records
        if r.evidence.get("judged") != WRITTEN_WITHOUT_REVIEW and not r.scorer_guess
    }


def scored_pairs(
    memories: list[Memory], vectors: dict[str, np.ndarray], reader: _PairReader | None = None
) -> list[DuplicatePair]:
    """Paraphrases the strict checks miss: each memory's closest neighbours that the
    fitted duplicate scorer claims and the conflict scorer does not flag (people
    restating a fact use other numbers and names than the first note did). At most
    `MAX_SCORED_PAIRS` a project and run, the likeliest first: they are guesses for the
    user to review, and notes written from one template would otherwise flood it."""
    reader = reader or _PairReader(memories)
    unit = {}
    for memory_id, vector in vectors.items():
        array = np.asarray(vector, dtype=np.float32)
        unit[memory_id] = array / max(float(np.linalg.norm(array)), 1e-9)
    found: dict[tuple[str, str], tuple[float, DuplicatePair]] = {}
    neighbours = list(nearest_neighbours(list(reader.by_id), unit, SCORED_NEIGHBOURS))
    nearest: dict[str, tuple[float, str]] = {}
    for first, second, similarity in neighbours:
        nearest[first] = max(nearest.get(first, (-2.0, "")), (similarity, second))
    for first, second, similarity in neighbours:
        key = (min(first, second), max(first, second))
        if key in found:
            continue
        pair = reader.features(*key, similarity)
        twins = (reader.text(key[0]), reader.text(key[1]))
        if same_frame_other_subject(*twins) or lengths_apart(*(reader.by_id[i] for i in key)):
            continue  # about different code, or a paste and a note: two facts
        likely = duplicate_probability(pair)
        mutual = nearest[first][1] == second and nearest.get(second, (0.0, ""))[1] == first
        bar = (
            min(DUPLICATE_THRESHOLD, MUTUAL_DUPLICATE_THRESHOLD) if mutual else DUPLICATE_THRESHOLD
        )
        restated = reader.restated(*key, pair)
        claimed = likely >= bar or restated >= RESTATEMENT_THRESHOLD or same_values(pair, twins)
        if claimed and not is_conflict(pair, twins, restated=restated)[0]:
            surest = max(likely, restated)
            found[key] = (surest, DuplicatePair(key[0], key[1], similarity, False, scored=True))
    ranked = sorted(found.values(), key=lambda item: -item[0])
    return [pair for _, pair in ranked[:MAX_SCORED_PAIRS]]


def same_values(pair: Mapping[str, float], twins: tuple[PairText, PairText]) -> bool:
    """Two alike notes that give `SAME_VALUES` or more counted values alike and none
    differently restate one fact, however other their words ("max_connections=100,
    max_keepalive_connections=20, keepalive_expiry=5.0 seconds" / "at most 100
    connections, 20 of them kept alive, dropped after 5 s"). Over the thirteen sets two
    candidate pairs do so, both labelled duplicates."""
    if pair.get("quantity_clash", 0.0) or pair.get("cosine", 0.0) < SAME_VALUES_COSINE:
        return False
    return agreeing_counts(twins[0].quantities, twins[1].quantities) >= SAME_VALUES


def groups(
    pairs: list[DuplicatePair], apart: Callable[[str, str], bool] | None = None
) -> list[list[str]]:
    """Connected components of the duplicate pairs, each sorted, largest first. With
    `apart`, a pair that would put two memories it keeps apart into one group is left
    out (the surest pairs join first): two paraphrases of a middle note can still state
    one number differently ("engines >=18" / "engines >=22")."""
    parent: dict[str, str] = {}
    members: dict[str, list[str]] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for pair in sorted(pairs, key=lambda p: (not p.exact, -p.similarity, p.a, p.b)):
        first, second = root(pair.a), root(pair.b)
        if first == second:
            continue
        one, other = members.get(first, [first]), members.get(second, [second])
        if apart is not None and any(apart(x, y) for x in one for y in other):
            continue
        parent[first] = second
        members[second] = one + other
        members.pop(first, None)
    components: dict[str, list[str]] = defaultdict(list)
    for member in parent:
        components[root(member)].append(member)
    joined = (sorted(c) for c in components.values() if len(c) > 1)
    return sorted(joined, key=lambda c: (-len(c), c))


def stated_differently(memories: dict[str, Memory]) -> Callable[[str, str], bool]:
    """Whether two memories count one thing differently (`quantities`): never one group."""
    reader = _PairReader(memories.values())

    def apart(a: str, b: str) -> bool:
        if a not in memories or b not in memories:
            return False
        first, second = reader.text(a), reader.text(b)
        return (
            quantity_clash(first.quantities, second.quantities, first.plain, second.plain)
            is not None
        )

    return apart


def apart_in_groups(
    pairs: list[DuplicatePair],
    memories: dict[str, Memory],
    vectors: Mapping[str, np.ndarray] | None = None,
) -> Callable[[str, str], bool]:
    """Two memories one group may not hold: they count one thing differently, or they
    are neither a proposed pair nor near in meaning (cosine under `REVIEW_SIMILARITY`;
    without `vectors`, only proposed pairs are near). A group is notes that all say the
    same thing; joined through a middle note alone ("headers already written" ~
    "binding errors" ~ "Bind vs ShouldBind"), a chain holds notes about other things."""
    proposed = {(p.a, p.b) for p in pairs} | {(p.b, p.a) for p in pairs}
    differently = stated_differently(memories)
    unit = {i: v / max(float(np.linalg.norm(v)), 1e-9) for i, v in (vectors or {}).items()}

    def near(a: str, b: str) -> bool:
        if (a, b) in proposed:
            return True
        return a in unit and b in unit and float(unit[a] @ unit[b]) >= REVIEW_SIMILARITY

    return lambda a, b: not near(a, b) or differently(a, b)


def member_vectors(
    index: VectorIndex, model_id: str, memories: Mapping[str, Memory]
) -> dict[str, np.ndarray]:
    """The vectors of the given memories, read project by project."""
    by_project: dict[str | None, list[str]] = defaultdict(list)
    for memory in memories.values():
        by_project[memory.project].append(memory.id)
    found: dict[str, np.ndarray] = {}
    for project, ids in by_project.items():
        found.update(index.vectors_for(model_id, project, ids))
    return found


def keeper(memories: list[Memory]) -> Memory:
    """The memory a merge keeps: the most used, then the most confident, then the one
    naming more files and code (the merge adds the others' tags and files, not their
    words: a new user's merge had kept "--timeout is 30 s out of the box" and archived
    the note naming `gunicorn/config.py`), then the newest."""
    return max(
        memories,
        key=lambda m: (
            m.citation_count + m.use_count,
            m.confidence,
            len({*m.file_refs, *code_names(m), *query_identifiers(m.content[:READ_CHARS])}),
            m.created_at,
            m.id,
        ),
    )


MERGE_OPTIONS = [
    Option(
        "merge",
        "Merge",
        "keep the most used memory, add the others' tags and files to it, "
        "and archive the others as superseded by it (nothing is deleted)",
    ),
    Option("keep_both", "Keep all", "they are different; do not propose them again"),
    Option("skip", "Skip", "decide later; the finding stays open"),
]


def duplicate_findings(
    pairs: list[DuplicatePair],
    memories: dict[str, Memory],
    vectors: Mapping[str, np.ndarray] | None = None,
) -> list[Finding]:
    best: dict[frozenset[str], float] = {}
    exact: dict[frozenset[str], bool] = {}
    scored: dict[frozenset[str], bool] = {}
    for group in groups(pairs, apart_in_groups(pairs, memories, vectors)):
        key = frozenset(group)
        inside = [p for p in pairs if p.a in key and p.b in key]
        best[key] = max(p.similarity for p in inside)
        exact[key] = all(p.exact for p in inside)
        scored[key] = any(p.scored for p in inside)
    findings: list[Finding] = []
    for key, similarity in best.items():
        members = sorted(key)
        kept = keeper([memories[m] for m in members])
        kind = (
            "exact_duplicate"
            if exact[key]
            else (
                "duplicate"
                if similarity >= MERGE_SIMILARITY and not scored[key]
                else "possible_duplicate"
            )
        )
        titles = "; ".join(f"{m}: {memories[m].title}" for m in members)
        opposite = worded_oppositely([memories[m] for m in members]) if scored[key] else []
        caution = (
            " — or opposite things: one negates what the other affirms about "
            + ", ".join(f"`{name}`" for name in opposite)
            if opposite
            else ""
        )
        findings.append(
            Finding(
                op="duplicates",
                kind=kind,
                summary=f"{len(members)} memories say the same thing{caution} ({titles})",
                memory_ids=members,
                options=MERGE_OPTIONS,
                # a statistical guess is never merged by --auto: the user decides
                recommended="skip" if scored[key] else "merge",
                detail={
                    "keep": kept.id,
                    "similarity": round(similarity, 4),
                    "scored": scored[key],
                    **({"worded_oppositely": opposite} if opposite else {}),
                },
            )
        )
    return findings


def worded_oppositely(members: list[Memory]) -> list[str]:
    """For a proposed pair, the code names one note says only in negated clauses and the
    other only plainly ("`SetArgs(nil)` does NOT help" / "`SetArgs(nil)` is enough"): a
    paraphrase the scorer claims may be a contradiction in the same words, which the
    review should say before anyone merges it. Plain words are left out (a paraphrase
    often says "don't use X" where the first said "X is ignored")."""
    if len(members) != 2:
        return []
    first, second = (read_polarity(m.title, m.content) for m in members)
    shown: dict[str, str] = {}  # a term as the polarity reads it → the name as written
    for memory in members:
        for name in code_names(memory):
            shown.setdefault(name.strip().lower(), name.strip())
        text = f"{memory.title}\n{memory.content}"
        for name in query_identifiers(text):  # `allowedHosts` written without backticks
            shown.setdefault(stem(name.lower()), name)
    return sorted(shown[term] for term in clashing_terms(first, second) if term in shown)[:3]
