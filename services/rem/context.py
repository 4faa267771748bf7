"""What a consolidation operation is given: the memory service, the vectors, the model
that made them, the project to look at, the cycle's "now", an LLM for prose and the
idle gap that ends a work session."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.llm.base import LLM
    from services.memories.service import MemoryService
    from services.vectors.index import VectorIndex


@dataclass
class RemContext:
    service: MemoryService
    vectors: VectorIndex
    model_id: str
    project: str | None = None
    now: datetime | None = None  # the cycle's "now" (benchmarks replay a fixed date)
    llm: LLM | None = None  # for prose; None: derived summaries
    session_gap_minutes: float = 30.0
    dry_run: bool = False  # set by run_operations: operations that keep books write none
