"""The autostart entry follows the desktop.autostart setting."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.autostart import autostart_file, set_autostart
from services.errors import EnvironmentProblem


def test_entry_is_written_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    path = set_autostart(True)
    assert path == tmp_path / "autostart" / "engram.desktop" == autostart_file()
    text = path.read_text()
    assert "[Desktop Entry]" in text and "tray" in text.split("Exec=")[1].splitlines()[0]
    set_autostart(False)
    assert not path.exists()
    set_autostart(False)  # removing twice is fine


def test_other_platforms_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(EnvironmentProblem, match=r"packaging/README\.md"):
        set_autostart(True)
