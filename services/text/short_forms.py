"""The short and long forms of words developers abbreviate: a note says "deps", "env",
"config", "repo", "binary"; the question asks about "dependencies", "the environment",
"configuration", "the repository", "the executable" (or the other way round). Neither the
keyword index nor a small embedding model joins the two forms, so the keyword search
adds the other form of each such word of a query as an extra word (a memory that has
neither loses nothing).

The table holds the common abbreviations of software writing and one synonym pair
(executable / binary); it is a reading of how developers write, not of particular
notes. Measured on real-dev's 120 questions (docs/benchmarks.md, search stages).
"""

from __future__ import annotations

import re

MAX_FORMS = 8
_PAIRS = (
    ("dependency", "dep"),
    ("dependencies", "deps"),
    ("environment", "env"),
    ("environments", "envs"),
    ("configuration", "config"),
    ("repository", "repo"),
    ("repositories", "repos"),
    ("authentication", "auth"),
    ("authorization", "authz"),
    ("database", "db"),
    ("directory", "dir"),
    ("directories", "dirs"),
    ("documentation", "docs"),
    ("argument", "arg"),
    ("arguments", "args"),
    ("parameter", "param"),
    ("parameters", "params"),
    ("package", "pkg"),
    ("library", "lib"),
    ("application", "app"),
    ("development", "dev"),
    ("production", "prod"),
    ("variable", "var"),
    ("variables", "vars"),
    ("message", "msg"),
    ("specification", "spec"),
    ("temporary", "tmp"),
    ("maximum", "max"),
    ("minimum", "min"),
    ("information", "info"),
    ("executable", "binary"),
    ("executables", "binaries"),
)
_OTHER: dict[str, tuple[str, ...]] = {}
for _long, _short in _PAIRS:
    _OTHER[_long] = (*_OTHER.get(_long, ()), _short)
    _OTHER[_short] = (*_OTHER.get(_short, ()), _long)
_WORD = re.compile(r"[a-z]+")


def other_forms(text: str) -> list[str]:
    """The other form of each abbreviated or spelled-out word of `text` that it does not
    hold already, in the order met, at most MAX_FORMS."""
    words = _WORD.findall(text[:300].lower())
    present = set(words)
    found: dict[str, None] = {}
    for word in words:
        for other in _OTHER.get(word, ()):
            if other not in present:
                found.setdefault(other, None)
    return list(found)[:MAX_FORMS]
