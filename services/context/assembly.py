"""`ContextAssembler`: a prediction, rendered as tiered Markdown within a token budget.

The budget (default 8,000 tokens) is split into four tiers — critical 25 %, relevant
37.5 %, background 25 %, index 12.5 % — rebalanced by activity (debugging widens the
critical tier and narrows the background). A tier's unused budget flows to the next.
Each memory enters at the richest level that fits (full, summary, compressed, index),
so more memories fit as the budget shrinks; the lowest-ranked memories give way first.

The output is one tagged block with a version hash and a generation time: the same
prediction gives the same block, byte for byte. The block never exceeds the budget as
counted by the configured token counter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from services.activity.prediction import Candidate, Prediction
from services.activity.signals import ActivityKind
from services.context.rendering import (
    Level,
    render_memory,
)
from services.context.standing import AgainstFile, Replaced, standing
from services.errors import UserInputError
from services.text import words
from services.text.controls import strip_controls
from services.tokens import TokenCounter, count_tokens

if TYPE_CHECKING:
    from services.text.dates import TimeRef


DEFAULT_BUDGET = 8000
SMALL_BUDGET = 1500  # below this many tokens the critical tier grows
SMALL_CRITICAL_SHARE = 0.5
MIN_BUDGET = 120  # the block's own tags and header take about 80, a note 20 more
TIER_NAMES = {1: "Critical", 2: "Relevant", 3: "Background", 4: "Index"}


@dataclass(frozen=True)
class TierSplit:
    critical: float = 0.25
    relevant: float = 0.375
    background: float = 0.25
    index: float = 0.125

    def __post_init__(self) -> None:
        shares = (self.critical, self.relevant, self.background, self.index)
        if any(share < 0 for share in shares) or abs(sum(shares) - 1.0) > 1e-6:
            raise UserInputError(f"tier shares must be non-negative and sum to 1, got {shares}")

    def for_activity(self, activity: ActivityKind) -> TierSplit:
        """Debugging widens the critical tier by half (25 → 37.5 %) at the expense of
        the background; review leans on conventions (background) instead."""
        if activity is ActivityKind.DEBUGGING:
            shift = min(self.critical * 0.5, self.background)
            return TierSplit(
                self.critical + shift, self.relevant, self.background - shift, self.index
            )
        if activity is ActivityKind.REVIEW:
            shift = min(self.relevant * 1 / 6, self.relevant)
            return TierSplit(
                self.critical, self.relevant - shift, self.background + shift, self.index
            )
        return self

    def for_budget(self, available: int) -> TierSplit:
        """A small budget goes to what is about the file itself first: below
        SMALL_BUDGET tokens the critical tier grows towards half of it, taken from the
        background and the index (at 500 tokens: about 45 %)."""
        if available >= SMALL_BUDGET:
            return self
        room = self.background + self.index
        target = max(self.critical, SMALL_CRITICAL_SHARE)
        shift = min((target - self.critical) * (1 - available / SMALL_BUDGET), room)
        if shift <= 0 or room <= 0:
            return self
        return TierSplit(
            self.critical + shift,
            self.relevant,
            self.background - shift * self.background / room,
            self.index - shift * self.index / room,
        )

    def shares(self) -> tuple[float, float, float, float]:
        return (self.critical, self.relevant, self.background, self.index)


# --- output --------------------------------------------------------------------------------


@dataclass
class Placed:
    candidate: Candidate
    level: Level
    tokens: int


@dataclass
class TierResult:
    number: int
    budget: int
    placed: list[Placed] = field(default_factory=list)
    text: str = ""
    tokens: int = 0
    left_out: list[str] = field(default_factory=list)
    preamble: str = ""  # text before the memories (the profile, in the background tier)


@dataclass
class AssembledContext:
    markdown: str
    version: str
    generated_at: str
    project: str | None
    activity: ActivityKind
    budget: int
    tokens: int
    tiers: list[TierResult]
    profile_included: bool
    query: str | None = None  # the search it was assembled for, named in its header

    def ids(self, tier: int) -> list[str]:
        return [p.candidate.memory.id for p in self.tiers[tier - 1].placed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "query": self.query,
            "generated_at": self.generated_at,
            "project": self.project,
            "activity": self.activity.value,
            "budget": self.budget,
            "tokens": self.tokens,
            "profile_included": self.profile_included,
            "tiers": [
                {
                    "tier": tier.number,
                    "name": TIER_NAMES[tier.number].lower(),
                    "budget": tier.budget,
                    "tokens": tier.tokens,
                    "memories": [
                        {
                            "id": p.candidate.memory.id,
                            "type": p.candidate.memory.type.value,
                            "title": p.candidate.memory.title,
                            "level": p.level.label,
                            "tokens": p.tokens,
                            "score": round(p.candidate.score, 3),
                            "why": [r.to_dict() for r in p.candidate.reasons],
                        }
                        for p in tier.placed
                    ],
                    "left_out": tier.left_out,
                }
                for tier in self.tiers
            ],
            "markdown": self.markdown,
        }


class ContextAssembler:
    def __init__(
        self,
        budget: int = DEFAULT_BUDGET,
        split: TierSplit = TierSplit(),
        counter: TokenCounter = count_tokens,
        alerts: Callable[[Prediction], Sequence[str]] | None = None,
        dates: Callable[[Sequence[str]], Mapping[str, Sequence[TimeRef]]] | None = None,
        replaced: Replaced | None = None,
        against_file: AgainstFile | None = None,
    ) -> None:
        self.budget = validate_budget(budget)
        self.split = split
        self.counter = counter
        # Warnings for the critical tier (unresolved contradictions), one line each; they
        # take at most half of its budget, the rest stays for its memories.
        self.alerts = alerts
        # The resolved dates of relative phrases ("yesterday (2026-06-09)"), by memory id:
        # an assistant reading the context a month later still knows when things were.
        self.dates = dates
        # Which of the candidates a current memory replaces (memory id → that memory):
        # the one that holds now takes the place of the one it replaced.
        self.replaced = replaced
        # Which of the candidates the open file contradicts (memory id → why): a manifest
        # declaring `engines.node >=10.13.0` beside a note saying "Node 18+". They are
        # left out, and tier 1 says so.
        self.against_file = against_file

    def assemble(
        self,
        prediction: Prediction,
        budget: int | None = None,
        profile: str | None = None,
        consent: bool = False,
    ) -> AssembledContext:
        """Render `prediction` within `budget`. The profile is used only with consent."""
        budget = validate_budget(budget if budget is not None else self.budget)
        profile_text = profile.strip() if (consent and profile and profile.strip()) else None
        generated = prediction.at.isoformat(timespec="seconds")
        # The wrapper and the title are paid for first; the tiers share what is left.
        probe_version = "0" * 12
        wrapper = self._wrap("", probe_version, generated, prediction)
        available = budget - self.counter(wrapper) - 2
        shares = self.split.for_activity(prediction.activity).for_budget(available).shares()
        tiers: list[TierResult] = []
        carry = 0
        stand = standing(prediction, self.replaced, self.against_file)
        candidate_lists: list[Sequence[Candidate]] = [self._dated(c) for c in stand.tiers]
        prediction = replace(prediction, related=stand.related)
        warnings = list(stand.left_out.values())
        warnings += list(self.alerts(prediction)) if self.alerts is not None else []
        for number in (1, 2, 3):
            share = int(available * shares[number - 1]) + carry
            tier = self._fill_tier(
                number, share, candidate_lists[number - 1], profile_text, warnings
            )
            carry = max(0, share - tier.tokens)
            tiers.append(tier)
        index_budget = max(0, available - sum(t.tokens for t in tiers))
        tiers.append(self._index_tier(index_budget, prediction, tiers))

        while True:
            body = "\n\n".join(t.text for t in tiers if t.text)
            if body and not any(t.placed for t in tiers[:3]):  # only the index is left
                body = _empty_note(prediction, tiers, budget) + "\n\n" + body
            version = words.sha256_hex(
                json.dumps([prediction.project, body], ensure_ascii=False), 12
            )
            markdown = self._wrap(
                body or _empty_note(prediction, tiers, budget), version, generated, prediction
            )
            tokens = self.counter(markdown)
            if tokens <= budget or not _drop_last(tiers, self):
                break
        # Nothing fits beside the header (a deep file path, a tiny budget): a shorter
        # header with the note, else the bare block; never an empty answer.
        for note in (_empty_note(prediction, tiers, budget), ""):
            if tokens <= budget:
                break
            markdown = self._wrap(note, version, generated, prediction, focus_line=False)
            tokens = self.counter(markdown)
        if tokens > budget:  # a project name longer than the whole budget
            markdown, tokens = "", 0
        return AssembledContext(
            markdown=markdown,
            version=version,
            generated_at=generated,
            project=prediction.project,
            activity=prediction.activity,
            budget=budget,
            tokens=tokens,
            tiers=tiers,
            profile_included=profile_text is not None and profile_text in markdown,
            query=prediction.query,
        )

    def _dated(self, candidates: Sequence[Candidate]) -> Sequence[Candidate]:
        """The candidates with each relative phrase followed by its resolved date."""
        if self.dates is None or not candidates:
            return candidates
        from services.text.date_answers import with_memory_dates

        return with_memory_dates(candidates, self.dates([c.memory.id for c in candidates]))

    def _wrap(
        self,
        body: str,
        version: str,
        generated: str,
        prediction: Prediction,
        focus_line: bool = True,
    ) -> str:
        attributes = [f'version="{version}"', f'generated="{generated}"']
        if prediction.project:
            attributes.append(f'project="{_attribute(prediction.project)}"')
        attributes.append(f'activity="{prediction.activity.value}"')
        focus = []
        if prediction.query:
            query = " ".join(prediction.query.split())
            focus.append(f"query “{query if len(query) <= 80 else query[:79] + '…'}”")
        if focus_line and prediction.current_file:
            focus.append(f"file `{prediction.current_file}`")
        if focus_line and prediction.branch:
            focus.append(f"branch `{prediction.branch}`")
        header = "# Engram context" + (f" — {', '.join(focus)}" if focus else "")
        inner = f"{header}\n\n{body}" if body else header
        # Memories are stripped as they are rendered; the profile, warnings and names
        # in the header are user text too.
        return strip_controls(
            f"<engram-context {' '.join(attributes)}>\n{inner}\n</engram-context>"
        )

    def _fill_tier(
        self,
        number: int,
        budget: int,
        candidates: Sequence[Candidate],
        profile: str | None,
        warnings: Sequence[str] = (),
    ) -> TierResult:
        tier = TierResult(number, budget)
        heading = f"## {TIER_NAMES[number]}"
        extra = ""
        if number == 3 and profile:
            extra = f"About the user:\n{profile}"
            if self.counter(f"{heading}\n{extra}") > budget:
                extra = ""
        if number == 1 and warnings:
            lines = list(warnings)
            while lines and self.counter(heading + "\n" + "\n".join(lines)) > budget // 2:
                lines.pop()
            extra = "\n".join(lines)
        fixed = self.counter(f"{heading}\n{extra}" if extra else heading)
        if not candidates and not extra:
            return tier
        if fixed > budget:
            tier.left_out = [c.memory.id for c in candidates]
            return tier
        costs = [
            [self.counter(render_memory(c.memory, level)) + 1 for level in Level]
            for c in candidates
        ]
        richest = [Level(min(max(c.richest, 0), Level.INDEX)) for c in candidates]
        levels = list(richest)
        kept = len(candidates)

        def total() -> int:
            return fixed + sum(costs[i][levels[i]] for i in range(kept))

        # The lowest-ranked memories give way first: each is compressed down to its
        # index line before the one above it is touched; dropped when even that is over.
        while kept and total() > budget:
            for i in range(kept - 1, -1, -1):
                if levels[i] < Level.INDEX:
                    levels[i] = Level(levels[i] + 1)
                    break
            else:
                kept -= 1
        # Memories left with spare budget move back up a level, best-ranked first.
        for i in range(kept):
            while levels[i] > richest[i]:
                richer = Level(levels[i] - 1)
                if total() - costs[i][levels[i]] + costs[i][richer] > budget:
                    break
                levels[i] = richer
        tier.placed = [Placed(candidates[i], levels[i], costs[i][levels[i]]) for i in range(kept)]
        tier.left_out = [c.memory.id for c in candidates[kept:]]
        tier.preamble = extra
        _render_tier(tier, self.counter)
        return tier

    def _index_tier(
        self, budget: int, prediction: Prediction, tiers: list[TierResult]
    ) -> TierResult:
        tier = TierResult(4, budget)
        heading = f"## {TIER_NAMES[4]}"
        lines: list[str] = []
        if prediction.topics:
            lines.append("Ask me about: " + ", ".join(prediction.topics) + ".")
        left_out = [mid for t in tiers for mid in t.left_out]
        left_out += [c.memory.id for c in prediction.related if c.memory.id not in left_out]
        if left_out:
            lines.append("Also related (ask by id): " + ", ".join(left_out) + ".")
        while lines:
            text = heading + "\n" + "\n".join(lines)
            if self.counter(text) <= budget:
                tier.text, tier.tokens = text, self.counter(text)
                break
            last = lines[-1]
            items = last.rstrip(".").split(", ")
            if len(items) > 1:
                lines[-1] = ", ".join(items[:-1]) + "."
            else:
                lines.pop()
        return tier


def _render_tier(tier: TierResult, counter: TokenCounter) -> None:
    parts = [f"## {TIER_NAMES[tier.number]}"]
    if tier.preamble:
        parts.append(tier.preamble)
    parts.extend(render_memory(p.candidate.memory, p.level) for p in tier.placed)
    tier.text = "\n".join(parts) if (tier.placed or tier.preamble) else ""
    tier.tokens = counter(tier.text) if tier.text else 0


def _drop_last(tiers: list[TierResult], assembler: ContextAssembler) -> bool:
    """Safety net when joins cost a token more than counted: drop the last item."""
    for tier in reversed(tiers):
        if tier.number == 4 and tier.text:
            lines = tier.text.splitlines()
            tier.text = "\n".join(lines[:-1]) if len(lines) > 2 else ""
            tier.tokens = assembler.counter(tier.text) if tier.text else 0
            return True
        if tier.placed:
            dropped = tier.placed.pop()
            tier.left_out.insert(0, dropped.candidate.memory.id)
            _render_tier(tier, assembler.counter)
            return True
        if tier.preamble:
            tier.preamble = ""
            _render_tier(tier, assembler.counter)
            return True
    return False


def _empty_note(prediction: Prediction, tiers: Sequence[TierResult], budget: int) -> str:
    """What a block with no memories says instead, so it is never mistaken for a
    block that lost its memories: either none were predicted, or none fit."""
    left_out = len({memory_id for tier in tiers for memory_id in tier.left_out})
    if left_out or prediction.critical or prediction.relevant or prediction.background:
        count = left_out or len(prediction.critical) + len(prediction.relevant)
        noun = "memory" if count == 1 else "memories"
        return f"(nothing fits in {budget} tokens; {count} {noun} left out: raise the budget)"
    where = f" for {prediction.project}" if prediction.project else ""
    return f"(no memories{where} match this activity yet)"


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def validate_budget(budget: int) -> int:
    if budget < MIN_BUDGET:
        raise UserInputError(f"the context budget must be at least {MIN_BUDGET} tokens")
    return budget
