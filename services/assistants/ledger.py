"""One assistant session's ledger: what it was given, whether it has its context block,
how far its transcript was read. A thin, session-bound view of
`services.storage.assistant_sessions`, which owns the tables."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from services.memory import now_iso
from services.storage import assistant_sessions as sessions
from services.storage.assistant_sessions import SessionRow
from services.storage.memories import MemoryStore

KEEP_DAYS = 30  # a session not heard from for this long is forgotten, with its ledger


class SessionLedger:
    def __init__(
        self, store: MemoryStore, session_id: str, clock: Callable[[], str] = now_iso
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.clock = clock
        self.row: SessionRow | None = None

    def open(
        self,
        assistant: str,
        project: str | None = None,
        cwd: str | None = None,
        transcript_path: str | None = None,
    ) -> SessionRow | None:
        """Record the session as active now (creating it when new) and read it back."""
        sessions.touch_session(
            self.store, self.session_id, assistant, self.clock(), project, cwd, transcript_path
        )
        self.row = sessions.session_row(self.store, self.session_id)
        return self.row

    def given(self) -> set[str]:
        return sessions.injected_ids(self.store, self.session_id)

    def give(self, memory_ids: Iterable[str], event: str) -> None:
        sessions.record_injected(self.store, self.session_id, memory_ids, event, self.clock())

    def forget_given(self) -> int:
        """The assistant's context was cleared or compacted: what it was given is gone."""
        forgotten = sessions.reset_injections(self.store, self.session_id)
        self.row = sessions.session_row(self.store, self.session_id)
        return forgotten

    @property
    def has_context(self) -> bool:
        """Whether the session holds its context block (given, and not forgotten since)."""
        return self.row is not None and self.row.context_at is not None

    def mark_context_given(self) -> None:
        sessions.mark_context_given(self.store, self.session_id, self.clock())
        self.row = sessions.session_row(self.store, self.session_id)

    def transcript_read_to(self, offset: int) -> None:
        sessions.set_transcript_offset(self.store, self.session_id, offset, self.clock())
        self.row = sessions.session_row(self.store, self.session_id)


def prune_old_sessions(store: MemoryStore, keep_days: int = KEEP_DAYS) -> int:
    """Forget sessions not active for `keep_days`, with their ledgers."""
    cutoff = datetime.now(UTC) - timedelta(days=keep_days)
    return sessions.prune_sessions(store, cutoff.isoformat(timespec="seconds"))
