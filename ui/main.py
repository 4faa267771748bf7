"""The desktop app: tray (or its fallback window), quick-search popup, project watchers.

The icon appears before anything heavy loads; the services open on the task runner on
first use. Watching starts in the background for the `watch.paths` folders; its
predictions keep the context for "Copy context" warm.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QSystemTrayIcon

from app.activity import watched_paths
from app.crash import MessageThrottle, install_crash_handler
from app.desktop import Desktop
from app.errors import to_message
from app.single_instance import InstanceServer, ask_running_instance
from app.tasks import TaskRunner
from services.errors import EnvironmentProblem
from services.text.stacktrace import error_in_text
from ui.icons import IconState
from ui.popup import QuickSearchPopup
from ui.tray import ActionsWindow, Tray, TrayActions

log = logging.getLogger(__name__)
FIRST_RUN_RETRY_MS = 2000  # the first-run question waits while the popup is open
FIRST_RUN_MARKER = "first-run-offered"
STARTUP_PROBE = "ENGRAM_STARTUP_PROBE"
NO_TRAY_NOTICE = (
    "engram: this desktop has no system tray; Engram's actions are in a small window instead"
)


class _Bridge(QObject):
    """Carries watcher reports from the watcher's thread to the UI thread."""

    report = Signal(object)
    notice = Signal(str)


