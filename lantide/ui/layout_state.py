"""Window layout across starts: geometry, dock placement, splitter sizes.

Layout is the analyst's preference on this machine, not part of a workspace, so it lives
in the user config directory (``ui-state.json``, written atomically), keyed by what it
belongs to. Open tabs and the focused project belong to the workspace and live in its
``.lantide/session.json`` (see :class:`lantide.ui.services.AppServices`). A layout file that
cannot be read is ignored (and kept) rather than breaking the start.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QPoint, QRect, QSize
from PySide6.QtWidgets import QMainWindow

from lantide.workspace import paths
from lantide.workspace.atomic import atomic_write_json
from lantide.workspace.jsonfile import read_json_object

log = logging.getLogger(__name__)

LAYOUT_VERSION = 1  # bump when docks are added or renamed: old layouts are then ignored


def layout_path() -> Path:
    return paths.user_config_dir() / "ui-state.json"


def _load() -> dict[str, Any]:
    path = layout_path()
    if not path.exists():
        return {}
    try:
        return read_json_object(path, "window layout")
    except Exception as exc:
        log.warning("ignoring the window layout: %s", exc)
        return {}


def _encode(data: QByteArray) -> str:
    return base64.b64encode(bytes(data.data())).decode("ascii")


def _decode(text: str) -> QByteArray | None:
    try:
        return QByteArray(base64.b64decode(text.encode("ascii"), validate=True))
    except Exception:
        return None


def save_window_layout(window: QMainWindow, extra: dict[str, Any] | None = None) -> None:
    data = _load()
    data["version"] = LAYOUT_VERSION
    data["geometry"] = _encode(window.saveGeometry())
    data["state"] = _encode(window.saveState(LAYOUT_VERSION))
    if extra:
        data.setdefault("widgets", {}).update(extra)
    try:
        atomic_write_json(layout_path(), data)
    except OSError as exc:
        log.warning("could not save the window layout: %s", exc)


def restore_window_layout(window: QMainWindow) -> bool:
    """Restore geometry and docks; False when there is nothing (valid) to restore."""
    data = _load()
    if data.get("version") != LAYOUT_VERSION:
        return False
    geometry = _decode(data.get("geometry", ""))
    state = _decode(data.get("state", ""))
    restored = False
    if geometry is not None and not geometry.isEmpty():
        restored = window.restoreGeometry(geometry)
    if state is not None and not state.isEmpty():
        restored = window.restoreState(state, LAYOUT_VERSION) and restored
    fit_window_to_screen(window)
    return restored


def fit_window_to_screen(window: QMainWindow, wanted: QSize | None = None) -> None:
    """Keep the window inside its screen's available area.

    A layout saved on a 1440x900 screen restores 1440 wide on a 1024x700 one (Qt moves an
    off-screen window back but does not shrink it), and the first start's default size is
    larger than a small laptop's screen: the right-hand docks and the window's own buttons
    would be out of reach. ``wanted`` is the size to aim for before fitting.
    """
    if window.isMaximized() or window.isFullScreen():
        return
    screen = window.screen()
    if screen is None:
        return
    area = screen.availableGeometry()
    size = wanted or window.size()
    # The frame (title bar, borders) is drawn around the client area.
    frame = window.frameGeometry().size() - window.size()
    width = min(size.width(), area.width() - max(frame.width(), 0))
    height = min(size.height(), area.height() - max(frame.height(), 0))
    if QSize(width, height) != window.size():
        window.resize(max(width, window.minimumWidth()), max(height, window.minimumHeight()))
    placed = window.frameGeometry()
    top_left = inside(placed, area)
    if top_left != placed.topLeft():
        window.move(top_left)


def inside(frame: QRect, area: QRect) -> QPoint:
    """Where ``frame`` goes to stand inside ``area`` (its top-left corner): moved as little
    as it takes, the top-left corner kept visible when it is larger."""
    x = max(min(frame.left(), area.right() - frame.width() + 1), area.left())
    y = max(min(frame.top(), area.bottom() - frame.height() + 1), area.top())
    return QPoint(x, y)


def widget_state(key: str) -> Any:
    """A small piece of state a widget saved (e.g. splitter sizes), or None."""
    return (_load().get("widgets") or {}).get(key)


def set_widget_state(key: str, value: Any) -> None:
    """Keep a small piece of a widget's state (e.g. the last export folder) for next time."""
    data = _load()
    data.setdefault("widgets", {})[key] = value
    try:
        atomic_write_json(layout_path(), data)
    except OSError as exc:
        log.warning("could not save %s: %s", key, exc)


def forget_layout() -> None:
    data = _load()
    for key in ("geometry", "state"):
        data.pop(key, None)
    try:
        atomic_write_json(layout_path(), data)
    except OSError as exc:
        log.warning("could not reset the window layout: %s", exc)
