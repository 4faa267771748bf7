"""The dependency floors a sentence states, and two notes giving one package different
floors read as a conflict (a new user's "Twisted>=18.9.0 is the minimum" was never
linked to "Twisted floor bumped to 21.7.0")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.knowledge.cues import compare, read
from services.text.dependency_floors import dependency_floors


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Twisted>=18.9.0 is the minimum in install_requires.", [("twisted", "18.9.0")]),
        ("Twisted floor bumped to 21.7.0 for the reactor fixes.", [("twisted", "21.7.0")]),
        ("SQLAlchemy floor moved from 1.3.0 to 1.4.23.", [("sqlalchemy", "1.4.23")]),
        ("The minimum SQLAlchemy version is 1.4.23 now.", [("sqlalchemy", "1.4.23")]),
        ("Our CI images need tmux >= 3.3 and zellij>=0.44.", [("tmux", "3.3"), ("zellij", "0.44")]),
        ("kombu>=5.6 is required now", [("kombu", "5.6")]),
        # the verb before the package: "raised the X floor to …"
        (
            "Raised the MarkupSafe floor to >=2.1 -- nothing older is tested.",
            [("markupsafe", "2.1")],
        ),
        ("We moved the attrs floor from 21.3 to 22.2.", [("attrs", "22.2")]),
    ],
)
def test_a_floor_is_read(sentence: str, expected: list[tuple[str, str]]) -> None:
    assert [(f.package, f.version) for f in dependency_floors(sentence)] == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "requires-python>=3.9 in pyproject.toml",  # a runtime: runtime_floors reads it
        "python_requires bumped to >=3.9",
        "Keep urllib3>=1.26,<3 for the old proxies.",  # a range with a ceiling is a pin
        "bump requests to >=2.31.0 in every service",  # "to" is no package
        "The 2.31.0 release fixed the floor of the office.",
        "httpx is pinned >=0.27 because earlier versions lack the retries.",  # a verb
        # a condition of one feature (a later "on tmux >= 3.7 it uses a floating pane"
        # is another feature, not a raised floor)
        "0.71.0 renamed the option. Works on tmux >= 3.3, and on Zellij >= 0.44.",
    ],
)
def test_no_floor_is_read(sentence: str) -> None:
    assert dependency_floors(sentence) == []


def test_two_floors_of_one_package_conflict_and_two_packages_do_not() -> None:
    old = read("old", "", "Twisted>=18.9.0 is the minimum in install_requires.")
    new = read(
        "new",
        "",
        "Twisted floor bumped to 21.7.0 (needed for the reactor fixes in scrapy/utils/defer.py).",
    )
    (conflict,) = compare(old, new).conflicts
    assert conflict == {"attribute": "version twisted floor", "a": "18.9.0", "b": "21.7.0"}
    other = read("other", "", "attrs>=21.7.0 is the minimum.")
    assert compare(old, other).conflicts == []


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Twisted",
                ">=",
                "18.9",
                "floor",
                "bumped",
                "to",
                "minimum",
                "is",
                "python",
                ",<3",
                "version",
                "from",
                "1.2",
                "the",
                "kombu>=5.6",
                " ",
                ".",
                "v2",
            ]
        ),
        max_size=12,
    )
)
def test_a_floor_is_a_package_and_a_version_the_sentence_writes(words: list[str]) -> None:
    sentence = " ".join(words)
    for floor in dependency_floors(sentence):
        written = sentence[floor.start : floor.end].lower()
        assert floor.package in written and floor.version in written
        assert "python" not in floor.package and floor.version[0].isdigit()