class DesktopApp(QObject):
    def __init__(
        self,
        data_dir: Path,
        desktop: Desktop | None = None,
        use_tray: bool | None = None,
        watch: bool = True,
    ) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.desktop = desktop or Desktop(data_dir)
        self.runner = TaskRunner(self)
        self.popup = QuickSearchPopup(self.desktop, self.runner, self._project)
        self.session: Any = None
        self.service: Any = None
        self.settings_panel: Any = None
        self.browser: Any = None
        self.profile_panel: Any = None
        self.add_dialog: Any = None
        self.review_dialog: Any = None
        self.consolidator: Any = None
        self.consolidation_paused = False
        self.paused = False
        self.watch_enabled = watch
        self.throttle = MessageThrottle()
        self.bridge = _Bridge()
        self.bridge.report.connect(self._on_report)
        self.bridge.notice.connect(self._on_notice)
        actions = TrayActions(
            quick_search=self.popup.present,
            copy_context=self.copy_context,
            add_memory=self.open_add_memory,
            toggle_watching=self.toggle_watching,
            toggle_consolidation=self.toggle_consolidation,
            settings=self.open_settings,
            profile=self.open_profile,
            browser=self.open_browser,
            review=self.open_review,
            quit=self.quit,
        )
        tray_available = QSystemTrayIcon.isSystemTrayAvailable() if use_tray is None else use_tray
        self.presence: Tray | ActionsWindow
        if tray_available:
            self.presence = Tray(actions, self)
            self.presence.show()
        else:
            print(NO_TRAY_NOTICE, file=sys.stderr)
            self.presence = ActionsWindow(actions)
            self.presence.show()
        self.runner.busy_changed.connect(self._busy)
        self.popup.copied.connect(lambda text: self.presence.set_state(IconState.IDLE, text))
        self.popup.failed.connect(lambda text: self.presence.set_state(IconState.ATTENTION, text))
        self.instance = InstanceServer(data_dir, self.popup.present)
        self._own_clipboard = ""
        QGuiApplication.clipboard().dataChanged.connect(self._clipboard_changed)
        if watch:
            QTimer.singleShot(0, self.start_watching)
            QTimer.singleShot(0, self.check_findings)
            QTimer.singleShot(0, self.start_consolidation)
            QTimer.singleShot(0, self.start_service)
        self.popup.query.textChanged.connect(lambda _text: self.user_active())

    def _project(self) -> str | None:
        return self.desktop.current_project

    def _busy(self, busy: bool) -> None:
        if getattr(self.presence, "state", None) is IconState.ATTENTION:
            return
        if not self.paused:
            self.presence.set_state(IconState.WORKING if busy else IconState.IDLE)

    # --- the resident service ------------------------------------------------------------

    def start_service(self) -> None:
        """Answer `engram` commands, the MCP server and assistants' hooks from this
        process's warm services (unless `engram serve` already does)."""
        from app.service import AlreadyServing, EngramService

        def start() -> Any:
            service = EngramService(self.data_dir, self.desktop.engram)
            try:
                service.start()
            except AlreadyServing as error:
                log.info("%s; the tray does not serve", error)
                return None
            return service

        def started(service: Any) -> None:
            self.service = service

        self.runner.run(start, started, self._failed)

    # --- watching ------------------------------------------------------------------------

    def start_watching(self) -> None:
        def start() -> Any:
            engram = self.desktop.engram
            roots = watched_paths(engram)
            if not roots:
                return None
            session = engram.watch_session(
                roots, self.bridge.report.emit, notice=self.bridge.notice.emit
            )
            session.start()
            self.desktop.attach_engine(session.engine)
            return session

        self.runner.run(start, self._watching_started, self._failed)

    def _watching_started(self, session: Any) -> None:
        self.session = session
        if session is None:
            self.presence.set_state(IconState.IDLE, "no folders watched (settings: watch.paths)")
            marker = self.data_dir / FIRST_RUN_MARKER
            if self.watch_enabled and not marker.exists():
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.write_text("offered\n", encoding="utf-8")
                QTimer.singleShot(0, self.offer_first_folder)

    def offer_first_folder(self, choose: Any = None) -> None:
        """First start: offer to watch a project folder (asked once). Not while the
        quick-search popup is open: the question would take the keys typed into it."""
        if choose is None and self.popup.isVisible():
            QTimer.singleShot(FIRST_RUN_RETRY_MS, self.offer_first_folder)
            return
        if choose is None:
            answer = QMessageBox.question(
                None,
                "Watch a project?",
                "Engram keeps context ready by following the files you open and the "
                "branches you check out. Choose a project folder to watch? (Secret files "
                "such as .env are never read.)",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
            choose = lambda: QFileDialog.getExistingDirectory(None, "Project folder to watch")  # noqa: E731
        folder = choose()
        if folder:
            self.runner.run(
                lambda: self.desktop.engram.settings.set("watch.paths", folder),
                lambda _value: self.start_watching(),
                self._failed,
            )

    def toggle_watching(self) -> None:
        if self.paused:
            self.paused = False
            self.presence.set_paused(False)
            self.presence.set_state(IconState.IDLE)
            self.start_watching()
            return
        self.paused = True
        self.presence.set_paused(True)
        self.presence.set_state(IconState.PAUSED, "watching paused")
        session, self.session = self.session, None
        if session is not None:
            self.runner.run(session.stop)

    # --- consolidation while idle -----------------------------------------------------

    def start_consolidation(self) -> None:
        def read() -> tuple[float, float]:
            settings = self.desktop.engram.settings
            return settings.get_float("rem.idle_minutes"), settings.get_float("rem.max_load")

        self.runner.run(read, self._consolidation_settings, self._failed)

    def _consolidation_settings(self, values: tuple[float, float]) -> None:
        from app.idle import IdleConsolidator, IdleMonitor

        idle_minutes, max_load = values
        if idle_minutes <= 0:
            return  # turned off in the settings
        monitor = IdleMonitor(idle_minutes, max_load)
        self.consolidator = IdleConsolidator(self.desktop.run_due_operations, self.runner, monitor)
        self.consolidator.progress.connect(
            lambda text: self.presence.set_state(IconState.WORKING, text)
        )
        self.consolidator.finished.connect(lambda _reports: self.check_findings())
        self.consolidator.set_paused(self.consolidation_paused)
        self.consolidator.start()

    def user_active(self) -> None:
        if self.consolidator is not None:
            self.consolidator.user_active()

    def toggle_consolidation(self) -> None:
        self.consolidation_paused = not self.consolidation_paused
        if self.consolidator is not None:
            self.consolidator.set_paused(self.consolidation_paused)
        label = "Resume consolidation" if self.consolidation_paused else "Pause consolidation"
        self.presence.set_consolidation_label(label)

    def _on_report(self, line: dict[str, Any]) -> None:
        self.user_active()
        if line.get("storm"):
            return
        what = line.get("path") or line.get("branch") or ""
        self.presence.set_state(IconState.IDLE, f"ready for {what}")

    def _on_notice(self, text: str) -> None:
        self.presence.set_state(IconState.ATTENTION, text[:120])
        admitted = self.throttle.admit(text)
        if admitted is not None:  # the same notice again within a minute stays quiet
            self.presence.notify("Engram", admitted)

    # --- settings -----------------------------------------------------------------------

    def open_settings(self) -> None:
        self.runner.run(lambda: self.desktop.engram.settings, self._show_settings, self._failed)

    def _show_settings(self, settings: Any) -> None:
        from ui.settings_panel import SettingsPanel

        if self.settings_panel is None or self.settings_panel.settings is not settings:
            self.settings_panel = SettingsPanel(settings)
            self.settings_panel.changed.connect(self.setting_changed)
        self.settings_panel.show()
        self.settings_panel.raise_()

    def setting_changed(self, key: str, value: Any) -> None:
        """Apply a change without a restart: context and profile settings are read at
        each use; watching restarts; the rest reopens the services on next use."""
        group = key.split(".")[0]
        if group in ("context", "profile"):
            return
        if key == "desktop.autostart":
            from app.autostart import set_autostart

            self.runner.run(lambda: set_autostart(bool(value)), None, self._failed)
            return
        if group == "watch":
            if not self.paused:
                session, self.session = self.session, None
                if session is not None:
                    self.runner.run(session.stop)
                self.start_watching()
            return
        self.runner.run(self.desktop.reopen)

    # --- windows ---------------------------------------------------------------------------

    def open_browser(self) -> None:
        from ui.browser import MemoryBrowser

        if self.browser is None:
            self.browser = MemoryBrowser(self.desktop, self.runner)
        self.browser.show()
        self.browser.raise_()
        self.browser.refresh()

    def open_profile(self) -> None:
        from ui.profile_panel import ProfilePanel

        if self.profile_panel is None:
            self.profile_panel = ProfilePanel(self.desktop, self.runner)
        self.profile_panel.show()
        self.profile_panel.raise_()
        self.profile_panel.load()

    def open_review(self) -> None:
        from ui.review_dialog import ReviewDialog

        if self.review_dialog is None:
            self.review_dialog = ReviewDialog(self.desktop, self.runner)
            self.review_dialog.remaining.connect(self._findings_waiting)
        self.review_dialog.show()
        self.review_dialog.raise_()
        self.review_dialog.load()

    def check_findings(self) -> None:
        """Say (icon and one notification) when consolidation findings wait."""
        self.runner.run(lambda: len(self.desktop.pending_findings()), self._findings_waiting)

    def _findings_waiting(self, count: int) -> None:
        if count:
            text = f"{count} consolidation finding(s) wait for your review"
            self.presence.set_state(IconState.ATTENTION, text)
            admitted = self.throttle.admit(text)
            if admitted is not None:
                self.presence.notify("Engram", admitted + " (menu: Review findings…)")
        elif getattr(self.presence, "state", None) is IconState.ATTENTION:
            self.presence.set_state(IconState.IDLE)

    def open_add_memory(self) -> None:
        from ui.add_dialog import AddMemoryDialog

        # Saving runs on the UI thread: one SQLite insert and one short embedding; the
        # Replaces picker searches on the runner.
        self.add_dialog = AddMemoryDialog(
            self.desktop.add_memory, self._project(), replacing=self.desktop, runner=self.runner
        )
        self.add_dialog.saved.connect(
            lambda memory: self.presence.set_state(IconState.IDLE, f"saved {memory.id}")
        )
        self.add_dialog.show()
        if self._project() is None:  # not watching yet: the last activity's project
            dialog = self.add_dialog
            self.runner.run(self.desktop.likely_project, dialog.suggest_project, self._failed)

    # --- actions ---------------------------------------------------------------------------

    def copy_context(self) -> None:
        self.runner.run(self.desktop.context_for, self._copied, self._failed)

    def _clipboard_changed(self) -> None:
        """An error copied while the app runs is an `error seen` signal: its fixes become
        critical context. Only the key line is kept; other clipboard text is ignored."""
        text = QGuiApplication.clipboard().text()
        if not text or text == self._own_clipboard or text == self.popup.last_copied:
            return
        line = error_in_text(text)
        if line is None:
            return
        self.runner.run(lambda: self.desktop.error_seen(line), self._error_predicted, self._failed)

    def _error_predicted(self, fixes: int) -> None:
        if fixes:
            self.presence.set_state(IconState.IDLE, f"{fixes} known fix(es) for the copied error")

    def _copied(self, context: Any) -> None:
        self._own_clipboard = context.markdown
        QGuiApplication.clipboard().setText(context.markdown)
        self.presence.set_state(IconState.IDLE, f"copied {context.tokens:,} tokens of context")
        self.presence.notify("Engram", f"Copied {context.tokens:,} tokens of context")

    def _failed(self, error: BaseException) -> None:
        self._on_notice(to_message(error).title)

    def quit(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            session.stop()
        self.instance.close()
        service, self.service = self.service, None
        if service is not None:
            service.stop()
        self.runner.shutdown(wait=True)
        self.desktop.close()
        QApplication.quit()


def display_available() -> bool:
    """Whether a graphical session exists (Linux needs DISPLAY or WAYLAND_DISPLAY)."""
    if not sys.platform.startswith("linux"):
        return True
    platform_name = os.environ.get("QT_QPA_PLATFORM", "")
    if platform_name.startswith(("offscreen", "minimal", "vnc", "eglfs", "linuxfb")):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run_tray(data_dir: Path) -> int:
    """Start the desktop app for `data_dir` (or show the running one's popup)."""
    if not display_available():
        raise EnvironmentProblem(
            "no graphical session (DISPLAY and WAYLAND_DISPLAY are unset), so the tray "
            "cannot start; every action is available from the command line: engram --help"
        )
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Engram")
    app.setQuitOnLastWindowClosed(False)
    if ask_running_instance(data_dir):
        print("engram: already running for this data folder; showing its popup", file=sys.stderr)
        return 0
    desktop_app = DesktopApp(data_dir)
    install_crash_handler(data_dir, desktop_app.bridge.notice.emit)
    if os.environ.get(STARTUP_PROBE):  # bench/startup.py: report, then quit

        def report_and_quit() -> None:
            print("engram: shown", flush=True)
            desktop_app.quit()

        QTimer.singleShot(0, report_and_quit)
    app.aboutToQuit.connect(lambda: desktop_app.instance.close())
    return int(app.exec())
