"""The tray icon and its menu, or — where the desktop has no system tray — a small
window with the same actions. Both only call the `TrayActions` they are given."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from ui.icons import IconState, state_icon, state_pixmap

MENU_STYLE = """
QMenu { background: #fbfcfe; border: 1px solid #a9b4c2; padding: 4px 0; }
QMenu::item { padding: 6px 28px 6px 16px; color: #1f2a37; }
QMenu::item:selected { background: #2f6fde; color: white; }
QMenu::separator { height: 1px; background: #e1e6ee; margin: 4px 10px; }
"""
WINDOW_STYLE = """
ActionsWindow { background: #fbfcfe; }
QLabel#title { font-size: 16px; font-weight: 600; color: #1f2a37; }
QLabel#note { color: #5b6b7f; }
QLabel#state { color: #5b6b7f; font-size: 12px; }
QPushButton {
    padding: 7px 12px; border: 1px solid #c3cdda; border-radius: 5px; background: white;
    color: #1f2a37; text-align: left;
}
QPushButton:hover { background: #eef3fb; border-color: #9db5dc; }
QPushButton:pressed { background: #dde8f8; }
QPushButton#primary { background: #2f6fde; border-color: #2f6fde; color: white; }
QPushButton#primary:hover { background: #2a63c7; }
"""


@dataclass(frozen=True)
class TrayActions:
    quick_search: Callable[[], None]
    copy_context: Callable[[], None]
    add_memory: Callable[[], None]
    toggle_watching: Callable[[], None]
    toggle_consolidation: Callable[[], None]
    settings: Callable[[], None]
    profile: Callable[[], None]
    browser: Callable[[], None]
    review: Callable[[], None]
    quit: Callable[[], None]


def build_menu(actions: TrayActions, parent: QWidget | None = None) -> tuple[QMenu, QAction]:
    """The tray menu; returns it and the pause/resume action (its text changes)."""
    menu = QMenu(parent)
    menu.setStyleSheet(MENU_STYLE)
    quick = menu.addAction("Quick search", actions.quick_search)
    menu.setDefaultAction(quick)  # what a click on the icon does
    menu.addAction("Copy context for the current file", actions.copy_context)
    menu.addAction("Add memory…", actions.add_memory)
    menu.addSeparator()
    pause = menu.addAction("Pause watching", actions.toggle_watching)
    consolidation = menu.addAction("Pause consolidation", actions.toggle_consolidation)
    consolidation.setObjectName("consolidation")
    menu.addSeparator()
    menu.addAction("Settings…", actions.settings)
    menu.addAction("Consent and profile…", actions.profile)
    menu.addAction("Memory browser…", actions.browser)
    menu.addAction("Review findings…", actions.review)
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

    def set_consolidation_label(self, label: str) -> None:
        action = self.menu.findChild(QAction, "consolidation")
        if action is not None:
            action.setText(label)

    def notify(self, title: str, message: str) -> None:
        self.icon.showMessage(title, message, QSystemTrayIcon.MessageIcon.Information, 4000)


class ActionsWindow(QWidget):
    """The tray's actions in a small window, for desktops without a system tray."""

    def __init__(self, actions: TrayActions) -> None:
        super().__init__()
        self.setWindowTitle("Engram")
        self.setWindowIcon(state_icon(IconState.IDLE))
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setStyleSheet(WINDOW_STYLE)
        self.setMinimumWidth(340)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(8)
        header = QHBoxLayout()
        header.setSpacing(10)
        self.icon_label = QLabel()
        self.icon_label.setPixmap(state_pixmap(IconState.IDLE, 32))
        title = QLabel("Engram")
        title.setObjectName("title")
        header.addWidget(self.icon_label)
        header.addWidget(title, 1)
        layout.addLayout(header)
        self.note = QLabel(
            "This desktop has no system tray, so Engram's actions are here. "
            "Everything is also available from the <code>engram</code> command."
        )
        self.note.setObjectName("note")
        self.note.setTextFormat(Qt.TextFormat.RichText)
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        layout.addSpacing(4)
        self.buttons: dict[str, QPushButton] = {}
        self.state_label = QLabel("Idle")
        self.state_label.setObjectName("state")
        self.state_label.setWordWrap(True)
        for label, handler in (
            ("Quick search", actions.quick_search),
            ("Copy context for the current file", actions.copy_context),
            ("Add memory…", actions.add_memory),
            ("Pause watching", actions.toggle_watching),
            ("Pause consolidation", actions.toggle_consolidation),
            ("Settings…", actions.settings),
            ("Consent and profile…", actions.profile),
            ("Memory browser…", actions.browser),
            ("Review findings…", actions.review),
            ("Quit Engram", actions.quit),
        ):
            button = QPushButton(label)
            button.clicked.connect(handler)
            if label == "Quit Engram":
                layout.addSpacing(6)
            elif label == "Quick search":
                button.setObjectName("primary")
            layout.addWidget(button)
            self.buttons[label] = button
        layout.addSpacing(4)
        layout.addWidget(self.state_label)

    def set_state(self, state: IconState, tooltip: str = "") -> None:
        self.setWindowIcon(state_icon(state))
        self.icon_label.setPixmap(state_pixmap(state, 32))
        self.state_label.setText(state.value.capitalize() + (f" — {tooltip}" if tooltip else ""))

    def set_paused(self, paused: bool) -> None:
        self.buttons["Pause watching"].setText("Resume watching" if paused else "Pause watching")

    def set_consolidation_label(self, label: str) -> None:
        self.buttons["Pause consolidation"].setText(label)

    def notify(self, title: str, message: str) -> None:
        self.state_label.setText(f"{title}: {message}")
