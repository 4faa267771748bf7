"""The memory browser: every memory in a filterable, sortable table (project, type,
tier, date, confidence, title), its full text beside it, and edit, delete (with undo),
archive/restore, pin (the hot tier, which reflexive searches look at first) and
"Replaces…" (the selected memory replaces others of its project, picked as in the add
dialog: they stop holding at once, history kept, as `engram edit ID --supersedes`).

All reads and writes go through the `BrowserBackend` on the task runner; the table
is refreshed from the store after each change."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any, Protocol

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.tasks import TaskRunner
from services.memory import Memory
from services.types import PINNED_TAG, MemoryType, Tier
from ui.popup import CODE_STYLE, TYPE_COLORS, code_spans

COLUMNS = ("Project", "Type", "Tier", "Created", "Conf.", "Title")
COLUMN_WIDTHS = (96, 100, 60, 100, 54)  # the title takes the rest (was cut at ~25 characters)
_Index = QModelIndex | QPersistentModelIndex
MUTED = "#5b6b7f"
STYLE = """
MemoryBrowser { background: #f6f8fb; }
QLineEdit {
    padding: 5px 8px; border: 1px solid #c3cdda; border-radius: 5px; background: white;
    selection-background-color: #bcd3f7; selection-color: #111;
}
QLineEdit:focus { border-color: #2f6fde; }
QComboBox { min-width: 120px; }
QTableView {
    background: white; border: 1px solid #cdd5e0; outline: none; color: #1f2a37;
}
QTableView::item { padding: 0 4px; border-bottom: 1px solid #edf0f4; }
QTableView::item:selected { background: #e4edfb; color: #1f2a37; }
QHeaderView::section {
    background: #eef2f7; color: #3b4656; padding: 5px 6px; border: none;
    border-bottom: 1px solid #cdd5e0; border-right: 1px solid #dfe5ed; font-weight: 600;
}
QTextBrowser { background: white; border: 1px solid #cdd5e0; padding: 6px 8px; }
QPushButton {
    padding: 5px 14px; border: 1px solid #c3cdda; border-radius: 5px; background: white;
    color: #1f2a37;
}
QPushButton:hover { background: #eef3fb; border-color: #9db5dc; }
QPushButton:pressed { background: #dde8f8; }
QPushButton:disabled { color: #9aa5b3; background: #f1f3f6; border-color: #d8dee6; }
QLabel#status { color: #5b6b7f; font-size: 12px; }
QSplitter::handle { background: transparent; }
QScrollBar:vertical { width: 8px; background: transparent; margin: 2px; }
QScrollBar::handle:vertical { background: #c8d0db; border-radius: 3px; min-height: 24px; }
QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical { height: 0; }
QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background: none; }
"""
FENCE = re.compile(r"```[\w+-]*\n?(.*?)(?:```|$)", re.DOTALL)


def content_html(content: str) -> str:
    """A memory's text as HTML: line breaks kept, backticked names in monospace and
    fenced code as a block, as Markdown would show them."""
    parts = []
    position = 0
    for fence in FENCE.finditer(content):
        parts.append(_prose(content[position : fence.start()]))
        code = html.escape(fence[1].strip("\n"))
        parts.append(f'<pre style="{CODE_STYLE}; white-space: pre-wrap">{code}</pre>')
        position = fence.end()
    parts.append(_prose(content[position:]))
    return "".join(parts)


def _prose(text: str) -> str:
    text = text.strip("\n")
    if not text:
        return ""
    return f"<p style='white-space: pre-wrap'>{code_spans(html.escape(text))}</p>"


class BrowserBackend(Protocol):
    def all_memories(self) -> list[Memory]: ...

    def replaceable(
        self, query: str, project: str | None, exclude: Sequence[str] = ()
    ) -> list[Memory]: ...

    def declare_replaces(self, winner_id: str, loser_ids: Sequence[str]) -> Any: ...

    def hold_again(self, memory_id: str) -> tuple[Memory, str | None]: ...

    def edit_memory(self, memory_id: str, changes: dict[str, Any]) -> Memory: ...

    def delete_memory(self, memory_id: str) -> Memory: ...

    def restore_memory(self, memory: Memory) -> Memory: ...


class MemoryTable(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.memories: list[Memory] = []

    def set_memories(self, memories: list[Memory]) -> None:
        self.beginResetModel()
        self.memories = memories
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API)
        return 0 if parent.isValid() else len(self.memories)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API)
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return "Confidence" if COLUMNS[section] == "Conf." else None
        return None

    def data(self, index: _Index, role: int = 0) -> Any:
        memory = self.memories[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                memory.project or "—",
                memory.type.value,
                memory.tier.value + (" (superseded)" if memory.superseded else ""),
                memory.created_at[:10],
                f"{memory.confidence:.2f}",
                memory.title.replace("`", ""),  # the detail pane sets code in monospace
            )[column]
        if role == Qt.ItemDataRole.UserRole:  # sort keys
            return (
                memory.project or "",
                memory.type.value,
                ["hot", "warm", "cold", "archived"].index(memory.tier.value),
                memory.created_at,
                memory.confidence,
                memory.title.lower(),
            )[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return memory.id
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            return QColor(TYPE_COLORS.get(memory.type.value, MUTED))
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class MemoryFilterProxy(QSortFilterProxyModel):
    """Text (title, content, tags, id), project and type filters."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.project = ""
        self.type = ""
        self.setSortRole(Qt.ItemDataRole.UserRole)

    def set_filters(self, text: str, project: str, type_: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt ≥ 6.9; invalidateFilter is deprecated
            self.beginFilterChange()
            self.text, self.project, self.type = text.lower().strip(), project, type_
            self.endFilterChange()
        else:
            self.text, self.project, self.type = text.lower().strip(), project, type_
            self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: _Index) -> bool:
        model = self.sourceModel()
        assert isinstance(model, MemoryTable)
        memory = model.memories[row]
        if self.project and (memory.project or "") != self.project:
            return False
        if self.type and memory.type.value != self.type:
            return False
        if self.text:
            haystack = " ".join([memory.id, memory.title, memory.content, *memory.tags]).lower()
            return all(word in haystack for word in self.text.split())
        return True


class MemoryBrowser(QWidget):
    """Signals: `message(str)` for the status line (also after undoable deletes)."""

    message = Signal(str)

    def __init__(self, backend: BrowserBackend, runner: TaskRunner) -> None:
        super().__init__()
        self.backend = backend
        self.runner = runner
        self.undo_stack: list[Memory] = []
        self.setWindowTitle("Engram — memories")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setStyleSheet(STYLE)
        self.model = MemoryTable()
        self.proxy = MemoryFilterProxy()
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        for column, width in enumerate(COLUMN_WIDTHS):
            header.resizeSection(column, width)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setHighlightSections(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(30)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self.show_selected())
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter by words, tags or id…")
        self.projects = QComboBox()
        self.types = QComboBox()
        self.types.addItems(["All types", *[t.value for t in MemoryType]])
        for widget in (self.search,):
            widget.textChanged.connect(lambda _t: self.apply_filters())
        self.projects.currentTextChanged.connect(lambda _t: self.apply_filters())
        self.types.currentTextChanged.connect(lambda _t: self.apply_filters())
        self.detail = QTextBrowser()
        self.detail.setOpenLinks(False)
        self.status = QLabel()
        self.status.setObjectName("status")
        self.buttons: dict[str, QPushButton] = {}
        actions = QHBoxLayout()
        actions.setSpacing(8)
        for label, handler in (
            ("Edit…", self.open_editor),
            ("Pin", self.toggle_pin),
            ("Archive", self.toggle_archive),
            ("Replaces…", self.open_replaces),
            ("Holds again", self.hold_again),
            ("Delete", self.delete_selected),
            ("Undo delete", self.undo_delete),
            ("Refresh", lambda: self.refresh()),
        ):
            button = QPushButton(label)
            button.clicked.connect(handler)
            actions.addWidget(button)
            self.buttons[label] = button
        actions.addStretch(1)
        filters = QHBoxLayout()
        filters.setSpacing(8)
        filters.addWidget(self.search, 1)
        filters.addWidget(self.projects)
        filters.addWidget(self.types)
        splitter = QSplitter()
        splitter.setHandleWidth(10)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 5)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([776, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 10)
        layout.setSpacing(10)
        layout.addLayout(filters)
        layout.addWidget(splitter, 1)
        layout.addLayout(actions)
        layout.addWidget(self.status)
        self.resize(1100, 600)
        self.message.connect(self.status.setText)
        self.update_buttons()

    # --- data ------------------------------------------------------------------------------

    def refresh(self, note: str = "") -> None:
        """Reload from the store; `note` (what just happened) leads the status line."""
        self.runner.run(
            self.backend.all_memories,
            lambda memories: self.loaded(memories, note),
            self.failed,
            channel="browser",
        )

    def loaded(self, memories: list[Memory], note: str = "") -> None:
        selected = self.selected()
        self.model.set_memories(memories)
        projects = sorted({m.project or "" for m in memories} - {""})
        current = self.projects.currentText()
        self.projects.blockSignals(True)
        self.projects.clear()
        self.projects.addItems(["All projects", *projects])
        if current in projects:
            self.projects.setCurrentText(current)
        self.projects.blockSignals(False)
        self.apply_filters()
        if selected is not None:
            self.select(selected.id)
        count = self.count_text()
        self.message.emit(f"{note} · {count}" if note else count)

    def count_text(self) -> str:
        """How many memories are shown: "12 of 240 memories" while a filter hides some."""
        total, shown = len(self.model.memories), self.proxy.rowCount()
        return f"{total} memories" if shown == total else f"{shown} of {total} memories"

    def failed(self, error: BaseException) -> None:
        from app.errors import to_message

        self.message.emit(to_message(error).title)

    def apply_filters(self) -> None:
        project = self.projects.currentText()
        type_ = self.types.currentText()
        self.proxy.set_filters(
            self.search.text(),
            "" if project in ("", "All projects") else project,
            "" if type_ == "All types" else type_,
        )
        self.message.emit(self.count_text())
        self.show_selected()

    # --- selection -------------------------------------------------------------------------

    def selected(self) -> Memory | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.model.memories[self.proxy.mapToSource(index).row()]

    def select(self, memory_id: str) -> None:
        for row, memory in enumerate(self.model.memories):
            if memory.id == memory_id:
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                if index.isValid():
                    self.table.setCurrentIndex(index)
                return

    def show_selected(self) -> None:
        memory = self.selected()
        self.update_buttons()
        if memory is None:
            self.detail.setHtml(f"<p style='color:{MUTED}'>Select a memory to read it.</p>")
            return
        kind = memory.type.value
        color = TYPE_COLORS.get(kind, MUTED)
        meta = " · ".join([memory.project or "—", memory.tier.value, memory.created_at[:10]])
        tags = ", ".join(memory.tags) or "—"
        refs = html.escape(", ".join(memory.file_refs) or "—")
        history = history_html(memory)
        self.detail.setHtml(
            f"<h3 style='color:#1f2a37'>{code_spans(html.escape(memory.title))}</h3>"
            f"<p style='color:{MUTED}'><span style='color:{color}; font-weight:600'>{kind}</span>"
            f" · {html.escape(meta)}<br>{html.escape(memory.id)} · confidence "
            f"{memory.confidence:.2f}</p>{history}"
            f"<div style='color:#2d3748'>{content_html(memory.content)}</div>"
            f"<p><span style='color:{MUTED}'>Tags</span>&nbsp; {html.escape(tags)}<br>"
            f"<span style='color:{MUTED}'>Files</span>&nbsp; "
            f'<span style="{CODE_STYLE}">{refs}</span></p>'
        )

    def update_buttons(self) -> None:
        memory = self.selected()
        for name in ("Edit…", "Pin", "Archive", "Delete"):
            self.buttons[name].setEnabled(memory is not None)
        # a memory that no longer holds replaces nothing
        self.buttons["Replaces…"].setEnabled(memory is not None and not memory.superseded)
        replaced = memory is not None and (memory.superseded or memory.valid_to is not None)
        self.buttons["Holds again"].setEnabled(replaced)
        self.buttons["Holds again"].setToolTip(
            "Undo a replacement or a merge: this memory holds again beside what replaced it"
        )
        self.buttons["Undo delete"].setEnabled(bool(self.undo_stack))
        if memory is not None:
            self.buttons["Pin"].setText("Unpin" if PINNED_TAG in memory.tags else "Pin")
            archived = memory.tier is Tier.ARCHIVED
            self.buttons["Archive"].setText("Restore" if archived else "Archive")

    # --- changes ---------------------------------------------------------------------------

    def _change(self, memory_id: str, changes: dict[str, Any], done: str) -> None:
        def finished(_memory: Memory) -> None:
            self.refresh(done)

        self.runner.run(lambda: self.backend.edit_memory(memory_id, changes), finished, self.failed)

    def toggle_pin(self) -> None:
        memory = self.selected()
        if memory is not None:
            # A pin is the `pinned` tag (the consolidation keeps such memories hot); a
            # memory that is hot because it is used a lot is not pinned.
            pinned = PINNED_TAG in memory.tags
            if pinned:
                changes: dict[str, Any] = {"tags": [t for t in memory.tags if t != PINNED_TAG]}
            else:
                changes = {"tags": [*memory.tags, PINNED_TAG], "tier": Tier.HOT.value}
            self._change(memory.id, changes, f"{'Unpinned' if pinned else 'Pinned'} {memory.id}")

    def toggle_archive(self) -> None:
        memory = self.selected()
        if memory is not None:
            archived = memory.tier is Tier.ARCHIVED
            tier = Tier.WARM if archived else Tier.ARCHIVED
            verb = "Restored" if archived else "Archived"
            self._change(memory.id, {"tier": tier.value}, f"{verb} {memory.id}")

    def open_editor(self) -> Any:
        """Edit the selected memory in the add dialog's form; saved through the service."""
        from ui.add_dialog import AddMemoryDialog

        memory = self.selected()
        if memory is None:
            return None
        dialog = AddMemoryDialog(
            lambda data: self.backend.edit_memory(memory.id, data), parent=self, memory=memory
        )
        dialog.saved.connect(lambda saved: self.refresh(f"Saved {saved.id}"))
        dialog.show()
        self.editor = dialog
        return dialog

    def edit_selected(self, changes: dict[str, Any]) -> None:
        memory = self.selected()
        if memory is not None:
            self._change(memory.id, changes, f"Saved {memory.id}")

    def open_replaces(self) -> Any:
        """Pick the memories the selected one replaces; they stop holding at once."""
        memory = self.selected()
        if memory is None:
            return None
        dialog = ReplacesDialog(memory, self.backend, self.runner, self)
        dialog.accepted.connect(
            lambda: self.declare_replaces(memory.id, dialog.picker.picked_ids())
        )
        dialog.show()
        dialog.picker.search()
        self.replaces_dialog = dialog
        return dialog

    def declare_replaces(self, winner_id: str, loser_ids: Sequence[str]) -> None:
        """`winner_id` replaces `loser_ids`; a refused declaration (unknown id, itself,
        another project) changes nothing and its reason goes to the status line."""
        if not loser_ids:
            return

        def declared(replacement: Any) -> None:
            self.refresh(replacement.summary())

        self.runner.run(
            lambda: self.backend.declare_replaces(winner_id, list(loser_ids)),
            declared,
            self.failed,
        )

    def hold_again(self) -> None:
        """The selected replaced memory holds again beside what replaced it (a
        replacement declared, confirmed or merged by mistake; `engram edit --holds-again`)."""
        memory = self.selected()
        if memory is None:
            return

        def held(result: tuple[Memory, str | None]) -> None:
            again, replacer = result
            beside = f" beside {replacer}" if replacer else ""
            self.refresh(f"{again.id} holds again{beside}: both hold")

        self.runner.run(lambda: self.backend.hold_again(memory.id), held, self.failed)

    def delete_selected(self) -> None:
        memory = self.selected()
        if memory is None:
            return

        def deleted(removed: Memory) -> None:
            self.undo_stack.append(removed)
            self.refresh(f"Deleted {removed.id} — Undo delete brings it back")

        self.runner.run(lambda: self.backend.delete_memory(memory.id), deleted, self.failed)

    def undo_delete(self) -> None:
        if not self.undo_stack:
            return
        memory = self.undo_stack.pop()

        def restored(_memory: Memory) -> None:
            self.refresh(f"Restored {memory.id}")

        self.runner.run(lambda: self.backend.restore_memory(memory), restored, self.failed)


class ReplacesDialog(QDialog):
    """Which memories of its project does `winner` replace? The add dialog's picker."""

    def __init__(
        self, winner: Memory, backend: BrowserBackend, runner: TaskRunner, parent: QWidget
    ) -> None:
        from ui.add_dialog import STYLE as FORM_STYLE
        from ui.add_dialog import ReplacesPicker

        super().__init__(parent)
        self.winner = winner
        self.setWindowTitle("Replaces…")
        self.setStyleSheet(FORM_STYLE.replace("AddMemoryDialog", "ReplacesDialog"))
        heading = QLabel(
            f"What does <b>{code_spans(html.escape(winner.title))}</b> replace? The memories "
            "you check stop holding now; they are kept as history."
        )
        heading.setWordWrap(True)
        self.picker = ReplacesPicker(
            backend.replaceable, lambda: winner.project, [winner.id], runner
        )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.confirm = buttons.addButton("Mark as replaced", QDialogButtonBox.ButtonRole.AcceptRole)
        self.confirm.setEnabled(False)
        self.confirm.setDefault(True)
        for button in buttons.buttons():
            button.setIcon(QIcon())  # plain text buttons, as in the other windows
        self.picker.changed.connect(lambda: self.confirm.setEnabled(bool(self.picker.picked)))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 14)
        layout.setSpacing(10)
        layout.addWidget(heading)
        layout.addWidget(self.picker, 1)
        layout.addWidget(buttons)
        self.resize(620, 380)


def history_html(memory: Memory) -> str:
    """Whether the memory still holds: what replaced it (and when), what it replaced."""
    lines = []
    if memory.superseded_by:
        until = f" on {memory.valid_to[:10]}" if memory.valid_to else ""
        lines.append(
            f"<b>No longer holds</b>: superseded by {html.escape(memory.superseded_by)}"
            f"{html.escape(until)} (kept as history)"
        )
    if memory.supersedes:
        lines.append(f"Replaces {html.escape(memory.supersedes)}")
    if not lines:
        return ""
    return f"<p style='background:#fff4e5;padding:4px'>{'<br>'.join(lines)}</p>"
