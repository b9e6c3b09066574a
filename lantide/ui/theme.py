"""Appearance: light or dark, following the system unless the analyst chose one.

Fusion style everywhere, so the app looks the same on every platform, with a light and a
dark palette of our own. ``Settings.appearance`` is
``system``, ``light`` or ``dark``; with ``system`` the app follows the platform's colour
scheme (Qt's ``QStyleHints.colorScheme``) live. Colours that widgets draw themselves
(annotation marks, Markdown highlighting, status chips) come from :func:`colors`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

APPEARANCES = ("system", "light", "dark")


@dataclass(frozen=True)
class ThemeColors:
    dark: bool
    mark_open: QColor  # background of an open annotation's mark
    mark_resolved: QColor
    mark_active: QColor  # the mark of the selected annotation
    heading: QColor
    emphasis: QColor
    code: QColor
    code_background: QColor
    link: QColor
    muted: QColor
    tag: QColor
    success: QColor
    warning: QColor
    danger: QColor
    border: QColor
    panel: QColor  # a slightly different background for side panels and cards


_LIGHT = ThemeColors(
    dark=False,
    mark_open=QColor("#fde68a"),
    mark_resolved=QColor("#d1fae5"),
    mark_active=QColor("#fbbf24"),
    heading=QColor("#1d4ed8"),
    emphasis=QColor("#7c3aed"),
    code=QColor("#b45309"),
    code_background=QColor("#f3f4f6"),
    link=QColor("#0369a1"),
    muted=QColor("#6b7280"),
    tag=QColor("#9ca3af"),
    success=QColor("#15803d"),
    warning=QColor("#b45309"),
    danger=QColor("#b91c1c"),
    border=QColor("#d1d5db"),
    panel=QColor("#f8fafc"),
)
_DARK = ThemeColors(
    dark=True,
    mark_open=QColor("#713f12"),
    mark_resolved=QColor("#14532d"),
    mark_active=QColor("#a16207"),
    heading=QColor("#93c5fd"),
    emphasis=QColor("#c4b5fd"),
    code=QColor("#fcd34d"),
    code_background=QColor("#1f2937"),
    link=QColor("#7dd3fc"),
    muted=QColor("#9ca3af"),
    tag=QColor("#6b7280"),
    success=QColor("#4ade80"),
    warning=QColor("#fbbf24"),
    danger=QColor("#f87171"),
    border=QColor("#374151"),
    panel=QColor("#1b2230"),
)


def _light_palette() -> QPalette:
    p = QPalette()
    role = QPalette.ColorRole
    for r, c in (
        (role.Window, "#f5f6f8"),
        (role.WindowText, "#1f2328"),
        (role.Base, "#ffffff"),
        (role.AlternateBase, "#f6f8fa"),
        (role.ToolTipBase, "#ffffff"),
        (role.ToolTipText, "#1f2328"),
        (role.PlaceholderText, "#8b949e"),
        (role.Text, "#1f2328"),
        (role.Button, "#f6f8fa"),
        (role.ButtonText, "#1f2328"),
        (role.BrightText, "#cf222e"),
        (role.Highlight, "#2563eb"),
        (role.HighlightedText, "#ffffff"),
        (role.Link, "#0969da"),
        (role.Mid, "#d0d7de"),
        (role.Midlight, "#eaeef2"),
        (role.Dark, "#afb8c1"),
        (role.Shadow, "#8c959f"),
        (role.Light, "#ffffff"),
    ):
        p.setColor(r, QColor(c))
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, r, QColor("#a0a7b0"))
    return p


def _dark_palette() -> QPalette:
    p = QPalette()
    role = QPalette.ColorRole
    for r, c in (
        (role.Window, "#1e2227"),
        (role.WindowText, "#d7dce2"),
        (role.Base, "#16191d"),
        (role.AlternateBase, "#1c2025"),
        (role.ToolTipBase, "#2b3038"),
        (role.ToolTipText, "#d7dce2"),
        (role.PlaceholderText, "#6e7681"),
        (role.Text, "#d7dce2"),
        (role.Button, "#2a2f36"),
        (role.ButtonText, "#d7dce2"),
        (role.BrightText, "#ff7b72"),
        (role.Highlight, "#3b82f6"),
        (role.HighlightedText, "#ffffff"),
        (role.Link, "#58a6ff"),
        (role.Mid, "#3a4049"),
        (role.Midlight, "#2d333b"),
        (role.Dark, "#0f1114"),
        (role.Shadow, "#000000"),
        (role.Light, "#3d444d"),
    ):
        p.setColor(r, QColor(c))
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, r, QColor("#5c636d"))
    return p


# No application-wide style sheet: it puts every widget under QStyleSheetStyle, which made
# building and painting the main window measurably slower (a style sheet on the main window
# cascades the same way). Only the status bar has one (STATUS_BAR_STYLE).
STATUS_BAR_STYLE = (
    "QStatusBar { border-top: 1px solid palette(mid); } QStatusBar::item { border: none; }"
)


def blend(color: QColor, base: QColor, amount: float) -> QColor:
    """``amount`` of ``color`` over ``base`` (0..1): soft tints for bars and chips."""
    return QColor(
        round(color.red() * amount + base.red() * (1 - amount)),
        round(color.green() * amount + base.green() * (1 - amount)),
        round(color.blue() * amount + base.blue() * (1 - amount)),
    )


def system_prefers_dark() -> bool:
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return False
    try:
        return app.styleHints().colorScheme() == Qt.ColorScheme.Dark
    except AttributeError:  # Qt < 6.5: guess from the default palette
        return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def is_dark(appearance: str) -> bool:
    if appearance == "dark":
        return True
    if appearance == "light":
        return False
    return system_prefers_dark()


_current = _LIGHT


def colors() -> ThemeColors:
    """The colours of the theme in use."""
    return _current


class ThemeManager(QObject):
    """Applies an appearance and follows the system while it is ``system``."""

    sig_theme_changed = Signal(bool)  # dark?

    def __init__(self, app: QApplication, appearance: str = "system"):
        super().__init__(app)
        self.app = app
        self.appearance = appearance if appearance in APPEARANCES else "system"
        app.setStyle("Fusion")
        with contextlib.suppress(AttributeError):  # Qt < 6.5 has no colour scheme
            app.styleHints().colorSchemeChanged.connect(self._system_changed)
        self.apply(self.appearance)

    def apply(self, appearance: str) -> None:
        global _current
        from lantide.ui import icons

        self.appearance = appearance if appearance in APPEARANCES else "system"
        dark = is_dark(self.appearance)
        _current = _DARK if dark else _LIGHT
        self.app.setPalette(_dark_palette() if dark else _light_palette())
        _refresh_style_sheets(self.app)
        icons.clear_cache()
        self.sig_theme_changed.emit(dark)

    def _system_changed(self, *_):
        if self.appearance == "system":
            self.apply("system")


def _refresh_style_sheets(app: QApplication) -> None:
    """A widget with a style sheet of its own (and its children) keeps the palette it was
    polished with when the application's palette changes: the status bar's text stayed
    dark on the dark bar. Setting its sheet again polishes it with the new palette."""
    styled = [(w, w.styleSheet()) for w in app.allWidgets() if w.styleSheet()]
    for widget, sheet in styled:
        widget.setStyleSheet(sheet + " ")
        # a themed widget hears of the switch here and may have set a sheet of new colours
        if widget.styleSheet() == sheet + " ":
            widget.setStyleSheet(sheet)


def install_theme(app: QApplication, appearance: str) -> ThemeManager:
    """Create the app's theme manager once; later calls return the same one."""
    existing = app.findChild(ThemeManager)
    if existing is not None:
        existing.apply(appearance)
        return existing
    return ThemeManager(app, appearance)
