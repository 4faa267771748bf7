"""Idle consolidation: starts only when the user is away and the machine quiet, stops
at the next operation boundary when the user is back, and can be paused."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.idle import IdleConsolidator, IdleMonitor
from app.tasks import TaskRunner


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_monitor_needs_both_absence_and_a_quiet_machine() -> None:
    clock = Clock()
    load = [0.5]
    monitor = IdleMonitor(10, 1.5, clock, lambda: load[0])
    assert not monitor.idle()
    clock.now = 601
    assert monitor.idle()
    load[0] = 3.0
    assert not monitor.idle()
    load[0] = 0.5
    monitor.touch()
    assert not monitor.idle()


def test_runs_when_idle_and_stops_when_the_user_returns(qtbot: Any) -> None:
    clock = Clock()
    monitor = IdleMonitor(10, 99, clock, lambda: 0.0)
    ran: list[str] = []
    started = threading.Event()

    def run_due(stop: threading.Event, progress: Callable[[str], None]) -> list[str]:
        for op in ("retention", "staleness", "duplicates"):
            if stop.is_set():
                break
            progress(op)
            ran.append(op)
            started.set()
            time.sleep(0.2)
        return list(ran)

    runner = TaskRunner()
    consolidator = IdleConsolidator(run_due, runner, monitor, check_every_ms=10)
    consolidator.check()
    assert ran == []  # the user was just here
    clock.now = 601
    with qtbot.waitSignal(consolidator.finished, timeout=5000) as finished:
        consolidator.check()
        assert started.wait(3)
        consolidator.user_active()  # back: stop after the current operation
    assert finished.args[0] == ["retention"]
    assert not consolidator.running
    runner.shutdown()


def test_paused_never_starts(qtbot: Any) -> None:
    clock = Clock()
    clock.now = 10_000
    monitor = IdleMonitor(0, 99, clock, lambda: 0.0)
    calls: list[int] = []
    runner = TaskRunner()
    consolidator = IdleConsolidator(lambda stop, progress: calls.append(1) or [], runner, monitor)
    consolidator.set_paused(True)
    consolidator.check()
    qtbot.wait(50)
    assert calls == []
    consolidator.set_paused(False)
    with qtbot.waitSignal(consolidator.finished, timeout=3000):
        consolidator.check()
    assert calls == [1]
    runner.shutdown()


def test_desktop_runs_due_operations_in_order(data_dir: Path) -> None:
    from app.composition import open_engram
    from app.desktop import Desktop
    from services.rem.registry import names
    from tests.fakes import HashEmbedder

    engram = open_engram(data_dir, embedder=HashEmbedder())
    for copy in range(2):
        engram.service.add({"id": f"d{copy}", "project": "p", "content": "Ship on Fridays."})
    desktop = Desktop(data_dir, engram)
    notes: list[str] = []
    reports = desktop.run_due_operations(threading.Event(), notes.append)
    assert [r.op for r in reports] == names()  # all due: never ran
    assert len(desktop.pending_findings()) == 1  # a finding, not applied
    assert notes[0].startswith(f"consolidating: retention (1/{len(names())}")
    stopped = threading.Event()
    stopped.set()
    assert desktop.run_due_operations(stopped, notes.append) == []  # nothing due, or stopped
    desktop.close()


@pytest.mark.usefixtures("generous_model_time")
def test_a_returning_user_stops_the_model_call_itself(data_dir: Path) -> None:
    """The consolidator's stop event is the model runner's cancel event: a call in
    progress stops at its next token, not at the end of the operation."""
    from app.composition import open_engram
    from app.rem import rem_context
    from services.llm.base import LLMCancelled
    from services.rem.cycle import run_operations
    from services.rem.registry import default_schedules
    from services.rem.schedule import due_operations
    from tests.fakes import HashEmbedder, ScriptedLLM

    engram = open_engram(data_dir, embedder=HashEmbedder())
    stop = threading.Event()
    context = rem_context(engram, cancel=stop)
    assert context.llm.cancel_event is stop
    stop.set()
    with pytest.raises(LLMCancelled):
        context.llm.complete("hello")
    engram.service.add({"id": "m", "content": "We keep money as integer cents.",
                        "type": "decision"})  # fmt: skip
    context.llm = ScriptedLLM([LLMCancelled("the user came back")])
    (report,) = run_operations(context, ["facts"])
    assert report.cancelled and report.error and report.error.startswith("cancelled")
    status = engram.store.database.execute_sql("SELECT status FROM rem_run").fetchall()
    assert status == [("cancelled",)]
    (due,) = due_operations(engram.store, ["facts"], schedules=default_schedules())
    assert due.due and due.reason == "never ran"  # runs again next time
    engram.close()


def test_a_failing_operation_still_lets_the_model_go(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded model holds hundreds of MB: an operation that raises must not keep it."""
    import services.rem.cycle as cycle
    from app.composition import open_engram
    from app.desktop import Desktop
    from tests.fakes import HashEmbedder

    engram = open_engram(data_dir, embedder=HashEmbedder())
    engram.service.add({"id": "d0", "project": "p", "content": "Ship on Fridays."})
    closed: list[bool] = []
    real_runner = engram.llm_runner

    def watched_runner(**kwargs: Any) -> Any:
        runner = real_runner(**kwargs)
        close = runner.close

        def counted_close() -> None:
            closed.append(True)
            close()

        runner.close = counted_close
        return runner

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("operation failed")

    monkeypatch.setattr(engram, "llm_runner", watched_runner)
    monkeypatch.setattr(cycle, "run_operations", failing)
    desktop = Desktop(data_dir, engram)
    with pytest.raises(RuntimeError, match="operation failed"):
        desktop.run_due_operations(threading.Event(), lambda note: None)
    assert closed == [True]
    desktop.close()
