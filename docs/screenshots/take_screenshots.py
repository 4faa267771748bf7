"""Screenshots of the desktop app for the README, taken from the real windows.

    xvfb-run -a -s "-screen 0 1280x800x24" .venv/bin/python docs/screenshots/take_screenshots.py

The demo memories (resources/demo/memories.jsonl) are imported into a temporary data
folder with the real ONNX embedder, then the real widgets are shown and saved as PNGs
next to this script. When `trayer` is installed it runs inside the X session as a real
system tray, so the tray menu is shot where it opens; without it the menu is shot alone.
The two memories that disagree (CONTRADICTION) are added only after the other windows
are shot, so that those show the demo data alone.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QEventLoop, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QFont, QGuiApplication, QPixmap
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.composition import open_engram  # noqa: E402
from app.desktop import Desktop  # noqa: E402
from services.memories.transfer import parse_import  # noqa: E402
from services.rem.cycle import RemContext, run_operations  # noqa: E402
from ui.add_dialog import AddMemoryDialog  # noqa: E402
from ui.browser import MemoryBrowser  # noqa: E402
from ui.main import DesktopApp  # noqa: E402
from ui.profile_panel import ProfilePanel  # noqa: E402
from ui.review_dialog import ReviewDialog  # noqa: E402
from ui.tray import ActionsWindow, Tray, TrayActions, build_menu  # noqa: E402

OUT = Path(__file__).resolve().parent
QUERY = "timezone bug in order dates"
POPUP_SIZE = (720, 440)
BROWSER_SIZE = (1100, 600)
SELECTED_MEMORY = "demo-2"  # the pitfall about `parse_order_date`
RELEASE_QUERY = "release checklist"  # typed in the add dialog's Replaces picker
REPLACED_MEMORY = "demo-5"  # "Release checklist": `make deploy`, replaced by `make release`
PROFILE = {
    "style": "Small pure functions, type hints everywhere, tests next to the code.",
    "languages": "Python 3.12, TypeScript",
    "frameworks": "FastAPI, SQLAlchemy, pytest; React with TanStack Query",
    "goals": "demo-shop: reliable checkout and correct order dates across time zones.",
}
REVIEW_SIZE = (720, 480)
# Added before the REM cycle so that it finds duplicates of "Money is stored in cents".
DUPLICATES = [
    {
        "project": "demo-shop",
        "type": "convention",
        "title": "Money is stored in cents",
        "content": "All amounts are integers in cents (`amount_cents`); never use floats "
        "for money. Format only at the edge with `format_money`.",
        "tags": ["payments", "conventions"],
        "file_refs": ["src/shop/payments/**"],
    },
    {
        "project": "demo-shop",
        "type": "convention",
        "title": "Amounts are integer cents, not floats",
        "content": "Keep every money amount as an integer number of cents "
        "(`amount_cents`), never as a float; format it with `format_money` only when "
        "it is shown.",
        "tags": ["payments", "money"],
        "file_refs": ["src/shop/payments/**"],
    },
]
# Added after the other screenshots; the contradictions operation (rules only, no LLM)
# finds that the newer one replaces the older one's timeout.
CONTRADICTION = [
    {
        "id": "demo-9",
        "project": "demo-shop",
        "type": "fact",
        "title": "`fetch_rates` timeout",
        "content": "`fetch_rates` gives up waiting after 5 seconds.",
        "tags": ["rates", "http"],
        "file_refs": ["src/shop/rates/client.py"],
        "created_at": "2026-04-02T10:00:00+02:00",
    },
    {
        "id": "demo-10",
        "project": "demo-shop",
        "type": "decision",
        "title": "Longer timeout for `fetch_rates`",
        "content": "The timeout of `fetch_rates` went from 5 s to 30 s after the incident.",
        "tags": ["rates", "http", "incident"],
        "file_refs": ["src/shop/rates/client.py"],
        "created_at": "2026-07-03T09:30:00+02:00",
    },
]
OUTDATED_QUERY = "how long does fetch_rates wait"
WALLPAPER = "gradient:#e9eef5-#c3cedc"


def wait(ms: int) -> None:
    """Let the event loop run for `ms` milliseconds."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        wait(50)


