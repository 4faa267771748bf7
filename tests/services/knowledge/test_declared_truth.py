"""The open manifest as the truth for what it declares: which runtime floors a manifest
declares, which notes state another floor of the same runtime, and the context leaving
those out (with a line saying why) and keeping the note they had replaced."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.activity.prediction import Candidate, Prediction, Reason
from services.activity.signals import ActivityKind
from services.context.assembly import ContextAssembler
from services.knowledge.declared_truth import contradicted_by_file, disagreement
from services.text.manifests import DeclaredVersion, declared_versions
from services.text.source_symbols import parse_source
from tests.services.builders import make_memory

PACKAGE_JSON = """{
  "name": "webpack",
  "version": "5.101.0",
  "engines": {
    "node": ">=10.13.0"
  },
  "devDependencies": {"@types/node": "^24.0.0"}
}
"""


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("package.json", PACKAGE_JSON, ("node", "engines.node", ">=10.13.0", "10.13.0")),
        (
            "packages/jest/package.json",
            '{"engines": {"node": "^18.14.0 || ^20.0.0 || >=24.0.0"}}',
            ("node", "engines.node", "^18.14.0 || ^20.0.0 || >=24.0.0", "18.14.0"),
        ),
        (
            "Cargo.toml",
            '[package]\nname = "clap"\nrust-version = "1.74"  # MSRV\n',
            ("rust", "rust-version", "1.74", "1.74"),
        ),
        (
            "pyproject.toml",
            '[project]\nrequires-python = ">=3.10, <4"\n',
            ("python", "requires-python", ">=3.10, <4", "3.10"),
        ),
        (
            "setup.py",
            'setup(python_requires=">=3.8")\n',
            ("python", "python_requires", ">=3.8", "3.8"),
        ),
        (
            "setup.cfg",
            "[options]\npython_requires = >=3.9\n",
            ("python", "python_requires", ">=3.9", "3.9"),
        ),
        (
            "go.mod",
            "module x\n\ngo 1.22.0\n\ntoolchain go1.23.1\n",
            ("go", "go", "1.22.0", "1.22.0"),
        ),
    ],
)
def test_a_manifest_declares_its_runtime_floor(path: str, text: str, expected: tuple) -> None:
    assert declared_versions(path, text) == (DeclaredVersion(*expected),)
    assert parse_source(path, text).declared == (DeclaredVersion(*expected),)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("package.json", '{"devDependencies": {"node": "20"}}'),  # not under engines
        ("Cargo.toml", "[package]\nrust-version.workspace = true\n"),
        ("src/app.py", 'python_requires=">=3.8"'),  # not a manifest
        ("pyproject.toml", "[tool.black]\ntarget-version = ['py39']\n"),
    ],
)
def test_nothing_is_declared_where_the_field_is_absent(path: str, text: str) -> None:
    assert declared_versions(path, text) == ()


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["package.json", "Cargo.toml", "pyproject.toml", "setup.py", "go.mod"]),
    st.text(max_size=400),
)
def test_reading_any_manifest_text_never_fails(path: str, text: str) -> None:
    for declared in declared_versions(path, text):
        assert declared.floor and declared.floor[0].isdigit()
        assert declared.floor in declared.spec


NODE = DeclaredVersion("node", "engines.node", ">=10.13.0", "10.13.0")
RUST = DeclaredVersion("rust", "rust-version", "1.71", "1.71")
JEST = DeclaredVersion("node", "engines.node", "^18.14.0 || ^20.0.0 || >=24.0.0", "18.14.0")


@pytest.mark.parametrize(
    ("content", "declared", "contradicted"),
    [
        ("webpack 5 needs Node 18+ now, engines were bumped with 5.99.", NODE, True),
        ("Checked: still runs on Node >= 8 as long as you polyfill.", NODE, True),
        ('webpack 5 declares `"engines": { "node": ">=10.13.0" }`.', NODE, False),
        ("Node 10.13+ is the floor and we keep it for the whole 5.x line.", NODE, False),
        ("Our Node 20 lambdas run it fine.", NODE, False),  # a mention, not a floor
        ("Node 16 is no longer supported by our build agents.", NODE, False),
        ("serde_derive MSRV: 1.61, to match what syn declares.", RUST, True),
        ("serde_derive MSRV: 1.71 (bump landed two weeks ago).", RUST, False),
        ("rustfmt 1.61 formats it the same.", RUST, False),  # another tool's version
        ("Python floor is 3.8.", NODE, False),  # another runtime
        # A version named as a condition is not a floor the project requires.
        ("An editable install on Node 22+ skips the check.", NODE, False),
        ("On Node 22+ the loader doesn't raise for a missing export.", NODE, False),
        ("The floor was raised to Node 18+ in 5.99.", NODE, True),
        # The field quoted with a range: its lowest version is the floor it states.
        (
            "Jest 29 `engines.node` is `^14.15.0 || ^16.10.0 || >=18.0.0`, so 16.20 is fine.",
            JEST,
            True,
        ),
        ("`engines.node`: `^18.14.0 || ^20.0.0 || >=24.0.0` (jest 30.0.0).", JEST, False),
        ('We pin `"engines": {"node": ">=18"}` in the app.', NODE, True),
    ],
)
def test_a_note_stating_another_floor_is_contradicted(
    content: str, declared: DeclaredVersion, contradicted: bool
) -> None:
    memory = make_memory(content, title="floor")
    reason = disagreement(memory, declared, "package.json")
    assert (reason is not None) is contradicted
    if reason:
        assert declared.spec in reason and "package.json" in reason


def test_only_notes_the_file_contradicts_are_named() -> None:
    wrong = make_memory("webpack 5 needs Node 18+ now.", title="node engines")
    right = make_memory("Node floor stays at 10.13 in every 5.x minor.", title="node engines")
    found = contradicted_by_file([wrong, right], [NODE], "package.json")
    assert list(found) == [wrong.id]
    assert contradicted_by_file([wrong], [], "package.json") == {}
    assert contradicted_by_file([wrong], [NODE], None) == {}


def _prediction(*memories: Any, declared: tuple[DeclaredVersion, ...]) -> Prediction:
    return Prediction(
        project="webpack",
        at=datetime(2026, 1, 1, tzinfo=UTC),
        activity=ActivityKind.GENERAL,
        critical=[Candidate(m, 1.0, [Reason("file_ref: package.json", 1.0)]) for m in memories],
        relevant=[],
        background=[],
        topics=[],
        current_file="package.json",
        declared=declared,
    )


def test_the_context_leaves_out_what_the_open_file_contradicts_and_says_so() -> None:
    right = make_memory(
        'webpack 5 declares `"engines": { "node": ">=10.13.0" }`.', title="node engines"
    )
    wrong = make_memory("webpack 5 needs Node 18+ now.", title="node engines (new)")
    tests = make_memory("`yarn test:unit` runs the unit tests.", title="running tests")
    # The misremembered later note was taken for a replacement when it was written.
    assembler = ContextAssembler(
        2000,
        replaced=lambda ms, excluded=(): {} if wrong.id in excluded else {right.id: wrong},
        against_file=contradicted_by_file,
    )
    assembled = assembler.assemble(_prediction(right, tests, declared=(NODE,)))
    placed = [p.candidate.memory.id for tier in assembled.tiers for p in tier.placed]
    assert placed == [right.id, tests.id]  # the replaced note stays, the wrong one is out
    assert f"⚠ left out {wrong.id} “node engines (new)”" in assembled.markdown
    assert "engines.node` >=10.13.0" in assembled.markdown
    # Without a manifest nothing is checked: the replacement takes the note's place.
    plain = assembler.assemble(_prediction(right, tests, declared=()))
    assert [p.candidate.memory.id for p in plain.tiers[0].placed] == [wrong.id, tests.id]
    assert "left out" not in plain.markdown
