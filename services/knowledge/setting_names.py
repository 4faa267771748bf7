"""The settings a sentence names, and which settings a note's values belong to.

"--graceful-timeout defaults to 10 seconds" and "--timeout defaults to 30 seconds" both
state a timeout, but of two settings: compared as one attribute they read as a clash
("timeout: 30 s vs 10 s") that no one wrote. A setting is named as code: a command-line
flag (`--max-requests`, written with backticks or not), a code span's leading name
(`verify=True` names `verify`, `ssl.create_default_context(...)` the dotted name, which is
one setting with `create_default_context` but not `server.port` with `preview.port`:
`same_setting`) or a word written as code (`worker_prefetch_multiplier`, `testTimeout`,
`pool.max_size`). A value is bound to the settings its sentence names,
or, in a sentence that names none, to those of the note's title; a value stated in a
sentence naming nothing is bound to nothing, and then compares with any.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_CODE_SPAN = re.compile(r"`([^`\n]{1,80})`")
_LEAD_NAME = re.compile(r"-{0,2}[A-Za-z_][\w.-]*")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*", re.IGNORECASE)
_BARE_NAME = re.compile(r"[A-Za-z_][\w.]*\w")
CODE_WORD = re.compile(r"[a-z0-9]_|_[a-z0-9]|[a-z][A-Z]|[A-Za-z]\.[A-Za-z]")  # not "the"

Bindings = tuple[tuple[str, frozenset[str]], ...]  # attribute → the settings of its values


def setting_names(text: str, values: Iterable[str] = ()) -> frozenset[str]:
    """The settings `text` names as code, lower case; names that are among `values` (the
    value a default is said to be: "defaults to `node_modules/.cache`") are none, and so
    are abbreviations ("i.e.")."""
    given = set(values)

    def a_value(name: str) -> bool:
        return name in given or name.rstrip(".").rsplit(".", 1)[-1] in given

    found = set()
    for span in _CODE_SPAN.findall(text):
        lead = _LEAD_NAME.match(span.strip())
        if lead and not a_value(span.strip().lower()):
            found.add(lead.group(0).lower())
    plain = _CODE_SPAN.sub(" ", text)
    found.update(flag.lower() for flag in _FLAG.findall(plain))
    found.update(w.lower() for w in _BARE_NAME.findall(plain) if len(w) > 3 and CODE_WORD.search(w))
    return frozenset(name for name in found if not a_value(name))


def same_setting(first: str, second: str) -> bool:
    """One setting, written in full or by its last dotted parts
    (`ssl.create_default_context` / `create_default_context`); `server.port` and
    `preview.port` are two."""
    return first == second or first.endswith(f".{second}") or second.endswith(f".{first}")


def share_setting(first: Iterable[str], second: Iterable[str]) -> bool:
    """Whether the two sets of names name one setting (`same_setting`)."""
    theirs = list(second)
    return any(same_setting(a, b) for a in first for b in theirs)


def bind(stated: Iterable[tuple[str, frozenset[str]]]) -> Bindings:
    """Each attribute with the settings named where its values are stated, from
    (attribute, settings of one statement's sentence) pairs; an attribute stated once
    where no setting is named is bound to nothing (empty)."""
    bound: dict[str, set[str]] = {}
    unbound: set[str] = set()
    for attribute, names in stated:
        bound.setdefault(attribute, set()).update(names)
        if not names:
            unbound.add(attribute)
    return tuple(
        (attribute, frozenset() if attribute in unbound else frozenset(names))
        for attribute, names in sorted(bound.items())
    )


def other_settings(first: Bindings, second: Bindings, attribute: str) -> bool:
    """Both notes bind their values of `attribute` to settings, and to other ones."""
    ours, theirs = dict(first).get(attribute), dict(second).get(attribute)
    return bool(ours and theirs and not share_setting(ours, theirs))


# Whose value a sentence gives: a library's default ("defaults to 10 s", "30 s out of the
# box") or the team's own setting ("bumped --graceful-timeout in our gunicorn.conf.py to
# 60 s"). Both hold at once: a configured value does not replace the default.
_DEFAULT_WORDING = re.compile(r"\bby default\b|\bdefaults?\b|\bout of the box\b", re.I)
_OWN_WORDING = re.compile(r"\b(?:we|our|us)\b", re.I)

Sources = tuple[tuple[str, str], ...]  # attribute → "default", "own" or "" (mixed, unsaid)


def whose(sentence: str) -> str:
    """ "default", "own" or "" for the values of one sentence."""
    default, own = bool(_DEFAULT_WORDING.search(sentence)), bool(_OWN_WORDING.search(sentence))
    return "default" if default and not own else "own" if own and not default else ""


def sources(stated: Iterable[tuple[str, str]]) -> Sources:
    """Each attribute with whose values the note gives, from (attribute, `whose`) pairs."""
    found: dict[str, set[str]] = {}
    for attribute, source in stated:
        found.setdefault(attribute, set()).add(source)
    return tuple((a, s.pop() if len(s) == 1 else "") for a, s in sorted(found.items()))


def default_and_own(first: Sources, second: Sources, attribute: str) -> bool:
    """One note gives the default of `attribute`, the other the team's own value."""
    return {dict(first).get(attribute), dict(second).get(attribute)} == {"default", "own"}
