"""Memories the open manifest contradicts: a runtime floor stated otherwise.

A note that says "webpack needs Node 18+ now" while the `package.json` being edited
declares `"engines": {"node": ">=10.13.0"}` is wrong or stale for this checkout, however
sure its wording: the file is the truth for what it declares. Which of two notes holds
is otherwise a guess (newest wins is wrong for a misremembered later note); here it is
read off the workspace.

A note takes part when a sentence of it states what the project requires ("needs",
"MSRV", "dropped", "runs on"…) with a floor of the same runtime: a bound ("Node 18+",
">=3.10", "at least 1.74"), a version named as the minimum ("MSRV: 1.78", "the Python
floor is 3.9"), or the manifest field quoted with its range ("`engines.node` is
`^14.15.0 || >=18`": its lowest version). A plain mention ("our Node 20 lambdas", "Node
16 is no longer supported") or a condition ("an editable install on Python 3.13+ doesn't
raise") claims no floor and is left alone, as is a note that names the declared version
anywhere or states a floor the declared one matches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from services.knowledge.quantities import Quantity, read_quantities, version_value
from services.memory import Memory
from services.storage.query_terms import stem
from services.text.manifests import FIELDS, DeclaredVersion, floor_of
from services.text.words import sentences

__all__ = ["contradicted_by_file", "disagreement"]

# The words notes use for each runtime a manifest declares.
_RUNTIME_WORDS = {
    "node": ("node", "nodejs", "engines", "engine"),
    "rust": ("rust", "rustc", "msrv"),
    "python": ("python", "cpython"),
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


def _as_floor(quantity: Quantity) -> Quantity | None:
    """The floor a stated version claims, if it claims one."""
    if quantity.high == math.inf and quantity.low > -math.inf:
        return quantity
    if quantity.low == quantity.high and quantity.counts & _FLOOR_WORDS:
        return Quantity(quantity.counts, quantity.low, math.inf, quantity.number, version=True)
    return None


def _names(text: str, version: str) -> bool:
    """`text` writes `version` (or the same release without trailing zero parts)."""
    short = re.sub(r"(?:\.0)+$", "", version)
    return any(
        re.search(rf"(?<![\w.]){re.escape(v)}(?![\w]|\.\d)", text) is not None
        for v in {version, short}
    )


# After a field's name: separators and a verb ("is", "says"), then the range in
# backticks, or else the rest of the clause.
_SPEC_AFTER = (
    r"[\s`'\":={]*(?:is\s+|are\s+|says\s+|to\s+)?"
    r"(?:`(?P<code>[^`\n]{1,120})`|(?P<raw>[^\n,;]{1,80}))"
)


def _field_floors(text: str, runtime: str) -> list[Quantity]:
    """The floors a note quotes for the manifest field itself ("`engines.node` is
    `^14.15.0 || ^16.10.0 || >=18.0.0`", `"node": ">=10.13.0"`): the lowest version of
    the range written right after the field's name."""
    found = []
    for field_name in FIELDS.get(runtime, ()):
        pattern = rf"(?<![\w.-]){re.escape(field_name)}(?![\w-])" + _SPEC_AFTER
        for match in re.finditer(pattern, text, re.IGNORECASE):
            spec = match.group("code") or match.group("raw") or ""
            spec = re.split(r"\.\s|\s(?:so|and|but|which)\s", spec)[0]
            spec = re.sub(r"^[\s\"':={]*node\b", "", spec)  # `"engines": {"node": …}`
            spec = spec.replace('"', " ").strip(" :{}")
            floor = floor_of(spec) if spec[:1] in "^~<>=v0123456789" else None
            if floor is not None:
                found.append(Quantity(frozenset(), version_value(floor), math.inf, floor, True))
    return found


def disagreement(memory: Memory, declared: DeclaredVersion, file: str) -> str | None:
    """Why the file contradicts `memory` ("says node 18+; package.json declares …"),
    or None."""
    words = frozenset(stem(w) for w in _RUNTIME_WORDS.get(declared.runtime, ()))
    target = Quantity(words, version_value(declared.floor), math.inf, declared.floor, True)
    floors = [
        floor
        for sentence in (memory.title, *sentences(memory.content))
        if _REQUIREMENT.search(sentence)
        for quantity in read_quantities("", sentence)
        if quantity.version
        and quantity.counts & words
        and (floor := _as_floor(quantity)) is not None
    ]
    floors += _field_floors(f"{memory.title}. {memory.content}", declared.runtime)
    if not floors or any(floor.fits(target) for floor in floors):
        return None
    if _names(f"{memory.title} {memory.content}", declared.floor):
        return None
    return f"says {declared.runtime} {floors[0].number}+; {declared.describe(file)}"


def contradicted_by_file(
    memories: Sequence[Memory], declared: Sequence[DeclaredVersion], file: str | None
) -> Mapping[str, str]:
    """Memory id → why the open manifest contradicts it, for each of `memories` that
    states another floor of a runtime the file declares."""
    if not declared or file is None:
        return {}
    found: dict[str, str] = {}
    for memory in memories:
        for version in declared:
            reason = disagreement(memory, version, file.rsplit("/", 1)[-1])
            if reason is not None:
                found[memory.id] = reason
                break
    return found
