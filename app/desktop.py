"""What the desktop app does, without widgets: opens the services lazily (the tray icon
shows before any model loads), searches, assembles and copies context, records use.

Every method here may block (SQLite, the embedding model) and is meant to be called
through the task runner, never on the UI thread; none touches a widget.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.activity import read_profile, restore_state, saved_project
from app.composition import Engram, open_engram
from services.activity.prediction import Prediction, PredictiveEngine, with_search_results
from services.activity.signals import Signal, SignalKind
from services.context.assembly import AssembledContext
from services.context.rendering import Level, render_memory
from services.errors import EnvironmentProblem
from services.filters import MemoryFilter
from services.knowledge.profile import ProfileStore
from services.memory import Memory
from services.search.retrieval import RetrieverKind, SearchResult
from services.types import UsageEvent

log = logging.getLogger(__name__)
SEARCH_LIMIT = 12


@dataclass(frozen=True)
class SearchAnswer:
    query: str
    results: list[SearchResult]
    elapsed_ms: float
    flags: list[str]


@dataclass(frozen=True)
class Replacement:
    """A declared replacement: `winner` holds now, `replaced` no longer hold (each has
    `valid_to` and `superseded_by`; nothing is deleted)."""

    winner: Memory
    replaced: list[Memory]

    def summary(self) -> str:
        """What no longer holds, in one sentence for a status line."""
        if not self.replaced:
            return f"Saved {self.winner.id}"
        names = ", ".join(f"{m.id} “{m.title}”" for m in self.replaced)
        verb = "no longer holds" if len(self.replaced) == 1 else "no longer hold"
        return f"{names} {verb}: replaced by {self.winner.id} (kept as history)"


BACKUP_CHECK_S = 600.0  # how often the services' users look whether a backup is due


class Desktop:
    def __init__(self, data_dir: Path, engram: Engram | None = None) -> None:
        self.data_dir = data_dir
        self._engram = engram
        self._engine: PredictiveEngine | None = None
        self._lock = threading.Lock()
        self._next_backup_check = 0.0

    @property
    def engram(self) -> Engram:
        """The services, opened on first use. Every use (always on the task runner's
        worker thread) may first write the daily backup: the first use after
        `backup.interval_hours` has passed writes one, looking at most every 10 minutes,
        so a running app that is used (a search, the idle consolidation) keeps a
        recent backup and one left untouched writes none it does not need."""
        with self._lock:
            if self._engram is None:
                self._engram = open_engram(self.data_dir)
            engram = self._engram
            if time.monotonic() >= self._next_backup_check:
                self._next_backup_check = time.monotonic() + BACKUP_CHECK_S
                self._back_up_if_due(engram)
            return engram

    @staticmethod
    def _back_up_if_due(engram: Engram) -> None:
        try:
            written = engram.backup_if_due()
        except (EnvironmentProblem, OSError) as error:
            log.warning("the automatic backup failed: %s", error)
            return
        if written is not None:
            log.info("backed up the database to %s", written)

    @property
    def engine(self) -> PredictiveEngine:
        if self._engine is None:
            self._engine = self.engram.predictive_engine()
            restore_state(self.engram, self._engine, None)
        return self._engine

    def attach_engine(self, engine: PredictiveEngine) -> None:
        """Use the watch session's engine, so context follows the watchers."""
        self._engine = engine

    @property
    def current_project(self) -> str | None:
        """The active project, without opening anything (safe on the UI thread)."""
        return self._engine.current_project if self._engine is not None else None

    def likely_project(self) -> str | None:
        """The active project, else that of the last saved activity (opens the store:
        run it on the task runner)."""
        return self.current_project or saved_project(self.engram)

    def search(self, query: str, project: str | None = None) -> SearchAnswer:
        engram = self.engram
        flt = MemoryFilter(project=project)
        kind = RetrieverKind(engram.settings.get_str("retrieval.retriever"))
        response = engram.service.search(query, flt, SEARCH_LIMIT, kind)
        return SearchAnswer(
            query, dated(engram, response.results), response.metrics.total_ms, list(response.flags)
        )

    def error_seen(self, key_line: str) -> int:
        """An error seen outside the CLI (copied to the clipboard): feed it to the
        prediction; returns how many fixes or pitfalls it made critical."""
        engine = self.engine
        signal = Signal(SignalKind.ERROR_SEEN, self.now(), engine.current_project, error=key_line)
        return len(engine.observe(signal).critical)

    def prediction(self) -> Prediction:
        return self.engine.prediction()

    def context_for(
        self, query: str | None = None, results: list[SearchResult] | None = None
    ) -> AssembledContext:
        """The warm prediction, with the query's results first when there is one."""
        engram = self.engram
        prediction = self.engine.prediction()
        if query and results:
            found = [(r.memory, r.score) for r in results]
            prediction = with_search_results(prediction, found, query)
        profile, consent = read_profile(engram)
        return engram.assembler().assemble(prediction, None, profile, consent)

    def memory_text(self, memory: Memory) -> str:
        return render_memory(memory, Level.FULL)

    def mark(self, memory_ids: list[str], event: UsageEvent) -> None:
        engram = self.engram
        engram.lifecycle.record(memory_ids, event)
        if event in (UsageEvent.CITED, UsageEvent.USED):
            self.engine.learn_from_citations(memory_ids)

    # --- the memory browser ---------------------------------------------------------------

    def all_memories(self, limit: int = 20_000) -> list[Memory]:
        """Every memory (all tiers, superseded included), newest first."""
        return self.engram.store.query(MemoryFilter.everything(), limit=limit)

    def edit_memory(self, memory_id: str, changes: dict[str, Any]) -> Memory:
        from services.knowledge.lessons import check_plain_edit

        check_plain_edit(self.engram.store, memory_id, changes)
        return self.engram.service.edit(memory_id, changes)

    def delete_memory(self, memory_id: str) -> Memory:
        return self.engram.service.delete(memory_id).memory

    def restore_memory(self, memory: Memory) -> Memory:
        """Undo a delete: the same memory, same id and history, back in the store."""
        self.engram.service.import_memories([memory])
        return memory

    def add_memory(self, data: dict[str, Any]) -> Memory:
        return self.engram.service.add(data)

    def already_stored(self, data: dict[str, Any]) -> tuple[Memory, list[str]] | None:
        """The current memory that already holds this text, given the tags and files
        `data` brings (`engram add` does not store it twice either), and what it was
        given; None when the text is new."""
        service = self.engram.service
        copy = service.stored_copy(data)
        return None if copy is None else service.give_copy(copy, data)

    def check_added(self, memory: Memory) -> Any:
        """What a memory just added may replace or repeat (`write_check.check_added`);
        what it may replace is kept as open proposals until someone decides, as after
        `engram add` without a terminal."""
        from services.knowledge.write_check import check_added, propose

        engram = self.engram
        found = check_added(engram.store, engram.vectors, engram.embedder, memory)
        propose(engram.store, memory, found.replaces)
        return found

    # --- declared replacement (`engram add/edit --supersedes`) ------------------------------

    def replaceable(
        self, query: str, project: str | None, exclude: Sequence[str] = ()
    ) -> list[Memory]:
        """Memories of `project` (exactly: None is no project) that still hold, for the
        Replaces picker: the search's results for `query`, the newest when it is empty."""
        if query.strip():
            found = [r.memory for r in self.search(query, project).results]
        else:
            flt = MemoryFilter(project=project)
            found = self.engram.store.query(flt, limit=SEARCH_LIMIT + len(exclude))
        skip = set(exclude)
        return [
            m for m in found if m.project == project and not m.superseded_by and m.id not in skip
        ][:SEARCH_LIMIT]

    def declare_replaces(self, winner_id: str, loser_ids: Sequence[str]) -> Replacement:
        """`winner_id` replaces `loser_ids` at once. An unknown id, the memory itself or
        another project's memory is refused (a UserInputError) and nothing changes."""
        from services.knowledge.supersession import declare

        engram = self.engram
        replaced = declare(engram.store, winner_id, loser_ids)
        return Replacement(engram.store.get(winner_id), replaced)

    def hold_again(self, memory_id: str) -> tuple[Memory, str | None]:
        """A replaced (or merged) memory holds again beside what replaced it; the
        memory and what had replaced it (`engram edit --holds-again`)."""
        from services.knowledge.supersession import reinstate

        return reinstate(self.engram.store, memory_id)

    def add_replacing(self, data: dict[str, Any], loser_ids: Sequence[str]) -> Replacement:
        """Store a memory that replaces `loser_ids`, in one transaction: when the
        replacement is refused, the memory is not stored either."""
        from services.knowledge.supersession import declare

        engram = self.engram
        with engram.store.writing():
            memory = engram.service.add(data, embed=False)
            replaced = declare(engram.store, memory.id, loser_ids)
        engram.indexer.index([memory])
        return Replacement(engram.store.get(memory.id), replaced)

    # --- consent and profile ----------------------------------------------------------------

    def profile_state(self) -> tuple[bool, dict[str, str]]:
        engram = self.engram
        consent = engram.settings.get_bool("profile.consent")
        return consent, ProfileStore(engram.service).load() if consent else {}

    def set_profile_consent(self, consent: bool) -> None:
        """Turning consent off deletes the profile and its vectors first."""
        engram = self.engram
        if not consent:
            ProfileStore(engram.service).revoke()
        engram.settings.set("profile.consent", consent)

    def save_profile(self, fields: dict[str, str]) -> str:
        engram = self.engram
        consent = engram.settings.get_bool("profile.consent")
        return ProfileStore(engram.service).save(fields, consent)

    # --- consolidation findings ---------------------------------------------------------

    def pending_findings(self) -> list[Any]:
        from services.storage.findings import FindingStore

        return FindingStore(self.engram.store).pending()

    def finding_memories(self, finding: Any) -> list[Memory]:
        found = self.engram.store.get_many(finding.memory_ids)
        return [found[i] for i in finding.memory_ids if i in found]

    def answer_finding(self, finding: Any, option: str) -> bool:
        from services.rem.actions import answer
        from services.storage.findings import FindingStore

        engram = self.engram
        return answer(engram.service, FindingStore(engram.store), finding, option)

    def run_due_operations(self, stop: Any, progress: Any) -> list[Any]:
        """Run the due consolidation operations one at a time, stopping between them as
        soon as `stop` (a threading.Event) is set. Recommended options are applied only
        for operations that apply by themselves (retention); the rest become findings."""
        from app.rem import operations_due, rem_context, vectors_first
        from services.rem.cycle import run_operations

        engram = self.engram
        dues = [d for d in operations_due(engram) if d.due]
        if dues:
            vectors_first(engram, engram.data_dir, progress, stop)
        context = rem_context(engram, cancel=stop)  # a model call stops when the user is back
        reports: list[Any] = []
        try:
            for number, due in enumerate(dues, 1):
                if stop.is_set():
                    progress(f"consolidation paused after {number - 1} of {len(dues)} operations")
                    break
                progress(f"consolidating: {due.op} ({number}/{len(dues)}; {due.reason})")
                reports.extend(run_operations(context, [due.op]))
        finally:  # a loaded model is let go even when an operation fails
            if context.llm is not None:
                context.llm.close()
        return reports

    def reopen(self) -> None:
        """Close the services; the next use opens them with the current settings (a new
        embedding model, another vector store)."""
        self.close()
        self._engine = None

    def close(self) -> None:
        with self._lock:
            if self._engram is not None:
                self._engram.close()
                self._engram = None

    @staticmethod
    def now() -> datetime:
        return datetime.now(UTC)


def dated(engram: Engram, results: list[SearchResult]) -> list[SearchResult]:
    """Results whose relative phrases show their resolved dates ("yesterday
    (2026-06-09)"), for reading; the stored memories are not changed."""
    from services.text.date_answers import with_memory_dates

    times = engram.memory_dates([r.memory.id for r in results]) if results else {}
    return with_memory_dates(results, times)
