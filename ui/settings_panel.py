"""The settings panel, generated from the one settings schema (`app.settings.SCHEMA`),
the same the CLI and the environment overrides read. One tab per group; each field
checks its value as it is applied and shows the reason next to it when it is refused.
Changes are saved at once and announced through `changed(key, value)`, so the app can
apply them without a restart."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.settings import SCHEMA, Setting, Settings
from services.errors import EnvironmentProblem, UserInputError

GROUP_TITLES = {
    "context": "Context",
    "watch": "Watching",
    "desktop": "Desktop",
    "retrieval": "Search",
    "embedder": "Embedding model",
    "llm": "Local LLM",
    "rem": "Consolidation",
    "vectors": "Vectors",
    "lifecycle": "Lifecycle",
    "profile": "Profile",
    "chunking": "Chunking",
    "metrics": "Metrics",
    "store": "Storage",
}
NARROW_EDITOR = 200  # numbers and choices; paths and lists take the row
STYLE = """
SettingsPanel { background: #f6f8fb; }
QLabel#note { color: #5b6b7f; }
QLabel#key { color: #7b8794; font-family: 'DejaVu Sans Mono', monospace; font-size: 11px; }
QLabel#error { color: #c0392b; font-size: 12px; }
QScrollArea, QWidget#page { background: white; border: none; }
QTabWidget::pane { border: 1px solid #cdd5e0; top: -1px; background: white; }
QTabBar::tab {
    padding: 6px 11px; border: 1px solid #cdd5e0; border-bottom: none; background: #eef2f7;
    color: #3b4656; margin-right: -1px;
}
QTabBar::tab:selected { background: white; color: #1f2a37; border-top: 2px solid #2f6fde; }
QTabBar::tab:!selected { margin-top: 3px; }
QLineEdit { padding: 4px 6px; border: 1px solid #c3cdda; border-radius: 4px; }
QLineEdit:focus { border-color: #2f6fde; }
QLineEdit:disabled { background: #f1f3f6; color: #7b8794; }
"""


class SettingField(QWidget):
    """One setting: its editor, and the reason when a value is refused."""

    def __init__(self, spec: Setting, settings: Settings, on_applied: Any) -> None:
        super().__init__()
        self.spec = spec
        self.settings = settings
        self.on_applied = on_applied
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setStyleSheet("color: #c0392b;")
        self.error.setWordWrap(True)
        narrow = spec.type in (int, float) or bool(spec.choices)
        self.error.hide()
        self.editor: QWidget
        value = settings.get(spec.key)
        if spec.type is bool:
            box = QCheckBox()
            box.setChecked(bool(value))
            box.toggled.connect(lambda checked: self.apply(checked))
            self.editor = box
        elif spec.choices:
            combo = QComboBox()
            combo.addItems(list(spec.choices))
            combo.setCurrentText(str(value))
            combo.currentTextChanged.connect(self.apply)
            self.editor = combo
        else:
            line = QLineEdit(str(value))
            line.editingFinished.connect(lambda: self.apply(line.text()))
            self.editor = line
        source = settings.source(spec.key)
        if source == "env":
            self.editor.setEnabled(False)
            self.editor.setToolTip(f"Set by the environment variable {spec.env_var}")
        else:
            self.editor.setToolTip(f"{spec.description} (default: {spec.default})")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        row = QHBoxLayout()
        if narrow or spec.type is bool:
            if narrow:
                self.editor.setFixedWidth(NARROW_EDITOR)
            row.addWidget(self.editor)
            row.addStretch(1)
        else:
            row.addWidget(self.editor, 1)
        layout.addLayout(row)
        layout.addWidget(self.error)

    def apply(self, raw: Any) -> bool:
        """Validate and save; on refusal show why and keep the stored value."""
        try:
            value = self.settings.set(self.spec.key, raw)
        except UserInputError as error:
            self.error.setText(str(error))
            self.error.show()
            return False
        self.error.hide()
        self.on_applied(self.spec.key, value)
        return True


class SettingsPanel(QWidget):
    """Signal: `changed(str, object)` after a setting was saved."""

    changed = Signal(str, object)

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle("Engram settings")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setStyleSheet(STYLE)
        self.fields: dict[str, SettingField] = {}
        tabs = QTabWidget()
        tabs.setUsesScrollButtons(False)
        groups: dict[str, list[Setting]] = {}
        for spec in SCHEMA:
            groups.setdefault(spec.key.split(".")[0], []).append(spec)
        ordered = sorted(
            groups, key=lambda g: list(GROUP_TITLES).index(g) if g in GROUP_TITLES else 99
        )
        for group in ordered:
            page = QWidget()
            page.setObjectName("page")
            grid = QGridLayout(page)
            grid.setContentsMargins(18, 16, 18, 16)
            grid.setHorizontalSpacing(20)
            grid.setVerticalSpacing(14)
            grid.setColumnStretch(0, 5)
            grid.setColumnStretch(1, 6)
            for row, spec in enumerate(groups[group]):
                field = SettingField(spec, settings, self._applied)
                self.fields[spec.key] = field
                grid.addLayout(self._describe(spec), row, 0, Qt.AlignmentFlag.AlignTop)
                grid.addWidget(field, row, 1, Qt.AlignmentFlag.AlignTop)
            grid.setRowStretch(len(groups[group]), 1)
            scroll = QScrollArea()
            scroll.setWidget(page)
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            tabs.addTab(scroll, GROUP_TITLES.get(group, group.capitalize()))
        self.tabs = tabs
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 14)
        layout.setSpacing(10)
        note = QLabel(
            "Changes are saved at once and apply without a restart. API keys are kept in "
            "the system keyring (<code>engram config set-key</code>), never in these settings."
        )
        note.setObjectName("note")
        note.setTextFormat(Qt.TextFormat.RichText)
        note.setWordWrap(True)
        layout.addWidget(note)
        layout.addWidget(tabs)
        self.key_button = QPushButton("Set the API key of the OpenAI-compatible endpoint…")
        self.key_button.clicked.connect(self.ask_api_key)
        self.key_status = QLabel()
        self.key_status.setWordWrap(True)
        keys = QHBoxLayout()
        keys.addWidget(self.key_button)
        keys.addWidget(self.key_status, 1)
        layout.addLayout(keys)
        self.resize(max(tabs.sizeHint().width() + 28, 760), 580)

    def ask_api_key(self) -> None:
        key, ok = QInputDialog.getText(
            self, "API key", "API key (kept in the system keyring):", QLineEdit.EchoMode.Password
        )
        if ok and key.strip():
            self.store_api_key(key.strip())

    def store_api_key(self, key: str) -> None:
        """Keyring first; without a usable keyring, this session only (never a file)."""
        from app.secrets import remember_for_session, set_api_key

        try:
            set_api_key("embedder.openai", key)
        except EnvironmentProblem:
            remember_for_session("embedder.openai", key)
            self.key_status.setText(
                "No usable system keyring: the key cannot be stored securely, so it is kept "
                "for this session only and asked for again next time. It is never written "
                "to a file."
            )
            return
        self.key_status.setText("The key is stored in the system keyring.")

    @staticmethod
    def _describe(spec: Setting) -> QVBoxLayout:
        """The description, and under it the key `engram config` knows it by."""
        column = QVBoxLayout()
        column.setSpacing(2)
        label = QLabel(spec.description)
        label.setWordWrap(True)
        label.setToolTip(spec.key)
        key = QLabel(spec.key)
        key.setObjectName("key")
        key.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(label)
        column.addWidget(key)
        return column

    def _applied(self, key: str, value: Any) -> None:
        self.changed.emit(key, value)
