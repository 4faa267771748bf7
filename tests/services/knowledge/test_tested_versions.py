"""The runtime versions a note says CI tests, and the next note's set replacing it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.cues import compare, read
from services.knowledge.tested_versions import matrix_step, successive_steps, versions_under_test


@pytest.mark.parametrize(
    ("title", "content", "tested"),
    [
        (
            "CI",
            "tests.yml runs Python 3.10, 3.11 and 3.12 on ubuntu and macos.",
            {("python", v) for v in ("3.10", "3.11", "3.12")},
        ),
        (
            "matrix",
            "CI matrix: Go 1.17 → 1.22, plus the Windows job.",
            {("go", "1.17"), ("go", "1.22")},
        ),
        (
            "node versions in CI",
            "After the merge the matrix is 18, 20, 22.",
            {("node", "18"), ("node", "20"), ("node", "22")},
        ),
        (
            "workflow",
            "`node-version: [20.x, 22.x]` in the test workflow.",
            {("node", "20"), ("node", "22")},
        ),
        (
            "py versions",
            "The matrix runs 3.9 through 3.13; the lint job runs on 3.12 only.",
            {("python", "3.9"), ("python", "3.13")},
        ),
        # a job's own versions, a bound, a condition, one version, an old value: no set
        ("typecheck matrix", "The typecheck job matrix is 3.10 and 3.14.", set()),
        ("engines", "package.json engines is `>=18`, CI runs on the latest LTS.", set()),
        ("release", "We publish from Node 22 in CI.", set()),
        ("CI", "Nothing in CI exercises Go 1.21 or 1.22 anymore.", set()),
        ("deploy", "Staging runs Python 3.11 and 3.12 side by side.", set()),
    ],
)
def test_a_note_states_the_versions_ci_tests(title: str, content: str, tested: set) -> None:
    assert set(versions_under_test(title, content)) == tested


def test_each_matrix_is_replaced_by_the_next_one_with_other_ends() -> None:
    """Successive matrices share versions (1.21/1.22 → 1.22/1.23): the next set with
    other ends replaces a note, and a chain's ends are no pair of their own."""
    notes = [
        ("a", "2024-01-01", versions_under_test("CI", "CI tests Go 1.21.x and 1.22.x.")),
        ("b", "2024-06-01", versions_under_test("matrix", 'ci: matrix is ["1.22.x", "1.23.x"]')),
        ("c", "2024-09-01", versions_under_test("go.yml", "go.yml still tests Go 1.22 and 1.23.")),
        ("d", "2025-03-01", versions_under_test("CI", "Go 1.24 and 1.25 are what CI runs now.")),
    ]
    assert successive_steps(notes) == {("a", "b"), ("b", "d"), ("c", "d")}


def test_a_set_naming_no_runtime_is_the_other_notes_runtime() -> None:
    named = versions_under_test("CI", "CI tests Go 1.21.x and 1.22.x.")
    unnamed = versions_under_test("build matrix", 'matrix is ["1.22.x", "1.23.x"] now')
    assert matrix_step(named, unnamed) == {
        "runtime": "go in CI",
        "a": "1.21, 1.22",
        "b": "1.22, 1.23",
    }
    python = versions_under_test("CI", "CI tests Python 3.12 and 3.13.")
    assert matrix_step(named, python) is None


def test_the_cues_read_the_next_matrix_as_a_replacement() -> None:
    old = read(
        "o", "CI versions", "The test matrix covers Python 3.8 to 3.12.", created_at="2024-01-01"
    )
    new = read(
        "n", "workflow", "tests.yml: Python 3.10, 3.11, 3.12, 3.13.", created_at="2025-02-01"
    )
    cues = compare(old, new)
    assert cues.tested == {
        "runtime": "python in CI",
        "a": "3.8, 3.12",
        "b": "3.10, 3.11, 3.12, 3.13",
    }
    assert cues.replaces == "n" and "tested_versions" in cues.kinds()
    assert compare(old, new, version_steps=set()).tested is None  # not a step of the scan


@given(st.text(max_size=400), st.text(max_size=60))
def test_any_text_is_read_and_every_version_is_written_in_it(content: str, title: str) -> None:
    for runtime, version in versions_under_test(title, content):
        assert runtime in ("", "go", "python", "node", "rust")
        assert re.search(rf"(?<!\d){re.escape(version)}", content)


def test_a_matrix_key_written_with_an_underscore_names_its_runtime() -> None:
    """vite's ci.yml writes `node_version: [20, 22, 24]`; the change from [18, 20, 22]
    had been offered as a duplicate."""
    assert versions_under_test("ci", "ci.yml runs tests on node_version: [20, 22, 24].") == {
        ("node", "20"),
        ("node", "22"),
        ("node", "24"),
    }
