"""Quick add: a small dialog for one memory — type, title, content, tags, file refs and
project (pre-filled from the current activity). It validates through the same rules as
every other input and says what is wrong next to the form; nothing is stored until the
memory is valid.

**Replaces…** opens a picker of the project's memories that still hold (type to search;
check the ones the new memory replaces). Saving then stores the memory and declares the
replacement in one transaction (as `engram add --supersedes`): the replaced memories get
`valid_to` and `superseded_by`, history kept, and the dialog says what no longer holds.
The picker (`ReplacesPicker`) is also the memory browser's "Replaces…"."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.tasks import TaskRunner
from services.memory import Memory
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
QLabel#done {
    color: #166534; background: #eefaf1; border: 1px solid #b9e4c6; border-radius: 4px;
    padding: 6px 8px;
}
QLabel#muted { color: #5b6b7f; }
QTreeWidget {
    border: 1px solid #c3cdda; border-radius: 4px; background: white; color: #1f2a37;
    outline: none;
}
QTreeWidget::item { padding: 3px 2px; border-bottom: 1px solid #edf0f4; }
QTreeWidget::item:selected { background: #e4edfb; color: #1f2a37; }
QHeaderView::section {
    background: #eef2f7; color: #3b4656; padding: 3px 6px; border: none;
    border-bottom: 1px solid #cdd5e0;
}
QPushButton:checked { background: #e4edfb; border-color: #9db5dc; }
QPushButton {
    padding: 6px 16px; border: 1px solid #c3cdda; border-radius: 5px; background: white;
    color: #1f2a37; min-width: 64px;
}
QPushButton:hover { background: #eef3fb; border-color: #9db5dc; }
QPushButton:pressed { background: #dde8f8; }
QPushButton:default { background: #2f6fde; border-color: #2f6fde; color: white; font-weight: 600; }
QPushButton:default:hover { background: #2a63c7; }
"""


SEARCH_DELAY_MS = 200
PICKER_HEIGHT = 170


def split_list(text: str) -> list[str]:
    """Comma- or newline-separated items, trimmed, empties dropped."""
    return [item.strip() for line in text.splitlines() for item in line.split(",") if item.strip()]


PICKER_COLUMNS = ("Memory", "Type", "Created")


class Replacing(Protocol):
    """What the picker and the add dialog need (app.desktop.Desktop provides it)."""

    def replaceable(
        self, query: str, project: str | None, exclude: Sequence[str] = ()
    ) -> list[Memory]: ...

    def add_replacing(self, data: dict[str, Any], loser_ids: Sequence[str]) -> Any: ...

    def already_stored(self, data: dict[str, Any]) -> tuple[Memory, list[str]] | None: ...

    def check_added(self, memory: Memory) -> Any: ...


