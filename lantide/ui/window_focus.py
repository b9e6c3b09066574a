"""A dialog's parent window is the active window again when the dialog closes.

A window manager hands the keyboard focus back to a dialog's parent when the dialog
closes. Without one (Xvfb, kiosk sessions, a bare X server) X focuses no window: the keys
still reach the focused editor, but Qt matches a window-wide shortcut only in the active
window, so after the New SQL tab dialog Ctrl+S did nothing. :class:`DialogFocusReturn`
watches each dialog of the main window that gets the focus; when it is hidden while it
still had the focus (or no window has it), its parent window is activated. Switching to
another program leaves the dialog shown, so nothing is taken back from other programs.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QGuiApplication, QWindow
from PySide6.QtWidgets import QWidget

WATCHED = "lantide_focus_return"  # a dynamic property: the dialog is watched already


def _is_dialog_of(window: QWindow, owner: QWindow | None) -> bool:
    """True when ``window`` is a transient child (a dialog, at any depth) of ``owner``."""
    parent = window.transientParent()
    while parent is not None:
        if parent is owner:
            return True
        parent = parent.transientParent()
    return False


def _focus_lost_with(dialog: QWindow) -> bool:
    """After ``dialog`` was hidden: no shown window has the focus (it had it)."""
    focus = QGuiApplication.focusWindow()
    if focus is None:
        return True
    try:
        return focus is dialog or not focus.isVisible()
    except RuntimeError:  # deleted meanwhile
        return True


class DialogFocusReturn(QObject):
    """Installed once by the main window (its child, so it goes with it)."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self._window = window
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):  # always: a widget needs one
            app.focusWindowChanged.connect(self.focus_window_changed)

    def focus_window_changed(self, focus: QWindow | None) -> None:
        if focus is None or focus.property(WATCHED):
            return
        if not _is_dialog_of(focus, self._window.windowHandle()):
            return
        focus.setProperty(WATCHED, True)
        focus.visibleChanged.connect(
            lambda visible, dialog=focus: None if visible else self._dialog_hidden(dialog)
        )

    def _dialog_hidden(self, dialog: QWindow) -> None:
        parent = dialog.transientParent()
        if parent is None:
            return

        def give_back() -> None:  # once the hide is through (the dialog may be deleted)
            try:
                if parent.isVisible() and _focus_lost_with(dialog):
                    parent.requestActivate()
            except RuntimeError:  # the parent went too
                pass

        QTimer.singleShot(0, self, give_back)
