"""Last-resort error handling for the desktop app: an uncaught exception (in any
thread) writes a crash report to the data folder instead of vanishing, and repeated
messages collapse so the user never sees a flood of the same notification.

Memories are safe regardless: every write is one SQLite transaction, so a crash in the
middle of one leaves the database as it was before it.
"""

from __future__ import annotations

import logging
import platform
import sys
import threading
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

log = logging.getLogger(__name__)
CRASH_FOLDER = "crash-reports"
KEEP_REPORTS = 20


def write_crash_report(data_dir: Path, error: BaseException, where: str = "main") -> Path:
    """Write a report (traceback, versions; never memory contents) and return its path."""
    folder = data_dir / CRASH_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"crash-{stamp}.txt"
    try:
        from importlib.metadata import version

        engram_version = version("engram")
    except Exception:  # not installed as a package
        engram_version = "unknown"
    lines = [
        f"Engram {engram_version} crash report ({where} thread)",
        f"time: {stamp}",
        f"python: {platform.python_version()} on {platform.platform()}",
        "",
        "".join(traceback.format_exception(error)),
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    for old in sorted(folder.glob("crash-*.txt"))[:-KEEP_REPORTS]:
        old.unlink(missing_ok=True)
    return path


class MessageThrottle:
    """Lets a message through once per `window` seconds; repeats are counted, and the
    next message that passes says how many were folded into it."""

    def __init__(self, window: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.clock = clock
        self._last: dict[str, float] = {}
        self._folded: dict[str, int] = {}

    def admit(self, message: str) -> str | None:
        now = self.clock()
        last = self._last.get(message)
        if last is not None and now - last < self.window:
            self._folded[message] = self._folded.get(message, 0) + 1
            return None
        self._last[message] = now
        folded = self._folded.pop(message, 0)
        return f"{message} (and {folded} more like it)" if folded else message


def install_crash_handler(data_dir: Path, notify: Callable[[str], None]) -> None:
    """Route uncaught exceptions of every thread to a crash report and one message."""

    def report(error: BaseException, where: str) -> None:
        try:
            path = write_crash_report(data_dir, error, where)
            notify(
                f"Engram hit an unexpected error; a report is in {path}. Your memories are safe."
            )
        except Exception:  # the handler itself must never raise
            log.exception("could not write a crash report")

    def main_hook(
        kind: type[BaseException], error: BaseException, trace: TracebackType | None
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, error, trace)
            return
        report(error, "main")

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            report(args.exc_value, args.thread.name if args.thread else "a")

    sys.excepthook = main_hook
    threading.excepthook = thread_hook
