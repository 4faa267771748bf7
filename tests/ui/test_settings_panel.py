"""The settings panel: generated from the schema, saved at once, refused with a reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit

from app.settings import SCHEMA, Settings
from ui.settings_panel import SettingsPanel


def panel(qtbot: Any, path: Path, environ: dict[str, str] | None = None) -> SettingsPanel:
    widget = SettingsPanel(Settings(path, environ or {}))
    qtbot.addWidget(widget)
    return widget


def test_every_setting_of_the_schema_has_a_field(qtbot: Any, tmp_path: Path) -> None:
    widget = panel(qtbot, tmp_path / "settings.json")
    assert set(widget.fields) == {spec.key for spec in SCHEMA}
    assert isinstance(widget.fields["profile.consent"].editor, QCheckBox)
    assert isinstance(widget.fields["embedder.provider"].editor, QComboBox)
    assert isinstance(widget.fields["context.budget"].editor, QLineEdit)
    titles = [widget.tabs.tabText(i) for i in range(widget.tabs.count())]
    assert titles[:2] == ["Context", "Watching"]


def test_a_change_is_saved_and_announced(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    widget = panel(qtbot, path)
    field = widget.fields["context.budget"]
    editor = field.editor
    assert isinstance(editor, QLineEdit)
    with qtbot.waitSignal(widget.changed) as signal:
        editor.setText("4000")
        editor.editingFinished.emit()
    assert signal.args == ["context.budget", 4000]
    assert Settings(path, {}).get("context.budget") == 4000  # round trip through the file
    consent = widget.fields["profile.consent"].editor
    assert isinstance(consent, QCheckBox)
    consent.setChecked(True)
    assert Settings(path, {}).get("profile.consent") is True


def test_invalid_values_are_refused_with_a_reason(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    widget = panel(qtbot, path)
    field = widget.fields["context.budget"]
    assert not field.apply("ten")
    assert field.error.isVisibleTo(widget) and "not a valid int" in field.error.text()
    assert not field.apply("10")
    assert "below the minimum 120" in field.error.text()
    assert Settings(path, {}).get("context.budget") == 8000  # nothing was stored
    assert field.apply("9000")
    assert not field.error.isVisibleTo(widget)


def test_environment_overrides_are_shown_but_locked(qtbot: Any, tmp_path: Path) -> None:
    widget = panel(qtbot, tmp_path / "settings.json", {"ENGRAM_CONTEXT_BUDGET": "2000"})
    editor = widget.fields["context.budget"].editor
    assert isinstance(editor, QLineEdit)
    assert editor.text() == "2000" and not editor.isEnabled()
    assert "ENGRAM_CONTEXT_BUDGET" in editor.toolTip()


def test_api_key_without_keyring_is_kept_for_the_session_only(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    import keyring
    from keyring.errors import NoKeyringError

    from app import secrets

    def no_keyring(*_args: Any) -> None:
        raise NoKeyringError("no backend")

    monkeypatch.setattr(keyring, "set_password", no_keyring)
    monkeypatch.setattr(secrets, "_SESSION_KEYS", {})
    widget = panel(qtbot, tmp_path / "settings.json")
    widget.store_api_key("sk-test-123")
    assert "session only" in widget.key_status.text()
    assert secrets.get_api_key("embedder.openai") == "sk-test-123"
    written = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert "sk-test-123" not in written
