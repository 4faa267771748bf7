"""Wording that says something changed, and questions that ask what holds now.

A note worded as a change or a correction ("bumped to", "moved off", "no longer", "is
gone", "now") is how people record that something replaced what was true before; the
cues and the pair features read it when they judge two notes, and the search prefers
such notes for a question asking what holds now ("which node versions can run vite
now", "is the dev environment still managed with pdm?"), since it is where the current
answer is written. "Still" asks about the present only in a question: "python still
rejects the internal site" reports a symptom.
"""

from __future__ import annotations

import re

from services.text.words import QUESTION_WORDS

# A participle that names a kind of thing rather than a change: after a determiner ("the
# merged router", "a deleted one") or starting a sentence about things that still
# happen ("Dropped connections were fixed by …").
_DETERMINERS = ("the", "a", "an", "any", "some", "all", "these", "those", "its", "their",
                "our", "your", "every", "each")  # fmt: skip
_NOT_AFTER_DETERMINER = "".join(rf"(?<!\b{d} )" for d in _DETERMINERS)
_NOT_NAMING_THINGS = (
    r"(?!\s+[a-z-]+s\s+(?:were|are|was|is|kept|keep|keeps|still|happen\w*|show\w*)\b)"
)


def _describing(participle: str) -> str:
    """`participle` as a change word, unless it describes a noun."""
    return rf"{_NOT_AFTER_DETERMINER}\b{participle}\b{_NOT_NAMING_THINGS}"


# Broader than the cues' CHANGE_WORDING, whose every hit moves a cue score: this one only
# says a note is worded as a change or a correction.
SPOKEN_CHANGE = re.compile(
    r"\bno longer\b|\bnot any ?more\b|\banymore\b|\bis gone\b|\bare gone\b|\bwent away\b|"
    rf"\bgone in\b|{_describing('drop(?:ped|s)')}"
    r"(?!\s+(?:after|on|when|if|once|during|while|silently)\b)|"
    rf"\bremoved\b|\bremoves\b|{_describing('deleted')}|\bretired\b|"
    rf"\bbumped\b|\bbump(?:s|ing)? (?:to|the)\b|{_describing('raised')}|{_describing('lowered')}|"
    r"\bmoved (?:off|to|from|into)\b|"
    r"\bswitched\b|\bswitch(?:ing)? to\b|\bmigrated\b|\breplac(?:ed|es|ing)\b|\breverted\b|"
    r"\brevert(?:s|ing)?\b|\brolled back\b|\bundone\b|\bturns out\b|\bturned out\b|"
    r"\bactually\b|\bsoftens?\b|\bnarrow(?:ed|s)\b|\bwiden(?:ed|s)\b|\bfolded into\b|"
    r"\bfolded in\b|\bused to\b|\bpreviously\b|\bformerly\b|\bnow\b|"
    r"\bas of\b|\bstarting (?:with|from|in)\b|\bfrom now on\b|\bgoing forward\b|"
    r"\bdeprecat(?:ed|es|ing)\b|\bno more\b|\bnot needed\b|\bcan go\b|\bnew default\b|"
    rf"{_describing('changed')}|\bupgraded\b|\bdowngraded\b|\bupdated to\b|\bsuperseded\b|"
    rf"\bbecame\b|\bbecomes\b|\bis (?:now )?exported\b|{_describing('merged')}|\blanded\b|"
    r"\brestor(?:ed|es)\b|\bback(?:s|ed)? out\b|\b(?:brought|brings) back\b|"
    r"\breintroduc(?:ed|es)\b|\brenam(?:ed|es)\b|\bswap(?:ped|s)\b|"
    r"\bg(?:ave|ives|iving) up on\b|\bditched\b|\bgot rid of\b|"
    r"\bwalk(?:ed|s|ing)? back\b|\b(?:threw|thrown|throwing) out\b|"
    rf"{_describing('scrapped')}|{_describing('abandoned')}|{_describing('reversed')}|"
    rf"{_describing('flipped')}|\bchanged (?:our|my|their) minds?\b|\boverturned\b|"
    r"\bphas(?:ed|ing) out\b|\bin favou?r of\b|\bcorrection\b|\b(?:was|were) wrong\b|"
    r"\bobsolete\b|\boutdated\b",
    re.IGNORECASE,
)

# A note that names the release from which what it says holds ("since 5.109 `css` is
# true", "3.18.0 came out with #9837: errors are a dict").
_FROM_RELEASE = re.compile(
    r"\bsince (v?\d+(?:\.\d+)+)\b|"
    r"\b(v?\d+\.\d+(?:\.\d+)?)\s+(?:came out|is out|went out|shipped|was released)\b(?!\s+of\b)",
    re.IGNORECASE,
)

_NOW = re.compile(
    r"\bnow\b|\bcurrently\b|\bnowadays\b|\bthese days\b|\bat the moment\b|"
    r"\bany ?more\b|\blatest\b",
    re.IGNORECASE,
)
_STILL = re.compile(r"\bstill\b", re.IGNORECASE)
# At the start or after a comma: "…, is that still the way".
_QUESTION_START = re.compile(rf"(?:^|[,;:(]|\s[—–-])\s*(?:{QUESTION_WORDS})\b", re.IGNORECASE)


def says_change(text: str) -> bool:
    """Whether `text` is worded as a change or a correction."""
    return SPOKEN_CHANGE.search(text) is not None


def release_value(raw: str) -> str:
    """A release as written, compared: "1.9.0" and "1.9" are one release; "v2" is "2"."""
    parts = raw.lstrip("vV").split(".")
    while len(parts) > 2 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def from_releases(text: str) -> frozenset[str]:
    """The releases `text` says what it states holds from (`release_value`)."""
    return frozenset(
        release_value(match.group(1) or match.group(2)) for match in _FROM_RELEASE.finditer(text)
    )


def asks_what_holds_now(query: str) -> bool:
    """Whether a search asks what is true now: it says "now", "currently", "these days",
    "anymore", "latest", or asks a question with "still" in it."""
    if _NOW.search(query):
        return True
    if not _STILL.search(query):
        return False
    return query.rstrip().endswith("?") or _QUESTION_START.search(query) is not None
