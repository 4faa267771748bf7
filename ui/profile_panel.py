"""Consent and profile: one clear switch, and the profile's fields (coding style,
languages, frameworks, goals, domain, constraints, notes).

The fields can be edited and saved only while consent is on; saving embeds the
profile. Turning consent off asks first, then deletes the profile and its vectors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.tasks import TaskRunner
from services.knowledge.profile import PROFILE_FIELDS

CONSENT_TEXT = (
    "<b>Profile memory</b><br>When this is on, Engram keeps a short profile of how you "
    "work — the fields below, nothing it collects by itself — on this machine, and adds "
    "it to the context it assembles for your assistant. When you turn it off, the "
    "profile and its search vectors are deleted."
)
STYLE = """
ProfilePanel { background: #f6f8fb; }
QLabel#explanation { color: #3b4656; }
QCheckBox#consent { font-weight: 600; color: #1f2a37; spacing: 8px; }
QFrame#card { background: white; border: 1px solid #cdd5e0; border-radius: 6px; }
QFrame#card QLabel { color: #3b4656; }
QFrame#card QLabel:disabled { color: #9aa5b3; }
QPlainTextEdit {
    padding: 2px 4px; border: 1px solid #c3cdda; border-radius: 4px; background: white;
    color: #1f2a37; selection-background-color: #bcd3f7; selection-color: #111;
}
QPlainTextEdit:focus { border-color: #2f6fde; }
QPlainTextEdit:disabled { background: #f1f3f6; border-color: #d8dee6; }
QPushButton {
    padding: 6px 16px; border: 1px solid #2f6fde; border-radius: 5px; background: #2f6fde;
    color: white; font-weight: 600;
}
QPushButton:hover { background: #2a63c7; }
QPushButton:disabled { background: #f1f3f6; border-color: #d8dee6; color: #9aa5b3; }
QLabel#status { color: #5b6b7f; font-size: 12px; }
"""


class ProfileBackend(Protocol):
    def profile_state(self) -> tuple[bool, dict[str, str]]: ...

    def set_profile_consent(self, consent: bool) -> None: ...

    def save_profile(self, fields: dict[str, str]) -> str: ...


def ask_to_revoke(parent: QWidget) -> bool:
    answer = QMessageBox.question(
        parent,
        "Turn off profile memory?",
        "Your profile and its search vectors will be deleted. This cannot be undone.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


class ProfilePanel(QWidget):
    """Signal: `message(str)` after saving or revoking."""

    message = Signal(str)

    def __init__(
        self,
        backend: ProfileBackend,
        runner: TaskRunner,
        confirm_revoke: Callable[[QWidget], bool] = ask_to_revoke,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.runner = runner
        self.confirm_revoke = confirm_revoke
        self.setWindowTitle("Engram — consent and profile")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setStyleSheet(STYLE)
        explanation = QLabel(CONSENT_TEXT)
        explanation.setObjectName("explanation")
        explanation.setWordWrap(True)
        self.consent = QCheckBox("Keep a profile and use it in context")
        self.consent.setObjectName("consent")
        self.consent.toggled.connect(self.consent_toggled)
        self.fields: dict[str, QPlainTextEdit] = {}
        card = QFrame()
        card.setObjectName("card")
        form = QFormLayout(card)
        form.setContentsMargins(16, 14, 16, 14)
        form.setHorizontalSpacing(16)
        form.setVerticalSpacing(10)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        for key, label in PROFILE_FIELDS:
            editor = QPlainTextEdit()
            editor.setFixedHeight(52 if key != "notes" else 84)
            self.fields[key] = editor
            form.addRow(label, editor)
        self.save_button = QPushButton("Save profile")
        self.save_button.clicked.connect(self.save)
        self.status = QLabel()
        self.status.setObjectName("status")
        self.status.setWordWrap(True)
        self.message.connect(self.status.setText)
        footer = QHBoxLayout()
        footer.addWidget(self.status, 1)
        footer.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 14)
        layout.setSpacing(10)
        layout.addWidget(explanation)
        layout.addWidget(self.consent)
        layout.addWidget(card)
        layout.addStretch(1)
        layout.addLayout(footer)
        self.resize(600, 660)
        self._loading = False
        self.ready = False  # True once the stored state was shown
        self.set_editable(False)

    def load(self) -> None:
        self.runner.run(self.backend.profile_state, self.loaded, self.failed)

    def loaded(self, state: tuple[bool, dict[str, str]]) -> None:
        consent, fields = state
        self._loading = True
        self.consent.setChecked(consent)
        self._loading = False
        for key, editor in self.fields.items():
            editor.setPlainText(fields.get(key, ""))
        self.set_editable(consent)
        self.ready = True

    def set_editable(self, editable: bool) -> None:
        for editor in self.fields.values():
            editor.setEnabled(editable)
        self.save_button.setEnabled(editable)

    def consent_toggled(self, checked: bool) -> None:
        if self._loading:
            return
        if checked:
            self.runner.run(
                lambda: self.backend.set_profile_consent(True),
                lambda _none: self._consent_done(True, "Profile memory is on"),
                self.failed,
            )
            return
        if not self.confirm_revoke(self):
            self._loading = True
            self.consent.setChecked(True)
            self._loading = False
            return
        self.runner.run(
            lambda: self.backend.set_profile_consent(False),
            lambda _none: self._consent_done(
                False, "Profile memory is off; the profile was deleted"
            ),
            self.failed,
        )

    def _consent_done(self, consent: bool, text: str) -> None:
        if not consent:
            for editor in self.fields.values():
                editor.clear()
        self.set_editable(consent)
        self.message.emit(text)

    def save(self) -> None:
        fields = {key: editor.toPlainText() for key, editor in self.fields.items()}
        self.runner.run(
            lambda: self.backend.save_profile(fields),
            lambda _text: self.message.emit("Profile saved"),
            self.failed,
        )

    def failed(self, error: BaseException) -> None:
        from app.errors import to_message

        self.message.emit(to_message(error).title)
