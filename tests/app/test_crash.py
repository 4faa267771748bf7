"""The crash handler writes a report and keeps quiet about repeats."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from app.crash import (
    CRASH_FOLDER,
    KEEP_REPORTS,
    MessageThrottle,
    install_crash_handler,
    write_crash_report,
)


def test_report_has_the_traceback_and_old_ones_are_pruned(tmp_path: Path) -> None:
    try:
        raise ValueError("boom in the index")
    except ValueError as error:
        for _ in range(KEEP_REPORTS + 3):
            path = write_crash_report(tmp_path, error)
    text = path.read_text()
    assert "ValueError: boom in the index" in text and "crash report" in text
    assert len(list((tmp_path / CRASH_FOLDER).glob("crash-*.txt"))) == KEEP_REPORTS


def test_uncaught_errors_in_threads_and_main_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    messages: list[str] = []
    install_crash_handler(tmp_path, messages.append)

    def explode() -> None:
        raise RuntimeError("worker failed")

    thread = threading.Thread(target=explode, name="engram-task")
    thread.start()
    thread.join()
    try:
        raise KeyError("main failed")
    except KeyError as error:
        sys.excepthook(KeyError, error, error.__traceback__)
    reports = sorted((tmp_path / CRASH_FOLDER).glob("crash-*.txt"))
    assert len(reports) == 2 and len(messages) == 2
    assert "engram-task thread" in reports[0].read_text()
    assert "memories are safe" in messages[0]


def test_throttle_collapses_repeats() -> None:
    now = [0.0]
    throttle = MessageThrottle(window=60, clock=lambda: now[0])
    assert throttle.admit("database locked") == "database locked"
    assert throttle.admit("database locked") is None
    assert throttle.admit("database locked") is None
    assert throttle.admit("other") == "other"
    now[0] = 61
    assert throttle.admit("database locked") == "database locked (and 2 more like it)"
