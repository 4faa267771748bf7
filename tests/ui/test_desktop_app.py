"""The desktop app without a system tray (offscreen): the fallback window, copying the
context, pausing, and the icon states (one instance per data folder: test_single_instance)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox

from app.desktop import Desktop
from tests.fakes import HashEmbedder
from ui.icons import IconState, state_pixmap
from ui.main import FIRST_RUN_MARKER, NO_TRAY_NOTICE, DesktopApp, run_tray
from ui.tray import ActionsWindow, Tray, TrayActions, build_menu


@pytest.fixture
def desktop_app(
    qtbot: Any,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[DesktopApp]:
    from app.composition import open_engram

    monkeypatch.setattr("ui.main.QApplication.quit", lambda: None)
    engram = open_engram(data_dir, embedder=HashEmbedder())
    engram.service.add({"content": "Use UTC in the database.", "project": "shop", "id": "u1"})
    app = DesktopApp(data_dir, Desktop(data_dir, engram), use_tray=False, watch=False)
    qtbot.addWidget(app.presence)
    app.started_with = capsys.readouterr().err  # type: ignore[attr-defined]
    yield app
    app.quit()


def test_without_a_tray_a_window_offers_the_actions(desktop_app: DesktopApp) -> None:
    assert isinstance(desktop_app.presence, ActionsWindow)
    assert desktop_app.presence.isVisible()
    assert set(desktop_app.presence.buttons) == {
        "Quick search",
        "Copy context for the current file",
        "Add memory…",
        "Pause watching",
        "Pause consolidation",
        "Settings…",
        "Consent and profile…",
        "Memory browser…",
        "Review findings…",
        "Quit Engram",
    }
    assert NO_TRAY_NOTICE in desktop_app.started_with  # type: ignore[attr-defined]


def test_quick_search_button_opens_the_popup(qtbot: Any, desktop_app: DesktopApp) -> None:
    desktop_app.presence.buttons["Quick search"].click()
    assert desktop_app.popup.isVisible()


def test_copy_context_puts_the_block_on_the_clipboard(qtbot: Any, desktop_app: DesktopApp) -> None:
    QGuiApplication.clipboard().setText("")
    desktop_app.presence.buttons["Copy context for the current file"].click()
    qtbot.waitUntil(
        lambda: QGuiApplication.clipboard().text().startswith("<engram-context "), timeout=5000
    )
    assert "Copied" in desktop_app.presence.state_label.text()


def test_pause_and_resume(qtbot: Any, desktop_app: DesktopApp) -> None:
    button = desktop_app.presence.buttons["Pause watching"]
    button.click()
    assert desktop_app.paused and button.text() == "Resume watching"
    assert desktop_app.presence.state_label.text().startswith("Paused")
    button.click()
    assert not desktop_app.paused and button.text() == "Pause watching"


def test_icon_states_differ() -> None:
    images = {state: state_pixmap(state, 32).toImage() for state in IconState}
    assert len({image.pixelColor(16, 16).name() for image in images.values()}) >= 2
    attention = images[IconState.ATTENTION]
    assert attention.pixelColor(27, 5).red() > 200  # the red dot


def test_settings_open_and_apply_without_restart(qtbot: Any, desktop_app: DesktopApp) -> None:
    desktop_app.presence.buttons["Settings…"].click()
    qtbot.waitUntil(lambda: desktop_app.settings_panel is not None, timeout=5000)
    panel = desktop_app.settings_panel
    assert panel.isVisible() and panel.settings is desktop_app.desktop.engram.settings
    assert panel.fields["context.budget"].apply("1000")
    QGuiApplication.clipboard().setText("")
    desktop_app.copy_context()
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text().startswith("<engram"), timeout=5000)
    from services.tokens import count_tokens

    assert count_tokens(QGuiApplication.clipboard().text()) <= 1000


def test_repeated_errors_collapse_into_one_notification(
    qtbot: Any, desktop_app: DesktopApp
) -> None:
    from services.errors import StoreUnavailable

    shown: list[str] = []
    desktop_app.presence.notify = lambda title, text: shown.append(text)  # type: ignore[method-assign]
    for _ in range(5):
        desktop_app._failed(StoreUnavailable("engram.sqlite3: the database is locked"))
    assert shown == ["engram.sqlite3: the database is locked"]
    assert desktop_app.presence.state_label.text().startswith("Attention")


def test_menu_opens_browser_profile_and_add(qtbot: Any, desktop_app: DesktopApp) -> None:
    desktop_app.presence.buttons["Memory browser…"].click()
    qtbot.waitUntil(lambda: desktop_app.browser.model.rowCount() == 1, timeout=5000)
    desktop_app.presence.buttons["Consent and profile…"].click()
    assert desktop_app.profile_panel.isVisible()
    desktop_app.presence.buttons["Add memory…"].click()
    dialog = desktop_app.add_dialog
    dialog.content.setPlainText("Deploys happen on Tuesdays.")
    assert dialog.save()
    assert desktop_app.desktop.engram.store.count() == 2


def test_the_tray_menu_has_every_action(qtbot: Any) -> None:
    actions = TrayActions(*([lambda: None] * 10))
    menu, pause = build_menu(actions)
    labels = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert labels == [
        "Quick search",
        "Copy context for the current file",
        "Add memory…",
        "Pause watching",
        "Pause consolidation",
        "Settings…",
        "Consent and profile…",
        "Memory browser…",
        "Review findings…",
        "Quit Engram",
    ]
    assert pause.text() == "Pause watching"


def test_first_start_offers_a_folder_once(
    qtbot: Any, desktop_app: DesktopApp, tmp_path: Path
) -> None:
    offered: list[bool] = []
    desktop_app.watch_enabled = True
    desktop_app.offer_first_folder = lambda choose=None: offered.append(True)  # type: ignore[method-assign]
    desktop_app._watching_started(None)
    desktop_app._watching_started(None)
    qtbot.waitUntil(lambda: offered == [True], timeout=3000)
    assert (desktop_app.data_dir / FIRST_RUN_MARKER).exists()
    qtbot.wait(50)
    assert offered == [True]  # asked once, not at every start


def test_choosing_a_folder_sets_watch_paths(
    qtbot: Any, desktop_app: DesktopApp, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    DesktopApp.offer_first_folder(desktop_app, choose=lambda: str(folder))
    settings = desktop_app.desktop.engram.settings
    qtbot.waitUntil(lambda: settings.get("watch.paths") == str(folder), timeout=5000)


def test_tray_without_a_display_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from services.errors import EnvironmentProblem

    monkeypatch.setattr("sys.platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(EnvironmentProblem, match="engram --help"):
        run_tray(tmp_path)


def test_an_error_copied_to_the_clipboard_becomes_critical_context(
    qtbot: Any, desktop_app: DesktopApp
) -> None:
    engram = desktop_app.desktop.engram
    engram.service.add(
        {
            "id": "fix-1",
            "project": "shop",
            "type": "fix",
            "content": "`KeyError: 'currency'` comes from legacy invoices; default to EUR.",
        }
    )
    desktop_app.desktop.engine.current_project = "shop"
    QGuiApplication.clipboard().setText("just some prose someone copied")
    QGuiApplication.clipboard().setText(
        "Traceback (most recent call last):\n  File \"a.py\", line 3, in pay\nKeyError: 'currency'"
    )
    qtbot.waitUntil(
        lambda: [c.memory.id for c in desktop_app.desktop.prediction().critical] == ["fix-1"],
        timeout=5000,
    )
    qtbot.waitUntil(lambda: "known fix" in desktop_app.presence.state_label.text(), timeout=5000)


def test_waiting_findings_raise_attention_and_open_the_review(
    qtbot: Any, desktop_app: DesktopApp
) -> None:
    from services.rem.cycle import RemContext, run_operations

    engram = desktop_app.desktop.engram
    for copy in range(2):
        engram.service.add({"id": f"d{copy}", "project": "shop", "content": "Ship on Fridays."})
    run_operations(
        RemContext(engram.service, engram.vectors, engram.embedder.model_id), ["duplicates"]
    )
    shown: list[str] = []
    desktop_app.presence.notify = lambda title, text: shown.append(text)  # type: ignore[method-assign]
    desktop_app.check_findings()
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert "1 consolidation finding(s) wait" in shown[0]
    desktop_app.presence.buttons["Review findings…"].click()
    qtbot.waitUntil(lambda: desktop_app.review_dialog.current is not None, timeout=5000)


def test_consolidation_can_be_paused_from_the_menu(qtbot: Any, desktop_app: DesktopApp) -> None:
    button = desktop_app.presence.buttons["Pause consolidation"]
    button.click()
    assert desktop_app.consolidation_paused and button.text() == "Resume consolidation"
    button.click()
    assert not desktop_app.consolidation_paused and button.text() == "Pause consolidation"


def test_the_tray_menu_label_follows_the_pause(qtbot: Any) -> None:
    tray = Tray(TrayActions(*([lambda: None] * 10)))
    tray.set_consolidation_label("Resume consolidation")
    labels = [a.text() for a in tray.menu.actions()]
    assert "Resume consolidation" in labels


def test_the_first_run_question_waits_while_the_popup_is_open(
    qtbot: Any, desktop_app: DesktopApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[bool] = []
    monkeypatch.setattr("ui.main.FIRST_RUN_RETRY_MS", 20)
    monkeypatch.setattr(
        "ui.main.QMessageBox.question",
        lambda *args: asked.append(True) or QMessageBox.StandardButton.No,
    )
    desktop_app.popup.show()
    desktop_app.offer_first_folder()
    qtbot.wait(100)
    assert asked == []  # typing into the popup is not taken by the question
    desktop_app.popup.hide()
    qtbot.waitUntil(lambda: asked == [True], timeout=3000)


def test_the_tray_answers_commands_while_it_runs(
    qtbot: Any, desktop_app: DesktopApp, data_dir: Path
) -> None:
    """The desktop app is the resident service: a forwarded command runs on its open
    services, and quitting gives the socket back."""
    from app.service import ping
    from app.service_client import forward, read_invocation

    desktop_app.start_service()
    qtbot.waitUntil(lambda: desktop_app.service is not None, timeout=10_000)
    assert ping(data_dir) is not None
    argv = ["--data-dir", str(data_dir), "show", "u1", "--json"]
    answer = forward(argv, read_invocation(argv), data_dir)
    assert answer is not None and answer.exit_code == 0
    assert '"Use UTC in the database."' in answer.stdout
    desktop_app.quit()
    assert ping(data_dir) is None


def test_add_fills_in_the_project_of_the_last_activity(qtbot: Any, desktop_app: DesktopApp) -> None:
    """Not watching, the dialog still gets a project: the one an assistant's hook or
    an earlier watch last worked in — unless one is typed first."""
    import json

    from app.activity import STATE_KEY

    store = desktop_app.desktop.engram.store
    store.meta_set(STATE_KEY, json.dumps({"project": "shop", "at": "2026-11-24T09:00:00+00:00"}))
    desktop_app.presence.buttons["Add memory…"].click()
    dialog = desktop_app.add_dialog
    qtbot.waitUntil(lambda: dialog.project.text() == "shop", timeout=5000)
    dialog.project.setText("billing")
    dialog.suggest_project("shop")
    assert dialog.project.text() == "billing"
