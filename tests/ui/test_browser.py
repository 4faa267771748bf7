"""The memory browser on a real store: filter, sort, pin, archive/restore, edit, delete
and undo."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.composition import open_engram
from app.desktop import Desktop
from app.tasks import TaskRunner
from services.storage.memories import MemoryStore
from tests.fakes import HashEmbedder
from ui.browser import MemoryBrowser, history_html


@pytest.fixture
def browser(qtbot: Any, data_dir: Path) -> Iterator[MemoryBrowser]:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    for number, (project, type_, text) in enumerate(
        [
            ("shop", "decision", "Use PostgreSQL for orders."),
            ("shop", "pitfall", "Dates from the API are naive."),
            ("app", "convention", "Components fetch with useQuery."),
        ]
    ):
        engram.service.add(
            {
                "id": f"m{number}",
                "project": project,
                "type": type_,
                "content": text,
                "tags": ["t" + str(number)],
                "created_at": f"2026-0{number + 1}-01T10:00:00+00:00",
            }
        )
    desktop = Desktop(data_dir, engram)
    runner = TaskRunner()
    widget = MemoryBrowser(desktop, runner)
    qtbot.addWidget(widget)
    widget.show()
    widget.refresh()
    qtbot.waitUntil(lambda: widget.model.rowCount() == 3, timeout=5000)
    yield widget
    runner.shutdown()
    desktop.close()


def store_of(browser: MemoryBrowser) -> MemoryStore:
    backend = browser.backend
    assert isinstance(backend, Desktop)
    return backend.engram.store


def visible_ids(browser: MemoryBrowser) -> list[str]:
    return [
        browser.model.memories[browser.proxy.mapToSource(browser.proxy.index(row, 0)).row()].id
        for row in range(browser.proxy.rowCount())
    ]


def test_lists_newest_first_and_sorts_by_column(browser: MemoryBrowser) -> None:
    assert visible_ids(browser) == ["m2", "m1", "m0"]
    browser.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)  # type
    assert visible_ids(browser) == ["m2", "m0", "m1"]  # convention, decision, pitfall


def test_titles_show_without_backticks(qtbot: Any, browser: MemoryBrowser) -> None:
    store = store_of(browser)
    store.update("m1", {"title": "Dates from `parse_order_date` are naive"})
    browser.refresh()
    qtbot.waitUntil(lambda: "parse" in str(_title_of(browser, "m1")), timeout=5000)
    assert _title_of(browser, "m1") == "Dates from parse_order_date are naive"


def _title_of(browser: MemoryBrowser, memory_id: str) -> object:
    row = next(i for i, m in enumerate(browser.model.memories) if m.id == memory_id)
    return browser.model.data(browser.model.index(row, 5), Qt.ItemDataRole.DisplayRole)


def test_filters_by_text_project_and_type(browser: MemoryBrowser) -> None:
    browser.search.setText("naive")
    assert visible_ids(browser) == ["m1"]
    browser.search.setText("")
    browser.projects.setCurrentText("shop")
    assert set(visible_ids(browser)) == {"m0", "m1"}
    browser.types.setCurrentText("decision")
    assert visible_ids(browser) == ["m0"]


def test_detail_shows_the_full_memory(browser: MemoryBrowser) -> None:
    browser.select("m1")
    text = browser.detail.toPlainText()
    assert "Dates from the API are naive." in text and "t1" in text and "m1" in text
    assert "No longer holds" not in text


def test_detail_says_when_a_memory_no_longer_holds() -> None:
    from tests.services.builders import make_memory

    old = make_memory("MySQL.", id="old", superseded_by="new",
                      valid_to="2026-05-01T00:00:00+00:00")  # fmt: skip
    new = make_memory("PostgreSQL.", id="new", supersedes="old")
    assert "No longer holds</b>: superseded by new on 2026-05-01" in history_html(old)
    assert history_html(new).count("Replaces old") == 1
    assert history_html(make_memory("Plain.")) == ""


def test_pin_archive_restore(qtbot: Any, browser: MemoryBrowser) -> None:
    store = store_of(browser)
    browser.select("m0")
    browser.buttons["Pin"].click()
    qtbot.waitUntil(lambda: store.get("m0").tier.value == "hot", timeout=5000)
    qtbot.waitUntil(lambda: browser.buttons["Pin"].text() == "Unpin", timeout=5000)
    browser.buttons["Archive"].click()
    qtbot.waitUntil(lambda: store.get("m0").tier.value == "archived", timeout=5000)
    qtbot.waitUntil(lambda: browser.buttons["Archive"].text() == "Restore", timeout=5000)
    browser.buttons["Archive"].click()
    qtbot.waitUntil(lambda: store.get("m0").tier.value == "warm", timeout=5000)


def test_a_hot_memory_is_not_pinned_until_the_user_pins_it(
    qtbot: Any, browser: MemoryBrowser
) -> None:
    store = store_of(browser)
    store.update("m1", {"tier": "hot"})  # hot from use, as the consolidation makes it
    browser.refresh()

    def shown_hot() -> bool:
        return any(m.id == "m1" and m.tier.value == "hot" for m in browser.model.memories)

    qtbot.waitUntil(shown_hot, timeout=5000)
    browser.select("m1")
    assert browser.buttons["Pin"].text() == "Pin"
    browser.buttons["Pin"].click()
    qtbot.waitUntil(lambda: "pinned" in store.get("m1").tags, timeout=5000)
    qtbot.waitUntil(lambda: browser.buttons["Pin"].text() == "Unpin", timeout=5000)
    browser.buttons["Pin"].click()
    qtbot.waitUntil(lambda: "pinned" not in store.get("m1").tags, timeout=5000)
    assert store.get("m1").tier.value == "hot"  # unpinning takes nothing else away


def test_the_count_follows_the_filter(qtbot: Any, browser: MemoryBrowser) -> None:
    total = len(browser.model.memories)
    browser.search.setText("m0-unlikely-text-zzz")
    browser.apply_filters()
    assert browser.status.text() == f"0 of {total} memories"
    browser.search.setText("")
    browser.apply_filters()
    assert browser.status.text() == f"{total} memories"


def test_edit_saves_through_the_service(qtbot: Any, browser: MemoryBrowser) -> None:
    store = store_of(browser)
    browser.select("m2")
    browser.edit_selected({"content": "Components fetch with useQuery and suspense."})
    qtbot.waitUntil(lambda: "suspense" in store.get("m2").content, timeout=5000)
    qtbot.waitUntil(lambda: "suspense" in browser.detail.toPlainText(), timeout=5000)


def test_delete_and_undo_keep_the_same_memory(qtbot: Any, browser: MemoryBrowser) -> None:
    store = store_of(browser)
    before = store.get("m1")
    browser.select("m1")
    browser.buttons["Delete"].click()
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2, timeout=5000)
    assert "m1" not in store.all_ids()
    assert "Undo delete" in browser.status.text()
    browser.buttons["Undo delete"].click()
    qtbot.waitUntil(lambda: browser.model.rowCount() == 3, timeout=5000)
    after = store.get("m1")
    assert (after.content, after.tags, after.created_at, after.type) == (
        before.content,
        before.tags,
        before.created_at,
        before.type,
    )
    assert not browser.buttons["Undo delete"].isEnabled()


def test_edit_dialog_changes_the_memory(qtbot: Any, browser: MemoryBrowser) -> None:
    store = store_of(browser)
    browser.select("m0")
    dialog = browser.open_editor()
    assert dialog.windowTitle() == "Edit memory"
    assert (
        dialog.content.toPlainText() == "Use PostgreSQL for orders." and dialog.tags.text() == "t0"
    )
    dialog.tags.setText("t0, database")
    assert dialog.save()
    assert store.get("m0").tags == ["t0", "database"]
    assert store.get("m0").type.value == "decision"  # unchanged fields stay
    qtbot.waitUntil(lambda: "Saved m0" in browser.status.text(), timeout=5000)
