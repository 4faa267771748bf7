"""Floors of different things: a new user's "MarkupSafe>=2.0 is the minimum dependency"
was flagged as replaced by two later notes raising the Python floor, and search then
put the stale MarkupSafe floor first with the current one marked outdated."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.conflict_scorer import is_conflict
from services.knowledge.cues import compare
from services.knowledge.floor_subjects import floor_subjects, floors_of_other_things
from services.knowledge.pair_features import features, read_pair_text
from services.memory import memory_from_dict

MARKUPSAFE = "MarkupSafe>=2.0 is the minimum dependency (pyproject.toml dependencies)."
PYTHON_BUMP = (
    "Bumped requires-python to >=3.8 in pyproject.toml. 3.7 is EOL and no longer tested in CI."
)
PYTHON_PIN = 'requires-python = ">=3.9" (pyproject.toml).'
MARKUPSAFE_RAISED = "Raised the MarkupSafe floor to >=2.1 -- nothing older is tested anymore."


def _text(content: str, day: str) -> Any:
    memory, problems = memory_from_dict(
        {"content": content, "type": "dependency", "created_at": f"{day}T10:00:00+00:00"},
        "jinja",
    )
    assert not problems
    return read_pair_text(memory)


@pytest.mark.parametrize(
    ("content", "subjects"),
    [
        (MARKUPSAFE, {"markupsafe"}),
        (PYTHON_BUMP, {"python"}),
        (PYTHON_PIN, {"python"}),
        (MARKUPSAFE_RAISED, {"markupsafe"}),
        ("Twisted>=18.9.0 and requires-python >=3.9 in setup.cfg", {"twisted", "python"}),
        ("The CI matrix runs 3.9 through 3.12.", set()),
    ],
)
def test_what_a_note_states_a_floor_of(content: str, subjects: set[str]) -> None:
    assert floor_subjects("", content) == subjects


@pytest.mark.parametrize("later", [PYTHON_BUMP, PYTHON_PIN])
def test_a_python_floor_never_replaces_a_dependency_floor(later: str) -> None:
    earlier, newer = _text(MARKUPSAFE, "2026-02-24"), _text(later, "2026-06-02")
    # however alike the scorer finds them (it gave these 0.91 and 0.96)
    found = features(earlier, newer, 0.9)
    assert is_conflict(found, (earlier, newer))[0] is False


def test_two_floors_of_one_package_still_conflict() -> None:
    earlier, newer = _text(MARKUPSAFE, "2026-02-24"), _text(MARKUPSAFE_RAISED, "2026-07-01")
    assert not floors_of_other_things(earlier.floors, earlier.plain, newer.floors, newer.plain)
    from services.knowledge.conflict_records import reading_of

    cues = compare(reading_of(earlier.memory), reading_of(newer.memory))
    assert any("markupsafe floor" in c["attribute"] for c in cues.conflicts)


def test_a_note_naming_the_other_floor_is_not_told_apart() -> None:
    """ "MarkupSafe 2.1 needs Python 3.7+" is about both: the rule stays out of it."""
    python = _text(PYTHON_BUMP, "2026-06-02")
    both = _text("markupsafe>=2.1 is the minimum, which needs python 3.7 or newer", "2026-07-01")
    assert not floors_of_other_things(python.floors, python.plain, both.floors, both.plain)


_SUBJECTS = st.frozensets(st.sampled_from(["python", "node", "markupsafe", "twisted"]), max_size=2)
_TEXTS = st.lists(st.sampled_from(["python", "markupsafe", "floor", "is", "3.9", "twisted"]))


@given(_SUBJECTS, _TEXTS, _SUBJECTS, _TEXTS)
def test_telling_floors_apart_is_symmetric_and_needs_disjoint_subjects(
    first: frozenset[str], first_words: list[str], second: frozenset[str], second_words: list[str]
) -> None:
    first_text, second_text = " ".join(first_words), " ".join(second_words)
    apart = floors_of_other_things(first, first_text, second, second_text)
    assert apart == floors_of_other_things(second, second_text, first, first_text)
    if apart:
        assert first and second and not first & second
        assert not any(subject in second_text.split() for subject in first)
