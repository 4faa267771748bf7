"""The tray icon and its menu, or — where the desktop has no system tray — a small
window with the same actions. Both only call the `TrayActions` they are given."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QLabel,
    QMenu,
    QPushButton,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from ui.icons import IconState, state_icon


@dataclass(frozen=True)
class TrayActions:
    quick_search: Callable[[], None]
    copy_context: Callable[[], None]
    toggle_watching: Callable[[], None]
    settings: Callable[[], None]
    quit: Callable[[], None]


def build_menu(actions: TrayActions, parent: QWidget | None = None) -> tuple[QMenu, QAction]:
    """The tray menu; returns it and the pause/resume action (its text changes)."""
    menu = QMenu(parent)
    menu.addAction("Quick search", actions.quick_search)
    menu.addAction("Copy context for the current file", actions.copy_context)
    menu.addSeparator()
    pause = menu.addAction("Pause watching", actions.toggle_watching)
    menu.addSeparator()
    menu.addAction("Settings…", actions.settings)
    menu.addSeparator()
    menu.addAction("Quit Engram", actions.quit)
    return menu, pause


class Tray(QObject):
    """The system-tray presence: icon states, menu, and notifications worth knowing."""

    def __init__(self, actions: TrayActions, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(state_icon(IconState.IDLE), self)
        self.menu, self.pause_action = build_menu(actions)
        self.icon.setContextMenu(self.menu)
        self.icon.setToolTip("Engram")
        self.icon.activated.connect(self._activated)
        self._quick_search = actions.quick_search
        self.state = IconState.IDLE

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self._quick_search()

    def show(self) -> None:
        self.icon.show()

    def set_state(self, state: IconState, tooltip: str = "") -> None:
        self.state = state
        self.icon.setIcon(state_icon(state))
        self.icon.setToolTip("Engram" + (f" — {tooltip}" if tooltip else ""))

    def set_paused(self, paused: bool) -> None:
        self.pause_action.setText("Resume watching" if paused else "Pause watching")

    def notify(self, title: str, message: str) -> None:
        self.icon.showMessage(title, message, QSystemTrayIcon.MessageIcon.Information, 4000)


class ActionsWindow(QWidget):
    """The tray's actions in a small window, for desktops without a system tray."""

    def __init__(self, actions: TrayActions) -> None:
        super().__init__()
        self.setWindowTitle("Engram")
        self.setWindowIcon(state_icon(IconState.IDLE))
        layout = QVBoxLayout(self)
        self.note = QLabel(
            "This desktop has no system tray, so Engram's actions are here.\n"
            "Everything is also available from the `engram` command."
        )
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.buttons: dict[str, QPushButton] = {}
        self.state_label = QLabel("Idle")
        for label, handler in (
            ("Quick search", actions.quick_search),
            ("Copy context for the current file", actions.copy_context),
            ("Pause watching", actions.toggle_watching),
            ("Settings…", actions.settings),
            ("Quit Engram", actions.quit),
        ):
            button = QPushButton(label)
            button.clicked.connect(handler)
            layout.addWidget(button)
            self.buttons[label] = button
        layout.addWidget(self.state_label)

    def set_state(self, state: IconState, tooltip: str = "") -> None:
        self.setWindowIcon(state_icon(state))
        self.state_label.setText(state.value.capitalize() + (f" — {tooltip}" if tooltip else ""))

    def set_paused(self, paused: bool) -> None:
        self.buttons["Pause watching"].setText("Resume watching" if paused else "Pause watching")

    def notify(self, title: str, message: str) -> None:
        self.state_label.setText(f"{title}: {message}")
