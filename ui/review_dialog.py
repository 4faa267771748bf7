"""Reviewing what consolidation proposes: one finding at a time, its memories, and its
options as buttons (the recommended one first and default). Answers run on the task
runner; the dialog moves to the next finding when one is answered."""

from __future__ import annotations

import html
from typing import Any, Protocol

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.tasks import TaskRunner


class ReviewBackend(Protocol):
    def pending_findings(self) -> list[Any]: ...

    def finding_memories(self, finding: Any) -> list[Any]: ...

    def answer_finding(self, finding: Any, option: str) -> bool: ...


class ReviewDialog(QWidget):
    """Signals: `remaining(int)` after each load (how many findings wait)."""

    remaining = Signal(int)

    def __init__(self, backend: ReviewBackend, runner: TaskRunner) -> None:
        super().__init__()
        self.backend = backend
        self.runner = runner
        self.findings: list[Any] = []
        self.current: Any = None
        self.skipped: set[str] = set()  # skipped in this dialog: shown again next time
        self.setWindowTitle("Engram — review findings")
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.body = QTextBrowser()
        self.buttons_row = QHBoxLayout()
        self.status = QLabel()
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.body, 1)
        layout.addLayout(self.buttons_row)
        layout.addWidget(self.status)
        self.option_buttons: dict[str, QPushButton] = {}
        self.resize(720, 480)

    def load(self) -> None:
        self.runner.run(self._fetch, self._loaded, self._failed, channel="review")

    def _fetch(self) -> tuple[list[Any], list[Any]]:
        findings = [f for f in self.backend.pending_findings() if f.id not in self.skipped]
        memories = self.backend.finding_memories(findings[0]) if findings else []
        return findings, memories

    def _loaded(self, result: tuple[list[Any], list[Any]]) -> None:
        self.findings, memories = result
        self.remaining.emit(len(self.findings))
        for button in self.option_buttons.values():
            self.buttons_row.removeWidget(button)
            button.deleteLater()
        self.option_buttons = {}
        if not self.findings:
            self.current = None
            later = f" ({len(self.skipped)} skipped for later)" if self.skipped else ""
            self.heading.setText(f"<b>Nothing to review.</b> No open proposals{later}.")
            self.body.clear()
            return
        finding = self.current = self.findings[0]
        self.heading.setText(
            f"<b>{html.escape(finding.kind.replace('_', ' ').capitalize())}</b> — "
            f"1 of {len(self.findings)}<br>{html.escape(finding.summary)}"
        )
        parts = []
        for memory in memories:
            parts.append(
                f"<p><b>{html.escape(memory.title)}</b> <span style='color:#5b6b7f'>"
                f"({memory.type.value} · {html.escape(memory.id)} · {memory.created_at[:10]})"
                f"</span><br>{html.escape(memory.content)}</p>"
            )
        options = sorted(finding.options, key=lambda o: o.name != finding.recommended)
        parts.append("<hr>")
        for option in options:
            mark = " <i>(recommended)</i>" if option.name == finding.recommended else ""
            parts.append(
                f"<p><b>{html.escape(option.label)}</b>{mark}: {html.escape(option.action)}</p>"
            )
        self.body.setHtml("".join(parts))
        for option in options:
            button = QPushButton(option.label)
            button.setDefault(option.name == finding.recommended)
            button.clicked.connect(lambda _checked=False, name=option.name: self.choose(name))
            self.buttons_row.addWidget(button)
            self.option_buttons[option.name] = button

    def choose(self, option: str) -> None:
        finding = self.current
        if finding is None:
            return
        for button in self.option_buttons.values():
            button.setEnabled(False)

        def done(changed: bool) -> None:
            verb = "applied" if changed else ("left open" if option == "skip" else "answered")
            self.status.setText(f"{finding.id}: {option} ({verb})")
            if option == "skip":  # stays open for a later review; move on for now
                self.skipped.add(finding.id)
            self.load()

        self.runner.run(lambda: self.backend.answer_finding(finding, option), done, self._failed)

    def _failed(self, error: BaseException) -> None:
        from app.errors import to_message

        self.status.setText(to_message(error).title)
        for button in self.option_buttons.values():
            button.setEnabled(True)
