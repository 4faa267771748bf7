"""Quick add: valid memories are stored with every field; invalid ones are refused with
the reason and nothing is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.composition import open_engram
from tests.fakes import HashEmbedder
from ui.add_dialog import AddMemoryDialog, split_list


def test_split_list() -> None:
    assert split_list(" a, b ,,\nc ") == ["a", "b", "c"]


def test_saving_stores_every_field(qtbot: Any, data_dir: Path) -> None:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    try:
        dialog = AddMemoryDialog(lambda data: engram.service.add(data), project="shop")
        qtbot.addWidget(dialog)
        assert dialog.project.text() == "shop"  # pre-filled from the activity
        dialog.type.setCurrentText("pitfall")
        dialog.content.setPlainText("`parse_date` returns naive datetimes.")
        dialog.tags.setText("dates, timezones")
        dialog.file_refs.setText("src/shop/dates.py")
        with qtbot.waitSignal(dialog.saved) as signal:
            assert dialog.save()
        memory = signal.args[0]
        stored = engram.store.get(memory.id)
        assert stored.type.value == "pitfall" and stored.project == "shop"
        assert stored.tags == ["dates", "timezones"] and stored.file_refs == ["src/shop/dates.py"]
        assert stored.title == "`parse_date` returns naive datetimes."
    finally:
        engram.close()


def test_invalid_memory_is_refused_with_the_reason(qtbot: Any, data_dir: Path) -> None:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    try:
        dialog = AddMemoryDialog(lambda data: engram.service.add(data))
        qtbot.addWidget(dialog)
        dialog.content.setPlainText("   ")
        assert not dialog.save()
        assert "content" in dialog.error.text()
        assert engram.store.count() == 0
    finally:
        engram.close()