class ReplacesPicker(QWidget):
    """Type to search the memories of one project that still hold; check the ones that
    are replaced. Checked ones stay listed, first, while the search changes. The search
    runs on `runner` when there is one (else at once). Signal: `changed()`."""

    changed = Signal()

    def __init__(
        self,
        find: Callable[[str, str | None, Sequence[str]], list[Memory]],
        project: Callable[[], str | None],
        exclude: Sequence[str] = (),
        runner: TaskRunner | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.lookup = find
        self.project = project
        self.exclude = list(exclude)
        self.runner = runner
        self.picked: dict[str, Memory] = {}
        self.found: list[Memory] = []
        self.shown: dict[str, Memory] = {}
        self.query = QLineEdit()
        self.query.setPlaceholderText("Type to find the memories it replaces…")
        self.query.setClearButtonEnabled(True)
        self.list = QTreeWidget()
        self.list.setHeaderLabels(list(PICKER_COLUMNS))
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setMinimumHeight(PICKER_HEIGHT)
        header = self.list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.list.itemChanged.connect(self._toggled)
        self.note = QLabel()
        self.note.setObjectName("muted")
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(SEARCH_DELAY_MS)
        self.timer.timeout.connect(self.search)
        self.query.textChanged.connect(lambda _t: self.timer.start())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        layout.addWidget(self.note)

    def picked_ids(self) -> list[str]:
        return list(self.picked)

    def search(self) -> None:
        """Search now (typing searches after a short pause)."""
        self.timer.stop()
        query, project = self.query.text(), self.project()
        exclude = list(self.exclude)

        def work() -> list[Memory]:
            return self.lookup(query, project, exclude)

        self.note.setText("Searching…")
        if self.runner is None:
            try:
                self.show_found(work())
            except Exception as error:  # shown under the list
                self.search_failed(error)
            return
        self.runner.run(work, self.show_found, self.search_failed, channel="replaces-picker")

    def show_found(self, found: list[Memory]) -> None:
        self.found = found
        self._fill()
        project = self.project() or "no project"
        if found:
            self.note.setText(f"Memories of {project} that still hold; check what it replaces.")
        elif self.query.text().strip():
            self.note.setText(f"Nothing in {project} that still holds matches.")
        else:
            self.note.setText(f"{project} has no memories that still hold.")

    def search_failed(self, error: BaseException) -> None:
        from app.errors import to_message

        self.note.setText(to_message(error).title)

    def _fill(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        shown = [*self.picked.values(), *(m for m in self.found if m.id not in self.picked)]
        self.shown = {m.id: m for m in shown}
        for memory in shown:
            item = QTreeWidgetItem([plain_title(memory), memory.type.value, memory.created_at[:10]])
            item.setData(0, Qt.ItemDataRole.UserRole, memory.id)
            item.setToolTip(0, f"{memory.id}: {memory.content}")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = memory.id in self.picked
            item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            self.list.addTopLevelItem(item)
        self.list.blockSignals(False)

    def listed_ids(self) -> list[str]:
        """The ids listed, top to bottom."""
        return list(self.shown)

    def set_checked(self, memory_id: str, checked: bool = True) -> None:
        """Check (or uncheck) a listed memory, as a click on its box does."""
        for row in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(row)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) == memory_id:
                state = Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked
                item.setCheckState(0, state)
                return
        raise KeyError(memory_id)

    def _toggled(self, item: QTreeWidgetItem, _column: int) -> None:
        memory_id = item.data(0, Qt.ItemDataRole.UserRole)
        if item.checkState(0) == Qt.CheckState.Checked:
            self.picked[memory_id] = self.shown[memory_id]
        else:
            self.picked.pop(memory_id, None)
        self.changed.emit()

    def clear_picked(self) -> None:
        self.picked.clear()
        self._fill()
        self.changed.emit()


def plain_title(memory: Memory) -> str:
    """A title as the picker shows it: without backticks."""
    return memory.title.replace("`", "")


def picked_summary(picked: Sequence[Memory], saved: bool = False) -> str:
    """What the picked memories become: "“X” — will no longer hold" (after saving:
    "no longer holds")."""
    if not picked:
        return "None declared" if saved else "Nothing: it adds to what holds"
    titles = "; ".join(f"“{plain_title(m)}”" for m in picked[:2])
    more = f" and {len(picked) - 2} more" if len(picked) > 2 else ""
    verb = "will no longer hold"
    if saved:
        verb = "no longer holds" if len(picked) == 1 else "no longer hold"
    return f"{titles}{more} — {verb}"


class AddMemoryDialog(QDialog):
    """Signal: `saved(object)` with the stored memory."""

    saved = Signal(object)

    def __init__(
        self,
        store_memory: Callable[[dict[str, Any]], Any],
        project: str | None = None,
        parent: QWidget | None = None,
        memory: Any = None,
        replacing: Replacing | None = None,
        runner: TaskRunner | None = None,
    ) -> None:
        """With `memory`, the dialog edits it (its fields pre-filled) instead of adding.
        With `replacing` (and not editing), it offers **Replaces…**; the picker searches
        on `runner` when given."""
        super().__init__(parent)
        self.store_memory = store_memory
        self.editing = memory
        self.replacing = replacing if memory is None else None
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
        self.status = QLabel()
        self.status.setObjectName("done")
        self.status.setWordWrap(True)
        self.status.hide()
        self.picker: ReplacesPicker | None = None
        replaces_row: QWidget | None = None
        if self.replacing is not None:
            self.picker = ReplacesPicker(self.replacing.replaceable, self._project, runner=runner)
            self.picker.hide()
            self.picker.changed.connect(self._picked_changed)
            self.replaces_button = QPushButton("Replaces…")
            self.replaces_button.setCheckable(True)
            self.replaces_button.setToolTip(
                "Pick the memories this one replaces: they stop holding when it is saved "
                "(kept as history)"
            )
            self.replaces_button.toggled.connect(self.show_picker)
            self.replaces_summary = QLabel(picked_summary([]))
            self.replaces_summary.setObjectName("muted")
            self.replaces_summary.setWordWrap(True)
            replaces_row = QWidget()
            row = QHBoxLayout(replaces_row)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(10)
            row.addWidget(self.replaces_button)
            row.addWidget(self.replaces_summary, 1)
            self.project.editingFinished.connect(self._project_changed)
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
        if replaces_row is not None and self.picker is not None:
            form.addRow("", replaces_row)
            form.addRow("", self.picker)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        for button in buttons.buttons():
            button.setIcon(QIcon())  # plain text buttons, as in the other windows
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        self.buttons = buttons
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 14)
        layout.setSpacing(12)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.resize(560, 460 if self.replacing is not None else 420)
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

    def _project(self) -> str | None:
        return self.project.text().strip() or None

    def suggest_project(self, project: str | None) -> None:
        """Fill in the project found after the dialog opened, unless one was typed."""
        if project and not self.project.text().strip() and self.project.isEnabled():
            self.project.setText(project)
            self._project_changed()

    def show_picker(self, shown: bool) -> None:
        """Open (and search, the newest first) or close the Replaces picker."""
        if self.picker is None:
            return
        if self.replaces_button.isChecked() != shown:
            self.replaces_button.setChecked(shown)  # calls back here
            return
        self.picker.setVisible(shown)
        if shown:
            self.resize(self.width(), max(self.height(), 640))
            self.picker.search()
            self.picker.query.setFocus()

    def _project_changed(self) -> None:
        if self.picker is not None and self.picker.isVisible():
            self.picker.search()

    def _picked_changed(self) -> None:
        if self.picker is not None:
            self.replaces_summary.setText(picked_summary(list(self.picker.picked.values())))

    def save(self) -> bool:
        from app.errors import to_message

        replaces = self.picker.picked_ids() if self.picker is not None else []
        replacement = None
        try:
            copy = None
            if not replaces and self.replacing is not None:
                copy = self.replacing.already_stored(self.values())
            if copy is not None:
                stored, given = copy
                self.error.hide()
                self.status.setText(
                    f"Already stored as “{plain_title(stored)}” ({stored.id}): not stored "
                    "again" + (f"; it now also has {', '.join(given)}." if given else ".")
                )
                self.status.show()
                return False
            if replaces and self.replacing is not None:
                replacement = self.replacing.add_replacing(self.values(), replaces)
                memory = replacement.winner
            else:
                memory = self.store_memory(self.values())
        except Exception as error:  # shown next to the form; nothing was stored
            message = to_message(error)
            self.error.setText("\n".join([message.title, *message.problems]))
            self.error.show()
            return False
        self.error.hide()
        self.saved.emit(memory)
        if replacement is not None:
            self.done_replacing(replacement.summary())
            return True
        said = self._checked(memory)
        if said:
            self._finish(f"Saved. {said}")
        else:
            self.accept()
        return True

    def _checked(self, memory: Memory) -> str:
        """What the new memory may replace or repeat, in words ("" when nothing, or when
        the check could not run: the memory is stored either way)."""
        if self.replacing is None:
            return ""
        try:
            found = self.replacing.check_added(memory)
        except Exception:  # the idle cycle looks again
            return ""
        lines = [
            f"It may {'replace' if c.kind == 'supersedes' else 'contradict'} "
            f"“{plain_title(c.memory)}”: {c.reason}."
            for c in found.replaces[:3]
        ]
        if lines:
            lines.append("Open until you decide (Review findings).")
        lines += [
            f"It may repeat “{plain_title(c.memory)}”: the review offers to merge them."
            for c in found.repeats[:3]
        ]
        return "\n".join(lines)

    def done_replacing(self, summary: str) -> None:
        """Saved with replacements: the dialog stays to say what no longer holds."""
        self._finish(f"Saved. {summary}.")

    def _finish(self, text: str) -> None:
        """Saved: the form is read-only and the dialog stays to show `text`."""
        self.status.setText(text)
        self.status.show()
        for widget in (self.type, self.title, self.content, self.tags, self.file_refs):
            widget.setEnabled(False)
        self.project.setEnabled(False)
        if self.picker is not None:
            self.replaces_button.setChecked(False)  # closes the picker
            self.replaces_button.setEnabled(False)
            picked = list(self.picker.picked.values())
            self.replaces_summary.setText(picked_summary(picked, saved=True))
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save.hide()
        close = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        close.setText("Close")
        close.setDefault(True)
