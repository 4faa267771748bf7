"""Code identifiers in text: what a query names, and whether a memory mentions it.

A query names identifiers when it has backticked spans, camelCase or PascalCase words
with an inner capital, snake_case or SCREAMING_CASE, dotted names (`os.path`,
`refunds.py`), dotfiles (`.golangci.yml`), paths (`src/app/main.py`), calls (`name(`) or
files named without an extension by convention (`Makefile`, `justfile`, `Dockerfile`).

Only the first MAX_QUERY_CHARS characters of a query are read: a search names its
identifiers there (the retriever uses the first few), and a pasted log of megabytes
read whole took minutes.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")  # positions needed: see words.code_spans
_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]+\.\w+|(?<![\w/.-])(?:[\w.-]+/){2,}[\w.-]+")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
# A dotfile standing alone (`.golangci.yml`, `.gitignore`): the leading dot is part of
# the name a `file_refs` entry holds, so `golangci.yml` alone would never match it.
# Only where a word starts (a method call `.json()` or a glob `*.json` is not one).
_DOTFILE = re.compile(r"(?<![^\s`'\"(\[])\.[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*(?![\w/(-])")
# Files that by convention have no extension: a query naming one names a file, as a
# query naming `src/app.py` does (their names are neither dotted nor code-cased).
_EXTENSIONLESS_FILE = re.compile(
    r"(?<![\w./-])(?:GNUmakefile|makefile|justfile|Dockerfile|Containerfile|Gemfile|Rakefile|"
    r"Procfile|Jenkinsfile|Vagrantfile|Brewfile|Podfile|Pipfile|Earthfile|Tiltfile|Snakefile|"
    r"Caddyfile|CODEOWNERS)(?![\w.-])",
    re.IGNORECASE,
)
_CAMEL = re.compile(r"\b[a-z][a-z0-9]*[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b")
_SNAKE = re.compile(r"\b_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")
_SCREAMING = re.compile(r"[A-Z][A-Z0-9]{2,}")
_MIXED_CASE = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")  # SSLContext, getURL
# "… — nothing to do with Vite's `server.proxy`": the rest of the clause names what the
# note is *not* about.
_DISCLAIMED = re.compile(
    r"\b(?:(?:has|had|have|is|are)\s+)?(?:nothing to do with|unrelated to|not related to|"
    r"not to be confused with|no bearing on)\b(?:[^.;:!?\n—–]|[.:](?=[\w:]))*",
    re.IGNORECASE,
)
_WORD_IN_SPAN = re.compile(r"[A-Za-z_][\w.:/-]*[\w]")
MAX_QUERY_CHARS = 2000


def query_identifiers(query: str) -> list[str]:
    """Identifiers named in `query`, in order of first appearance, without duplicates
    and without the parts of a longer one (`pdf.py` is not repeated for `src/pdf.py`)."""
    query = query[:MAX_QUERY_CHARS]
    found: list[tuple[int, str]] = []
    for match in _BACKTICKED.finditer(query):
        span = match.group(1).strip()
        words = _WORD_IN_SPAN.findall(span)
        if len(words) == 1 and words[0] == span:
            found.append((match.start(1), span))
        else:
            found.extend((match.start(1), word) for word in words if _looks_like_code(word))
    for pattern in (_PATH, _DOTFILE, _DOTTED, _CAMEL, _SNAKE, _EXTENSIONLESS_FILE):
        found.extend((m.start(), m.group()) for m in pattern.finditer(query))
    found.extend((m.start(1), m.group(1)) for m in _CALL.finditer(query))
    seen: set[str] = set()
    result: list[str] = []
    for _, identifier in sorted(found, key=lambda item: item[0]):
        identifier = identifier.rstrip(".:")
        if len(identifier) < 2 or identifier in seen:
            continue
        seen.add(identifier)
        result.append(identifier)
    # A path or dotted name counts once, not again through its parts.
    # (`i in other` first: a plain substring test rules out nearly every pair cheaply.)
    return [
        i
        for i in result
        if not any(other != i and i in other and mentions(other, i) for other in result)
    ]


def _looks_like_code(word: str) -> bool:
    return bool(
        _CAMEL.fullmatch(word) or _SNAKE.fullmatch(word) or _DOTTED.fullmatch(word) or "/" in word
    )


def mentions(text: str, identifier: str) -> bool:
    """True when `identifier` occurs in `text` as a whole token (not inside a longer name)."""
    pattern = r"(?<![\w])" + re.escape(identifier) + r"(?![\w])"
    return re.search(pattern, text) is not None


# `c.Bind*`, `ShouldBind*`, `VITE_*`, `MarkFlags*`: a family of names written with a
# trailing star (a path glob such as `examples/**` is a file reference, matched apart).
_FAMILY = re.compile(r"(?<![\w*/])([A-Za-z_][\w.:]*[\w.:])\*(?![\w*/])")
MIN_FAMILY_PREFIX = 3


def names_family_of(text: str, identifier: str) -> bool:
    """True when `text` writes a family of names (`c.Bind*`) that `identifier`
    (`c.BindJSON`) belongs to: a note about every `Bind*` method is about `BindJSON`."""
    if "*" not in text:
        return False
    names = {identifier, re.split(r"\.|::", identifier)[-1]}  # `Bind*` names `c.BindJSON`
    for prefix in _FAMILY.findall(text):
        if len(prefix.rstrip("._:")) < MIN_FAMILY_PREFIX:
            continue
        if any(name.startswith(prefix) and len(name) > len(prefix) for name in names):
            return True
    return False


# A command-line option and its value (`--settings=test_postgres`, `-k slow`): a plain
# word in it names the option, not the code.
_FLAGS = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?:=\S*)?")


def mentions_as_code(text: str, name: str) -> bool:
    """True when `text` mentions `name` as code. A name that looks like code (an inner
    capital, an underscore, a digit, a dot, SCREAMING_CASE) counts wherever it stands
    as a whole token; a plain word (`proxy`, `test`, `copy`, `Execute`) only where the
    text writes it as code: in backticks, as a call, or joined to code by `.` or `::`.
    So a file defining `proxy` does not pull in every note about a corporate proxy, nor
    one that names it to say it is unrelated ("nothing to do with `server.proxy`"), nor
    one running a command with an option of that name (`--settings=test_postgres`)."""
    text = _DISCLAIMED.sub(" ", text)
    if (
        _looks_like_code(name)
        or _MIXED_CASE.search(name)
        or any(ch.isdigit() for ch in name)
        or _SCREAMING.fullmatch(name)
    ):
        return mentions(text, name)
    if not mentions(text, name):
        return False
    if any(mentions(_FLAGS.sub(" ", span), name) for span in _BACKTICKED.findall(text)):
        return True
    word = re.escape(name)
    return (
        re.search(rf"(?<![\w]){word}(?:\(|\.[A-Za-z_]|::)|(?:[\w)\]]\.|::){word}(?![\w])", text)
        is not None
    )


def matches_file_ref(identifier: str, file_refs: list[str]) -> bool:
    """True when a path-like identifier names one of `file_refs` (exactly, by suffix, or
    by a glob the ref declares), or names a file that has no extension by convention
    (`makefile` is the ref `build/Makefile`: such names are typed in any case)."""
    if _EXTENSIONLESS_FILE.fullmatch(identifier):
        name = identifier.lower()
        return any(ref.rsplit("/", 1)[-1].lower() == name for ref in file_refs)
    if "/" not in identifier and "." not in identifier:
        return False
    for ref in file_refs:
        if ref == identifier or ref.endswith("/" + identifier):
            return True
        if any(ch in ref for ch in "*?[") and fnmatchcase(identifier, ref):
            return True
    return False
