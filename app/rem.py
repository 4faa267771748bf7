"""The consolidation cycle as the app runs it: its context (services, LLM, session gap)
and its schedules, both from the settings; the CLI and the tray use these."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from services.rem.context import RemContext
from services.rem.schedule import Due, Schedule, due_operations, parse_schedule


def schedules(settings: Any) -> dict[str, Schedule]:
    """Each operation's schedule (`rem.schedule.<op>` settings)."""
    from app.settings import SCHEMA
    from services.rem.registry import OPERATIONS

    keys = {setting.key for setting in SCHEMA}
    return {
        op.name: parse_schedule(settings.get(f"rem.schedule.{op.name}"))
        if f"rem.schedule.{op.name}" in keys
        else op.schedule
        for op in OPERATIONS
    }


def rem_context(
    engram: Any,
    project: str | None = None,
    now: datetime | None = None,
    cancel: threading.Event | None = None,
) -> RemContext:
    """The cycle's context; its LLM loads a model only when first asked (close it).
    Setting `cancel` stops a model call in progress (the user came back)."""
    return RemContext(
        engram.service,
        engram.vectors,
        engram.embedder.model_id,
        project,
        now,
        engram.llm_runner(cancel=cancel),
        session_gap_minutes=engram.settings.get_float("rem.session_gap_minutes"),
    )


def operations_due(
    engram: Any, ops: list[str] | None = None, now: datetime | None = None
) -> list[Due]:
    """Whether each operation (default: all) is due, and why."""
    from services.rem.registry import names

    return due_operations(
        engram.store,
        list(ops or names()),
        now,
        engram.settings.get_float("rem.session_gap_minutes"),
        schedules=schedules(engram.settings),
    )


def vectors_first(
    engram: Any,
    data_dir: Path,
    say: Callable[[str], None],
    stop: threading.Event | None = None,
    wait_seconds: float | None = None,
) -> int:
    """Before a cycle, the memories still waiting for vectors get them, so duplicates,
    contradictions, links and clusters compare every memory, not only those embedded
    so far: embedded here, or waited for while a background embedder holds the lock.
    Says what it does; returns how many memories were waiting."""
    from app.background import embedding_lock

    model = engram.embedder.model_id
    waiting = int(engram.store.pending_count(model))
    if not waiting:
        return 0
    say(
        f"{waiting} memories have no vectors yet: embedding them first, so the cycle "
        "sees every memory"
    )
    if wait_seconds is None:
        wait_seconds = engram.settings.get_float("rem.vector_wait_s")
    deadline = time.monotonic() + wait_seconds
    while engram.store.pending_count(model):
        with embedding_lock(data_dir) as held:
            if held:
                engram.service.catch_up()
                break
        if (stop is not None and stop.is_set()) or time.monotonic() > deadline:
            left = int(engram.store.pending_count(model))
            say(
                f"{left} memories are still being embedded by another process; the cycle "
                "compares only the memories that have vectors (the next one sees the rest)"
            )
            break
        time.sleep(0.5)
    return waiting
