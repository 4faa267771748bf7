"""Runtime floors a note states, and the next note's floor replacing it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.cues import compare, read
from services.knowledge.runtime_floors import floor_step, stated_floors, successive_steps


@pytest.mark.parametrize(
    ("title", "content", "floors"),
    [
        (
            "Python floor",
            "afaik the oldest interpreter we still support is 3.8.",
            {("python", "3.8")},
        ),
        (
            "requires-python",
            'pyproject.toml: `requires-python = ">=3.9"` now.',
            {("python", "3.9")},
        ),
        (
            "go directive",
            "chi's go.mod still declares `go 1.14`, CI runs 1.15.x.",
            {("go", "1.14")},
        ),
        ("go.mod", "go.mod: `go 1.22` (#1017). Loops use range-over-int.", {("go", "1.22")}),
        ("minimum Go", "chi needs Go 1.23 from here on; Go 1.26 is out.", {("go", "1.23")}),
        ("MSRV", "MSRV: 1.79. syntect 5.3 wouldn't compile on older.", {("rust", "1.79")}),
        # Go's own spelling of a version; a build constraint is the files' need
        ("minimum Go", "go.mod: require go1.22 (#2026).", {("go", "1.22")}),
        (
            "slog",
            "these files carry `//go:build go1.21`; go.mod still says go 1.19.",
            {("go", "1.19")},
        ),
        ("node", "root package.json engines is now `>=18`.", {("node", "18")}),
        ("MSRV", "MSRV moved 1.63 -> 1.64 with the connector PR.", {("rust", "1.64")}),
        ("MSRV bumped", "MSRV went from 1.75 to 1.82 (#3844).", {("rust", "1.82")}),
        ("serde MSRV", "serde's floor bumped from 1.31 to 1.56.", {("rust", "1.56")}),
        # a note telling two floors apart states neither as the project's
        (
            "node",
            "The package declares `engines.node >=14`; not the same thing as dev engines.",
            set(),
        ),
    ],
)
def test_a_floor_in_the_ways_people_write_it(title: str, content: str, floors: set) -> None:
    assert stated_floors(title, content) == floors


@pytest.mark.parametrize(
    ("title", "content"),
    [
        ("CI matrix", "CI runs Go 1.15.x through 1.22.x on ubuntu."),
        ("lambdas", "Our Node 20 lambdas call the API."),
        ("editable installs", "An editable install on Python 3.13+ doesn't raise any more."),
        # the floor word names the next clause's version, not the dropped one
        ("python floor", "2.32.0 dropped CPython 3.7, so the floor is 3.8 now."),
        ("MSRV job red", "MSRV CI broke: newest `time` wants rustc 1.81."),
    ],
)
def test_a_mention_or_a_condition_is_no_floor(title: str, content: str) -> None:
    assert ("python", "3.7") not in stated_floors(title, content)
    assert not {f for f in stated_floors(title, content) if f[1] in {"1.15", "20", "3.13", "1.81"}}


def test_two_notes_stating_other_floors_the_later_replaces() -> None:
    old = read("a", "Python floor", "The oldest Python we support is 3.8.", (), "2024-01-08")
    new = read(
        "b", "requires-python", '`requires-python = ">=3.9"` in pyproject.', (), "2024-10-09"
    )
    cues = compare(old, new)
    assert cues.floor == {"runtime": "python", "a": "3.8", "b": "3.9"}
    assert cues.replaces == "b" and "runtime_floor" in cues.kinds() and cues.score() >= 0.5
    same = read("c", "py", "We need Python 3.8 at least.", (), "2024-11-01")
    assert compare(old, same).floor is None  # the same floor restated


def test_only_the_next_floor_replaces_a_note() -> None:
    notes = [
        ("m1", "2024-01-01", frozenset({("python", "3.8")})),
        ("m2", "2024-06-01", frozenset({("python", "3.8")})),  # restates m1
        ("m3", "2025-01-01", frozenset({("python", "3.9")})),
        ("m4", "2026-01-01", frozenset({("python", "3.10"), ("node", "20")})),
        ("m5", "2026-02-01", frozenset({("node", "22")})),
    ]
    assert successive_steps(notes) == {("m1", "m3"), ("m2", "m3"), ("m3", "m4"), ("m4", "m5")}
    # a chain's ends are no pair of their own: the middle note's step says it
    old = read("m1", "py", "Python floor is 3.8.", (), "2024-01-01")
    newest = read("m4", "py", "requires Python 3.10.", (), "2026-01-01")
    assert compare(old, newest, version_steps=successive_steps(notes)).floor is None
    assert compare(old, newest).floor is not None  # without the project's notes: any two


@given(st.lists(st.sampled_from(["3.8", "3.9", "3.10", "3.11"]), min_size=1, max_size=8))
def test_every_step_joins_a_note_to_a_later_other_floor(versions: list[str]) -> None:
    notes = [
        (f"m{i}", f"2024-01-{i + 1:02d}", frozenset({("python", v)}))
        for i, v in enumerate(versions)
    ]
    by_id = {n[0]: n for n in notes}
    steps = successive_steps(notes)
    for a, b in steps:
        assert by_id[a][2] != by_id[b][2]
        assert floor_step(by_id[a][2], by_id[b][2]) is not None
    # every note but those whose floor no later note changes has exactly one successor
    for i, (memory_id, _, floors) in enumerate(notes):
        changed_later = any(other[2] != floors for other in notes[i + 1 :])
        successors = [
            p for p in steps if memory_id in p and int(max(p, key=lambda x: int(x[1:]))[1:]) > i
        ]
        assert (len(successors) >= 1) == changed_later
