"""The quick-search popup: type, see results as you type, press Enter to copy context.

Keyboard only: arrows move, Enter copies the assembled context (the warm prediction
plus the selected query's results), Ctrl+Enter copies just the selected memory, Ctrl+U
records that it was used (a citation, which also teaches prediction), Esc closes.
Searches run on the task runner; the UI thread never waits for them, and a late answer
to an old query is dropped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.tasks import TaskRunner

TYPE_AHEAD_MS = 150
SNIPPET_CHARS = 160
POPUP_SIZE = (720, 440)
CODE_STYLE = "font-family:'DejaVu Sans Mono',monospace; background-color:#edf1f7; color:#1f2a37"
TYPE_COLORS = {
    "decision": "#2f6fde",
    "pitfall": "#c2410c",
    "fix": "#15803d",
    "convention": "#7c3aed",
    "pattern": "#0e7490",
    "workflow": "#a16207",
    "lesson": "#be185d",
}
STYLE = """
QuickSearchPopup { background: #fbfcfe; border: 1px solid #8f9db0; }
QLineEdit#query {
    font-size: 16px; padding: 7px 8px; border: 1px solid #c3cdda; border-radius: 6px;
    background: white; selection-background-color: #bcd3f7; selection-color: #111;
}
QLineEdit#query:focus { border: 1px solid #2f6fde; }
QListWidget { border: none; background: transparent; outline: none; }
QListWidget::item { border-bottom: 1px solid #e6eaf0; }
QListWidget::item:selected { background: #e4edfb; border-left: 3px solid #2f6fde; }
QLabel#status { color: #5b6b7f; font-size: 12px; padding: 2px 2px 0 2px; }
QLabel#status[tone="done"] { color: #15803d; }
QLabel#status[tone="error"] { color: #c0392b; }
QScrollBar:vertical { width: 8px; background: transparent; margin: 2px; }
QScrollBar::handle:vertical { background: #c8d0db; border-radius: 3px; min-height: 24px; }
QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical { height: 0; }
QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background: none; }
"""


class SearchBackend(Protocol):
    """What the popup needs from the app (app.desktop.Desktop provides it)."""

    def search(self, query: str, project: str | None = None) -> Any: ...

    def context_for(self, query: str | None = None, results: list[Any] | None = None) -> Any: ...

    def memory_text(self, memory: Any) -> str: ...

    def mark(self, memory_ids: list[str], event: Any) -> None: ...


def code_spans(markup: str) -> str:
    """`backticked` names in monospace, as Markdown would show them."""
    return re.sub(r"`([^`]+)`", lambda m: f'<span style="{CODE_STYLE}">{m[1]}</span>', markup)


def snippet(content: str, query: str, limit: int = SNIPPET_CHARS) -> str:
    """A window of `content` around the first query word it contains, as HTML with the
    query's words in bold and backticked names in monospace."""
    words = [w for w in re.findall(r"\w{3,}", query.lower())]
    flat = " ".join(content.split())
    lowered = flat.lower()
    start = min((i for i in (lowered.find(w) for w in words) if i >= 0), default=0)
    start = max(0, start - limit // 4)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    window = flat[start : start + limit]
    text = ("…" if start else "") + window + ("…" if start + limit < len(flat) else "")
    escaped = html.escape(text)
    for word in sorted(set(words), key=len, reverse=True):
        escaped = re.sub(f"({re.escape(word)})", r"<b>\1</b>", escaped, flags=re.IGNORECASE)
    return code_spans(escaped)


# The parts of a score the popup names without a number, and how it says each.
_PRIORS_SAID = (
    ("intent", "type asked for"),
    ("named_project", "the query's project"),  # named in it, or implied by its words
    ("asked_time", "written then"),
    ("says_when", "says when"),
    ("says_change", "says what changed"),
    ("speaker", "said by the person named"),
    ("neighbour", "beside a hit"),
)


def why_matched(result: Any) -> str:
    breakdown = result.breakdown
    parts = []
    if breakdown.dense > 0:
        parts.append(f"meaning {breakdown.dense:.2f}")
    if breakdown.lexical > 0:
        parts.append(f"words {breakdown.lexical:.2f}")
    if breakdown.matched_identifiers:
        parts.append("names: " + ", ".join(breakdown.matched_identifiers[:3]))
    parts += [said for part, said in _PRIORS_SAID if getattr(breakdown, part) > 0]
    if "replacement" in breakdown.sources:
        parts.append("holds instead of " + ", ".join(result.replaces))
    return " · ".join(parts) or "related"


def truth_note(result: Any) -> str:
    """What an open conflict says of a result, as search says it ("" when nothing)."""
    notes = []
    if result.outdated_by:
        notes.append(f"may be outdated — see {result.outdated_by}")
    if result.disagrees_with:
        notes.append(f"disagrees with {', '.join(result.disagrees_with)}; which holds is open")
    return " · ".join(notes)


class ResultRow(QFrame):
    def __init__(self, result: Any, query: str) -> None:
        super().__init__()
        memory = result.memory
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 7, 10, 8)
        layout.setSpacing(2)
        title = QLabel(f"<b>{code_spans(html.escape(memory.title))}</b>")
        project = html.escape(memory.project or "—")
        kind = memory.type.value
        color = TYPE_COLORS.get(kind, "#5b6b7f")
        meta = QLabel(
            f"<span style='color:{color}; font-weight:600'>{kind}</span>"
            f"<span style='color:#6b7a8d'> · {project} · {memory.created_at[:10]} · "
            f"{html.escape(why_matched(result))}</span>"
        )
        body = QLabel(f"<span style='color:#2d3748'>{snippet(memory.content, query)}</span>")
        body.setWordWrap(True)
        title.setWordWrap(True)
        labels = [title, meta, body]
        note = truth_note(result)
        if note:
            labels.insert(2, QLabel(f"<span style='color:#b7791f'>⚠ {html.escape(note)}</span>"))
            labels[2].setObjectName("truth")
            labels[2].setWordWrap(True)
        for label in labels:
            label.setTextFormat(Qt.TextFormat.RichText)
            layout.addWidget(label)
        meta.setStyleSheet("font-size: 12px;")


class QuickSearchPopup(QWidget):
    """Signals: `copied(str)` with a message after something went to the clipboard;
    `failed(str)` when a search or copy failed (the message is for the user)."""

    copied = Signal(str)
    failed = Signal(str)

    def __init__(
        self,
        backend: SearchBackend,
        runner: TaskRunner,
        project: Callable[[], str | None] = lambda: None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.backend = backend
        self.runner = runner
        self.project = project
        self.results: list[Any] = []
        self.answered_query = ""
        self.last_copied = ""
        self.setWindowTitle("Engram")
        self.setWindowFlags(
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
        )
        self.setMinimumWidth(640)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.query = QLineEdit()
        self.query.setObjectName("query")
        self.query.setPlaceholderText("Search your memories…  (Enter copies context, Esc closes)")
        self.query.setClearButtonEnabled(True)
        self.list = QListWidget()
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.status = QLabel("Type to search.")
        self.status.setObjectName("status")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 8)
        layout.setSpacing(8)
        layout.addWidget(self.query)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.status)
        self.setStyleSheet(STYLE)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(TYPE_AHEAD_MS)
        self.timer.timeout.connect(self.search_now)
        self.query.textChanged.connect(lambda _text: self.timer.start())
        self.query.installEventFilter(self)

    # --- searching -----------------------------------------------------------------------

    def search_now(self) -> None:
        text = self.query.text().strip()
        if not text:
            self.show_results("", [])
            self.status.setText("Type to search.")
            return
        self.set_tone("")
        self.status.setText("Searching…")
        project = self.project()
        self.runner.run(
            lambda: self.backend.search(text, project),
            lambda answer: self.on_answer(text, answer),
            self.on_error,
            channel="quick-search",
        )

    def on_answer(self, query: str, answer: Any) -> None:
        self.show_results(query, list(answer.results))
        count = len(self.results)
        noun = "result" if count == 1 else "results"
        note = " (keywords only: the model is unavailable)" if answer.flags else ""
        self.status.setText(
            f"{count} {noun} in {answer.elapsed_ms:.0f} ms{note} · Enter copies context · "
            "Ctrl+Enter copies the memory · Ctrl+U marks it used"
        )

    def on_error(self, error: BaseException) -> None:
        from app.errors import to_message

        message = to_message(error).title
        self.set_tone("error")
        self.status.setText(f"Search failed: {message}")
        self.failed.emit(message)

    def show_results(self, query: str, results: list[Any]) -> None:
        self.answered_query = query
        self.results = results
        self.list.clear()
        for result in results:
            row = ResultRow(result, query)
            item = QListWidgetItem()
            self.list.addItem(item)
            self.list.setItemWidget(item, row)
        self.fit_rows()
        if results:
            self.list.setCurrentRow(0)

    def fit_rows(self) -> None:
        """Give each row the height its wrapped text needs at the list's width."""
        width = self.list.viewport().width() if self.list.isVisible() else self.width() - 28
        for index in range(self.list.count()):
            item = self.list.item(index)
            row = self.list.itemWidget(item)
            if row is not None:
                item.setSizeHint(QSize(width, row.heightForWidth(width)))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_rows()

    def set_tone(self, tone: str) -> None:
        """Colour the status line: "done" (green), "error" (red) or "" (neutral)."""
        self.status.setProperty("tone", tone)
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)

    # --- actions -------------------------------------------------------------------------

    def selected(self) -> Any | None:
        row = self.list.currentRow()
        return self.results[row] if 0 <= row < len(self.results) else None

    def copy_context(self, fresh: str | None = None) -> None:
        """Copy the assembled context with the shown results, or with the results of
        `fresh` (text typed since the last search), searched in the same task."""
        query, results = self.answered_query, list(self.results)
        project = self.project()
        backend = self.backend

        def assemble() -> Any:
            if fresh:
                return backend.context_for(fresh, list(backend.search(fresh, project).results))
            return backend.context_for(query or None, results or None)

        self.set_tone("")
        self.status.setText("Assembling context…")
        self.runner.run(assemble, self._copy_assembled, self.on_error, channel="copy")

    def _copy_assembled(self, context: Any) -> None:
        self.last_copied = context.markdown
        QGuiApplication.clipboard().setText(context.markdown)
        message = f"Copied {context.tokens:,} tokens of context"
        if context.query:
            message += f" for “{context.query[:40]}”"
        self.set_tone("done")
        self.status.setText(message)
        self.copied.emit(message)

    def copy_selected(self) -> None:
        result = self.selected()
        if result is None:
            return
        text = self.backend.memory_text(result.memory)
        self.last_copied = text
        QGuiApplication.clipboard().setText(text)
        message = f"Copied memory {result.memory.id}"
        self.set_tone("done")
        self.status.setText(message)
        self.copied.emit(message)

    def mark_used(self) -> None:
        from services.types import UsageEvent

        result = self.selected()
        if result is None:
            return
        memory_id = result.memory.id
        self.runner.run(
            lambda: self.backend.mark([memory_id], UsageEvent.CITED),
            lambda _none: self.status.setText(f"Marked {memory_id} as used (a citation)"),
            self.on_error,
        )

    def move_selection(self, step: int) -> None:
        if not self.results:
            return
        row = min(max(self.list.currentRow() + step, 0), len(self.results) - 1)
        self.list.setCurrentRow(row)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.query and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            return self.handle_key(event)
        return super().eventFilter(watched, event)

    def handle_key(self, event: QKeyEvent) -> bool:
        key, modifiers = event.key(), event.modifiers()
        control = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
        if key == Qt.Key.Key_Down:
            self.move_selection(1)
        elif key == Qt.Key.Key_Up:
            self.move_selection(-1)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if control:
                self.copy_selected()
            elif self.timer.isActive():  # Enter right after typing: search this text first
                self.timer.stop()
                self.copy_context(fresh=self.query.text().strip())
            else:
                self.copy_context()
        elif key == Qt.Key.Key_U and control:
            self.mark_used()
        elif key == Qt.Key.Key_Escape:
            self.hide()
        else:
            return False
        return True

    def present(self) -> None:
        """Show centred near the top of the screen, focused, text selected."""
        screen = QGuiApplication.primaryScreen()
        self.resize(max(self.width(), POPUP_SIZE[0]), POPUP_SIZE[1])
        if screen is not None:
            area = screen.availableGeometry()
            self.move(area.center().x() - self.width() // 2, area.top() + area.height() // 5)
        self.show()
        self.raise_()
        self.activateWindow()
        self.query.setFocus()
        self.query.selectAll()
