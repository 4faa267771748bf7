"""Quick add: a small dialog for one memory — type, title, content, tags, file refs and
project (pre-filled from the current activity). It validates through the same rules as
every other input and says what is wrong next to the form; nothing is stored until the
memory is valid."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
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

NARROW_EDITOR = 200  # the type; text fields take the row
STYLE = """
AddMemoryDialog { background: #f6f8fb; }
QLabel { color: #3b4656; }
QLineEdit, QPlainTextEdit {
    padding: 4px 6px; border: 1px solid #c3cdda; border-radius: 4px; background: white;
    color: #1f2a37; selection-background-color: #bcd3f7; selection-color: #111;
}
QLineEdit:focus, QPlainTextEdit:focus { border-color: #2f6fde; }
QLabel#error {
    color: #c0392b; background: #fdf0ee; border: 1px solid #f2c4bd; border-radius: 4px;
    padding: 6px 8px;
}
QPushButton {
    padding: 6px 16px; border: 1px solid #c3cdda; border-radius: 5px; background: white;
    color: #1f2a37; min-width: 64px;
}
QPushButton:hover { background: #eef3fb; border-color: #9db5dc; }
QPushButton:pressed { background: #dde8f8; }
QPushButton:default { background: #2f6fde; border-color: #2f6fde; color: white; font-weight: 600; }
QPushButton:default:hover { background: #2a63c7; }
"""


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
        memory: Any = None,
    ) -> None:
        """With `memory`, the dialog edits it (its fields pre-filled) instead of adding."""
        super().__init__(parent)
        self.store_memory = store_memory
        self.editing = memory
        self.setWindowTitle("Edit memory" if memory is not None else "Add a memory")
        self.setStyleSheet(STYLE)
        self.type = QComboBox()
        self.type.setFixedWidth(NARROW_EDITOR)
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
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.hide()
        form = QFormLayout()
        form.setHorizontalSpacing(14)
        form.setVerticalSpacing(10)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        form.addRow("Type", self.type)
        form.addRow("Title", self.title)
        form.addRow("Content", self.content)
        form.addRow("Tags", self.tags)
        form.addRow("Files", self.file_refs)
        form.addRow("Project", self.project)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        for button in buttons.buttons():
            button.setIcon(QIcon())  # plain text buttons, as in the other windows
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 14)
        layout.setSpacing(12)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(560, 420)
        if memory is not None:
            self.type.setCurrentText(memory.type.value)
            self.title.setText(memory.title)
            self.content.setPlainText(memory.content)
            self.tags.setText(", ".join(memory.tags))
            self.file_refs.setText(", ".join(memory.file_refs))
            self.project.setText(memory.project or "")

    def values(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": self.type.currentText(),
            "content": self.content.toPlainText(),
            "tags": split_list(self.tags.text()),
            "file_refs": split_list(self.file_refs.text()),
        }
        if self.editing is None:
            data["source"] = "explicit"
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
