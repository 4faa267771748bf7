"""Declared replacement in the desktop app: the add dialog's Replaces picker and the
browser's "Replaces…" declare (as `engram add/edit --supersedes`) that a memory replaces
others of its project; a refused declaration shows the reason and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.composition import Engram, open_engram
from app.desktop import Desktop
from app.tasks import TaskRunner
from services.errors import NotFoundError, UserInputError
from services.filters import MemoryFilter
from services.knowledge import contradictions
from services.types import RetrievalMode
from tests.fakes import HashEmbedder
from ui.add_dialog import AddMemoryDialog, ReplacesPicker
from ui.browser import MemoryBrowser

MEMORIES = [
    ("m0", "shop", "decision", "Use PostgreSQL 15 for orders.", "2026-01-01"),
    ("m1", "shop", "workflow", "Release with make deploy after the tests.", "2026-02-01"),
    ("m2", "app", "convention", "Components fetch with useQuery.", "2026-03-01"),
    ("m3", "shop", "decision", "Orders moved to PostgreSQL 16.", "2026-04-01"),
]


@pytest.fixture
def desktop(data_dir: Path) -> Iterator[Desktop]:
    engram = open_engram(data_dir, embedder=HashEmbedder())
    for memory_id, project, type_, text, day in MEMORIES:
        engram.service.add(
            {
                "id": memory_id,
                "project": project,
                "type": type_,
                "content": text,
                "created_at": f"{day}T10:00:00+00:00",
            }
        )
    backend = Desktop(data_dir, engram)
    yield backend
    backend.close()


def superseded(engram: Engram) -> dict[str, str | None]:
    everything = engram.store.query(MemoryFilter.everything())
    return {m.id: m.superseded_by for m in everything}


def listed(picker: ReplacesPicker) -> list[str]:
    ids = picker.listed_ids()
    assert picker.list.topLevelItemCount() == len(ids)
    return ids


def test_picker_lists_what_still_holds_in_the_project(qtbot: Any, desktop: Desktop) -> None:
    picker = ReplacesPicker(desktop.replaceable, lambda: "shop", exclude=["m3"])
    qtbot.addWidget(picker)
    picker.search()
    assert listed(picker) == ["m1", "m0"]  # newest first; not m2 (app) nor m3 (excluded)
    picker.query.setText("PostgreSQL orders")
    picker.search()
    assert listed(picker)[0] == "m0" and set(listed(picker)) <= {"m0", "m1"}
    picker.set_checked("m0")
    picker.query.setText("release deploy")
    picker.search()
    assert listed(picker) == ["m0", "m1"]  # the checked one stays, first
    assert picker.picked_ids() == ["m0"]
    picker.set_checked("m0", False)
    assert picker.picked_ids() == []


def test_add_dialog_stores_the_memory_and_marks_the_picked_one(
    qtbot: Any, desktop: Desktop
) -> None:
    engram = desktop.engram
    dialog = AddMemoryDialog(desktop.add_memory, project="shop", replacing=desktop)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.type.setCurrentText("decision")
    dialog.content.setPlainText("Orders moved to PostgreSQL 17 in June.")
    dialog.replaces_button.click()
    assert dialog.picker is not None and dialog.picker.isVisible()
    dialog.picker.query.setText("PostgreSQL")
    dialog.picker.search()
    assert set(listed(dialog.picker)[:2]) == {"m0", "m3"}
    dialog.picker.set_checked("m3")
    assert "PostgreSQL 16" in dialog.replaces_summary.text()
    with qtbot.waitSignal(dialog.saved) as signal:
        assert dialog.save()
    new = signal.args[0]
    assert engram.store.get(new.id).content == "Orders moved to PostgreSQL 17 in June."
    old = engram.store.get("m3")
    assert old.superseded_by == new.id and old.valid_to
    assert superseded(engram) == {"m0": None, "m1": None, "m2": None, "m3": new.id, new.id: None}
    status = dialog.status.text()
    assert dialog.status.isVisible() and "m3" in status and "no longer holds" in status
    assert dialog.isVisible() and not dialog.error.isVisible()  # stays to say so
    # history kept: a deep search still finds the memory that no longer holds
    deep = MemoryFilter(project="shop", mode=RetrievalMode.DEEP)
    assert "m3" in {m.id for m in engram.store.query(deep)}


def test_add_dialog_without_picks_saves_and_closes(qtbot: Any, desktop: Desktop) -> None:
    dialog = AddMemoryDialog(desktop.add_memory, project="shop", replacing=desktop)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.content.setPlainText("Refunds are rounded once, on the total.")
    with qtbot.waitSignal(dialog.saved):
        assert dialog.save()
    assert not dialog.isVisible()
    assert set(superseded(desktop.engram).values()) == {None}


def test_add_dialog_says_what_the_new_memory_may_replace_and_keeps_it_open(
    qtbot: Any, desktop: Desktop
) -> None:
    """As `engram add` says "this may replace X", the tray's dialog stays to say it, and
    the pair waits in the review as an open proposal."""
    dialog = AddMemoryDialog(desktop.add_memory, project="shop", replacing=desktop)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.content.setPlainText("Orders are on PostgreSQL 17 now; 16 is no longer used.")
    with qtbot.waitSignal(dialog.saved) as signal:
        assert dialog.save()
    status = dialog.status.text()
    assert dialog.isVisible() and status.startswith("Saved.")
    assert "may replace “Orders moved to PostgreSQL 16.”" in status
    assert "Review findings" in status
    assert dialog.replaces_summary.text() == "None declared"  # nothing was picked
    proposals = {(p.a, p.b) for p in contradictions.listing(desktop.engram.store)}
    assert tuple(sorted(("m3", signal.args[0].id))) in proposals
    assert superseded(desktop.engram)["m3"] is None  # proposed, not applied


def test_add_dialog_does_not_store_a_text_already_stored(qtbot: Any, desktop: Desktop) -> None:
    dialog = AddMemoryDialog(desktop.add_memory, project="shop", replacing=desktop)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.content.setPlainText("Release with make deploy after the tests.\n")
    dialog.tags.setText("release")
    before = set(superseded(desktop.engram))
    with qtbot.assertNotEmitted(dialog.saved):
        assert not dialog.save()
    status = dialog.status.text()
    assert dialog.isVisible() and "Already stored as “Release with make deploy" in status
    assert "it now also has release" in status  # what the add brought is not lost
    assert set(superseded(desktop.engram)) == before
    assert desktop.engram.store.get("m1").tags == ["release"]
    dialog.project.setText("app")  # another project: a memory of its own
    with qtbot.waitSignal(dialog.saved):
        assert dialog.save()
    assert len(superseded(desktop.engram)) == len(before) + 1


def test_add_dialog_refused_declaration_stores_nothing(qtbot: Any, desktop: Desktop) -> None:
    engram = desktop.engram
    dialog = AddMemoryDialog(desktop.add_memory, project="shop", replacing=desktop)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.content.setPlainText("Release with make release.")
    dialog.show_picker(True)
    assert dialog.picker is not None
    dialog.picker.set_checked("m1")
    dialog.project.setText("app")  # m1 is in shop: a memory of app cannot replace it
    count = engram.store.count()
    assert not dialog.save()
    assert dialog.error.isVisible() and "project" in dialog.error.text()
    assert engram.store.count() == count
    assert set(superseded(engram).values()) == {None}
    assert dialog.isVisible()


def test_edit_dialog_has_no_replaces_picker(qtbot: Any, desktop: Desktop) -> None:
    memory = desktop.engram.store.get("m0")
    dialog = AddMemoryDialog(desktop.add_memory, memory=memory, replacing=desktop)
    qtbot.addWidget(dialog)
    assert dialog.picker is None


def test_backend_refuses_unknown_self_and_other_projects(desktop: Desktop) -> None:
    engram = desktop.engram
    with pytest.raises(NotFoundError):
        desktop.declare_replaces("m3", ["nope"])
    with pytest.raises(UserInputError, match="itself"):
        desktop.declare_replaces("m3", ["m3"])
    with pytest.raises(UserInputError, match="project"):
        desktop.declare_replaces("m3", ["m2"])
    count = engram.store.count()
    with pytest.raises(NotFoundError):
        desktop.add_replacing({"content": "New.", "project": "shop"}, ["nope"])
    assert engram.store.count() == count
    assert set(superseded(engram).values()) == {None}
    replacement = desktop.declare_replaces("m3", ["m0"])
    assert [m.id for m in replacement.replaced] == ["m0"]
    assert replacement.winner.id == "m3"
    assert replacement.summary().startswith("m0 “Use PostgreSQL 15 for orders.” no longer holds")


@pytest.fixture
def browser(qtbot: Any, desktop: Desktop) -> Iterator[MemoryBrowser]:
    runner = TaskRunner()
    widget = MemoryBrowser(desktop, runner)
    qtbot.addWidget(widget)
    widget.show()
    widget.refresh()
    qtbot.waitUntil(lambda: widget.model.rowCount() == 4, timeout=5000)
    yield widget
    runner.shutdown()


def test_browser_replaces_marks_the_picked_memory(qtbot: Any, browser: MemoryBrowser) -> None:
    engram = browser.backend.engram  # type: ignore[attr-defined]
    browser.select("m3")
    assert browser.buttons["Replaces…"].isEnabled()
    dialog = browser.open_replaces()
    qtbot.waitUntil(lambda: dialog.picker.list.topLevelItemCount() == 2, timeout=5000)
    assert set(listed(dialog.picker)) == {"m0", "m1"}  # its project, not itself
    assert not dialog.confirm.isEnabled()
    dialog.picker.set_checked("m0")
    assert dialog.confirm.isEnabled()
    dialog.confirm.click()
    qtbot.waitUntil(lambda: engram.store.get("m0").superseded_by == "m3", timeout=5000)
    qtbot.waitUntil(lambda: "no longer holds" in browser.status.text(), timeout=5000)
    assert "m0" in browser.status.text() and "replaced by m3" in browser.status.text()
    assert superseded(engram)["m1"] is None
    browser.select("m0")
    qtbot.waitUntil(lambda: "No longer holds" in browser.detail.toPlainText(), timeout=5000)
    assert "superseded by m3" in browser.detail.toPlainText()
    assert not browser.buttons["Replaces…"].isEnabled()  # it no longer holds
    browser.select("m3")
    assert "Replaces m0" in browser.detail.toPlainText()


def test_browser_holds_again_undoes_a_replacement(qtbot: Any, browser: MemoryBrowser) -> None:
    engram = browser.backend.engram  # type: ignore[attr-defined]
    browser.select("m3")
    assert not browser.buttons["Holds again"].isEnabled()  # it holds already
    browser.declare_replaces("m3", ["m0"])
    qtbot.waitUntil(lambda: engram.store.get("m0").superseded_by == "m3", timeout=5000)
    qtbot.waitUntil(lambda: "no longer holds" in browser.status.text(), timeout=5000)
    browser.select("m0")
    assert browser.buttons["Holds again"].isEnabled()
    browser.buttons["Holds again"].click()
    qtbot.waitUntil(lambda: "holds again" in browser.status.text(), timeout=5000)
    assert browser.status.text().startswith("m0 holds again beside m3: both hold")
    m0, m3 = engram.store.get("m0"), engram.store.get("m3")
    assert (m0.superseded_by, m0.valid_to, m3.supersedes) == (None, None, None)
    browser.select("m0")
    assert not browser.buttons["Holds again"].isEnabled()
    assert "No longer holds" not in browser.detail.toPlainText()


def test_browser_refused_declaration_shows_the_reason(qtbot: Any, browser: MemoryBrowser) -> None:
    engram = browser.backend.engram  # type: ignore[attr-defined]
    browser.declare_replaces("m3", ["m2"])  # m2 is in another project
    qtbot.waitUntil(lambda: "project" in browser.status.text(), timeout=5000)
    assert "a memory replaces only memories of its own project" in browser.status.text()
    browser.declare_replaces("m3", ["gone"])
    qtbot.waitUntil(lambda: "no memory with id gone" in browser.status.text(), timeout=5000)
    assert set(superseded(engram).values()) == {None}


def test_tray_add_dialog_offers_replaces(qtbot: Any, data_dir: Path, monkeypatch: Any) -> None:
    from ui.main import DesktopApp

    monkeypatch.setattr("ui.main.QApplication.quit", lambda: None)
    engram = open_engram(data_dir, embedder=HashEmbedder())
    engram.service.add({"content": "Use UTC in the database.", "project": "shop", "id": "u1"})
    app = DesktopApp(data_dir, Desktop(data_dir, engram), use_tray=False, watch=False)
    qtbot.addWidget(app.presence)
    try:
        app.open_add_memory()
        dialog = app.add_dialog
        qtbot.addWidget(dialog)
        assert dialog.picker is not None
        dialog.project.setText("shop")
        dialog.show_picker(True)  # searches on the app's task runner
        picker = dialog.picker
        qtbot.waitUntil(lambda: picker.list.topLevelItemCount() == 1)
        assert listed(picker) == ["u1"]
        dialog.close()
    finally:
        app.quit()