def save(pixmap: QPixmap, name: str) -> None:
    path = OUT / name
    if not pixmap.save(str(path), "PNG"):
        raise OSError(f"{path}: could not save the screenshot")
    print(f"{path.relative_to(ROOT)}: {pixmap.width()}x{pixmap.height()}")


def shoot(widget: QWidget, name: str) -> None:
    widget.repaint()
    wait(300)
    save(widget.grab(), name)


def start_tray_host() -> subprocess.Popen[bytes] | None:
    """A wallpaper and `trayer` (a real freedesktop system tray) in this X session."""
    if shutil.which("display"):  # ImageMagick paints the root window and exits
        subprocess.run(
            ["display", "-size", "1280x800", "-window", "root", WALLPAPER],
            check=False,
            timeout=30,
        )
    if not shutil.which("trayer"):
        print("trayer is not installed: the tray menu is shot on its own", file=sys.stderr)
        return None
    return subprocess.Popen(
        [
            "trayer",
            "--edge", "top",
            "--align", "right",
            "--widthtype", "pixel",
            "--width", "120",
            "--height", "30",
            "--SetDockType", "true",
            "--SetPartialStrut", "true",
            "--transparent", "true",
            "--alpha", "0",
            "--tint", "0x2b3440",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


def import_demo(data_dir: Path) -> None:
    raw = resources.files("resources").joinpath("demo/memories.jsonl").read_bytes()
    memories = parse_import(raw, "demo/memories.jsonl")
    engram = open_engram(data_dir)  # the real ONNX embedder
    try:
        engram.service.import_memories(memories, skip_existing=True)
        engram.service.catch_up()
        for data in DUPLICATES:
            engram.service.add(data, embed=True)
        context = RemContext(engram.service, engram.vectors, engram.embedder.model_id)
        run_operations(context, ["duplicates"])
    finally:
        engram.close()


def shoot_popup(desktop_app: DesktopApp) -> None:
    popup = desktop_app.popup
    popup.present()
    popup.resize(*POPUP_SIZE)
    popup.query.setFocus()
    QTest.keyClicks(popup.query, QUERY)
    wait_until(lambda: popup.answered_query == QUERY and bool(popup.results), "search results")
    popup.list.setCurrentRow(0)
    shoot(popup, "popup-results.png")
    QTest.keyClick(popup.query, Qt.Key.Key_Return)
    wait_until(lambda: popup.status.text().startswith("Copied"), "the copied context")
    shoot(popup, "popup-copied.png")
    popup.hide()


def shoot_tray_menu(desktop_app: DesktopApp) -> None:
    presence = desktop_app.presence
    if isinstance(presence, Tray) and presence.icon.geometry().isValid():
        icon = presence.icon.geometry()
        menu = presence.menu
        width = menu.sizeHint().width()
        menu.popup(QPoint(icon.right() - width + 1, icon.bottom() + 3))
        wait_until(menu.isVisible, "the tray menu")
        menu.setActiveAction(menu.actions()[0])  # as under the pointer
        wait(400)
        shown = menu.geometry()
        screen = QGuiApplication.primaryScreen()
        right = screen.geometry().right()
        area = QRect(
            QPoint(min(shown.left(), icon.left()) - 60, 0),
            QPoint(right, shown.bottom() + 40),
        )
        save(screen.grabWindow(0, area.x(), area.y(), area.width(), area.height()), "tray-menu.png")
        menu.hide()
        return
    print("no system tray: shooting the menu on its own", file=sys.stderr)
    menu, _pause = build_menu(_no_actions())
    menu.popup(QPoint(200, 200))
    wait_until(menu.isVisible, "the menu")
    shoot(menu, "tray-menu.png")
    menu.hide()


def _no_actions() -> TrayActions:
    def nothing() -> None:
        return None

    return TrayActions(*([nothing] * 10))


def shoot_actions_window() -> None:
    window = ActionsWindow(_no_actions())
    window.show()
    wait_until(window.isVisible, "the fallback window")
    shoot(window, "fallback-window.png")
    window.close()


def shoot_settings(desktop_app: DesktopApp) -> None:
    desktop_app.open_settings()
    wait_until(lambda: desktop_app.settings_panel is not None, "the settings panel")
    panel = desktop_app.settings_panel
    panel.tabs.setCurrentIndex(0)
    shoot(panel, "settings.png")
    budget = panel.fields["context.budget"]
    budget.editor.setText("10")  # as typed; Enter or leaving the field applies it
    budget.apply("10")  # refused: below the minimum
    shoot(panel, "settings-error.png")
    panel.close()


def shoot_browser(desktop_app: DesktopApp) -> None:
    browser = MemoryBrowser(desktop_app.desktop, desktop_app.runner)
    browser.resize(*BROWSER_SIZE)
    browser.show()
    browser.refresh()
    wait_until(lambda: browser.model.rowCount() > 0, "the memories")
    browser.select(SELECTED_MEMORY)
    wait_until(lambda: "parse_order_date" in browser.detail.toPlainText(), "the detail pane")
    shoot(browser, "browser.png")
    browser.close()


def shoot_profile(desktop_app: DesktopApp) -> None:
    desktop_app.desktop.set_profile_consent(True)
    panel = ProfilePanel(desktop_app.desktop, desktop_app.runner)
    panel.show()
    panel.load()
    wait_until(lambda: panel.ready and panel.save_button.isEnabled(), "the profile")
    for key, text in PROFILE.items():
        panel.fields[key].setPlainText(text)
    panel.save()
    wait_until(lambda: panel.status.text() == "Profile saved", "the saved profile")
    shoot(panel, "profile.png")
    panel.close()


def shoot_review(desktop_app: DesktopApp) -> None:
    dialog = ReviewDialog(desktop_app.desktop, desktop_app.runner)
    dialog.resize(*REVIEW_SIZE)
    dialog.show()
    dialog.load()
    wait_until(lambda: dialog.current is not None, "a finding to review")
    shoot(dialog, "review.png")
    dialog.close()


def shoot_review_contradiction(desktop_app: DesktopApp) -> None:
    """Two memories that disagree, the contradictions operation, and the review dialog
    on its finding: the duplicate still open from review.png is skipped with the
    dialog's Skip button."""
    engram = desktop_app.desktop.engram
    for data in CONTRADICTION:
        engram.service.add(data, embed=True)
    context = RemContext(engram.service, engram.vectors, engram.embedder.model_id, llm=None)
    (report,) = run_operations(context, ["contradictions"])
    if report.error or not any(f.op == "contradictions" for f in report.findings):
        raise RuntimeError(f"the contradictions operation found nothing: {report}")
    dialog = ReviewDialog(desktop_app.desktop, desktop_app.runner)
    dialog.resize(*REVIEW_SIZE)
    dialog.show()
    dialog.load()
    wait_until(lambda: dialog.current is not None, "a finding to review")
    while dialog.current.op != "contradictions":
        skipped = dialog.current.id
        QTest.mouseClick(dialog.option_buttons["skip"], Qt.MouseButton.LeftButton)
        wait_until(
            lambda skipped=skipped: dialog.current is None or dialog.current.id != skipped,
            "the next finding",
        )
        if dialog.current is None:
            raise RuntimeError("no contradiction finding to review")
    shoot(dialog, "review-contradiction.png")
    dialog.close()


def shoot_popup_outdated(desktop_app: DesktopApp) -> None:
    """The popup on the open contradiction of review-contradiction.png: the memory it
    says was replaced comes second, marked "may be outdated"."""
    popup = desktop_app.popup
    popup.present()
    popup.resize(*POPUP_SIZE)
    popup.query.clear()
    popup.query.setFocus()
    QTest.keyClicks(popup.query, OUTDATED_QUERY)
    wait_until(
        lambda: popup.answered_query == OUTDATED_QUERY and bool(popup.results), "search results"
    )
    if not any(r.outdated_by for r in popup.results):
        raise RuntimeError("no result is marked outdated")
    popup.list.setCurrentRow(0)
    shoot(popup, "popup-outdated.png")
    popup.hide()


def shoot_add_memory() -> None:
    def not_saved(_data: dict[str, object]) -> None:
        raise AssertionError("the screenshot dialog does not save")

    dialog = AddMemoryDialog(not_saved, project="demo-shop")
    dialog.type.setCurrentText("pitfall")
    dialog.title.setText("Refund amounts rounded twice")
    dialog.content.setPlainText(
        "`refund_total` rounds each line to cents and then rounds the sum again, so "
        "partial refunds can be one cent off. Round once, on the total in cents."
    )
    dialog.tags.setText("refunds, money, rounding")
    dialog.file_refs.setText("src/shop/payments/refunds.py")
    dialog.show()
    wait_until(dialog.isVisible, "the add-memory dialog")
    dialog.content.setFocus()
    shoot(dialog, "add-memory.png")
    dialog.reject()


def release_dialog(
    store: Callable[[dict[str, object]], object], desktop_app: DesktopApp
) -> AddMemoryDialog:
    """The add dialog, shown, with the new release workflow that replaces the demo's
    release checklist typed in."""
    dialog = AddMemoryDialog(
        store, project="demo-shop", replacing=desktop_app.desktop, runner=desktop_app.runner
    )
    dialog.type.setCurrentText("workflow")
    dialog.title.setText("Release with `make release`")
    dialog.content.setPlainText(
        "To release: `make release` runs the tests, bumps the version and tags it; CI "
        "deploys the tag. `make deploy` is gone."
    )
    dialog.tags.setText("release, ci")
    dialog.show()
    wait_until(dialog.isVisible, "the add-memory dialog")
    return dialog


def shoot_add_replaces(desktop_app: DesktopApp) -> None:
    """The add dialog with its Replaces picker open: the new release workflow replaces
    the old checklist (not saved, so the other screenshots keep the demo data)."""

    def not_saved(_data: dict[str, object]) -> None:
        raise AssertionError("the screenshot dialog does not save")

    dialog = release_dialog(not_saved, desktop_app)
    dialog.show_picker(True)
    picker = dialog.picker
    assert picker is not None
    QTest.keyClicks(picker.query, RELEASE_QUERY)
    picker.search()
    wait_until(lambda: REPLACED_MEMORY in picker.listed_ids(), "the picker's results")
    picker.set_checked(REPLACED_MEMORY)
    first = picker.list.topLevelItem(0)
    if first is not None:
        picker.list.setCurrentItem(first)  # highlighted, as under the pointer
    picker.query.setFocus()
    shoot(dialog, "add-replaces.png")
    dialog.reject()


def shoot_add_checked(desktop_app: DesktopApp) -> None:
    """The add dialog after saving a memory that may replace another: it stays to say
    so (shot last: it stores the memory and an open proposal)."""
    desktop = desktop_app.desktop
    dialog = release_dialog(desktop.add_memory, desktop_app)
    dialog.save()
    wait_until(dialog.status.isVisible, "the dialog's note on what it may replace")
    shoot(dialog, "add-checked.png")
    dialog.reject()


def main() -> int:
    tray_host = start_tray_host()
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Engram")
    app.setQuitOnLastWindowClosed(False)
    app.setFont(QFont("DejaVu Sans", 10))
    data_dir = Path(tempfile.mkdtemp(prefix="engram-screenshots-")) / "data"
    desktop_app: DesktopApp | None = None
    try:
        if tray_host is not None:
            try:
                wait_until(QSystemTrayIcon.isSystemTrayAvailable, "the system tray", 10)
            except TimeoutError:
                print("trayer started but no system tray appeared", file=sys.stderr)
        import_demo(data_dir)
        desktop_app = DesktopApp(data_dir, Desktop(data_dir), watch=False)
        wait(500)  # the tray icon docks
        shoot_popup(desktop_app)
        shoot_tray_menu(desktop_app)
        shoot_actions_window()
        shoot_settings(desktop_app)
        shoot_browser(desktop_app)
        shoot_profile(desktop_app)
        shoot_review(desktop_app)
        shoot_add_memory()
        shoot_add_replaces(desktop_app)
        shoot_review_contradiction(desktop_app)
        shoot_popup_outdated(desktop_app)
        shoot_add_checked(desktop_app)
    finally:
        if desktop_app is not None:
            desktop_app.quit()
        if tray_host is not None:
            tray_host.terminate()
            tray_host.wait(10)
        shutil.rmtree(data_dir.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
