"""The icon set in ``resources/icons/``, tinted to the current palette.

The SVGs draw in ``currentColor``; :func:`icon` renders them with the palette's text colour
(and a dimmer one for the disabled state), so one set serves the light and the dark theme.
Icons are cached per name and colour; :func:`clear_cache` runs when the theme changes.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap

from lantide.package_data import resource_path

_SIZES = (16, 20, 24, 32)


def icon_path(name: str):
    return resource_path("icons", f"{name}.svg")


@lru_cache(maxsize=None)
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
    palette = app.palette() if app is not None else QPalette()
    normal = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText)
    disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
    accent = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Highlight)
    return normal, disabled, accent


@lru_cache(maxsize=None)
def _cached_icon(name: str, color: str, disabled: str) -> QIcon:
    svg = _svg_source(name)
    result = QIcon()
    if not svg:
        return result
    app = QGuiApplication.instance()
    ratio = app.devicePixelRatio() if app is not None else 1.0
    for size in _SIZES:
        result.addPixmap(_render(svg, size, QColor(color), ratio), QIcon.Mode.Normal)
        result.addPixmap(_render(svg, size, QColor(disabled), ratio), QIcon.Mode.Disabled)
    return result


def icon(name: str, color: QColor | str | None = None) -> QIcon:
    """The icon ``name`` (file stem in resources/icons) in the palette's text colour.

    ``color`` overrides the tint, e.g. ``"accent"`` for the highlight colour.
    """
    normal, disabled, accent = _palette_colors()
    if color == "accent":
        tint = accent
    elif color is None:
        tint = normal
    else:
        tint = QColor(color)
    return _cached_icon(name, tint.name(), disabled.name())


def app_icon() -> QIcon:
    """The application icon (coloured, not tinted)."""
    result = QIcon()
    path = icon_path("lantide-app")
    if path.is_file():
        for size in (16, 24, 32, 48, 64, 128, 256):
            result.addFile(str(path), QSize(size, size))
    return result


def clear_cache() -> None:
    _cached_icon.cache_clear()
