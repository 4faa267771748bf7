"""Consent and profile panel: saving embeds the profile; revoking asks, then deletes it
from SQLite and Chroma; declining keeps everything."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.composition import open_engram
from app.desktop import Desktop
from app.tasks import TaskRunner
from services.knowledge.profile import PROFILE_ID
from tests.fakes import HashEmbedder
from ui.profile_panel import ProfilePanel


@pytest.fixture
def setup(qtbot: Any, data_dir: Path) -> Iterator[tuple[ProfilePanel, Desktop, list[bool]]]:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    desktop = Desktop(data_dir, engram)
    runner = TaskRunner()
    answers: list[bool] = []
    panel = ProfilePanel(desktop, runner, confirm_revoke=lambda _w: answers.pop(0))
    qtbot.addWidget(panel)
    panel.show()
    panel.load()
    qtbot.waitUntil(lambda: panel.ready, timeout=5000)
    yield panel, desktop, answers
    runner.shutdown()
    desktop.close()


def vectors_of(desktop: Desktop) -> set[str]:
    engram = desktop.engram
    found = engram.vectors.memory_ids(engram.embedder.model_id)
    return set().union(*found.values()) if found else set()


def test_fields_are_locked_without_consent(qtbot: Any, setup: Any) -> None:
    panel, _desktop, _ = setup
    qtbot.waitUntil(lambda: not panel.save_button.isEnabled(), timeout=3000)
    assert not panel.consent.isChecked()
    assert not any(editor.isEnabled() for editor in panel.fields.values())


def test_consent_save_and_revoke_deletes_profile_and_vectors(qtbot: Any, setup: Any) -> None:
    panel, desktop, answers = setup
    panel.consent.setChecked(True)
    qtbot.waitUntil(lambda: panel.save_button.isEnabled(), timeout=3000)
    panel.fields["style"].setPlainText("Small pure functions")
    panel.fields["languages"].setPlainText("Python, TypeScript")
    panel.save()
    qtbot.waitUntil(lambda: panel.status.text() == "Profile saved", timeout=5000)
    assert "Small pure functions" in desktop.engram.store.get(PROFILE_ID).content
    assert PROFILE_ID in vectors_of(desktop)
    context = desktop.context_for()
    assert "Coding style: Small pure functions" in context.markdown

    answers.append(False)  # the user declines: nothing changes
    panel.consent.setChecked(False)
    assert panel.consent.isChecked()
    assert PROFILE_ID in desktop.engram.store.all_ids()

    answers.append(True)
    panel.consent.setChecked(False)
    qtbot.waitUntil(lambda: "deleted" in panel.status.text(), timeout=5000)
    assert PROFILE_ID not in desktop.engram.store.all_ids()
    assert PROFILE_ID not in vectors_of(desktop)
    assert desktop.engram.settings.get("profile.consent") is False
    assert all(editor.toPlainText() == "" for editor in panel.fields.values())
    assert "Small pure functions" not in desktop.context_for().markdown
