"""Major versions after a product's name ("Node 18", "PostgreSQL 16")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.knowledge.cues import sentence_statements
from services.text.product_versions import PRODUCTS, product_versions


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("We moved the orders database to PostgreSQL 17.", [("postgresql", "17")]),
        (
            "CI runs Node 18 and node v20 on Windows 11.",
            [("node", "18"), ("node", "20"), ("windows", "11")],
        ),
        ("Vue 2 components still load under Vue 3's compat build.", [("vue", "2"), ("vue", "3")]),
        ("Java 17 is the floor; Spring Boot 3 needs it.", [("java", "17"), ("spring boot", "3")]),
        ("Minimum PostgreSQL is now 15; Node: 20 in CI.", [("postgresql", "15"), ("node", "20")]),
    ],
)
def test_a_product_named_with_a_major_version(text: str, found: list[tuple[str, str]]) -> None:
    assert [(v.product, v.major) for v in product_versions(text)] == found


@pytest.mark.parametrize(
    "text",
    [
        "Step 2: run the migrations.",  # a capitalised word, not a product
        "Node 18.19 is what the image ships",  # a dotted version, read elsewhere
        "Python 3-4 times slower than the C path",  # a range, not a version
        "React 18% faster after memo",  # a percentage
        "go 2 levels up from the repo root",  # Go is written with a dot ("Go 1.23")
        "nodes 18 and 19 are down",  # another word
        "Node 2024 roadmap",  # four digits: a year
        "Redis is 3 times faster than the old cache",  # a factor
        "Postgres is 2x slower here",
        "Python is 10 ms slower per call",  # a measure
    ],
)
def test_no_version_where_the_number_is_something_else(text: str) -> None:
    assert product_versions(text) == []


@given(st.text(max_size=300))
def test_any_text_gives_spans_of_itself(text: str) -> None:
    names = {p.lower() for p in PRODUCTS}
    for found in product_versions(text):
        assert found.product in names
        assert found.major.isdigit() and len(found.major) <= 3
        assert text[found.start : found.end].lower().startswith(found.product)
        assert text[found.start : found.end].endswith(found.major)


def test_the_cues_read_a_product_version_as_a_value_of_that_product() -> None:
    """ "PostgreSQL 16" and "PostgreSQL 17" are two values of one attribute, so two notes
    stating them differ; a language keeps its runtime attribute."""
    (stated,) = sentence_statements("The orders database runs PostgreSQL 17 now.")
    assert (stated.attribute, stated.value) == ("version postgresql", "17")
    (runtime,) = sentence_statements("Builds need Node 20.")
    assert (runtime.attribute, runtime.value) == ("runtime node", "20")


def test_a_later_note_naming_a_newer_major_version_replaces_the_earlier() -> None:
    """ "ESLint 9 engines …" then "eslint 10 engines …": the cues see one product's two
    versions, and the later, higher one is a change (it holds), not a disagreement."""
    from services.knowledge.contradictions import Judge, reading_of
    from tests.services.builders import make_memory

    old = make_memory(
        "ESLint 9 needs Node 18.18 or newer; the Jenkins agent on 16 must be upgraded.",
        id="old", project="lint", title="node for eslint",
        created_at="2024-04-05T10:00:00Z",
    )  # fmt: skip
    new = make_memory(
        "eslint 10 needs Node 20.19 or newer, and the editor's bundled Node too.",
        id="new", project="lint", title="node for eslint",
        created_at="2026-02-06T10:00:00Z",
    )  # fmt: skip
    verdict = Judge(None).judge(old, new, (reading_of(old), reading_of(new)))
    assert verdict.flagged and verdict.kind == "supersedes" and verdict.holder == "new"
    downgraded = Judge(None).judge(new, old, (reading_of(new), reading_of(old)))
    assert downgraded.kind == "supersedes"  # the order is the dates', not the arguments'
