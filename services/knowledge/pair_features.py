"""Features of a pair of memories about one project that tell whether the later one
replaces or contradicts the earlier: how alike they are (vectors, titles, code names,
rare words), how the later one is worded (change words, hedges), what they disagree on
(values of one attribute, negation, opposite words, a value of the earlier named as old
in the later) and how far apart they were written.

Every feature is a general reading of wording and structure, never of particular items;
the weights that combine them are fitted with cross-validation (bench/fit_conflicts.py)
and live in `services.knowledge.conflict_weights`.

Like the cues, a pair text is the start of a memory (`cues.READ_CHARS`, `READ_SENTENCES`):
the sentence clashes compare every sentence of one with every sentence of the other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from services.knowledge.claim_polarity import Polarity, clashing_terms, read_polarity
from services.knowledge.cue_vocabulary import environments
from services.knowledge.cues import READ_CHARS, READ_SENTENCES, Cues
from services.knowledge.default_claims import DefaultClaim, defaults_clash, read_defaults
from services.knowledge.floor_subjects import floor_subjects
from services.knowledge.owner_swap import owners_differ, word_sequence
from services.knowledge.quantities import (
    Quantity,
    agreeing_versions,
    quantity_clash,
    read_quantities,
)
from services.knowledge.setting_names import setting_names, share_setting
from services.memory import Memory, parse_time
from services.text.change_wording import SPOKEN_CHANGE
from services.text.redact import without_placeholders
from services.text.words import STOPWORDS, UNSURE_PHRASES, code_spans, without_code, without_fences
from services.text.words import sentences as split_sentences

# Wording that says something changed, in the many ways people write it.
CHANGE = SPOKEN_CHANGE
# Wording of someone unsure or passing on what they heard.
HEDGE = re.compile(
    UNSURE_PHRASES + r"|\bfyi\b|\bseems?\b|\bheads-up\b|\bheads up\b|\breview:|\bby default\b",
    re.IGNORECASE,
)
NEGATION = re.compile(
    r"\bnot\b|\bnever\b|\bno\b|\bwithout\b|\bdon'?t\b|\bdoesn'?t\b|\bisn'?t\b|\baren'?t\b|"
    r"\bwon'?t\b|\bcan'?t\b|\bcannot\b|\bnothing\b|\bnone\b|\bonly\b|\bskips?\b",
    re.IGNORECASE,
)
# Words whose opposites, said of one subject, cannot both hold.
OPPOSITES = (
    ("true", "false"),
    ("on", "off"),
    ("enabled", "disabled"),
    ("enable", "disable"),
    ("opt-in", "opt-out"),
    ("opt in", "opt out"),
    ("required", "optional"),
    ("always", "never"),
    ("raises", "warns"),
    ("raise", "warn"),
    ("error", "warning"),
    ("strict", "lax"),
    ("sync", "async"),
    ("allowed", "forbidden"),
    ("allow", "forbid"),
    ("include", "exclude"),
    ("public", "private"),
    ("exported", "not exported"),
    ("before", "after"),
    ("validates", "skips"),
    ("validated", "not validated"),
    ("fine", "not fine"),
)
_OPPOSITE_PATTERNS = tuple(
    (
        re.compile(rf"(?<![\w-]){re.escape(x)}(?![\w-])", re.I),
        re.compile(rf"(?<![\w-]){re.escape(y)}(?![\w-])", re.I),
    )
    for x, y in OPPOSITES
)
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?)(?![\w.]*\w)")
# A number, not a part of an IP address ("0.0.0.0" is no "0.0").
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(%|ms|s|mb|kb|gb|x)?(?![\w]|\.\d+\.\d)", re.I)
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_IDENTIFIER = re.compile(
    r"\b[A-Za-z_][\w]*(?:[._][\w]+)+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"
)

FEATURES = (
    "cosine",
    "title_overlap",
    "name_overlap",
    "word_overlap",
    "same_type",
    "change_later",
    "change_earlier",
    "hedge_later",
    "hedge_earlier",
    "negation_differs",
    "opposites",
    "value_conflict",
    "cue_replaces",
    "old_value_named",
    "versions_differ",
    "numbers_differ",
    "gap_days",
    "same_day",
    "near_copy",
    "novelty",
    "cosine_x_change",
    "cosine_x_versions",
    "cosine_x_negation",
    "cosine_x_opposites",
    "title_x_versions",
    "cosine_x_old_value",
    "sentence_value_clash",
    "sentence_polarity_clash",
    "defaults_clash",
    "polarity_clash",
    "quantity_clash",
)


@dataclass(frozen=True)
class PairText:
    """What the features need of one memory, read once."""

    memory: Memory
    plain: str  # title and content without fenced code, lower case
    title_words: frozenset[str]
    words: frozenset[str]
    frame: frozenset[str]  # content words outside any code: what is said of the code
    names: frozenset[str]
    versions: frozenset[str]
    numbers: frozenset[str]
    # words, values, negated, settings named (`setting_names`) of each sentence
    sentences: tuple[tuple[frozenset[str], frozenset[str], bool, frozenset[str]], ...]
    change: int
    hedge: int
    negations: int
    at: float  # seconds since the epoch
    defaults: tuple[DefaultClaim, ...]  # what it says a default is
    polarity: Polarity  # which terms it says plainly, which only negated
    quantities: tuple[Quantity, ...]  # the numbers it states, with what they count
    environments: frozenset[str] = frozenset()  # "staging", "production" (`environments`)
    sequence: tuple[str, ...] = ()  # a short note's words in order (`owner_swap`)
    floors: frozenset[str] = frozenset()  # what it states a floor of (`floor_subjects`)


def release(version: str) -> str:
    """A version without trailing zero parts beyond major.minor: "1.9.0" and "1.9" name
    one release."""
    parts = version.split(".")
    while len(parts) > 2 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def read_pair_text(memory: Memory) -> PairText:
    title = without_placeholders(memory.title)
    content = without_placeholders(memory.content[:READ_CHARS])
    text = f"{title}. {content}"
    plain = " ".join(without_fences(text).split()).lower()
    names = {s.strip().lower() for s in code_spans(text, 2, 80)}
    names |= {m.group(0).lower() for m in _IDENTIFIER.finditer(without_fences(text))}
    return PairText(
        memory=memory,
        plain=plain,
        title_words=frozenset(_content_words(title.lower())),
        words=frozenset(_content_words(plain)),
        frame=frozenset(_content_words(without_code(content).lower())),
        names=frozenset(names),
        versions=frozenset(map(release, _VERSION.findall(plain))),
        numbers=frozenset(n for n, _ in _NUMBER.findall(plain)),
        sentences=tuple(
            _sentence_reading(piece)
            for piece in split_sentences(plain, clauses=True)[:READ_SENTENCES]
        ),
        change=len(CHANGE.findall(plain)),
        hedge=len(HEDGE.findall(plain)),
        negations=len(NEGATION.findall(plain)),
        at=parse_time(memory.valid_from or memory.created_at).timestamp(),
        defaults=read_defaults(title, content),
        polarity=read_polarity(title, content),
        quantities=read_quantities(title, content),
        environments=environments(plain),
        sequence=word_sequence(content),
        floors=floor_subjects(title, content),
    )


def _sentence_reading(
    sentence: str,
) -> tuple[frozenset[str], frozenset[str], bool, frozenset[str]]:
    values = {release(v) for v in _VERSION.findall(sentence)}
    values |= {n + (unit or "").lower() for n, unit in _NUMBER.findall(sentence)}
    return (
        frozenset(_content_words(sentence)),
        frozenset(values),
        bool(NEGATION.search(sentence)),
        setting_names(sentence),
    )


def _sentence_clashes(a: PairText, b: PairText) -> tuple[float, float]:
    """Sentences of the two that say much the same words (Jaccard ≥ 0.3, 2+ shared)
    but with other values, or with the opposite polarity (one negated). Two sentences
    naming other settings ("raise --limit-request-line (max 8190)" / "--limit-request-
    fields defaults to 100 (max 32768)") say things of two settings."""
    values = polarity = 0
    for words_a, values_a, negated_a, named_a in a.sentences:
        for words_b, values_b, negated_b, named_b in b.sentences:
            if named_a and named_b and not share_setting(named_a, named_b):
                continue
            shared = words_a & words_b
            if len(shared) < 2 or len(shared) / len(words_a | words_b) < 0.3:
                continue
            if values_a and values_b and not (values_a & values_b):
                values += 1
            if negated_a != negated_b:
                polarity += 1
    return float(min(values, 3)), float(min(polarity, 3))


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w not in STOPWORDS]


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared over all; 0 when both are empty."""
    return len(a & b) / len(a | b) if (a or b) else 0.0


def _weighted_overlap(a: frozenset[str], b: frozenset[str], idf: Mapping[str, float]) -> float:
    """Shared words weighed by rarity, as a share of the smaller side."""
    if not a or not b:
        return 0.0

    def weight(words: frozenset[str]) -> float:
        return sum(idf.get(w, 1.0) for w in words)

    return weight(a & b) / min(weight(a), weight(b))


def _opposites(a: str, b: str) -> float:
    found = 0
    for first, second in _OPPOSITE_PATTERNS:
        if (first.search(a) and second.search(b) and not second.search(a)) or (
            second.search(a) and first.search(b) and not first.search(b)
        ):
            found += 1
    return float(min(found, 3))


def _old_value_named(earlier: PairText, later: PairText) -> float:
    """The later text names a value of the earlier one next to change wording
    ("3.8 is dropped", "moved off pdm", "`app=` is gone")."""
    values = (earlier.versions | earlier.names) - later.versions - later.names
    values |= earlier.versions & later.versions
    hits = 0
    for value in values:
        if len(value) < 2:
            continue
        at = later.plain.find(value)
        while at >= 0:
            window = later.plain[max(0, at - 40) : at + len(value) + 40]
            if CHANGE.search(window):
                hits += 1
                break
            at = later.plain.find(value, at + 1)
    return float(min(hits, 3))


def features(
    a: PairText,
    b: PairText,
    cosine: float,
    cues: Cues | None = None,
    idf: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The features of a pair (`a` and `b` in any order; the later one is found by
    date, and for two written in the same second, `b` is taken as the later). `cues`:
    the deterministic cue comparison of their readings, if at hand."""
    earlier, later = (a, b) if a.at <= b.at else (b, a)  # same second: as given
    idf = idf or {}
    gap = abs(later.at - earlier.at) / 86400.0
    found = _base(a, b, earlier, later, cosine, cues, idf, gap)
    word_jaccard = jaccard(a.words, b.words)
    found["near_copy"] = float(cosine >= 0.95 or word_jaccard >= 0.8)
    new_words = later.words - earlier.words
    found["novelty"] = (
        sum(idf.get(w, 1.0) for w in new_words) / sum(idf.get(w, 1.0) for w in later.words)
        if later.words
        else 0.0
    )
    versions = found["versions_differ"]
    found["cosine_x_change"] = cosine * min(found["change_later"], 2.0)
    found["cosine_x_versions"] = cosine * versions
    found["cosine_x_negation"] = cosine * min(found["negation_differs"], 2.0)
    found["cosine_x_opposites"] = cosine * found["opposites"]
    found["title_x_versions"] = found["title_overlap"] * versions
    found["cosine_x_old_value"] = cosine * found["old_value_named"]
    found["sentence_value_clash"], found["sentence_polarity_clash"] = _sentence_clashes(a, b)
    found["defaults_clash"] = float(defaults_clash(a.defaults, b.defaults) is not None)
    found["polarity_clash"] = float(min(len(clashing_terms(a.polarity, b.polarity)), 3))
    clash = quantity_clash(a.quantities, b.quantities, a.plain, b.plain)
    found["quantity_clash"] = float(clash is not None)
    return found


