"""The pair scorers: logistic combinations of `pair_features` whose weights were fitted
with leave-one-project-out cross-validation on human-written notes
(`bench/fit_conflicts.py` writes `conflict_weights` and `duplicate_weights`). One says how
likely a pair of memories is a supersession or a contradiction, the other how likely the
two say the same thing. Two people writing the same fact differently is the commonest
look-alike of a change, and two people saying opposite things in the same words the
commonest look-alike of a paraphrase: where both scorers fire, the surer one decides
(`duplicate_claims`; `restatement_claims` for the restatement scorer of
`restatements`). Which kind of conflict, and which memory holds, are read from the
wording (`kind_of`)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from services.knowledge import conflict_weights, duplicate_weights, restatement_weights
from services.knowledge.cues import READ_CHARS
from services.knowledge.evidence import Shown, relayed_over, shown_by
from services.knowledge.floor_subjects import floors_of_other_things
from services.knowledge.owner_swap import swapped_values
from services.knowledge.pair_features import PairText, same_frame_other_subject
from services.types import MemoryType

__all__ = [
    "DEFAULTS_CLASH_COSINE",
    "DUPLICATE_CLAIM",
    "DUPLICATE_THRESHOLD",
    "THRESHOLD",
    "defaults_disagree",
    "duplicate_claims",
    "duplicate_probability",
    "is_conflict",
    "kind_of",
    "logistic",
    "probability",
    "restatement_claims",
]
THRESHOLD = conflict_weights.THRESHOLD
DUPLICATE_THRESHOLD = duplicate_weights.THRESHOLD
# From this duplicate probability the duplicate scorer may take a pair from the conflict
# scorer (`duplicate_claims`).
DUPLICATE_CLAIM = max(0.9, DUPLICATE_THRESHOLD)
# Two notes this alike that say one default is different things conflict, however
# much they read like a paraphrase (`default_claims`). On real-dev every such pair
# from 0.5 up is a labelled conflict (9 pairs, the lowest at 0.58), none below 0.5
# is one.
DEFAULTS_CLASH_COSINE = 0.5
# A short note copied with a value changed says another value of the same thing
# (`owner_swap.swapped_values`): flagged with this score, whatever the scorers say.
VALUE_SWAP_SCORE = 0.9
# Notes written this close together were written in one sitting (`dates_unread`).
SITTING_DAYS = 1 / 24
DATE_FEATURES = ("gap_days", "same_day")

Weights = Mapping[str, tuple[float, float, float]]


def logistic(features: Mapping[str, float], weights: Weights, bias: float) -> float:
    """bias + Σ weight·(value − mean)/scale through the logistic function."""
    z = bias
    for name, (weight, mean, scale) in weights.items():
        z += weight * (features.get(name, 0.0) - mean) / scale
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def dates_unread(features: Mapping[str, float], weights: Weights) -> Mapping[str, float]:
    """`features` with how far apart the two were written read as unknown (each date
    feature at its fitted mean, where it weighs nothing) when they were written in one
    sitting and no sentence of one says the opposite of a sentence of the other. The
    scorer learnt what a gap says from dates the sets' authors gave their notes, days to
    months apart: a paraphrase is never written the same day, and two people's opposite
    rules are, so "the same day" reads as a conflict. An assistant adding notes in one
    session writes both in minutes ("Money is stored as integer cents, never as floats" /
    "Store amounts in cents as integers; floats are not allowed for money" had been
    offered as a contradiction at 0.99). Opposite rules stated the same day clash in
    polarity ("add a bullet to release-notes.md" / "don't edit release-notes.md"), and
    keep what the day says. Of the fifteen sets' candidate pairs written within an hour
    of each other, 2 are labelled conflicts, and both keep their flags."""
    if features.get("gap_days", math.inf) >= math.log1p(SITTING_DAYS):
        return features
    if features.get("sentence_polarity_clash", 0.0) > 0:
        return features
    return {**features, **{name: weights[name][1] for name in DATE_FEATURES if name in weights}}


def probability(features: Mapping[str, float]) -> float:
    """The probability that the pair conflicts (flag at `THRESHOLD`)."""
    read = dates_unread(features, conflict_weights.WEIGHTS)
    return logistic(read, conflict_weights.WEIGHTS, conflict_weights.BIAS)


def duplicate_probability(features: Mapping[str, float]) -> float:
    """The probability that the two say the same thing (propose at
    `DUPLICATE_THRESHOLD`). Two notes that give one quantity different values
    (`quantities.quantity_clash`: "30 redirects" / "20 redirects"), or one setting the
    cues read different values of (`value_conflict`: a file mode "0644" / "0600"), never
    do, however alike their words: merging them would lose one of the values. A title two
    notes share names their topic, not their statement: people keep a topic's title when
    they write what changed (over four hand-written sets, 62 labelled conflicts share their
    title against 8 paraphrases; real-dev, where the scorer was fitted, has none of
    either), so outside an exact copy an identical title counts as an average one."""
    if features.get("quantity_clash", 0.0) or features.get("value_conflict", 0.0):
        return 0.0
    if not features.get("near_copy", 0.0) and features.get("title_overlap", 0.0) >= 1.0:
        features = {**features, "title_overlap": duplicate_weights.WEIGHTS["title_overlap"][1]}
    return logistic(features, duplicate_weights.WEIGHTS, duplicate_weights.BIAS)


def both_events(a: PairText, b: PairText) -> bool:
    """Two episodes record two things that happened; neither makes the other untrue,
    unless the later one says it changed what the earlier did ("5.2.1 restores …;
    skip 5.2.0" after "rolling every service to 5.2.0")."""
    if a.memory.type is not MemoryType.EPISODE or b.memory.type is not MemoryType.EPISODE:
        return False
    later = b if b.at >= a.at else a
    return not later.change


# What can make a later note disagree with an earlier one: a value, a version, a number,
# a negation, an opposite, a default or wording that says what changed.
DIFFERENCES = (
    "value_conflict", "numbers_differ", "versions_differ", "negation_differs", "opposites",
    "old_value_named", "sentence_value_clash", "sentence_polarity_clash", "cue_replaces",
    "defaults_clash", "polarity_clash", "quantity_clash", "change_later", "change_earlier",
)  # fmt: skip
NOTHING_NEW = 0.1  # a later note whose words are (almost) all the earlier's


def says_nothing_new(features: Mapping[str, float]) -> bool:
    """The later note repeats (part of) the earlier and differs from it in nothing
    ("Production log level is INFO." after "Log level in production is INFO; DEBUG leaks
    PII"): it agrees, however alike the two. Over the twelve development sets no flagged
    pair is such; a new user's two agreeing notes had been flagged at 0.999."""
    return features.get("novelty", 1.0) <= NOTHING_NEW and not any(
        features.get(name, 0.0) for name in DIFFERENCES
    )


def other_environments(a: PairText, b: PairText) -> bool:
    """The two are about different environments ("staging uses Postgres 15" /
    "production uses Postgres 16"): both hold."""
    return bool(a.environments and b.environments and not a.environments & b.environments)


def other_floors(a: PairText, b: PairText) -> bool:
    """The two state floors of different things ("MarkupSafe>=2.0 is the minimum" /
    "bumped requires-python to >=3.8"), neither naming the other's: both hold."""
    return floors_of_other_things(a.floors, a.plain, b.floors, b.plain)


def is_conflict(
    features: Mapping[str, float],
    pair: tuple[PairText, PairText] | None = None,
    threshold: float = THRESHOLD,
    any_claim_wins: bool = False,
    restated: float | None = None,
) -> tuple[bool, float]:
    """Whether the scorers flag the pair as a conflict, and the conflict probability.
    With the pair's texts, one that says the same of different code, or two episodes,
    is never flagged. A caller with gates of its own may flag at a lower `threshold`.
    Two alike notes that disagree about a default are flagged whatever the scores, and so
    is a short note copied with a value changed ("listens on port 8001" / "listens on port
    8002 now, no longer 8001"; `swapped_values`), which the scorers, fitted on notes people
    reworded, read as a restatement (0.02).
    Where both scorers fire the surer one decides (`duplicate_claims`, each read against
    its own fitted bar, whatever `threshold` the caller flags from), unless
    `any_claim_wins`: then every pair the duplicate scorer claims is left alone. A
    replacement recorded as a memory is written takes effect without review, and there
    "newest wins" would let a misremembered later note take its correct twin's place
    (on real-dev a wrong "h2 websockets" note replaced the right one in the context of
    `ws.rs`); the next cycle's scan still proposes the pair for review. The duplicate
    operation's strict checks ask the same: a pair with the same type, names and
    numbers is a duplicate unless the conflict scorer is the only one to fire.
    `restated`, the restatement scorer's probability where the caller could read it
    (it needs the project's vocabulary), claims the pair the same way
    (`restatement_claims`)."""
    scored = probability(features)
    if any_claim_wins:
        claimed = duplicate_probability(features) >= DUPLICATE_CLAIM
    else:
        claimed = duplicate_claims(features, scored)
    if restated is not None and not claimed:
        claimed = restatement_claims(restated, scored, any_claim_wins)
    if pair is not None and (
        same_frame_other_subject(*pair)
        or both_events(*pair)
        or other_environments(*pair)
        or other_floors(*pair)
    ):
        return False, scored
    if says_nothing_new(features):
        return False, scored
    if pair is not None and swapped_values(pair[0].sequence, pair[1].sequence):
        return True, max(scored, VALUE_SWAP_SCORE)
    return (scored >= threshold and not claimed) or defaults_disagree(features), scored


def duplicate_claims(features: Mapping[str, float], scored: float | None = None) -> bool:
    """Whether the duplicate scorer takes the pair from the conflict scorer: it claims it
    (`DUPLICATE_CLAIM`) and is further past that bar than the conflict scorer is past its
    own, in log-odds. Both fire on many pairs of alike notes; whichever is surer decides,
    rather than the duplicate scorer always (held-out over eight projects of two sets:
    conflicts found 36 → 41 of 92, duplicates 23 → 19 of 38, false flags of both 58 → 57;
    end to end on real-dev and second-dev: docs/benchmarks.md)."""
    scored = probability(features) if scored is None else scored
    past_duplicate = _logit(duplicate_probability(features)) - _logit(DUPLICATE_CLAIM)
    past_conflict = _logit(scored) - _logit(THRESHOLD)
    return past_duplicate >= 0 and past_duplicate > past_conflict


def restatement_claims(restated: float, scored: float, any_claim_wins: bool = False) -> bool:
    """Whether the restatement scorer takes the pair from the conflict scorer: past its
    own bar and, unless `any_claim_wins`, further past it than the conflict scorer is
    past its own (log-odds), as `duplicate_claims` reads the duplicate scorer. One
    incident told twice, as a pitfall and later as a lesson under the same title, reads
    to the conflict scorer like a later note replacing an earlier one: on eleven
    hand-written sets, 22 of 119 labelled duplicate pairs were flagged as conflicts."""
    past_restated = _logit(restated) - _logit(restatement_weights.THRESHOLD)
    if any_claim_wins:
        return past_restated >= 0
    return past_restated >= 0 and past_restated > _logit(scored) - _logit(THRESHOLD)


def defaults_disagree(features: Mapping[str, float]) -> bool:
    """The two are alike and say one default is different things (`default_claims`)."""
    return (
        features.get("defaults_clash", 0.0) > 0
        and features.get("cosine", 0.0) >= DEFAULTS_CLASH_COSINE
    )


def kind_of(
    earlier: PairText, later: PairText, features: Mapping[str, float], replaces: bool = False
) -> str:
    """`supersedes` when the later note is worded as a change (or states another
    version weeks later, or is the earlier note copied weeks later with another value,
    or `replaces`: the cues read it replacing the earlier's value),
    unless it only relays what it says against an earlier note that shows it
    (`relayed_over`); otherwise `contradiction` (two notes that cannot both hold,
    neither saying it replaces the other)."""
    if relayed_over(_shown(earlier), _shown(later)):
        return "contradiction"
    weeks_apart = features.get("gap_days", 0.0) >= math.log1p(14)
    if replaces or later.change or features.get("old_value_named", 0.0):
        return "supersedes"
    if weeks_apart and features.get("versions_differ", 0.0):
        return "supersedes"
    if weeks_apart and swapped_values(earlier.sequence, later.sequence):
        return "supersedes"  # the same sentence weeks later with another value: the new one
    return "contradiction"


def _shown(text: PairText) -> Shown:
    return shown_by(text.memory.title, text.memory.content[:READ_CHARS])
