"""The icon set in ``resources/icons/``, tinted to the current palette.

The SVGs draw in ``currentColor``; :func:`icon` renders them with the palette's text colour
(and a dimmer one for the disabled state), so one set serves the light and the dark theme.
An icon in the palette's colours looks the palette up when it is drawn, so the icons of
toolbars and buttons built before a light/dark switch follow it. Icons are cached per name
and colour and rendered lazily, at the sizes Qt asks for; :func:`clear_cache` runs when
the theme changes.
"""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QIconEngine, QPainter, QPalette, QPixmap

from lantide.package_data import resource_path

PALETTE_TEXT, PALETTE_ACCENT = "text", "accent"  # tints looked up in the palette when drawn


def icon_path(name: str):
    return resource_path("icons", f"{name}.svg")


@cache
def _svg_source(name: str) -> str:
    try:
        return icon_path(name).read_text(encoding="utf-8")
    except OSError:
        return ""


def _render(svg: str, size: int, color: QColor, ratio: float) -> QPixmap:
    from PySide6.QtSvg import QSvgRenderer  # part of PySide6-Essentials

    tinted = svg.replace("currentColor", color.name(QColor.NameFormat.HexRgb))
    renderer = QSvgRenderer(QByteArray(tinted.encode("utf-8")))
    pixels = max(1, round(size * ratio))
    pixmap = QPixmap(pixels, pixels)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, pixels, pixels))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


def _palette_colors() -> tuple[QColor, QColor, QColor]:
    app = QGuiApplication.instance()
    palette = app.palette() if isinstance(app, QGuiApplication) else QPalette()
    normal = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText)
    disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
    accent = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Highlight)
    return normal, disabled, accent


class _TintedSvgEngine(QIconEngine):
    """Renders the SVG when Qt first asks for a size and mode, then keeps the pixmap.

    Building every icon at every size up front cost a noticeable part of the start-up;
    most icons are only ever drawn at one size.
    """

    def __init__(self, svg: str, color: str):
        super().__init__()
        # color: PALETTE_TEXT or PALETTE_ACCENT (looked up when drawn), or a fixed "#rrggbb"
        self.svg, self.color = svg, color
        self._pixmaps: dict[tuple[int, str, float], QPixmap] = {}

    def _tint(self, mode: QIcon.Mode) -> str:
        if self.color not in (PALETTE_TEXT, PALETTE_ACCENT):
            if mode != QIcon.Mode.Disabled:
                return self.color
            return _palette_colors()[1].name()
        normal, disabled, accent = _palette_colors()
        if mode == QIcon.Mode.Disabled:
            return disabled.name()
        return accent.name() if self.color == PALETTE_ACCENT else normal.name()

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        app = QGuiApplication.instance()
        ratio = app.devicePixelRatio() if isinstance(app, QGuiApplication) else 1.0
        edge = max(1, min(size.width(), size.height()))
        tint = self._tint(mode)
        key = (edge, tint, ratio)
        cached = self._pixmaps.get(key)
        if cached is None:
            cached = self._pixmaps[key] = _render(self.svg, edge, QColor(tint), ratio)
        return cached

    def paint(self, painter: QPainter, rect, mode: QIcon.Mode, state: QIcon.State) -> None:
        painter.drawPixmap(rect, self.pixmap(rect.size(), mode, state))

    def clone(self) -> QIconEngine:
        return _TintedSvgEngine(self.svg, self.color)


@cache
def _cached_icon(name: str, color: str) -> QIcon:
    svg = _svg_source(name)
    if not svg:
        return QIcon()
    return QIcon(_TintedSvgEngine(svg, color))


def icon(name: str, color: QColor | str | None = None) -> QIcon:
    """The icon ``name`` (file stem in resources/icons) in the palette's text colour.

    ``color`` overrides the tint, e.g. ``"accent"`` for the highlight colour. The palette's
    colours (no ``color``, or ``"accent"``) follow a light/dark switch by themselves.
    """
    if color == "accent":
        return _cached_icon(name, PALETTE_ACCENT)
    if color is None:
        return _cached_icon(name, PALETTE_TEXT)
    return _cached_icon(name, QColor(color).name())


@cache
def app_icon() -> QIcon:
    """The application icon (coloured, not tinted); made once (the app, its window and the
    welcome page each ask before the first paint)."""
    result = QIcon()
    path = icon_path("lantide-app")
    if path.is_file():
        for size in (16, 24, 32, 48, 64, 128, 256):
            result.addFile(str(path), QSize(size, size))
    return result


def clear_cache() -> None:
    _cached_icon.cache_clear()
