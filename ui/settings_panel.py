"""The settings panel, generated from the one settings schema (`app.settings.SCHEMA`),
the same the CLI and the environment overrides read. One tab per group; each field
checks its value as it is applied and shows the reason next to it when it is refused.
Changes are saved at once and announced through `changed(key, value)`, so the app can
apply them without a restart."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.settings import SCHEMA, Setting, Settings
from services.errors import UserInputError

GROUP_TITLES = {
    "context": "Context",
    "watch": "Watching",
    "retrieval": "Search",
    "embedder": "Embedding model",
    "vectors": "Vectors",
    "lifecycle": "Lifecycle",
    "profile": "Profile",
    "chunking": "Chunking",
    "metrics": "Metrics",
    "store": "Storage",
}


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
        row = QHBoxLayout()
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
        self.fields: dict[str, SettingField] = {}
        tabs = QTabWidget()
        groups: dict[str, list[Setting]] = {}
        for spec in SCHEMA:
            groups.setdefault(spec.key.split(".")[0], []).append(spec)
        ordered = sorted(
            groups, key=lambda g: list(GROUP_TITLES).index(g) if g in GROUP_TITLES else 99
        )
        for group in ordered:
            page = QWidget()
            form = QFormLayout(page)
            for spec in groups[group]:
                field = SettingField(spec, settings, self._applied)
                self.fields[spec.key] = field
                label = QLabel(spec.description)
                label.setWordWrap(True)
                label.setToolTip(spec.key)
                form.addRow(label, field)
            tabs.addTab(page, GROUP_TITLES.get(group, group.capitalize()))
        self.tabs = tabs
        layout = QVBoxLayout(self)
        note = QLabel(
            "Changes are saved at once and apply without a restart. API keys are kept in "
            "the system keyring (`engram config set-key`), never in these settings."
        )
        note.setWordWrap(True)
        layout.addWidget(note)
        layout.addWidget(tabs)
        self.resize(720, 520)

    def _applied(self, key: str, value: Any) -> None:
        self.changed.emit(key, value)
