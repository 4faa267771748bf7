"""What a consolidation operation gives back: its findings, and — for an operation that
changes things itself — a typed account of what it changed. Each account turns into the
JSON that `engram rem run --json` prints and `rem_run.result` keeps (`to_dict`), back
from it (`from_dict`), and into one line for people (`describe`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from services.storage.findings import Finding


class Changes(Protocol):
    """What an operation changed (or did), typed."""

    def to_dict(self) -> dict[str, Any]: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class OperationResult:
    findings: list[Finding] = field(default_factory=list)
    changes: Changes | None = None  # None: it changed nothing itself


def describe_counts(data: dict[str, Any]) -> str:
    """ "key value" of each entry that is not a list, comma-separated."""
    return ", ".join(f"{key} {value}" for key, value in data.items() if not isinstance(value, list))


@dataclass(frozen=True)
class TierMoves:
    """Retention: how many memories moved to each tier (only tiers that gained some)."""

    moved: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.moved)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TierMoves:
        return cls({str(tier): int(count) for tier, count in data.items()})

    def describe(self) -> str:
        return describe_counts(self.to_dict())


@dataclass(frozen=True)
class EpisodeLevels:
    """Episodes: how many got a summary, and how many a compressed form."""

    summary: int = 0
    compressed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeLevels:
        return cls(int(data.get("summary", 0)), int(data.get("compressed", 0)))

    def describe(self) -> str:
        return describe_counts(self.to_dict())


@dataclass(frozen=True)
class LinkCounts:
    """Links: the related links there are now, how many came and went, and the
    supersedes links."""

    related: int = 0
    related_added: int = 0
    related_removed: int = 0
    supersedes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinkCounts:
        return cls(**{key: int(data.get(key, 0)) for key in cls.__dataclass_fields__})

    def describe(self) -> str:
        return describe_counts(self.to_dict())


@dataclass(frozen=True)
class CommunityReport:
    """Communities: how many there are now; the ids of the new ones, the merges
    ({"community", "from"}), the splits ({"community", "into"}) and those gone since the
    last run; the memories without a link (the first 20 ids); the groups too small to
    be a community; and how many summaries the LLM wrote."""

    communities: int = 0
    new: list[str] = field(default_factory=list)
    merged: list[dict[str, Any]] = field(default_factory=list)
    split: list[dict[str, Any]] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    orphans: int = 0
    orphan_ids: list[str] = field(default_factory=list)
    small: int = 0
    llm_summaries: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CommunityReport:
        return cls(
            communities=int(data.get("communities", 0)),
            new=list(data.get("new", [])),
            merged=list(data.get("merged", [])),
            split=list(data.get("split", [])),
            gone=list(data.get("gone", [])),
            orphans=int(data.get("orphans", 0)),
            orphan_ids=list(data.get("orphan_ids", [])),
            small=int(data.get("small", 0)),
            llm_summaries=int(data.get("llm_summaries", 0)),
        )

    def describe(self) -> str:
        return (
            f"{self.communities} communities: {len(self.new)} new, {len(self.merged)} merged, "
            f"{len(self.split)} split, {len(self.gone)} gone; {self.orphans} orphans"
        )


@dataclass(frozen=True)
class ContradictionCounts:
    """Contradictions (`services.knowledge.contradictions.run`): candidate pairs queued
    and judged, the contradictions and supersessions found, the pairs the LLM was asked
    about, and why the LLM could not help (if it could not)."""

    queued: int = 0
    judged: int = 0
    contradictions: int = 0
    supersedes: int = 0
    asked_llm: int = 0
    llm_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.llm_note is None:
            del data["llm_note"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ContradictionCounts:
        note = data.get("llm_note")
        return cls(
            queued=int(data.get("queued", 0)),
            judged=int(data.get("judged", 0)),
            contradictions=int(data.get("contradictions", 0)),
            supersedes=int(data.get("supersedes", 0)),
            asked_llm=int(data.get("asked_llm", 0)),
            llm_note=None if note is None else str(note),
        )

    def describe(self) -> str:
        """What this run did; the findings listed with it include pairs still open from
        before (recorded as memories were written), which these counts leave out."""
        line = (
            f"this run: {self.queued} queued, {self.judged} judged, {self.contradictions} "
            f"new contradictions, {self.supersedes} new supersessions, "
            f"model asked {self.asked_llm}"
        )
        return line + (f" ({self.llm_note})" if self.llm_note else "")
