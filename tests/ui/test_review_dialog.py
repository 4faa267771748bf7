"""The review dialog walks through findings with their options as buttons."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.composition import open_engram
from app.desktop import Desktop
from app.tasks import TaskRunner
from services.rem.cycle import RemContext, run_operations
from tests.fakes import HashEmbedder
from ui.review_dialog import ReviewDialog, kind_label


@pytest.fixture
def dialog(qtbot: Any, data_dir: Path) -> Iterator[tuple[ReviewDialog, Desktop]]:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    for group, text in enumerate(["Deploy on Tuesdays.", "Cache for 60 s."]):
        for copy in range(2):
            engram.service.add({"id": f"g{group}-{copy}", "project": "p", "content": text})
    run_operations(
        RemContext(engram.service, engram.vectors, engram.embedder.model_id), ["duplicates"]
    )
    desktop = Desktop(data_dir, engram)
    runner = TaskRunner()
    widget = ReviewDialog(desktop, runner)
    qtbot.addWidget(widget)
    widget.show()
    widget.load()
    qtbot.waitUntil(lambda: widget.current is not None, timeout=5000)
    yield widget, desktop
    runner.shutdown()
    desktop.close()


def test_options_are_buttons_recommended_first(dialog: Any) -> None:
    widget, _ = dialog
    assert list(widget.option_buttons) == ["merge", "keep_both", "skip"]
    assert widget.option_buttons["merge"].isDefault()
    assert "1 of 2" in widget.heading.text()
    assert "Deploy on Tuesdays." in widget.body.toPlainText() or "Cache for 60 s." in (
        widget.body.toPlainText()
    )


def test_answering_applies_and_moves_on(qtbot: Any, dialog: Any) -> None:
    widget, desktop = dialog
    first = widget.current.id
    widget.option_buttons["skip"].click()
    qtbot.waitUntil(lambda: widget.current is not None and widget.current.id != first, timeout=5000)
    assert widget.status.text() == "Last: exact duplicate — Skip (left open)"
    assert "1 of 1 (1 skipped for later)" in widget.heading.text()
    widget.option_buttons["merge"].click()
    qtbot.waitUntil(lambda: widget.current is None, timeout=5000)
    assert "1 skipped for later" in widget.heading.text()
    assert not widget.body.isVisible()  # "Nothing to review" is one line, not an empty box
    assert len(desktop.pending_findings()) == 1  # the skipped one stays open
    store = desktop.engram.store
    merged = [m for m in store.all_ids() if store.get(m).superseded_by]
    assert len(merged) == 1


def test_a_proposed_memory_is_shown_before_its_sources(qtbot: Any, data_dir: Path) -> None:
    from services.rem.ops.extraction import THEME_OPTIONS
    from services.storage.findings import Finding, FindingStore

    engram = open_engram(data_dir, embedder=HashEmbedder())
    engram.service.add({"id": "s1", "project": "p", "content": "`load_rates` caches 15 min."})
    draft = {"type": "pattern", "title": "Recurring theme: `load_rates`", "project": "p",
             "content": "How `load_rates` is used.\nKey facts: 15 min."}  # fmt: skip
    FindingStore(engram.store).save(
        [
            Finding(
                "extraction",
                "theme",
                "`load_rates` came up in 3 work sessions",
                ["s1"],
                THEME_OPTIONS,
                "create",
                {"memory": draft},
            )
        ]
    )
    desktop = Desktop(data_dir, engram)
    runner = TaskRunner()
    widget = ReviewDialog(desktop, runner)
    qtbot.addWidget(widget)
    widget.load()
    qtbot.waitUntil(lambda: widget.current is not None, timeout=5000)
    text = widget.body.toPlainText()
    assert text.index("Proposed: Recurring theme: load_rates") < text.index("caches 15 min")
    assert "Key facts: 15 min." in text
    runner.shutdown()
    desktop.close()


def test_contradictions_are_named_as_such() -> None:
    from services.storage.findings import Finding, Option

    options = [Option("skip", "Skip", "later")]
    supersedes = Finding(
        "contradictions", "supersedes", "b replaces a", ["a", "b"], options, "skip"
    )
    plain = Finding("contradictions", "contradiction", "a vs b", ["a", "b"], options, "skip")
    assert kind_label(supersedes) == "Contradiction (supersedes)"
    assert kind_label(plain) == "Contradiction"
