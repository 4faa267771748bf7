"""The runtime versions a note says CI tests, and the note that states the next set.

A project's CI tests a set of runtime versions at a time, a matrix that moves on as
releases come and go: "go.yml tests 1.21.x and 1.22.x", "ci: matrix is ["1.22.x",
"1.23.x"]", "Go 1.24 and 1.25 are what CI runs now", "`node-version: [18, 20, 22]`",
"the matrix runs 3.9 through 3.13". A note states such a set when one sentence (or its title) speaks
of CI (CI, matrix, workflow, a `.yml` file, "tested on", "under test") and the sentence
names two or more bare versions of one runtime, or a range of them ("3.9 through 3.13",
"1.17 → 1.22"); the runtime is named in the sentence, else in the title. A bound is
a floor, not a tested version (">=18", "3.9+": `runtime_floors` reads those), a value
said to be old is not tested now ("nothing exercises 1.23 anymore"), and a clause that
negates is read as saying what is no longer tested.

Unlike a floor, two successive matrices share versions: 1.21/1.22 → 1.22/1.23. A note
is replaced by the next later note whose set of that runtime has other ends
(`successive_steps`), so a chain 1.21/1.22 → 1.22/1.23 → 1.24/1.25 is two replacements,
not three. A sentence that names no runtime ("matrix is ["1.22.x", "1.23.x"]") speaks of
the project's only tested runtime, when its other notes name exactly one. A note about
one job's own matrix ("typecheck", "lint", "docs", "release") says nothing of the test
matrix: it states no set.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from services.knowledge.cue_vocabulary import old_spans
from services.knowledge.quantities import version_value
from services.text.words import sentences

__all__ = ["Tested", "matrix_step", "successive_steps", "versions_under_test"]

Tested = frozenset[tuple[str, str]]  # (runtime, or "" when the note names none; version)

UNNAMED = ""
_CI = re.compile(
    r"\b(?:ci|matrix|workflows?|github actions|under test|tested (?:on|against|with)|"
    r"tests? (?:on|against))\b|\.ya?ml\b",
    re.IGNORECASE,
)
# A job whose own versions are not the test matrix.
_OTHER_JOB = re.compile(
    r"\b(?:typecheck(?:ing)?|type-check|lint(?:ing|er)?|docs?|release|publish|deploy|"
    r"coverage|benchmarks?|nightly)\b(?:\s+(?:job|matrix|step|workflow))",
    re.IGNORECASE,
)
# A matrix key names its runtime whichever separator it uses: `node-version`,
# `node_version` (vite's ci.yml), `python_version`.
_RUNTIMES = {
    "go": r"\bgo(?:lang)?\b(?!\.mod|\.sum)|\bgo[-_]version\b",
    "python": r"\b(?:c?python|py)\b|\bpython[-_]version\b",
    "node": r"\bnode(?:\.?js)?\b|\bnode[-_]version\b",
    "rust": r"\b(?:rust|rustc|toolchains?)\b",
}
_RUNTIME = {name: re.compile(pattern, re.IGNORECASE) for name, pattern in _RUNTIMES.items()}
# A bare version: "1.22", "1.22.x", "3.13", "20.x", "22"; not a bound or a release tag.
_VERSION = re.compile(
    r"(?<![\w.<>=^~+/#-])(?<![<>=]\s)v?(?P<version>\d{1,2}(?:\.\d{1,2})?)(?:\.x|\.\*)?"
    r"(?![\w+%/-]|\.\d|\s*\+)"
)
_RANGE = re.compile(
    r"(?<![\w.])(?P<low>\d{1,2}\.\d{1,2})(?:\.x)?\s*(?:through|thru|to|–|-|→|->|\.\.)\s*"
    r"(?P<high>\d{1,2}\.\d{1,2})(?:\.x)?(?![\w.]*\d)",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:no longer|not|nothing|anymore|dropped|drops|removed|without|except|excluded)\b",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r";|\.\s|,\s*(?:but|so|while)\b|\bbut\b")


def _runtime_of(text: str) -> str | None:
    """The one runtime `text` names, "" for none, None for several."""
    named = [name for name, pattern in _RUNTIME.items() if pattern.search(text)]
    if len(named) > 1:
        return None
    return named[0] if named else UNNAMED


def _versions(clause: str, node: bool) -> set[str]:
    """The bare versions a clause names, old ones left out: Node's as lines ("20",
    "22.x"), any other runtime's as major.minor ("1.22", "3.13")."""
    olds = old_spans(clause)
    found = set()
    for match in _RANGE.finditer(clause):
        found |= {match.group("low"), match.group("high")}
    for match in _VERSION.finditer(_RANGE.sub(" ", clause)):
        if any(a <= match.start() < b for a, b in olds):
            continue
        version = match.group("version")
        if ("." in version) == node:
            continue  # a Node release ("20.11") or another runtime's count ("2 jobs")
        found.add(version)
    return found


