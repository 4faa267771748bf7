"""`MemoryFilter`: the one description of which memories a list or search may return."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from services.types import MemoryType, RetrievalMode


@dataclass(frozen=True)
class MemoryFilter:
    project: str | None = None
    types: tuple[MemoryType, ...] = ()
    tags: tuple[str, ...] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    exclude_session: str | None = None
    min_confidence: float | None = None
    mode: RetrievalMode = RetrievalMode.STANDARD
    ids: tuple[str, ...] = field(default=())

    @classmethod
    def everything(cls, project: str | None = None) -> MemoryFilter:
        """All memories of all tiers, superseded included (export, list --all)."""
        return cls(project=project, mode=RetrievalMode.EXHAUSTIVE)
