"""The vocabulary of memories: types, tiers, sources, scopes and retrieval modes."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

E = TypeVar("E", bound=StrEnum)


class MemoryType(StrEnum):
    FACT = "fact"
    EPISODE = "episode"
    PATTERN = "pattern"
    WORKFLOW = "workflow"
    ARCHITECTURE = "architecture"
    DEPENDENCY = "dependency"
    DECISION = "decision"
    CONSTRAINT = "constraint"
    CONVENTION = "convention"
    PITFALL = "pitfall"
    FIX = "fix"
    LESSON = "lesson"


class Tier(StrEnum):
    HOT = "hot"
    WARM = "warm"
    COLD = "cold"
    ARCHIVED = "archived"


class Source(StrEnum):
    EXPLICIT = "explicit"
    AUTOMATIC = "automatic"
    IMPORTED = "imported"


class Scope(StrEnum):
    USER_PRIVATE = "user-private"
    PROJECT_SHARED = "project-shared"
    SYSTEM = "system"


class RetrievalMode(StrEnum):
    """Which tiers a search looks at; superseded memories only in deep and exhaustive."""

    REFLEXIVE = "reflexive"
    STANDARD = "standard"
    DEEP = "deep"
    EXHAUSTIVE = "exhaustive"

    @property
    def tiers(self) -> tuple[Tier, ...]:
        order = (Tier.HOT, Tier.WARM, Tier.COLD, Tier.ARCHIVED)
        count = {"reflexive": 1, "standard": 2, "deep": 3, "exhaustive": 4}[self.value]
        return order[:count]

    @property
    def includes_superseded(self) -> bool:
        return self in (RetrievalMode.DEEP, RetrievalMode.EXHAUSTIVE)


class UsageEvent(StrEnum):
    RETRIEVED = "retrieved"
    CITED = "cited"
    IGNORED = "ignored"
    USED = "used"


def parse_enum(enum: type[E], value: str, what: str) -> E:
    """Parse `value` into `enum`, raising a readable error that lists the choices."""
    from services.errors import UserInputError

    try:
        return enum(value.strip().lower())
    except ValueError:
        choices = ", ".join(member.value for member in enum)
        raise UserInputError(f"unknown {what} {value!r} (choose from: {choices})") from None


PINNED_TAG = "pinned"  # a memory the user pinned: kept hot, never archived by disuse