def _value_conflicts(cues: Cues | None, agreed: frozenset[str]) -> bool:
    """Whether the cues find a value the two state differently, leaving out versions
    that agree as bound and value ("Go < 1.24" / "Go 1.23")."""
    if cues is None:
        return False
    return any(
        not {v.strip() for side in ("a", "b") for v in str(c.get(side, "")).split(",")} <= agreed
        for c in cues.conflicts
    )


def _base(
    a: PairText,
    b: PairText,
    earlier: PairText,
    later: PairText,
    cosine: float,
    cues: Cues | None,
    idf: Mapping[str, float],
    gap: float,
) -> dict[str, float]:
    agreed = agreeing_versions(a.quantities, b.quantities)
    differing = (earlier.versions ^ later.versions) - agreed
    return {
        "cosine": cosine,
        "title_overlap": jaccard(a.title_words, b.title_words),
        "name_overlap": jaccard(a.names, b.names),
        "word_overlap": _weighted_overlap(a.words, b.words, idf),
        "same_type": float(a.memory.type == b.memory.type),
        "change_later": float(min(later.change, 3)),
        "change_earlier": float(min(earlier.change, 3)),
        "hedge_later": float(min(later.hedge, 2)),
        "hedge_earlier": float(min(earlier.hedge, 2)),
        "negation_differs": float(abs(min(a.negations, 3) - min(b.negations, 3))),
        "opposites": _opposites(earlier.plain, later.plain),
        "value_conflict": float(_value_conflicts(cues, agreed)),
        "cue_replaces": float(bool(cues and cues.replaces)),
        "old_value_named": _old_value_named(earlier, later),
        "versions_differ": float(bool(earlier.versions and later.versions and differing)),
        "numbers_differ": float(
            bool(earlier.numbers and later.numbers and earlier.numbers != later.numbers)
        ),
        "gap_days": math.log1p(gap),
        "same_day": float(gap < 1.5),
    }


def same_frame_other_subject(a: PairText, b: PairText) -> bool:
    """Two notes that say the same thing about different code: each names code, they
    share no name, and the rest of their words is much the same ("`parse_date` rounds
    intermediate values" / "`trim_payout` rounds intermediate values"); or two short
    notes that say one thing of two owners named in plain words, each with its own value
    ("the auth service listens on port 8001" / "the billing service … 8002":
    `owner_swap`). Such a pair is two facts, not one fact changed."""
    if owners_differ(a.sequence, b.sequence):
        return True
    if not a.names or not b.names or a.names & b.names:
        return False
    return jaccard(a.frame, b.frame) >= 0.6
