"""Quick add: a small dialog for one memory — type, title, content, tags, file refs and
project (pre-filled from the current activity). It validates through the same rules as
every other input and says what is wrong next to the form; nothing is stored until the
memory is valid."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from services.types import MemoryType


def split_list(text: str) -> list[str]:
    """Comma- or newline-separated items, trimmed, empties dropped."""
    return [item.strip() for line in text.splitlines() for item in line.split(",") if item.strip()]


class AddMemoryDialog(QDialog):
    """Signal: `saved(object)` with the stored memory."""

    saved = Signal(object)

    def __init__(
        self,
        store_memory: Callable[[dict[str, Any]], Any],
        project: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.store_memory = store_memory
        self.setWindowTitle("Add a memory")
        self.type = QComboBox()
        self.type.addItems([t.value for t in MemoryType])
        self.type.setCurrentText(MemoryType.DECISION.value)
        self.title = QLineEdit()
        self.title.setPlaceholderText("Optional: the first sentence is used")
        self.content = QPlainTextEdit()
        self.content.setPlaceholderText("What should be remembered? Code in ``` fences is fine.")
        self.tags = QLineEdit()
        self.tags.setPlaceholderText("comma-separated")
        self.file_refs = QLineEdit()
        self.file_refs.setPlaceholderText("paths or globs, comma-separated: src/billing/**")
        self.project = QLineEdit(project or "")
        self.error = QLabel()
        self.error.setStyleSheet("color: #c0392b;")
        self.error.setWordWrap(True)
        self.error.hide()
        form = QFormLayout()
        form.addRow("Type", self.type)
        form.addRow("Title", self.title)
        form.addRow("Content", self.content)
        form.addRow("Tags", self.tags)
        form.addRow("Files", self.file_refs)
        form.addRow("Project", self.project)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(560, 420)

    def values(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": self.type.currentText(),
            "content": self.content.toPlainText(),
            "tags": split_list(self.tags.text()),
            "file_refs": split_list(self.file_refs.text()),
            "source": "explicit",
        }
        if self.title.text().strip():
            data["title"] = self.title.text().strip()
        if self.project.text().strip():
            data["project"] = self.project.text().strip()
        return data

    def save(self) -> bool:
        from app.errors import to_message

        try:
            memory = self.store_memory(self.values())
        except Exception as error:  # shown next to the form; nothing was stored
            message = to_message(error)
            self.error.setText("\n".join([message.title, *message.problems]))
            self.error.show()
            return False
        self.error.hide()
        self.saved.emit(memory)
        self.accept()
        return True
