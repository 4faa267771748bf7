"""Memories the open manifest contradicts: a runtime floor stated otherwise.

A note that says "webpack needs Node 18+ now" while the `package.json` being edited
declares `"engines": {"node": ">=10.13.0"}` is wrong or stale for this checkout, however
sure its wording: the file is the truth for what it declares. Which of two notes holds
is otherwise a guess (newest wins is wrong for a misremembered later note); here it is
read off the workspace.

A note takes part when it states a floor of the same runtime (`runtime_floors`: "needs
Node 18+", "MSRV: 1.78", "`requires-python = ">=3.9"`"). A plain mention ("our Node 20
lambdas", "Node 16 is no longer supported") or a condition ("an editable install on
Python 3.13+ doesn't raise") claims no floor and is left alone, as is a note that names
the declared version anywhere or states a floor the declared one matches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from services.knowledge.quantities import Quantity, version_value
from services.knowledge.runtime_floors import RUNTIME_WORDS, floors_of
from services.memory import Memory
from services.storage.query_terms import stem
from services.text.manifests import DeclaredVersion

__all__ = ["contradicted_by_file", "disagreement"]


def _names(text: str, version: str) -> bool:
    """`text` writes `version` (or the same release without trailing zero parts)."""
    short = re.sub(r"(?:\.0)+$", "", version)
    return any(
        re.search(rf"(?<![\w.]){re.escape(v)}(?![\w]|\.\d)", text) is not None
        for v in {version, short}
    )


def disagreement(memory: Memory, declared: DeclaredVersion, file: str) -> str | None:
    """Why the file contradicts `memory` ("says node 18+; package.json declares …"),
    or None."""
    words = frozenset(stem(w) for w in RUNTIME_WORDS.get(declared.runtime, ()))
    target = Quantity(words, version_value(declared.floor), math.inf, declared.floor, True)
    floors = floors_of(memory.title, memory.content, declared.runtime)
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
