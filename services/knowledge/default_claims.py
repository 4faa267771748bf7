"""What a note says a default is, and whether two notes disagree about one default.

The commonest way two people's notes contradict each other is a misremembered default:
"`EnablePrefixMatching` is off by default" against "cobra matches unique prefixes out
of the box"; "the body limit default is 2 MB" against "axum caps bodies at 1 MB by
default". Neither note is worded as a change, and the pair reads much like a paraphrase,
so the fitted scorers see two similar notes (the duplicate scorer often claims them).

A clause that states a default ("by default", "defaults to", "the default … is", "out
of the box", "unless you opt in") is read into a `DefaultClaim`: whether it says the
thing is on or off, the attribute values it gives (durations, sizes, counts… as the cues
read them) and the literal values it quotes (`true`, `'auto'`) or names as code right
after "defaults to" ("defaults to 'django.db.models.AutoField'", "defaults to
BigAutoField": a dotted path is its last part). Two claims about the
same subject (a subject word in common; a code name counts by its parts too, so
`testTimeout` is about tests) disagree when they give one attribute other values, quote
other literals, or, where neither gives a value, one says on and the other off. A claim
that gives a value says what the default is, not whether it is on: "defaults to 30
seconds, pass None to switch it off" is no "off" against "gives up after 30s by
default" (over eleven development sets, the only two wrong on/off clashes were of that
form; the thirteen right ones give no value). These are readings of wording, never of
particular notes.

People also give a default as a value alone: "`--retries` (default 5)", "Pool defaults:
idle connections are closed after 90s", "the default `ws_max_size`", "defaults to 1",
"changed the default `--scroll-off` from 0 to 3" (the new value). Such a clause gives
values but says nothing of on or off ("it's in the default `allow` list, nothing to
configure" is no "off"). Two claims that each name settings as code are about one
default only when they share one: `testTimeout` and `hookTimeout` both time out, but
their defaults are two facts. Over the fifteen development sets these readings found
four more labelled conflicts and no other pair (candidate pairs, `bench/real_dev.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.knowledge.cues import sentence_statements
from services.knowledge.setting_names import CODE_WORD, setting_names, share_setting
from services.storage.query_terms import query_terms, stem
from services.text.words import STOPWORDS, without_fences

_STATES_DEFAULT = re.compile(
    r"\bby default\b|\bdefaults? (?:is|are|was|to|=|of)\b|\bdefault:|\bout of the box\b|"
    r"\bunless you (?:opt|ask|pass|set|turn)|\bopt[- ]in\b|\bopt[- ]out\b|"
    r"\bdefault (?:\w+ ){0,4}(?:is|are)\b",
    re.IGNORECASE,
)
# Wording that gives a default's value without saying whether anything is on: "`--retries`
# (default 5)", "Pool defaults: …", "the default `ws_max_size`", "changed the default
# `--scroll-off` from 0 to 3". Its values count; "nothing to configure" in "it's in the
# default `allow` list, nothing to configure" is no "off".
_GIVES_DEFAULT = re.compile(
    r"\(defaults? |\bdefaults?\b[^!?;]{0,40}: |\bdefault `[^`]+`|"
    r"\bdefault\b.{0,60}?\bfrom \S+ to \S",
    re.IGNORECASE,
)
# A default claim that says the thing does not happen unless asked for.
_OFF = re.compile(
    r"\b(?:off|disabled|false|not|never|no|none|nothing|doesn'?t|don'?t|isn'?t|aren'?t|"
    r"won'?t|opt[- ]in|only if|only when)\b|"
    r"\bunless (?:you |it'?s |asked|told|enabled|explicitly)(?!\s*opt[- ]?out)",
    re.IGNORECASE,
)
# "… unless you opt out" says it happens by default, whatever negation precedes it.
_ON_ANYWAY = re.compile(r"\bunless you opt[- ]?out\b|\bopt[- ]out\b", re.IGNORECASE)
_LITERAL = re.compile(r"'([^'\s]{1,20})'|\"([^\"\s]{1,20})\"|\b(true|false|none|null)\b", re.I)
# Units after a number that the cues read as a duration or a size of their own.
_UNITS = (
    r"ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|weeks?|months?|[kmg]i?b|bytes?"
)
# The value named right after "defaults to" / "the default is": quoted, or a code name
# ("defaults to 'django.db.models.AutoField'", "defaults to BigAutoField").
_NAMED_DEFAULT = re.compile(
    r"(?:\bdefaults? (?:is|are|was|to|=|of)|\bdefaults?:|\(defaults?|"
    r"\bdefault (?:`[^`\n]{1,60}`|\w+) (?:is|are|was|=)|\bdefault\b.{0,60}?\bfrom \S+ to)\s+"
    r"(?:`(?P<code>[^`\n]{1,60})`|'(?P<single>[^'\s]{1,60})'|\"(?P<double>[^\"\s]{1,60})\"|"
    r"(?P<number>\d+(?:\.\d+)?)(?![\w%]|\.\d|\s*(?:%|" + _UNITS + r")\b)|"
    r"(?P<word>[A-Za-z_][\w.]*\w))",
    re.IGNORECASE,
)
# A value stated right before "by default": "`--max-requests` is 1000 by default", "is
# `auto` out of the box" (a number with a unit is a duration or a size the cues read).
_VALUE_BY_DEFAULT = re.compile(
    r"\b(?:is|are|=)\s+(`[^`\n]{1,60}`|'[^'\s]{1,60}'|\"[^\"\s]{1,60}\"|\d+(?:\.\d+)?)\s+"
    r"(?:by default|out of the box)\b",
    re.IGNORECASE,
)
# Where one claim ends: sentence ends, dashes, brackets, and a contrast. A dash that says
# what was just stated is the default ("… 1 MiB — that's the default `ws_max_size`")
# does not end it.
_CLAUSE_END = re.compile(
    r"(?<=[.!?;:])\s+|\s+[-—–]+\s+(?!that'?s\b|which\b)|(\s*\()|\)\s*|\s+but\s+",
    re.IGNORECASE,
)
# A clause that introduces defaults ("Pool defaults:", "defaults in config.py:") is
# read with the clause it introduces.
_INTRODUCES = re.compile(r"\bdefaults?\b(?:[^.!?;]|\.(?=\w)){0,40}:$", re.IGNORECASE)
# What a bracketed default ("`--retries` (default 5)") is the default of: the code name
# or the word right before the bracket.
_BRACKETED_OF = re.compile(r"(`[^`]+`|[\w.-]+)\W*$")

_WORD = re.compile(r"[a-z][a-z0-9_]{3,}")
_FRAME = frozenset({"default", "defaults", "box", "opt", "unless", "true", "false", "none", "null"})
_FRAME_STEMS = frozenset(stem(w) for w in _FRAME | STOPWORDS)


@dataclass(frozen=True)
class DefaultClaim:
    """One clause of a note that states a default."""

    on: bool  # the thing happens unless turned off
    values: frozenset[tuple[str, str]]  # (attribute, value) as the cues read them
    literals: frozenset[str]  # quoted literal values, lower case
    subject: frozenset[str]  # the clause's content words, stemmed as the keyword search stems
    names: frozenset[str] = frozenset()  # the settings it names as code, lower case
    says_state: bool = True  # worded as on or off, not only as a value (`_GIVES_DEFAULT`)


def read_defaults(title: str, content: str) -> tuple[DefaultClaim, ...]:
    """The default claims of a note (its title and content, fenced code left out)."""
    text = " ".join(without_fences(f"{title}. {content}").split())
    claims = []
    for clause in _clauses(text):
        says_state = bool(_STATES_DEFAULT.search(clause))
        if not says_state and not _GIVES_DEFAULT.search(clause):
            continue
        lower = clause.lower()
        literals = {next(g for g in m.groups() if g).lower() for m in _LITERAL.finditer(clause)}
        literals |= _named_values(clause)
        claims.append(
            DefaultClaim(
                on=bool(_ON_ANYWAY.search(lower)) or not _OFF.search(lower),
                values=frozenset(
                    (s.attribute, s.value) for s in sentence_statements(lower) if not s.old
                ),
                literals=frozenset(literals),
                subject=_subject(clause),
                names=setting_names(clause, literals),
                says_state=says_state,
            )
        )
    return tuple(claims)


def _clauses(text: str) -> list[str]:
    """The clauses of a note's text. A clause introducing defaults is joined to the
    next, and a bracketed default is read as a claim about what precedes the bracket
    ("`validate_by_alias` (default True) and `validate_by_name` (default False)" is two
    claims, one a setting)."""
    clauses: list[str] = []
    pending = previous = ""
    bracket = False
    for piece in _CLAUSE_END.split(text):
        if piece is not None and piece.strip() == "(":
            bracket = True
            continue
        if not piece:
            continue
        clause = piece
        if bracket and re.match(r"defaults?\b", piece, re.IGNORECASE):
            of = _BRACKETED_OF.search(previous)
            clause = f"{of.group(1) if of else ''} ({piece}"
        bracket, previous = False, piece
        clause = f"{pending} {clause}".strip()
        pending = clause if _INTRODUCES.search(clause) else ""
        if not pending:
            clauses.append(clause)
    return clauses + ([pending] if pending else [])


def _named_values(clause: str) -> set[str]:
    """The values a clause names as the default, as their last dotted part in lower case
    (`django.db.models.AutoField` and `AutoField` are one value)."""
    found = set()
    for match in _NAMED_DEFAULT.finditer(clause):
        word = match.group("word")
        if word is not None and not CODE_WORD.search(word):
            continue  # "defaults to the first one": words, not a value
        value = next(g for g in match.group("code", "single", "double", "number", "word") if g)
        if re.fullmatch(r"[\w.]+", value) and not re.fullmatch(r"[\d.]+", value):
            value = value.rstrip(".").rsplit(".", 1)[-1]
        found.add(value.lower())
    found.update(
        match.group(1).strip("`'\"").lower() for match in _VALUE_BY_DEFAULT.finditer(clause)
    )
    return found


def _subject(clause: str) -> frozenset[str]:
    """The clause's content words, stemmed, with a code name's parts (`testTimeout` is
    about tests and timeouts as "each test gets 10 seconds" is)."""
    words = {stem(w) for w in _WORD.findall(clause.lower().replace("`", " "))}
    parts = {t for t in query_terms(clause) if len(t) >= 3}  # `compare_type`: "typ"
    return frozenset(t for t in words | parts if t not in _FRAME_STEMS)


def defaults_clash(first: tuple[DefaultClaim, ...], second: tuple[DefaultClaim, ...]) -> str | None:
    """How two notes' default claims about one subject disagree ("size limit: 2 vs 1",
    "on vs off", "'auto' vs true"), or None when they do not."""
    for a in first:
        for b in second:
            if not a.subject & b.subject:
                continue
            if a.names and b.names and not share_setting(a.names, b.names):
                continue  # two settings' defaults (`testTimeout` / `hookTimeout`)
            for attribute in sorted({n for n, _ in a.values} & {n for n, _ in b.values}):
                ours = {v for n, v in a.values if n == attribute}
                theirs = {v for n, v in b.values if n == attribute}
                if not ours & theirs:
                    return f"default {attribute}: {_listed(ours)} vs {_listed(theirs)}"
            if a.literals and b.literals and not a.literals & b.literals:
                return f"default: {_listed(a.literals)} vs {_listed(b.literals)}"
            if a.on != b.on and a.says_state and b.says_state and not a.values and not b.values:
                return f"default: {_state(a.on)} vs {_state(b.on)}"
    return None


def _listed(values: set[str] | frozenset[str]) -> str:
    return ", ".join(sorted(values))


def _state(on: bool) -> str:
    return "on" if on else "off"
