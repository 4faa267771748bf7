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
from ui.popup import code_spans

STYLE = """
ReviewDialog { background: #f6f8fb; }
QLabel#heading { color: #1f2a37; }
QTextBrowser {
    padding: 6px 8px; border: 1px solid #cdd5e0; border-radius: 6px; background: white;
    color: #1f2a37; selection-background-color: #bcd3f7; selection-color: #111;
}
QPushButton {
    padding: 6px 16px; border: 1px solid #c3cdda; border-radius: 5px; background: white;
    color: #1f2a37;
}
QPushButton:hover { background: #eef3fb; border-color: #2f6fde; }
QPushButton#recommended {
    border-color: #2f6fde; background: #2f6fde; color: white; font-weight: 600;
}
QPushButton#recommended:hover { background: #2a63c7; }
QPushButton:disabled { background: #f1f3f6; border-color: #d8dee6; color: #9aa5b3; }
QLabel#status { color: #5b6b7f; font-size: 12px; }
"""


def kind_label(finding: Any) -> str:
    """What the reviewer reads as the heading: "Duplicate", "Contradiction (supersedes)"…"""
    kind = finding.kind.replace("_", " ")
    if finding.op == "contradictions":
        return "Contradiction" if kind == "contradiction" else f"Contradiction ({kind})"
    return str(kind.capitalize())


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
        self.setStyleSheet(STYLE)
        self.heading = QLabel()
        self.heading.setObjectName("heading")
        self.heading.setWordWrap(True)
        self.body = QTextBrowser()
        self.buttons_row = QHBoxLayout()
        self.buttons_row.setSpacing(8)
        self.buttons_row.addStretch(1)  # the option buttons line up on the right
        self.status = QLabel()
        self.status.setObjectName("status")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 12)
        layout.setSpacing(10)
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
            self.body.hide()  # no empty box under the one line that matters
            self.adjustSize()
            return
        self.body.show()
        finding = self.current = self.findings[0]
        waiting = len(self.findings)
        later = f" ({len(self.skipped)} skipped for later)" if self.skipped else ""
        self.heading.setText(
            f"<b>{html.escape(kind_label(finding))}</b> — 1 of {waiting}{later}<br>"
            f"{code_spans(html.escape(finding.summary))}"
        )
        parts = []
        proposed = finding.proposal()
        if proposed is not None:
            title, content = proposed
            parts.append(
                f"<p style='background:#eef4fb;padding:6px'><b>Proposed: "
                f"{code_spans(html.escape(title))}</b><br>"
                f"{code_spans(html.escape(content)).replace(chr(10), '<br>')}</p>"
                + ("<p style='color:#5b6b7f'>From these memories:</p>" if memories else "")
            )
        for memory in memories:
            parts.append(
                f"<p><b>{code_spans(html.escape(memory.title))}</b> "
                "<span style='color:#5b6b7f'>"
                f"({memory.type.value} · {html.escape(memory.id)} · {memory.created_at[:10]})"
                f"</span><br>{code_spans(html.escape(memory.content))}</p>"
            )
        options = sorted(finding.options, key=lambda o: o.name != finding.recommended)
        parts.append("<hr>")
        for option in options:
            mark = " <i>(recommended)</i>" if option.name == finding.recommended else ""
            parts.append(
                f"<p><b>{html.escape(option.label)}</b>{mark}: "
                f"{code_spans(html.escape(option.action))}</p>"
            )
        self.body.setHtml("".join(parts))
        for option in options:
            button = QPushButton(option.label)
            button.setDefault(option.name == finding.recommended)
            if option.name == finding.recommended:
                button.setObjectName("recommended")
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
            chosen = finding.option(option).label
            verb = "applied" if changed else ("left open" if option == "skip" else "answered")
            self.status.setText(f"Last: {kind_label(finding).lower()} — {chosen} ({verb})")
            if option == "skip":  # stays open for a later review; move on for now
                self.skipped.add(finding.id)
            self.load()

        self.runner.run(lambda: self.backend.answer_finding(finding, option), done, self._failed)

    def _failed(self, error: BaseException) -> None:
        from app.errors import to_message

        self.status.setText(to_message(error).title)
        for button in self.option_buttons.values():
            button.setEnabled(True)
