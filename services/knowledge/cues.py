"""Deterministic cues that two memories disagree — cheap, rule-based, no model.

Each memory is read into a `Reading`: its code names (backticked), its subject words,
the statements it makes — an attribute (timeout, retries, primary database, log level…)
with the value it says holds now and the values it says no longer hold ("from 5 s to
15 s", "instead of Sentry", "(it was 4)") — and whether it uses change wording
("instead of", "no longer", "moved to", "replaced", "switched") or a negation.

`compare(a, b)` says what two readings have in common: whether they are about the same
subject (a shared code name; otherwise rare words and file references in common), the
attributes they give different values for, whether one explicitly replaces the other's
value, a negation of the same statement, and structured facts (`fact` rows) with the
same key and scope but different values. `Cues.score()` turns that into a strength in
[0, 1] that the contradictions operation combines with the LLM's verdict: high scores
stand on their own, middle ones are ties the model may break, low ones are compatible.

Values are recognised by kind (durations, sizes, counts, versions, tools by category), so
"kept for 30 days" never conflicts with "logs at INFO"; nor do two environments' values.

A memory is read by its first READ_CHARS characters, READ_SENTENCES sentences and
READ_SENTENCE_CHARS of each: a pasted log read whole made a comparison take minutes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from services.knowledge.cue_vocabulary import (
    AMBIGUOUS,
    BARE,
    CANONICAL,
    CATEGORY_CONTEXT,
    CATEGORY_PATTERNS,
    CHANGE_WORDING,
    CODE,
    COUNT_ATTRIBUTES,
    DURATION,
    DURATION_ATTRIBUTES,
    GROUPING,
    NEGATION,
    NUMBER_WORDS,
    PLAIN_WORD_USE,
    PLAIN_WORDS,
    RUNTIME,
    SECONDS,
    SIZE,
    SIZE_UNITS,
    STOPWORDS,
    TEAM,
    TEAM_WORDS,
    WORD,
    environments,
    old_spans,
)
from services.knowledge.evidence import evidence_of, relays
from services.knowledge.reading import Reading, Statement
from services.knowledge.reverts import read_reverts, reverted_release
from services.knowledge.runtime_floors import floor_step, stated_floors
from services.knowledge.setting_names import (
    bind,
    default_and_own,
    other_settings,
    setting_names,
    sources,
    whose,
)
from services.knowledge.tested_versions import matrix_step, versions_under_test
from services.knowledge.value_moves import moved_value, moves, stated
from services.knowledge.value_wording import DURATION_LIKE, looks_numeric
from services.text.change_wording import SPOKEN_CHANGE, from_releases
from services.text.dependency_floors import dependency_floors
from services.text.product_versions import product_versions
from services.text.words import code_spans
from services.text.words import sentences as split_sentences

READ_CHARS = 20_000
READ_SENTENCES = 200
READ_SENTENCE_CHARS = 1_000  # longer is a paste: the old-value patterns are quadratic


def _number(raw: str) -> float:
    return float(NUMBER_WORDS.get(raw.lower()) or GROUPING.sub("", raw))


def _fmt(value: float) -> str:
    return f"{value:g}"


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _duration_attribute(sentence: str, title: str) -> str:
    for name, pattern in DURATION_ATTRIBUTES:
        if pattern.search(sentence):
            return name
    for name, pattern in DURATION_ATTRIBUTES:
        if pattern.search(title):
            return name
    return "duration"


def sentence_statements(
    sentence: str, title: str = "", carried: str | None = None
) -> list[Statement]:
    """The attribute–value statements of one sentence; values in "from X to", "instead
    of X", "(it was X)"… are marked old. A bare old number takes the attribute of the
    sentence's other values ("4 seconds now (it was 5)"), or in a clause of none the
    version attribute `carried` from the clause before ("Python 3.12 minimum; 3.11 is
    no longer supported")."""
    found: list[tuple[int, Statement]] = []
    olds = old_spans(sentence)
    taken: list[tuple[int, int]] = []

    def add(position: int, end: int, attribute: str, value: str) -> None:
        taken.append((position, end))
        found.append((position, Statement(attribute, value, _inside(position, olds))))

    for match in DURATION.finditer(sentence):
        seconds = _number(match.group(1)) * SECONDS[match.group(2).lower()]
        if match.group(2) == "m" and not re.search(r"\d\s*m\b", match.group(0)):
            continue
        add(match.start(), match.end(), _duration_attribute(sentence, title), _fmt(seconds))
    for match in SIZE.finditer(sentence):
        megabytes = _number(match.group(1)) * SIZE_UNITS[match.group(2).lower()]
        add(match.start(), match.end(), "size limit", _fmt(megabytes))
    for attribute, words, pattern in COUNT_ATTRIBUTES:
        if not (words.search(sentence) or words.search(title)):
            continue
        before = len(found)
        for match in pattern.finditer(sentence):
            if _inside(match.start(), taken):
                continue
            raw = next(g for g in match.groups() if g is not None)
            add(match.start(), match.end(), attribute, _fmt(_number(raw)))
        if len(found) == before and words.search(sentence):
            # "The retry count went from 4 to 3", "was tuned to 1000 (it was 50)"; a
            # count is whole, so ">=0.27 … the transport retries" names a version, and an
            # exit status is digits under 256 ("exit instead" of taking port 5173, or of
            # "trying another one").
            for match in BARE.finditer(sentence):
                raw = match.group(1)
                if _inside(match.start(), taken) or "." in raw:
                    continue
                if attribute != "exit status" or (raw.isdigit() and _number(raw) < 256):
                    add(match.start(), match.end(), attribute, _fmt(_number(raw)))
    for match in RUNTIME.finditer(sentence):
        language = match.group(1).lower().removesuffix(".js")
        add(match.start(), match.end(), f"runtime {language}", match.group(2))
    products = product_versions(sentence)
    for named in products:
        if not _inside(named.start, taken):  # a language's version is its runtime's
            add(named.start, named.end, f"version {named.product}", named.major)
    named_products = {named.product for named in products}
    for floor in dependency_floors(sentence):  # a product's version is read as one above
        if not _inside(floor.start, taken) and floor.package not in named_products:
            add(floor.start, floor.end, f"version {floor.package}{FLOOR_SUFFIX}", floor.version)
    for category, pattern in CATEGORY_PATTERNS.items():
        context = CATEGORY_CONTEXT.get(category)
        if context is not None and not (context.search(sentence) or context.search(title)):
            continue
        for match in pattern.finditer(sentence):
            raw = match.group(1)
            name = raw.lower()
            if category == "log level" and raw != raw.upper():
                continue
            guard = AMBIGUOUS.get(name)
            if guard is not None and not (guard.search(sentence) or guard.search(title)):
                continue
            if name in PLAIN_WORDS and not PLAIN_WORD_USE.search(sentence[: match.start()]):
                continue  # "outgoing requests from…" is not the requests library
            if _inside(match.start(), taken):
                continue
            add(match.start(), match.end(), category, CANONICAL.get(name, name))
    for match in TEAM.finditer(sentence):
        name = match.group(1).lower()
        if name not in TEAM_WORDS:
            add(match.start(1), match.end(), "owning team", name)
    # A bare old number ("instead of 5", "(it was 4)"): the sentence's numeric attribute
    numeric = {s.attribute for _, s in found if looks_numeric(s.value)} or (
        {carried} if carried else set()
    )
    if len(numeric) == 1:
        (attribute,) = numeric
        unit = {s.value for _, s in found if s.attribute == attribute}
        for match in BARE.finditer(sentence):
            if not _inside(match.start(), olds) or _inside(match.start(), taken):
                continue
            value = _number(match.group(1))
            if attribute in DURATION_LIKE:
                value *= _unit_of(sentence, attribute, unit)
            add(match.start(), match.end(), attribute, _fmt(value))
    found.sort(key=lambda item: item[0])
    return [statement for _, statement in found]


FLOOR_SUFFIX = " floor"  # "version twisted floor": the lowest version a project requires

# Attributes too vague to conflict on their own ("takes about 30 seconds").
VAGUE_ATTRIBUTES = frozenset({"duration"})


def _unit_of(sentence: str, attribute: str, values: set[str]) -> float:
    """The unit (in seconds) of the sentence's durations, for a bare old number."""
    for match in DURATION.finditer(sentence):
        return SECONDS[match.group(2).lower()]
    return 1.0


def _subject_words(text: str, statements: Iterable[Statement]) -> set[str]:
    values = {w for s in statements for w in WORD.findall(s.value.lower())}
    return {
        w
        for w in WORD.findall(text.lower())
        if w not in STOPWORDS and w not in values and not w.isdigit()
    }


def read(
    memory_id: str,
    title: str,
    content: str,
    file_refs: Iterable[str] = (),
    created_at: str = "",
) -> Reading:
    """The cues' reading of one memory (title and the start of its content)."""
    content = content[:READ_CHARS]
    # Code names that contain spaces are commands or routes, not what a memory is about.
    names = frozenset(
        n.strip()
        for n in code_spans(content, 2, 80) + code_spans(title, 2, 80)
        if " " not in n.strip()
    )
    plain = CODE.sub(" ", content)
    statements: list[Statement] = []
    sentences: list[frozenset[str]] = []
    negated: list[bool] = []
    carried: str | None = None
    said_in = split_sentences(plain, clauses=True)[:READ_SENTENCES]
    written = split_sentences(content, clauses=True)[:READ_SENTENCES]  # code names kept
    written = written if len(written) == len(said_in) else said_in
    bound: list[tuple[str, frozenset[str]]] = []
    owners: list[tuple[str, str]] = []
    titled = setting_names(title)  # the settings of a sentence that names none
    for sentence, as_written in zip(said_in, written, strict=True):
        found = sentence_statements(sentence[:READ_SENTENCE_CHARS], title, carried)
        named = setting_names(as_written) or titled
        # a dependency floor's attribute names its package: no setting to bind it to
        bound.extend(
            (s.attribute, named)
            for s in found
            if not s.old and not s.attribute.endswith(FLOOR_SUFFIX)
        )
        owners.extend((s.attribute, whose(sentence)) for s in found if not s.old)
        versions = {s.attribute for s in found if s.attribute.startswith(("runtime ", "version "))}
        carried = versions.pop() if len(versions) == 1 else None
        statements.extend(found)
        sentences.append(frozenset(_subject_words(sentence, found)))
        negated.append(bool(NEGATION.search(sentence)))
    # A value named both as old and as current ("from X to Y; X is dropped") is old.
    olds = {(s.attribute, s.value) for s in statements if s.old}
    unique = tuple(
        dict.fromkeys(
            Statement(s.attribute, s.value, s.old or (s.attribute, s.value) in olds)
            for s in statements
        )
    )
    words = _subject_words(f"{CODE.sub(' ', title)} {plain}", unique)
    return Reading(
        id=memory_id,
        created_at=created_at,
        names=names,
        words=frozenset(words),
        file_refs=frozenset(file_refs),
        statements=unique,
        change_wording=bool(CHANGE_WORDING.search(content)),
        sentences=tuple(sentences),
        negated=tuple(negated),
        evidence=evidence_of(content),
        relays=relays(title, content),
        environments=environments(f"{title}. {content}"),
        spoken_change=bool(SPOKEN_CHANGE.search(f"{title}. {content}")),
        releases=from_releases(f"{title}. {content}"),
        said=stated(title, content),
        moves=moves(content),
        reverts=read_reverts(title, content),
        floors=stated_floors(title, content),
        tested=versions_under_test(title, content),
        settings=bind(bound),
        sources=sources(owners),
    )


# --- comparing two readings ----------------------------------------------------------------


@dataclass
class Cues:
    subject: float  # 0..1: how surely both are about the same subject
    conflicts: list[dict[str, str]] = field(default_factory=list)  # attribute, a, b
    replaces: str | None = None  # id of the memory that says the other's value is old
    change_wording: list[str] = field(default_factory=list)  # ids using it
    negation: bool = False
    fact: dict[str, str] | None = None  # key, scope, a, b
    moved: dict[str, str] | None = None  # about, a, b: the later note moves the value
    reverted: dict[str, str] | None = None  # release, about: the later note reverts it
    floor: dict[str, str] | None = None  # runtime, a, b: the later states the next floor
    tested: dict[str, str] | None = None  # runtime, a, b: the later, CI's next versions

    def kinds(self) -> list[str]:
        kinds = []
        if self.conflicts:
            kinds.append("different_value")
        if self.replaces:
            kinds.append("explicit_replacement")
        if self.change_wording:
            kinds.append("change_wording")
        if self.negation:
            kinds.append("negation")
        if self.fact:
            kinds.append("fact_key")
        if self.moved:
            kinds.append("moved_value")
        if self.reverted:
            kinds.append("reverted_release")
        if self.floor:
            kinds.append("runtime_floor")
        if self.tested:
            kinds.append("tested_versions")
        return kinds

    def score(self) -> float:
        """How strongly the cues say the two disagree, 0..1 (0.5 and above: flagged
        without a model; 0.35–0.65 are ties a model may break)."""
        if self.fact or self.moved or self.reverted or self.floor or self.tested:
            return 0.9 if self.fact else 0.8
        if self.subject <= 0.0:
            return 0.0
        # a project has one runtime floor, however its notes word the rest
        runtime = any(c["attribute"].startswith("runtime ") for c in self.conflicts)
        if self.replaces and (self.subject >= 0.5 or runtime):
            return min(1.0, 0.6 + 0.4 * self.subject)
        if self.conflicts:
            base = 0.2 + 0.7 * self.subject
            if self.change_wording:
                base += 0.05
            return min(1.0, base)
        if self.negation:
            return 0.2 + 0.25 * self.subject
        return 0.0

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"kinds": self.kinds(), "subject": round(self.subject, 3)}
        if self.conflicts:
            data["conflicts"] = self.conflicts
        if self.replaces:
            data["replaces"] = self.replaces
        if self.change_wording:
            data["change_wording"] = self.change_wording
        for name in ("fact", "moved", "reverted", "floor", "tested"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data


def subject_match(a: Reading, b: Reading, weights: Mapping[str, float] | None = None) -> float:
    """How surely two memories are about the same subject: 1.0 with a code name in
    common, 0.0 when both name code and none is shared; otherwise the weighted share of
    subject words in common (rarer words weigh more), lowered when both name files and
    none is shared, raised when a file is shared."""
    if a.names and b.names:
        return 1.0 if a.names & b.names else 0.0
    if a.names or b.names:
        return 0.0

    def weight(word: str) -> float:
        return 1.0 if weights is None else weights.get(word, 1.0)

    common = a.words & b.words
    if not common:
        return 0.0
    smaller = min(sum(map(weight, a.words)), sum(map(weight, b.words)))
    larger = max(sum(map(weight, a.words)), sum(map(weight, b.words)))
    shared = sum(map(weight, common))
    # Dice-like: the share of the smaller side, damped by how much the larger one adds.
    score = shared / smaller * math.sqrt(shared / larger) if smaller else 0.0
    if a.file_refs and b.file_refs:
        score = min(1.0, score + 0.25) if a.file_refs & b.file_refs else score * 0.5
    return min(1.0, score)


def later_of(a: Reading, b: Reading) -> Reading:
    return b if (b.created_at, b.id) >= (a.created_at, a.id) else a


def compare(
    a: Reading,
    b: Reading,
    weights: Mapping[str, float] | None = None,
    facts: Mapping[str, tuple[str, str, str]] | None = None,
    version_steps: Collection[tuple[str, str]] | None = None,
) -> Cues:
    """The cues between two memories. `weights`: subject-word weights (e.g. inverse
    document frequency in the project); `facts`: memory id → (key, scope, value) from
    the `fact` table; `version_steps`: the project's pairs (sorted ids) of a note and the
    next to state another runtime floor or CI-tested set (`successive_steps` of
    `runtime_floors` and `tested_versions`; without them, any two notes that differ)."""
    cues = Cues(subject_match(a, b, weights))
    if facts and a.id in facts and b.id in facts:
        key_a, scope_a, value_a = facts[a.id]
        key_b, scope_b, value_b = facts[b.id]
        # An empty scope says nothing about the subject: then the subjects must match.
        if (
            key_a == key_b
            and scope_a == scope_b
            and (scope_a or cues.subject >= 0.5)
            and value_a.strip().lower() != value_b.strip().lower()
        ):
            cues.fact = {"key": key_a, "scope": scope_a, "a": value_a, "b": value_b}
    cues.change_wording = [r.id for r in (a, b) if r.change_wording]
    # Two environments' values both hold ("staging uses Postgres 15", "production … 16").
    elsewhere = bool(a.environments and b.environments and not a.environments & b.environments)
    shared = set() if elsewhere else (a.attributes & b.attributes) - VAGUE_ATTRIBUTES
    for attribute in sorted(shared):
        if other_settings(a.settings, b.settings, attribute):
            continue  # `--timeout` and `--graceful-timeout`: two settings' values
        if default_and_own(a.sources, b.sources, attribute):
            continue  # "defaults to 10 s" and "we set 60 s" both hold
        if attribute.removeprefix("runtime ") in {r for r, _ in a.tested | b.tested}:
            continue  # a CI matrix lists versions (`tested_versions`): no one value
        now_a, now_b = a.current(attribute), b.current(attribute)
        if now_a and now_b and not (now_a & now_b):
            values = {side: ", ".join(sorted(now)) for side, now in (("a", now_a), ("b", now_b))}
            cues.conflicts.append({"attribute": attribute, **values})
        # A replacement names what holds now as well as what no longer does.
        if now_a and now_b and now_a & b.old(attribute) and not now_a & now_b:
            cues.replaces = b.id
        elif now_a and now_b and now_b & a.old(attribute) and not now_a & now_b:
            cues.replaces = a.id
    later = later_of(a, b)
    first = cues.conflicts[0]["attribute"] if cues.conflicts else None
    if cues.replaces is None and first and later.change_wording and later.old(first):
        cues.replaces = later.id
    if cues.replaces is None and not elsewhere:
        earlier = b if later is a else a
        left = {move.old for move in earlier.moves}  # what it moved away from, it no longer says
        cues.moved = moved_value(earlier.said - left, later.moves)
        if cues.moved is None:  # "0.28.1 backs out … from 0.28.0" (`reverts`)
            cues.reverted = reverted_release(earlier.reverts, later.reverts)
        if version_steps is None or (min(a.id, b.id), max(a.id, b.id)) in version_steps:
            cues.floor = floor_step(earlier.floors, later.floors)
            cues.tested = None if cues.floor else matrix_step(earlier.tested, later.tested)
        replaced = cues.moved or cues.reverted or cues.floor or cues.tested
        cues.replaces = later.id if replaced else None
    cues.negation = _negation(a, b)
    return cues


def _negation(a: Reading, b: Reading) -> bool:
    """One memory negates a sentence the other states (most words shared)."""
    for words_a, negated_a in zip(a.sentences, a.negated, strict=True):
        for words_b, negated_b in zip(b.sentences, b.negated, strict=True):
            if negated_a == negated_b or len(words_a) < 3 or len(words_b) < 3:
                continue
            shared = len(words_a & words_b) / min(len(words_a), len(words_b))
            if shared >= 0.75:
                return True
    return False