def versions_under_test(title: str, content: str) -> Tested:
    """The (runtime, version) pairs a note says CI tests (see the module's docstring)."""
    stated: set[tuple[str, str]] = set()
    if _OTHER_JOB.search(title):
        return frozenset()
    in_title = _runtime_of(title)
    ci_title = bool(_CI.search(title))  # "go.yml versions: `go: ["1.25.x", "1.26.x"]`"
    for sentence in sentences(content):
        if not (ci_title or _CI.search(sentence)):
            continue
        runtime = _runtime_of(sentence)
        if runtime == UNNAMED and in_title:
            runtime = in_title  # "node versions in CI: 12, 14, 16"
        if runtime is None:
            continue
        versions: set[str] = set()
        for clause in _CLAUSES.split(sentence):
            if not _NEGATED.search(clause) and not _OTHER_JOB.search(clause):
                versions |= _versions(clause, runtime == "node")
        if len(versions) >= 2:
            stated |= {(runtime, version) for version in versions}
    return frozenset(stated)


def _ends(tested: Tested, runtime: str) -> tuple[float, float] | None:
    values = [version_value(v) for name, v in tested if name == runtime]
    return (min(values), max(values)) if values else None


def _named_as(tested: Tested, only: str | None) -> Tested:
    """`tested` with the versions of a sentence naming no runtime given to `only`, the
    one runtime named around it (None: none or several, and they stay unnamed)."""
    if only is None:
        return tested
    return frozenset((name or only, version) for name, version in tested)


def _only_named(*sets: Tested) -> str | None:
    named = {name for tested in sets for name, _ in tested} - {UNNAMED}
    return next(iter(named)) if len(named) == 1 else None


def matrix_step(earlier: Tested, later: Tested) -> dict[str, str] | None:
    """The runtime whose tested set has other ends in `later`, with each note's set, or
    None. A set naming no runtime is the other note's runtime when that one names one."""
    only = _only_named(earlier, later)
    earlier, later = _named_as(earlier, only), _named_as(later, only)
    for runtime in sorted({name for name, _ in earlier} & {name for name, _ in later}):
        if _ends(earlier, runtime) != _ends(later, runtime):
            said = [
                ", ".join(sorted((v for r, v in side if r == runtime), key=version_value))
                for side in (earlier, later)
            ]
            return {"runtime": f"{runtime or 'runtime'} in CI", "a": said[0], "b": said[1]}
    return None


def successive_steps(notes: Iterable[tuple[str, str, Tested]]) -> set[tuple[str, str]]:
    """The pairs (as sorted ids) of each note (id, created_at, tested versions) and the
    next later one whose set of one of its runtimes has other ends. Notes naming no
    runtime join the project's only named one."""
    listed = [(memory_id, created_at, tested) for memory_id, created_at, tested in notes if tested]
    only = _only_named(*(tested for _, _, tested in listed))
    by_runtime: dict[str, list[tuple[str, str, tuple[float, float] | None]]] = defaultdict(list)
    for memory_id, created_at, tested in listed:
        tested = _named_as(tested, only)
        for runtime in {name for name, _ in tested} - {UNNAMED}:
            by_runtime[runtime].append((created_at, memory_id, _ends(tested, runtime)))
    steps = set()
    for stated in by_runtime.values():
        stated.sort()
        for i, (_, first, ends) in enumerate(stated):
            following = (second for _, second, later in stated[i + 1 :] if later != ends)
            second = next(following, None)
            if second is not None:
                steps.add((min(first, second), max(first, second)))
    return steps
