"""`MemoryService`: the operations users ask for, each keeping SQLite, FTS5 and Chroma in
step: add, edit, delete, import, ingest `MEMORY:` lines, search, record usage.

A write lands in SQLite first (the source of truth, with its FTS rows in the same
transaction); embedding follows and, if it fails, the record stays queued. Before it
lands, every text passes the incoming-text gate (`services.text.incoming`): a memory
over the size limit is refused, secrets are replaced by `[redacted:kind]` and counted
into the `redacted` counter a caller passes (the reports of import and ingest say it
themselves). After an
add, or an edit that changes what a memory says, the write hooks given by the
composition root run (the contradiction queue is one); the service knows none of them.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.errors import EngramError, Problem, ValidationFailed
from services.filters import MemoryFilter
from services.memories.lifecycle import Lifecycle
from services.memory import Memory, memory_from_dict
from services.search.retrieval import HybridRetriever, RetrieverKind, SearchResponse
from services.storage import contradictions as conflicts
from services.storage.memories import MemoryStore
from services.text.capture import parse_memory_lines
from services.text.incoming import IncomingText
from services.types import Source, UsageEvent
from services.vectors.indexing import Indexer

log = logging.getLogger(__name__)

WriteHook = Callable[[MemoryStore, Memory], object]
"""Runs after a memory is added, or edited so that what it says changed."""


@dataclass(frozen=True)
class Deleted:
    memory: Memory
    held_again: tuple[str, ...]  # the memories it had replaced, which hold again


ResultHook = Callable[[MemoryStore, SearchResponse, int, MemoryFilter], SearchResponse]
"""Reorders or marks a search's results (given the limit); the composition root gives
the one that ranks what holds now above what it replaced."""


@dataclass(frozen=True)
class ImportReport:
    imported: int
    skipped: int
    embedded: int
    redacted: dict[str, int] = field(default_factory=dict)  # kind: count, stored memories


@dataclass(frozen=True)
class IngestReport:
    stored: list[Memory]
    problems: list[Problem]
    redacted: dict[str, int] = field(default_factory=dict)
    already_stored: list[str] = field(default_factory=list)  # ids holding a line's text


class MemoryService:
    def __init__(
        self,
        store: MemoryStore,
        indexer: Indexer,
        retriever: HybridRetriever,
        lifecycle: Lifecycle,
        write_hooks: Sequence[WriteHook] = (),
        result_hooks: Sequence[ResultHook] = (),
        incoming: IncomingText | None = None,
    ) -> None:
        self.store = store
        self.incoming = incoming or IncomingText()
        self.indexer = indexer
        self.retriever = retriever
        self.lifecycle = lifecycle
        self.write_hooks = tuple(write_hooks)
        self.result_hooks = tuple(result_hooks)

    def _written(self, memory: Memory) -> None:
        for hook in self.write_hooks:
            hook(self.store, memory)

    def add(
        self,
        data: dict[str, Any],
        default_project: str | None = None,
        embed: bool = True,
        redacted: Counter[str] | None = None,
    ) -> Memory:
        memory, problems = memory_from_dict(data, "memory", default_project)
        if memory is None:
            raise ValidationFailed("the memory is invalid; nothing was stored", problems)
        self.incoming.check_size(memory.title, memory.content)
        memory = self.incoming.memory(memory, Counter() if redacted is None else redacted)
        self.store.add(memory)
        self._written(memory)
        if embed:
            self.indexer.index([memory])
        return memory

    def stored_copy(
        self, data: dict[str, Any], default_project: str | None = None
    ) -> Memory | None:
        """The current memory that already holds what `add(data)` would store: the same
        project and, once secrets are redacted, the same text (an assistant told twice
        to remember one thing). None when there is none or `data` is invalid (`add`
        says what is wrong)."""
        memory, _ = memory_from_dict(data, "memory", default_project)
        if memory is None or self.incoming.size_problem(memory.title, memory.content):
            return None
        memory = self.incoming.memory(memory, Counter())
        copies = self.store.current_with_text(memory.project, memory.content)
        return copies[0] if copies else None

    def give_copy(
        self, copy: Memory, data: dict[str, Any], embed: bool = True
    ) -> tuple[Memory, list[str]]:
        """Give `copy` (the `stored_copy` of `data`) the tags and file references `data`
        brings that it lacks, so that adding a text again loses nothing; returns the
        memory and what it was given."""
        tags = list(dict.fromkeys([*copy.tags, *data.get("tags", [])]))
        files = list(dict.fromkeys([*copy.file_refs, *data.get("file_refs", [])]))
        brought = [t for t in tags if t not in copy.tags]
        brought += [f for f in files if f not in copy.file_refs]
        if not brought:
            return copy, []
        return self.edit(copy.id, {"tags": tags, "file_refs": files}, embed=embed), brought

    def edit(
        self,
        memory_id: str,
        changes: dict[str, Any],
        embed: bool = True,
        redacted: Counter[str] | None = None,
    ) -> Memory:
        """Change fields; a change of text (or project) re-queues the vectors, which are
        replaced now when `embed`, else by whoever embeds next."""
        before = self.store.get(memory_id)
        title, content = changes.get("title", before.title), changes.get("content", before.content)
        if isinstance(title, str) and isinstance(content, str):  # else the store refuses it
            self.incoming.check_size(title, content, memory_id)
        changes = self.incoming.fields(changes, Counter() if redacted is None else redacted)
        updated = self.store.update(memory_id, changes)
        changed = any(
            getattr(before, name) != getattr(updated, name)
            for name in ("title", "content", "tags", "file_refs", "project")
        )
        if before.title != updated.title or before.content != updated.content:
            with self.store.writing():  # what the open conflicts said of the old text
                conflicts.remove_open_about(self.store, memory_id)
        if changed and updated.superseded_by is None:
            self._written(updated)
        if changed and embed:
            self.indexer.remove(before)
            self.indexer.index([updated])
        return updated

    def delete(self, memory_id: str, remove_vectors: bool = True) -> Deleted:
        """Delete the record, with the conflicts that name it; the memories it replaced
        hold again. Its vectors go now, or (if another process is writing vectors) at
        the next reconcile, which removes orphans."""
        memory = self.store.get(memory_id)
        held_again = self.store.delete(memory_id)
        if remove_vectors:
            self.indexer.remove(memory)
        return Deleted(memory, tuple(held_again))

    def import_memories(
        self,
        memories: Sequence[Memory],
        replace: bool = False,
        skip_existing: bool = False,
        embed: bool = True,
    ) -> ImportReport:
        """Store all or nothing (a memory over the size limit refuses the whole import);
        embed now, or leave the vectors queued (`embed=False`) for a background embedder
        (`catch_up`)."""
        too_large = [
            Problem(f"memory {memory.id}", problem)
            for memory in memories
            if (problem := self.incoming.size_problem(memory.title, memory.content))
        ]
        if too_large:
            raise ValidationFailed("too large to store; nothing was imported", too_large)
        found: dict[str, Counter[str]] = {}
        gated = [self.incoming.memory(m, found.setdefault(m.id, Counter())) for m in memories]
        stored, skipped = self.store.add_many(gated, replace, skip_existing)
        if replace and embed:
            for memory in stored:
                self.indexer.remove(memory)
        embedded = self.indexer.index(stored) if embed else 0
        redacted = sum((found[m.id] for m in stored), Counter[str]())
        return ImportReport(len(stored), len(skipped), embedded, dict(redacted))

    def ingest(
        self,
        text: str,
        where: str,
        project: str | None,
        session_id: str | None = None,
        embed: bool = True,
    ) -> IngestReport:
        captured, problems = parse_memory_lines(text, where)
        memories: list[Memory] = []
        already: list[str] = []
        told: dict[tuple[str | None, str], str] = {}  # (project, text) → id, this text's
        redacted: Counter[str] = Counter()
        for item in captured:
            memory, found = memory_from_dict(
                {
                    "type": item.type.value,
                    "title": item.title,
                    "content": item.content,
                    "source": Source.AUTOMATIC.value,
                    "session_id": session_id,
                },
                f"{where}:{item.line}",
                project,
            )
            problems.extend(found)
            if memory is None:
                continue
            too_large = self.incoming.size_problem(memory.title, memory.content)
            if too_large:
                problems.append(Problem(f"{where}:{item.line}", too_large))
                continue
            memory = self.incoming.memory(memory, redacted)
            said = (memory.project, memory.content.strip())
            copies = self.store.current_with_text(memory.project, memory.content)
            if copies or said in told:  # a line told again, in an earlier text or this one
                already.append(copies[0].id if copies else told[said])
                continue
            told[said] = memory.id
            memories.append(memory)
        if memories:
            self.store.add_many(memories)
            if embed:
                self.indexer.index(memories)
        return IngestReport(memories, problems, dict(redacted), already)

    def search(
        self,
        query: str,
        flt: MemoryFilter | None = None,
        limit: int = 10,
        kind: RetrieverKind = RetrieverKind.HYBRID,
        record_retrieval: bool = False,
    ) -> SearchResponse:
        response = self.retriever.search(query, flt, limit, kind)
        for hook in self.result_hooks:
            response = hook(self.store, response, limit, flt or MemoryFilter())
        if record_retrieval:
            self.record_read([r.memory.id for r in response.results])
        return response

    def record_read(self, memory_ids: Sequence[str]) -> None:
        """Reading counts as use (staleness asks when a memory was last read). One short
        write for all the ids; a read never fails because it could not be recorded."""
        if not memory_ids or self.store.read_only:
            return
        try:
            self.lifecycle.record(list(dict.fromkeys(memory_ids)), UsageEvent.RETRIEVED)
        except EngramError as error:
            log.warning("reading of %d memories not recorded: %s", len(memory_ids), error)

    def catch_up(self, limit: int | None = None) -> int:
        """Embed records that are waiting (after an embedder outage or a reconcile)."""
        return self.indexer.process_pending(limit)
