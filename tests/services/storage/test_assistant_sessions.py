"""The assistant sessions and their ledgers (services/storage/assistant_sessions.py)."""

from __future__ import annotations

import pytest

from app.composition import Engram
from services.storage import assistant_sessions as sessions


def test_a_session_is_created_once_and_updated_after(engram: Engram) -> None:
    store = engram.store
    sessions.touch_session(store, "s1", "claude", "2026-03-01T10:00:00+00:00", "shop", "/w")
    sessions.set_transcript_offset(store, "s1", 120, "2026-03-01T10:01:00+00:00")
    sessions.touch_session(
        store, "s1", "claude", "2026-03-01T10:05:00+00:00", transcript_path="/t.jsonl"
    )
    row = sessions.session_row(store, "s1")
    assert row == sessions.SessionRow(
        "s1",
        "claude",
        "shop",  # kept: the second touch knew no project
        "/w",
        "/t.jsonl",
        120,  # kept: touching a session never rewinds its transcript
        None,
        "2026-03-01T10:00:00+00:00",
        "2026-03-01T10:05:00+00:00",
    )
    assert sessions.session_row(store, "unknown") is None
    assert sessions.transcript_offset(store, "unknown") == 0


def test_the_ledger_keeps_each_memory_once_with_the_event_that_gave_it(engram: Engram) -> None:
    store = engram.store
    sessions.touch_session(store, "s1", "codex", "2026-03-01T10:00:00+00:00")
    sessions.record_injected(store, "s1", ["m1", "m2", "m1"], "session-start", "t1")
    sessions.record_injected(store, "s1", ["m2", "m3"], "prompt", "t2")
    sessions.record_injected(store, "s2", ["m9"], "prompt", "t2")
    sessions.record_injected(store, "s1", [], "prompt", "t3")  # nothing to write
    assert sessions.injected_ids(store, "s1") == {"m1", "m2", "m3"}
    assert sessions.injected_ids(store, "s2") == {"m9"}
    events = dict(
        store.database.execute_sql(
            "SELECT memory_id, event FROM session_injection WHERE session_id = 's1'"
        ).fetchall()
    )
    assert events == {"m1": "session-start", "m2": "session-start", "m3": "prompt"}


def test_a_reset_empties_one_ledger_and_forgets_its_block(engram: Engram) -> None:
    store = engram.store
    sessions.touch_session(store, "s1", "claude", "t0")
    sessions.touch_session(store, "s2", "claude", "t0")
    sessions.record_injected(store, "s1", ["m1", "m2"], "session-start", "t1")
    sessions.record_injected(store, "s2", ["m1"], "session-start", "t1")
    sessions.mark_context_given(store, "s1", "t1")
    assert sessions.session_row(store, "s1").context_at == "t1"  # type: ignore[union-attr]
    assert sessions.reset_injections(store, "s1") == 2
    assert sessions.injected_ids(store, "s1") == set()
    assert sessions.injected_ids(store, "s2") == {"m1"}
    assert sessions.session_row(store, "s1").context_at is None  # type: ignore[union-attr]


def test_offsets_are_kept_per_session_and_never_negative(engram: Engram) -> None:
    store = engram.store
    sessions.touch_session(store, "s1", "claude", "t0")
    sessions.set_transcript_offset(store, "s1", 4096, "t1")
    assert sessions.transcript_offset(store, "s1") == 4096
    with pytest.raises(ValueError):
        sessions.set_transcript_offset(store, "s1", -1, "t2")
    assert sessions.transcript_offset(store, "s1") == 4096


def test_pruning_forgets_old_sessions_and_their_ledgers_only(engram: Engram) -> None:
    store = engram.store
    sessions.touch_session(store, "old", "claude", "2026-01-01T00:00:00+00:00")
    sessions.touch_session(store, "new", "claude", "2026-03-01T00:00:00+00:00")
    sessions.record_injected(store, "old", ["m1"], "prompt", "2026-01-01T00:00:00+00:00")
    sessions.record_injected(store, "new", ["m1"], "prompt", "2026-03-01T00:00:00+00:00")
    assert sessions.prune_sessions(store, "2026-02-01T00:00:00+00:00") == 1
    assert sessions.session_row(store, "old") is None
    assert sessions.injected_ids(store, "old") == set()
    assert sessions.injected_ids(store, "new") == {"m1"}
    assert sessions.prune_sessions(store, "2026-02-01T00:00:00+00:00") == 0
