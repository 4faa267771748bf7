"""What a note states the lowest supported version of: its runtimes (`runtime_floors`:
"requires-python = >=3.9", "MSRV 1.70") and its dependencies (`text.dependency_floors`:
"MarkupSafe>=2.0 is the minimum", "Twisted floor bumped to 21.7.0").

A project keeps a floor for each of several things, and notes about them are written
alike ("X>=2.0 is the minimum", "bumped requires-python to >=3.8"): the embedder and the
fitted scorer read two such notes as one subject whose version moved. Two notes that
each state floors of things the other never names are about two floors, and neither
replaces the other (`floors_of_other_things`).
"""

from __future__ import annotations

import re

from services.knowledge.runtime_floors import RUNTIME_WORDS, stated_floors
from services.text.dependency_floors import dependency_floors
from services.text.words import sentences

__all__ = ["floor_subjects", "floors_of_other_things"]


def floor_subjects(title: str, content: str) -> frozenset[str]:
    """The runtimes and packages a note states a floor of, lower case."""
    runtimes = {runtime for runtime, _ in stated_floors(title, content)}
    packages = {
        floor.package
        for sentence in sentences(f"{title}. {content}")
        for floor in dependency_floors(sentence)
    }
    return frozenset(runtimes | packages)


def floors_of_other_things(
    first: frozenset[str], first_text: str, second: frozenset[str], second_text: str
) -> bool:
    """Both notes state floors, and neither names anything the other states a floor of
    (`first_text`, `second_text`: the notes in lower case)."""
    if not first or not second or first & second:
        return False
    return not _names_any(second_text, first) and not _names_any(first_text, second)


def _names_any(text: str, subjects: frozenset[str]) -> bool:
    words = {word for subject in subjects for word in RUNTIME_WORDS.get(subject, (subject,))}
    return any(re.search(rf"(?<![\w.]){re.escape(word)}(?!\w)", text) for word in words)
