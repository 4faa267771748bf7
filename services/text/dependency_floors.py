"""The lowest version of a dependency a sentence says a project requires: a requirement
as written in a manifest ("Twisted>=18.9.0", "kombu >= 5.6"), or named in words ("the
Twisted floor is 21.7.0", "Twisted floor bumped to 21.7.0", "minimum SQLAlchemy version is
1.4.23"). A project requires one lowest version of a dependency at a time, so two notes
giving it different floors cannot both hold now.

Language runtimes are left to `knowledge.runtime_floors` (Python, Node, Rust and Go
floors have their own fields and wording); a range with an upper bound
("urllib3>=1.26,<3") is a pin for compatibility more than a floor, and a version named
as a condition ("works on tmux >= 3.3") is what one feature needs: both are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.text.words import STOPWORDS

_PACKAGE = r"(?P<package>[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9])"
_VERSION = r"v?(?P<version>\d+(?:\.\d+)*)(?![\w.]*\d)"
_SPECIFIER = re.compile(rf"(?<![\w./-]){_PACKAGE}\s*>=\s*{_VERSION}(?!\s*,\s*<)")
_IN_WORDS = re.compile(
    rf"\b{_PACKAGE}\s+(?:floor|minimum)\s+"
    r"(?:is\s+(?:now\s+)?|(?:now\s+)?(?:bumped|raised|moved|set|goes|went)\s+"
    r"(?:up\s+)?(?:from\s+v?\d+(?:\.\d+)*\s+)?to\s+"
    r"|(?:from\s+v?\d+(?:\.\d+)*\s+)?to\s+|now\s+|=\s*|:\s*)?(?:>=\s*)?"
    rf"{_VERSION}",
    re.IGNORECASE,
)
_MINIMUM_OF = re.compile(
    rf"\bminimum\s+{_PACKAGE}\s+(?:version\s+)?(?:is\s+(?:now\s+)?|=\s*|:\s*)?{_VERSION}",
    re.IGNORECASE,
)
# A version named as a condition ("works on tmux >= 3.3", "with Zellij >= 0.44", "if
# you are on 2.x") says what one feature needs, not the floor the project requires.
_CONDITION = re.compile(r"\b(?:on|with|for|if|when|under|in|using)\s+$", re.IGNORECASE)
# Runtimes (`runtime_floors`), and words that precede "floor" without naming a package.
_NOT_PACKAGES = frozenset(
    {
        "python", "cpython", "py", "node", "nodejs", "node.js", "rust", "rustc", "msrv", "go",
        "golang", "requires-python", "python_requires", "engines", "the", "our", "a", "an",
        "version", "versions", "new", "old", "hard", "soft", "support", "supported", "its",
        "their", "this", "that", "runtime", "interpreter", "toolchain", "is", "was", "now",
    }
)  # fmt: skip


@dataclass(frozen=True)
class DependencyFloor:
    start: int
    end: int
    package: str  # lower case, as written otherwise ("twisted", "pydantic-core")
    version: str


def dependency_floors(sentence: str) -> list[DependencyFloor]:
    """The dependency floors `sentence` states, in the order written."""
    found: dict[int, DependencyFloor] = {}
    for pattern in (_SPECIFIER, _IN_WORDS, _MINIMUM_OF):
        for match in pattern.finditer(sentence):
            package = match.group("package").lower()
            if package in _NOT_PACKAGES or package in STOPWORDS or "python" in package:
                continue
            spaced = pattern is _SPECIFIER and not match.group(0).startswith(match["package"] + ">")
            if spaced and package.endswith(("ed", "ing")):
                continue  # "httpx is pinned >=0.27": a verb, not the package
            if _CONDITION.search(sentence[: match.start()]):
                continue  # "works on tmux >= 3.3": what a feature needs, not the project
            found.setdefault(
                match.start(),
                DependencyFloor(match.start(), match.end(), package, match.group("version")),
            )
    return [found[at] for at in sorted(found)]
