"""The task runner: results on the main thread, superseded answers dropped, errors
delivered, busy state, and quiet after shutdown."""

from __future__ import annotations

import threading
import time
from typing import Any

from app.tasks import TaskRunner


def test_results_arrive_on_the_main_thread(qtbot: Any) -> None:
    runner = TaskRunner()
    seen: list[tuple[int, bool]] = []
    worker: list[str] = []

    def work() -> int:
        worker.append(threading.current_thread().name)
        return 7

    runner.run(
        work,
        lambda value: seen.append((value, threading.current_thread() is threading.main_thread())),
    )
    qtbot.waitUntil(lambda: seen == [(7, True)], timeout=3000)
    assert worker[0].startswith("engram-task")
    runner.shutdown()


def test_a_newer_task_of_a_channel_supersedes_the_older(qtbot: Any) -> None:
    runner = TaskRunner()
    answers: list[str] = []

    def slow() -> str:
        time.sleep(0.3)
        return "old"

    runner.run(slow, answers.append, channel="search")
    runner.run(lambda: "new", answers.append, channel="search")
    qtbot.waitUntil(lambda: answers == ["new"], timeout=3000)
    qtbot.wait(100)
    assert answers == ["new"]
    runner.shutdown()


def test_errors_and_busy_state(qtbot: Any) -> None:
    runner = TaskRunner()
    states: list[bool] = []
    errors: list[str] = []
    runner.busy_changed.connect(states.append)

    def broken() -> None:
        raise ValueError("bad input")

    runner.run(broken, on_error=lambda error: errors.append(str(error)))
    qtbot.waitUntil(lambda: errors == ["bad input"], timeout=3000)
    assert states == [True, False]
    runner.shutdown()
    future = runner.run(lambda: 1)  # after shutdown: dropped, no exception
    assert future.cancelled()
