"""The one task runner for background work in the desktop app.

Work that touches the database or a model runs on one worker thread (SQLite writes and
model calls never overlap); results and errors come back on the Qt main thread through
a signal, so callbacks may touch widgets and the work itself must not. A task started
under a `channel` supersedes earlier ones of that channel: their late results are
dropped (type-ahead search never shows an old query's answer).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Outcome:
    number: int
    channel: str | None
    result: Any
    error: BaseException | None
    on_done: Callable[[Any], None] | None
    on_error: Callable[[BaseException], None] | None


class TaskRunner(QObject):
    """Runs callables off the UI thread. Signals: `finished(object)` carries an internal
    outcome to the main thread; `busy_changed(bool)` says whether work is pending."""

    finished = Signal(object)
    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-task")
        self._numbers = itertools.count(1)
        self._latest: dict[str, int] = {}
        self._pending = 0
        self._closed = False
        self.finished.connect(self._deliver)

    def run(
        self,
        work: Callable[[], Any],
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        channel: str | None = None,
    ) -> Future[Any]:
        """Run `work()` in the background; `on_done(result)` or `on_error(exception)`
        run later on the main thread, unless a newer task of `channel` was started."""
        if self._closed:  # the app is quitting: late requests are dropped, not errors
            dropped: Future[Any] = Future()
            dropped.cancel()
            return dropped
        number = next(self._numbers)
        if channel is not None:
            self._latest[channel] = number
        self._set_pending(+1)

        def job() -> Any:
            try:
                result = work()
            except BaseException as error:  # delivered to on_error on the main thread
                self.finished.emit(_Outcome(number, channel, None, error, on_done, on_error))
                return None
            self.finished.emit(_Outcome(number, channel, result, None, on_done, on_error))
            return result

        return self._executor.submit(job)

    def is_current(self, channel: str, number: int) -> bool:
        return self._latest.get(channel) == number

    def _deliver(self, outcome: _Outcome) -> None:
        self._set_pending(-1)
        if outcome.channel is not None and not self.is_current(outcome.channel, outcome.number):
            return  # superseded: a newer task of this channel owns the answer
        if outcome.error is not None:
            if outcome.on_error is not None:
                outcome.on_error(outcome.error)
            else:
                log.error("background task failed", exc_info=outcome.error)
        elif outcome.on_done is not None:
            outcome.on_done(outcome.result)

    def _set_pending(self, change: int) -> None:
        before = self._pending
        self._pending += change
        if (before == 0) != (self._pending == 0):
            self.busy_changed.emit(self._pending > 0)

    def shutdown(self, wait: bool = True) -> None:
        self._closed = True
        self._executor.shutdown(wait=wait, cancel_futures=True)
