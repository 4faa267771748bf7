"""The tray icon, drawn rather than shipped: one shape, four states (idle, working,
paused, needs attention), crisp at any size the desktop asks for."""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPen, QPixmap


class IconState(StrEnum):
    IDLE = "idle"
    WORKING = "working"
    PAUSED = "paused"
    ATTENTION = "attention"


_COLORS = {
    IconState.IDLE: "#2f6fde",
    IconState.WORKING: "#d98b00",
    IconState.PAUSED: "#7b8794",
    IconState.ATTENTION: "#2f6fde",
}


def state_pixmap(state: IconState, size: int = 64) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    margin = size * 0.06
    body = QRectF(margin, margin, size - 2 * margin, size - 2 * margin)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(_COLORS[state]))
    painter.drawRoundedRect(body, size * 0.22, size * 0.22)
    painter.setPen(QPen(QColor("white")))
    font = QFont("DejaVu Sans")
    font.setBold(True)
    font.setPixelSize(int(size * 0.58))
    painter.setFont(font)
    glyph = "II" if state is IconState.PAUSED else "E"
    painter.drawText(body, Qt.AlignmentFlag.AlignCenter, glyph)
    if state is IconState.ATTENTION:
        dot = size * 0.34
        painter.setPen(QPen(QColor("white"), size * 0.05))
        painter.setBrush(QColor("#e5484d"))
        painter.drawEllipse(QRectF(size - dot - margin * 0.2, margin * 0.2, dot, dot))
    painter.end()
    return pixmap


def state_icon(state: IconState) -> QIcon:
    icon = QIcon()
    for size in (16, 22, 24, 32, 48, 64, 128):
        icon.addPixmap(state_pixmap(state, size))
    return icon
