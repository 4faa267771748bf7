"""The runtime floors a note states, and the note that states the next one.

A project supports one oldest version of each language runtime at a time: Python, Node,
Rust, Go. A note states a floor when a sentence of it says what the project requires
("needs", "MSRV", "oldest … supports", "dropped", "runs on"…) with a bound ("Node 18+",
">=3.10", "at least 1.74") or a version named as the minimum ("MSRV: 1.78", "the Python
floor is 3.9", "needs Go 1.23"), or quotes the manifest field with its range
("`requires-python = ">=3.9"`", "go.mod declares `go 1.20`", "`engines.node` is
`^14.15.0 || >=18`": its lowest version). A plain mention ("our Node 20 lambdas", "CI
runs 1.15.x through 1.22.x") or a condition ("an editable install on Python 3.13+") is
no floor.

Two notes that state different floors of one runtime cannot both hold now, whatever
else their words share (one says "Python floor", the other quotes `requires-python`).
A note is replaced by the next later note that states another floor of the same runtime
(`successive_steps`): the one after that replaces the replacement, and a chain's ends
are not flagged as a pair of their own. A value said to be old ("bumped from 1.31 to
1.56", "dropped 3.7") is not the floor; the value it moved to is. A note that tells two
floors apart ("not the same thing as the repo's dev engines") states neither. Over
real-dev and the thirteen other sets, such steps link 51 labelled pairs: 47
supersessions, 2 contradictions and 2 compatible pairs (two packages of one repository,
serde and serde_derive; two release lines, express 4.x and 5.x), and 8 pairs no set lists
(most of them steps of a chain the set labels only in part). An episode states no floor
that a later one makes untrue (`conflict_scan`).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable

from services.knowledge.cue_vocabulary import old_spans
from services.knowledge.quantities import Quantity, read_quantities, version_value
from services.storage.query_terms import stem
from services.text.manifests import FIELDS, floor_of
from services.text.words import sentences

__all__ = [
    "RUNTIME_WORDS",
    "Floors",
    "floor_step",
    "floors_of",
    "stated_floors",
    "successive_steps",
]

Floors = frozenset[tuple[str, str]]  # (runtime, floor as written)

# The words notes use for each runtime a manifest declares.
RUNTIME_WORDS = {
    "node": ("node", "nodejs", "engines", "engine"),
    "rust": ("rust", "rustc", "msrv"),
    "python": ("python", "cpython", "interpreter"),
    "go": ("go", "golang"),
}
# A version named with one of these words is a floor ("MSRV 1.78", "Python floor 3.9").
_FLOOR_WORDS = frozenset(
    stem(w) for w in ("msrv", "floor", "minimum", "min", "lowest", "oldest", "engines")
)
# A sentence that states what a project requires or supports, not a condition ("an
# editable install on Python 3.13+ doesn't raise" names a version it does not require).
_REQUIREMENT = re.compile(
    r"\b(?:requires?|required|needs?|needed|minimum|min|floor|at least|supports?|supported|"
    r"drop(?:s|ped)?|bump(?:s|ed)?|rais(?:e|es|ed) (?:to|the)|msrv|engines?|oldest|lowest|"
    r"no longer|(?:runs?|works?|builds?) on)\b",
    re.IGNORECASE,
)
# "needs Go 1.23", "requires Python 3.10": the version a project needs is its floor.
_NEEDS = re.compile(
    r"\b(?:requires?|needs?)\s+(?P<runtime>python|node(?:\.?js)?|rust|go(?:lang)?)\s+"
    r"v?(?P<version>\d+(?:\.\d+)+|\d+)\b(?!\.?\d)",
    re.IGNORECASE,
)
# A value moved: "1.63 -> 1.64", "from 1.75 to 1.82".
_MOVE = re.compile(
    r"(?<![\w.])v?\d+(?:\.\d+)+\s*(?:->|→|=>|\bto\b)\s*v?(?P<new>\d+(?:\.\d+)+)(?![\w]|\.\d)"
)
# After a field's name: separators and a verb ("is", "declares"), then the range in
# backticks, or else the rest of the clause.
_SPEC_AFTER = (
    r"[\s`'\":={]*(?:(?:still|now)\s+)?(?:is\s+|are\s+|says\s+|to\s+|declares\s+|sets\s+)?"
    r"(?:`(?P<code>[^`\n]{1,120})`|(?P<raw>[^\n,;]{1,80}))"
)
_SPEC = re.compile(_SPEC_AFTER, re.IGNORECASE)
_SPEC_RUNTIME = {"node": r"^[\s\"':={]*node\b", "go": r"^\s*go\s+(?=\d)"}  # `"node": …`, `go 1.22`


# Go writes its own versions glued ("require go1.22", toolchain go1.22.3); a build
# constraint (`//go:build go1.21`) names the files' needs, not the module's floor.
_GLUED_GO = re.compile(r"(?<!build )(?<![\w:/.-])go(?=1\.\d)", re.IGNORECASE)
_FLOOR_WORD = re.compile(r"\b(?:msrv|floor|minimum|lowest|oldest)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z.]*[a-z]")
# Where a clause ends: a version after it is not the one a floor word before it names.
_CLAUSE_END = re.compile(r"[:;()]|\b(?:but|while|and|so)\b|,", re.IGNORECASE)


def _position(sentence: str, number: str) -> int | None:
    """Where `sentence` writes the version `number` first."""
    at = re.search(rf"(?<![\w.]){re.escape(number)}(?![\w.]*\d)", sentence)
    return None if at is None else at.start()


def _floor_word_before(sentence: str, position: int | None) -> bool:
    """Whether a floor word comes before `position` in its clause ("the oldest
    interpreter marshmallow supports is 3.8"; not "dropped 3.7, so the floor …")."""
    if position is None:
        return False
    return _FLOOR_WORD.search(_CLAUSE_END.split(sentence[:position])[-1]) is not None


def _at_least(quantity: Quantity) -> Quantity:
    return Quantity(quantity.counts, quantity.low, math.inf, quantity.number, version=True)


def _floor(words: frozenset[str], number: str) -> Quantity:
    return Quantity(words, version_value(number), math.inf, number, version=True)


def _as_floor(quantity: Quantity) -> Quantity | None:
    """The floor a stated version claims, if it claims one."""
    if quantity.high == math.inf and quantity.low > -math.inf:
        return quantity
    if quantity.low == quantity.high and quantity.counts & _FLOOR_WORDS:
        return _at_least(quantity)
    return None


def _field_floors(text: str, runtime: str) -> list[Quantity]:
    """The floors a note quotes for the manifest field itself ("`engines.node` is
    `^14.15.0 || ^16.10.0 || >=18.0.0`", `"node": ">=10.13.0"`, "go.mod: `go 1.22`"):
    the lowest version of the range written right after the field's name."""
    found = []
    for field_name in FIELDS.get(runtime, ()):
        name = rf"(?<![\w.-]){re.escape(field_name)}(?![\w-])"
        for named in re.finditer(name, text, re.IGNORECASE):  # "go.mod. go.mod: `go 1.22`"
            match = _SPEC.match(text, named.end())
            spec = (match.group("code") or match.group("raw") or "") if match else ""
            spec = re.split(r"\.\s|\s(?:so|and|but|which)\s", spec)[0]
            if runtime in _SPEC_RUNTIME:
                spec = re.sub(_SPEC_RUNTIME[runtime], "", spec)
            spec = spec.replace('"', " ").strip(" :{}")
            floor = floor_of(spec) if spec[:1] in "^~<>=v0123456789" else None
            if floor is not None:
                found.append(Quantity(frozenset(), version_value(floor), math.inf, floor, True))
    return found


def _runtime_of(word: str) -> str:
    word = word.lower().replace(".", "")
    return next(r for r, names in RUNTIME_WORDS.items() if word.removesuffix("js") in names)


def _floors(title: str, content: str, runtimes: Iterable[str]) -> dict[str, list[Quantity]]:
    """The floors of each of `runtimes` a note states, each sentence read once."""
    words_of = {runtime: frozenset(stem(w) for w in RUNTIME_WORDS[runtime]) for runtime in runtimes}
    found: dict[str, list[Quantity]] = {runtime: [] for runtime in words_of}
    for sentence in (title, *sentences(content)):
        sentence = _GLUED_GO.sub("go ", sentence)
        if not _REQUIREMENT.search(sentence):
            continue
        said = {stem(w) for w in _WORD.findall(f"{title} {sentence}".lower())}
        olds = old_spans(sentence)
        versions = []  # (quantity, a floor word before it in its clause)
        for quantity in read_quantities("", sentence):
            at = _position(sentence, quantity.number)
            if quantity.version and not (at is not None and any(a <= at < b for a, b in olds)):
                versions.append((quantity, _floor_word_before(sentence, at)))
            # else "bumped from 1.31 to 1.56", "dropped 3.7": not the floor now
        moved = [  # "MSRV went from 1.75 to 1.82", "floor 3.8 -> 3.9"
            match.group("new")
            for match in _MOVE.finditer(sentence)
            if _floor_word_before(sentence, match.start())
        ]
        needs = [
            (_runtime_of(match.group("runtime")), match.group("version"))
            for match in _NEEDS.finditer(sentence.replace("`", ""))
        ]
        for runtime, words in words_of.items():
            named = bool(words & said)
            for quantity, floor_worded in versions:
                floor = _as_floor(quantity) if quantity.counts & words else None
                if floor is None and named and floor_worded:
                    floor = _at_least(quantity)  # "the oldest interpreter we support is 3.8"
                if floor is not None:
                    found[runtime].append(floor)
            found[runtime] += [_floor(words, number) for number in moved] if named else []
            found[runtime] += [_floor(words, n) for name, n in needs if name == runtime]
    text = f"{title}. {content}"
    for runtime in found:
        found[runtime] += _field_floors(text, runtime)
    return found


def floors_of(title: str, content: str, runtime: str) -> list[Quantity]:
    """The floors of `runtime` a note states (see the module's docstring)."""
    return _floors(title, content, (runtime,))[runtime]


# A note that tells two floors apart ("not the same thing as the repo's dev engines",
# "two different Go versions, don't conflate them") states neither as the project's.
_TELLS_APART = re.compile(
    r"\bnot the same (?:thing|as)\b|\b(?:don't|do not|never) (?:conflate|confuse|mix up)\b|"
    r"\btwo different\b",
    re.IGNORECASE,
)


def stated_floors(title: str, content: str) -> Floors:
    """Every runtime floor a note states, as (runtime, version as written)."""
    if _TELLS_APART.search(f"{title}. {content}"):
        return frozenset()
    return frozenset(
        (runtime, floor.number)
        for runtime, floors in _floors(title, content, RUNTIME_WORDS).items()
        for floor in floors
    )


def _values(floors: Floors, runtime: str) -> set[float]:
    return {version_value(number) for name, number in floors if name == runtime}


def floor_step(earlier: Floors, later: Floors) -> dict[str, str] | None:
    """The runtime two notes state different floors of (none in common), with the
    floors each states, or None."""
    for runtime in sorted({name for name, _ in earlier} & {name for name, _ in later}):
        if not _values(earlier, runtime) & _values(later, runtime):
            said = [sorted(n for r, n in side if r == runtime) for side in (earlier, later)]
            return {"runtime": runtime, "a": ", ".join(said[0]), "b": ", ".join(said[1])}
    return None


def successive_steps(notes: Iterable[tuple[str, str, Floors]]) -> set[tuple[str, str]]:
    """The pairs (as sorted ids) of each note (id, created_at, floors) and the next
    later one that states another floor of one of its runtimes."""
    by_runtime: dict[str, list[tuple[str, str, set[float]]]] = defaultdict(list)
    for memory_id, created_at, floors in notes:
        for runtime in {name for name, _ in floors}:
            by_runtime[runtime].append((created_at, memory_id, _values(floors, runtime)))
    steps = set()
    for stated in by_runtime.values():
        stated.sort()
        for i, (_, first, values) in enumerate(stated):
            following = (second for _, second, later in stated[i + 1 :] if not values & later)
            second = next(following, None)
            if second is not None:
                steps.add((min(first, second), max(first, second)))
    return steps
