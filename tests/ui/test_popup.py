"""The quick-search popup with pytest-qt (offscreen): typing, results, keys, clipboard,
and a UI thread that never waits for a search."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication

from app.desktop import Desktop
from app.tasks import TaskRunner
from services.search.retrieval import ScoreBreakdown, SearchResult
from services.types import UsageEvent
from tests.fakes import HashEmbedder
from tests.services.builders import make_memory
from ui.popup import QuickSearchPopup, snippet


@dataclass
class Answer:
    results: list[SearchResult]
    elapsed_ms: float = 3.0
    flags: list[str] = field(default_factory=list)


@dataclass
class Context:
    markdown: str
    tokens: int
    query: str | None = None


def result(memory_id: str, content: str, score: float = 0.8) -> SearchResult:
    memory = make_memory(content, id=memory_id, project="shop", title=f"Title {memory_id}")
    return SearchResult(memory, score, ScoreBreakdown(0.7, 0.5, 0.0, 0.0, ("parse_date",)))


class FakeBackend:
    """Answers by query; `delays` makes a query slow (seconds)."""

    def __init__(self) -> None:
        self.delays: dict[str, float] = {}
        self.searched: list[str] = []
        self.marked: list[tuple[list[str], UsageEvent]] = []
        self.contexts: list[tuple[str | None, list[str]]] = []

    def search(self, query: str, project: str | None = None) -> Answer:
        self.searched.append(query)
        time.sleep(self.delays.get(query, 0.0))
        return Answer([result(f"{query}-1", f"About {query} here."), result(f"{query}-2", "x")])

    def context_for(self, query: str | None = None, results: list[Any] | None = None) -> Context:
        ids = [r.memory.id for r in results or []]
        self.contexts.append((query, ids))
        return Context(f"<engram-context>{query}: {', '.join(ids)}</engram-context>", 42, query)

    def memory_text(self, memory: Any) -> str:
        return f"memory {memory.id}"

    def mark(self, memory_ids: list[str], event: UsageEvent) -> None:
        self.marked.append((memory_ids, event))


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def popup(qtbot: Any, backend: FakeBackend) -> Iterator[QuickSearchPopup]:
    runner = TaskRunner()
    widget = QuickSearchPopup(backend, runner)
    qtbot.addWidget(widget)
    widget.present()
    yield widget
    runner.shutdown()


def type_text(qtbot: Any, popup: QuickSearchPopup, text: str) -> None:
    qtbot.keyClicks(popup.query, text)


def test_typing_shows_results_with_why_they_matched(qtbot: Any, popup: QuickSearchPopup) -> None:
    type_text(qtbot, popup, "dates")
    qtbot.waitUntil(lambda: len(popup.results) == 2, timeout=3000)
    assert popup.list.count() == 2 and popup.list.currentRow() == 0
    assert "2 results" in popup.status.text()
    row = popup.list.itemWidget(popup.list.item(0))
    text = " ".join(label.text() for label in row.findChildren(type(popup.status)))
    assert "Title dates-1" in text and "shop" in text
    assert "meaning 0.70" in text and "names: parse_date" in text
    assert "<b>dates</b>" in text


def test_type_ahead_is_debounced(qtbot: Any, popup: QuickSearchPopup, backend: FakeBackend) -> None:
    type_text(qtbot, popup, "invoice")
    qtbot.waitUntil(lambda: popup.answered_query == "invoice", timeout=3000)
    assert backend.searched == ["invoice"]  # not one search per keystroke


def test_enter_copies_the_assembled_context(
    qtbot: Any, popup: QuickSearchPopup, backend: FakeBackend
) -> None:
    type_text(qtbot, popup, "refunds")
    qtbot.waitUntil(lambda: popup.answered_query == "refunds", timeout=3000)
    with qtbot.waitSignal(popup.copied, timeout=3000) as signal:
        qtbot.keyClick(popup.query, Qt.Key.Key_Return)
    assert signal.args == ["Copied 42 tokens of context for “refunds”"]
    clipboard = QGuiApplication.clipboard().text()
    assert clipboard == "<engram-context>refunds: refunds-1, refunds-2</engram-context>"
    assert "42 tokens" in popup.status.text()


def test_enter_right_after_typing_uses_the_new_text(
    qtbot: Any, popup: QuickSearchPopup, backend: FakeBackend
) -> None:
    type_text(qtbot, popup, "fresh")
    with qtbot.waitSignal(popup.copied, timeout=3000):
        qtbot.keyClick(popup.query, Qt.Key.Key_Return)
    assert backend.contexts[-1] == ("fresh", ["fresh-1", "fresh-2"])


def test_arrows_select_and_ctrl_enter_copies_one_memory(
    qtbot: Any, popup: QuickSearchPopup
) -> None:
    type_text(qtbot, popup, "cache")
    qtbot.waitUntil(lambda: len(popup.results) == 2, timeout=3000)
    qtbot.keyClick(popup.query, Qt.Key.Key_Down)
    assert popup.list.currentRow() == 1
    qtbot.keyClick(popup.query, Qt.Key.Key_Down)
    assert popup.list.currentRow() == 1  # stays on the last
    qtbot.keyClick(popup.query, Qt.Key.Key_Up)
    qtbot.keyClick(popup.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "memory cache-1"


def test_ctrl_u_records_a_use(qtbot: Any, popup: QuickSearchPopup, backend: FakeBackend) -> None:
    type_text(qtbot, popup, "deploy")
    qtbot.waitUntil(lambda: len(popup.results) == 2, timeout=3000)
    qtbot.keyClick(popup.query, Qt.Key.Key_U, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: backend.marked == [(["deploy-1"], UsageEvent.CITED)], timeout=3000)


def test_escape_hides(qtbot: Any, popup: QuickSearchPopup) -> None:
    assert popup.isVisible()
    qtbot.keyClick(popup.query, Qt.Key.Key_Escape)
    assert not popup.isVisible()


def test_slow_search_never_blocks_and_late_answers_are_dropped(
    qtbot: Any, popup: QuickSearchPopup, backend: FakeBackend
) -> None:
    backend.delays["slow"] = 1.5
    type_text(qtbot, popup, "slow")
    qtbot.waitUntil(lambda: backend.searched == ["slow"], timeout=3000)
    # While the slow search runs, the event loop keeps turning: a timer fires, typing works.
    ticks: list[float] = []
    started = time.monotonic()
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic() - started))
    timer.start(20)
    popup.query.clear()
    type_text(qtbot, popup, "fast")
    qtbot.wait(300)
    timer.stop()
    assert len(ticks) >= 5, "the UI thread was blocked by the search"
    assert popup.query.text() == "fast"
    qtbot.waitUntil(lambda: popup.answered_query == "fast", timeout=5000)
    qtbot.wait(200)
    assert [r.memory.id for r in popup.results] == ["fast-1", "fast-2"]
    assert popup.answered_query == "fast"  # the slow answer arrived later and was dropped


def test_errors_become_a_message(qtbot: Any, popup: QuickSearchPopup, backend: FakeBackend) -> None:
    def broken(query: str, project: str | None = None) -> Answer:
        from services.errors import StoreUnavailable

        raise StoreUnavailable("engram.sqlite3: the database is locked")

    backend.search = broken  # type: ignore[method-assign]
    with qtbot.waitSignal(popup.failed, timeout=3000) as signal:
        type_text(qtbot, popup, "x")
    assert "locked" in signal.args[0]
    assert "Search failed" in popup.status.text()


def test_snippet_highlights_and_escapes() -> None:
    text = "<script> Before. " + "filler " * 40 + "The refund window closes."
    html = snippet(text, "refund window")
    assert "<b>refund</b>" in html and "<b>window</b>" in html
    assert "<script>" not in html and html.startswith("…")


def test_real_desktop_search_and_context(qtbot: Any, data_dir: Path) -> None:
    from app.composition import open_engram

    engram = open_engram(data_dir, embedder=HashEmbedder())
    engram.service.add(
        {"content": "Refunds go through `issue_refund` only.", "project": "shop", "id": "r1"}
    )
    desktop = Desktop(data_dir, engram)
    runner = TaskRunner()
    widget = QuickSearchPopup(desktop, runner)
    qtbot.addWidget(widget)
    try:
        widget.present()
        type_text(qtbot, widget, "issue_refund")
        qtbot.waitUntil(lambda: [r.memory.id for r in widget.results] == ["r1"], timeout=5000)
        with qtbot.waitSignal(widget.copied, timeout=5000):
            qtbot.keyClick(widget.query, Qt.Key.Key_Return)
        copied = QGuiApplication.clipboard().text()
        assert copied.startswith("<engram-context ") and "r1" in copied
        assert threading.current_thread() is threading.main_thread()
    finally:
        runner.shutdown()
        desktop.close()


def test_why_a_result_matched_names_each_part_of_its_score() -> None:
    from ui.popup import why_matched

    memory = make_memory("Her name is Shadow!")
    plain = SearchResult(memory, 0.5, ScoreBreakdown(0.41, 0.0, 0.0))
    assert why_matched(plain) == "meaning 0.41"
    beside = SearchResult(
        memory, 0.6, ScoreBreakdown(0.41, 0.5, 0.0, asked_time=1.0, neighbour=0.7)
    )
    assert why_matched(beside) == "meaning 0.41 · words 0.50 · written then · beside a hit"
    changed = SearchResult(memory, 0.2, ScoreBreakdown(0.0, 0.0, 0.0, says_change=1.0))
    assert why_matched(changed) == "says what changed"
    spoken = SearchResult(memory, 0.2, ScoreBreakdown(0.0, 0.0, 0.0, speaker=1.0))
    assert why_matched(spoken) == "said by the person named"
    # Named in the query or implied by its words: "project named" was shown for both.
    implied = SearchResult(memory, 0.2, ScoreBreakdown(0.0, 0.0, 0.0, named_project=1.0))
    assert why_matched(implied) == "the query's project"
    # A replacement the search did not match itself, brought in above the note it replaces.
    from services.knowledge.supersession import BROUGHT_IN

    brought = SearchResult(memory, 0.5, BROUGHT_IN, replaces=("old-1",))
    assert why_matched(brought) == "holds instead of old-1"
    assert why_matched(SearchResult(memory, 0.0, ScoreBreakdown(0.0, 0.0, 0.0))) == "related"


def test_a_result_an_open_conflict_questions_says_so(qtbot: Any) -> None:
    from PySide6.QtWidgets import QLabel

    from ui.popup import ResultRow, truth_note

    memory = make_memory("Open PRs against v2.", id="old", title="base branch")
    plain = SearchResult(memory, 0.5, ScoreBreakdown(0.4, 0.0, 0.0))
    outdated = SearchResult(memory, 0.5, ScoreBreakdown(0.4, 0.0, 0.0), outdated_by="new")
    disputed = SearchResult(
        memory, 0.5, ScoreBreakdown(0.4, 0.0, 0.0), disagrees_with=("other", "third")
    )
    assert truth_note(plain) == ""
    assert truth_note(outdated) == "may be outdated — see new"
    assert truth_note(disputed) == "disagrees with other, third; which holds is open"
    row = ResultRow(outdated, "branch")
    qtbot.addWidget(row)
    (shown,) = [label for label in row.findChildren(QLabel) if label.objectName() == "truth"]
    assert "may be outdated — see new" in shown.text()
    quiet = ResultRow(plain, "branch")
    qtbot.addWidget(quiet)
    assert not [label for label in quiet.findChildren(QLabel) if label.objectName() == "truth"]
