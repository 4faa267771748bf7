"""Consolidation while the user is away: the desktop app runs the due REM operations
when there has been no watched activity and no interaction for `rem.idle_minutes` and
the machine is not busy (1-minute load average below `rem.max_load`). It reports
progress, can be paused, and stops at the next operation boundary as soon as the user
comes back (each operation commits on its own, so stopping loses nothing).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.tasks import TaskRunner


class IdleMonitor:
    """Whether the user has been away long enough and the machine is quiet."""

    def __init__(
        self,
        idle_minutes: float,
        max_load: float,
        clock: Callable[[], float] = time.monotonic,
        load: Callable[[], float] = lambda: os.getloadavg()[0],
    ) -> None:
        self.idle_seconds = idle_minutes * 60
        self.max_load = max_load
        self.clock = clock
        self.load = load
        self.last_activity = clock()

    def touch(self) -> None:
        self.last_activity = self.clock()

    def idle(self) -> bool:
        away = self.clock() - self.last_activity >= self.idle_seconds
        return away and self.load() < self.max_load


class IdleConsolidator(QObject):
    """Signals: `progress(str)` as operations run; `finished(object)` with the reports
    (a list) when a run ends, completed or stopped."""

    progress = Signal(str)
    finished = Signal(object)

    def __init__(
        self,
        run_due: Callable[[threading.Event, Callable[[str], None]], list[Any]],
        runner: TaskRunner,
        monitor: IdleMonitor,
        check_every_ms: int = 60_000,
    ) -> None:
        super().__init__()
        self.run_due = run_due
        self.runner = runner
        self.monitor = monitor
        self.paused = False
        self.running = False
        self.stop_event = threading.Event()
        self.timer = QTimer(self)
        self.timer.setInterval(check_every_ms)
        self.timer.timeout.connect(self.check)

    def start(self) -> None:
        self.timer.start()

    def check(self) -> None:
        """Start a run when idle, not paused and not already running."""
        if self.paused or self.running or not self.monitor.idle():
            return
        self.running = True
        self.stop_event.clear()
        self.runner.run(
            lambda: self.run_due(self.stop_event, self.progress.emit),
            self._done,
            self._failed,
        )

    def user_active(self) -> None:
        """The user is back: note it, and stop a run at the next operation boundary."""
        self.monitor.touch()
        if self.running:
            self.stop_event.set()

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        if paused and self.running:
            self.stop_event.set()

    def _done(self, reports: list[Any]) -> None:
        self.running = False
        self.finished.emit(reports)

    def _failed(self, error: BaseException) -> None:
        self.running = False
        self.finished.emit([])
        self.progress.emit(f"consolidation failed: {error}")
