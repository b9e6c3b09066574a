"""Following a light/dark switch in widgets that paint with the theme's colours.

Widgets that put theme colours into style sheets or HTML must redo them when the theme
switches. :func:`theme_switched` tells a ``changeEvent`` apart: it is true once per switch
(a palette change that comes with new :func:`lantide.ui.theme.colors`), and false for the
palette changes our own style sheets cause, which would otherwise loop.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QFrame, QWidget

from lantide.ui.theme import colors

_ATTRIBUTE = "_lantide_theme"


def tint(color: QColor, amount: float = 0.14) -> QColor:
    """``color`` washed into the background (a calm fill for banners and bubbles)."""
    app = QApplication.instance()
    base = (
        app.palette().color(QPalette.ColorRole.Base)
        if isinstance(app, QApplication)
        else QColor("white")
    )
    mix = lambda a, b: round(a * amount + b * (1 - amount))  # noqa: E731
    return QColor(
        mix(color.red(), base.red()),
        mix(color.green(), base.green()),
        mix(color.blue(), base.blue()),
    )


def mark_theme(widget: QWidget) -> None:
    """Remember the theme ``widget`` was just drawn in."""
    setattr(widget, _ATTRIBUTE, colors())


# A theme switch sets the application's palette and style sheet (ThemeManager.apply); a
# widget with a style sheet of its own hears of it only as a style change.
_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange, QEvent.Type.StyleChange)


def theme_switched(widget: QWidget, event) -> bool:
    if event.type() not in _EVENTS:
        return False
    current = colors()
    if getattr(widget, _ATTRIBUTE, None) is current:
        return False
    setattr(widget, _ATTRIBUTE, current)
    return True


class ThemedFrame(QFrame):
    """A frame that redraws its colours when the theme switches: override apply_theme."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        mark_theme(self)

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if theme_switched(self, event):
            self.apply_theme()

    def apply_theme(self) -> None:
        """Set the colours of the current theme (called at creation and on a switch)."""
