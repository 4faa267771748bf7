"""Which predicted memories stand in the context: each one a current memory replaces is
swapped for that memory, and each one the open file contradicts is left out, with the
tier-1 line that says why (and a replacement it contradicts gives way to the memory it
had replaced)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from services.activity.prediction import Candidate, Prediction, Reason
from services.memory import Memory
from services.text.controls import strip_controls

if TYPE_CHECKING:
    from services.text.manifests import DeclaredVersion


class Replaced(Protocol):
    """Which of `memories` a current memory replaces (memory id → that memory), none of
    `excluded` holding."""

    def __call__(
        self, memories: Sequence[Memory], excluded: Collection[str] = (), /
    ) -> Mapping[str, Memory]: ...


# The memories the open file contradicts: (candidates, what the file declares, its path)
# → memory id → why.
AgainstFile = Callable[
    [Sequence[Memory], Sequence["DeclaredVersion"], "str | None"], Mapping[str, str]
]


@dataclass
class Standing:
    """The critical, relevant and background candidates that stand, the related ones
    that do, and the tier-1 lines naming what the open file contradicts (id → line)."""

    tiers: list[list[Candidate]]
    related: list[Candidate]
    left_out: dict[str, str]


def standing(
    prediction: Prediction, replaced: Replaced | None, against_file: AgainstFile | None
) -> Standing:
    tiers = [list(prediction.critical), list(prediction.relevant), list(prediction.background)]
    holders = _holders(replaced, tiers)
    left_out = _contradicted(against_file, prediction, tiers, holders)
    if any(h.id in left_out for h in holders.values()):
        holders = _holders(replaced, tiers, left_out)  # the chains stop before them
    current = _current(tiers, holders, left_out)
    return Standing(
        [[c for c in tier if c.memory.id not in left_out] for tier in current],
        [c for c in prediction.related if c.memory.id not in left_out],
        left_out,
    )


def _holders(
    replaced: Replaced | None, tiers: Sequence[Sequence[Candidate]], excluded: Collection[str] = ()
) -> Mapping[str, Memory]:
    if replaced is None:
        return {}
    memories = [c.memory for tier in tiers for c in tier]
    return replaced(memories, excluded) if excluded else replaced(memories)


def _current(
    tiers: Sequence[Sequence[Candidate]],
    holders: Mapping[str, Memory],
    contradicted: Mapping[str, str],
) -> list[list[Candidate]]:
    """Each candidate a current memory replaces swapped for that memory (once, where
    the first of them stood), unless the open file contradicts the replacement."""
    holders = {k: h for k, h in holders.items() if h.id not in contradicted}
    if not holders:
        return [list(tier) for tier in tiers]
    seen = {c.memory.id for tier in tiers for c in tier if c.memory.id not in holders}
    current: list[list[Candidate]] = []
    for tier in tiers:
        kept: list[Candidate] = []
        for candidate in tier:
            holder = holders.get(candidate.memory.id)
            if holder is None:
                kept.append(candidate)
            elif holder.id not in seen:
                seen.add(holder.id)
                reason = Reason(f"replaces {candidate.memory.id}", candidate.score)
                kept.append(replace(candidate, memory=holder, reasons=[*candidate.reasons, reason]))
        current.append(kept)
    return current


def _contradicted(
    against_file: AgainstFile | None,
    prediction: Prediction,
    tiers: Sequence[Sequence[Candidate]],
    holders: Mapping[str, Memory],
) -> dict[str, str]:
    """Memory id → the tier-1 line saying why it is left out, for each candidate (or
    replacement of one, or related memory) the open file contradicts."""
    if against_file is None or not prediction.declared:
        return {}
    memories = {c.memory.id: c.memory for tier in tiers for c in tier}
    memories.update((c.memory.id, c.memory) for c in prediction.related)
    memories.update((h.id, h) for h in holders.values())
    reasons = against_file(list(memories.values()), prediction.declared, prediction.current_file)
    return {
        memory_id: f"⚠ left out {memory_id} “{strip_controls(memories[memory_id].title)}”: "
        f"it {reason}"
        for memory_id, reason in reasons.items()
        if memory_id in memories
    }
