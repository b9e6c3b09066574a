"""The Edit and Query menus: what analysts expect from an IDE's menu bar.

- Edit: Undo, Redo, Cut, Copy, Paste act on the editor that has (or last had) the
  keyboard focus: a SQL or Markdown editor, the chat input, a line edit, or the result
  grid (Copy). Find and Replace open the current tab's find bar.
- Query: Run, Run selection, Source Run, Cancel, Format SQL, Explain, Explain
  Analyze and Go to definition act on the current SQL tab.

The keys are shown in the menus but bound by the widgets themselves (an editor's Ctrl+Z, a
SQL tab's Ctrl+Enter): a second, window-wide binding of the same key would make Qt call the
shortcut ambiguous and run neither. :func:`shown_key` is the text a menu and the command
palette show for an action.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from lantide.ui.icons import icon
from lantide.ui.shortcuts import shortcut

if TYPE_CHECKING:
    from lantide.ui.main_window import MainWindow
    from lantide.ui.sql.sql_tab import SqlTabWidget

KEY_PROPERTY = "lantide_shown_key"  # the key an action shows without binding it
EDITORS = (QPlainTextEdit, QTextEdit, QLineEdit)
# What the Edit menu acts on: an editor, or a view (the result grid copies its selection).
Editable = QPlainTextEdit | QTextEdit | QLineEdit | QAbstractItemView


def shown_key(action: QAction) -> str:
    """The key of ``action`` as a menu shows it: its own shortcut, or the one its widget
    binds (see the module's doc)."""
    own = action.shortcut()
    if not own.isEmpty():
        return own.toString(QKeySequence.SequenceFormat.NativeText)
    return action.property(KEY_PROPERTY) or ""


def _menu_action(
    parent: QObject,
    text: str,
    key: QKeySequence | str | None,
    slot,
    icon_name: str | None = None,
    tip: str | None = None,
) -> QAction:
    shown = (
        key.toString(QKeySequence.SequenceFormat.NativeText)
        if isinstance(key, QKeySequence)
        else (key or "")
    )
    # The tab after the text is how a menu shows a key it does not bind.
    action = QAction(
        icon(icon_name) if icon_name else QIcon(), f"{text}\t{shown}" if shown else text, parent
    )
    action.setProperty(KEY_PROPERTY, shown)
    action.setIconText(text)
    if tip:
        action.setStatusTip(tip)
    action.triggered.connect(lambda _checked=False: slot())
    return action


class FocusedEditor(QObject):
    """Remembers the last editor that had the keyboard focus inside ``window`` (opening a
    menu takes the focus away before its action runs)."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.window = window
        self._last: Editable | None = None
        app = QApplication.instance()
        if isinstance(app, QApplication):  # always: a widget needs one
            app.focusChanged.connect(self._focus_changed)

    def _focus_changed(self, _old, new) -> None:
        if isinstance(new, Editable) and new.window() is self.window:
            self._last = new

    def widget(self) -> Editable | None:
        now = QApplication.focusWidget()
        if isinstance(now, Editable) and now.window() is self.window:
            return now
        try:
            if self._last is not None and self._last.isVisible():
                return self._last
        except RuntimeError:  # deleted with its tab
            self._last = None
        return None

    def act(self, method: str) -> bool:
        """Call ``method`` (undo, redo, cut, copy, paste) on the focused editor; the result
        grid copies its selection. False when nothing focused can do it."""
        widget = self.widget()
        if widget is None:
            return False
        if isinstance(widget, QAbstractItemView):
            copy = getattr(widget, "copy_selection", None)
            if method == "copy" and callable(copy):
                copy("\t")
                return True
            return False
        if method in ("undo", "redo", "cut", "paste") and widget.isReadOnly():
            return False
        getattr(widget, method)()
        widget.setFocus()
        return True


def build_edit_menu(window: MainWindow, menu: QMenu, extra: list[QAction]) -> FocusedEditor:
    """Fill ``menu`` with Undo … Paste on the focused editor, then ``extra`` (Find, Replace,
    Annotate: the window's own actions)."""
    focused = FocusedEditor(window)
    window.edit_actions = {}
    for entry in (
        ("undo", "Undo", shortcut("undo")),
        ("redo", "Redo", shortcut("redo")),
        None,  # a separator
        ("cut", "Cut", QKeySequence(QKeySequence.StandardKey.Cut)),
        ("copy", "Copy", QKeySequence(QKeySequence.StandardKey.Copy)),
        ("paste", "Paste", QKeySequence(QKeySequence.StandardKey.Paste)),
    ):
        if entry is None:
            menu.addSeparator()
            continue
        method, text, key = entry
        action = _menu_action(
            window, text, key, lambda m=method: focused.act(m), tip=f"{text} in the focused editor"
        )
        window.edit_actions[method] = action
        menu.addAction(action)
    menu.addSeparator()
    for action in extra:
        menu.addAction(action)
    return focused


def _current_sql_tab(window: MainWindow) -> SqlTabWidget | None:
    from lantide.ui.sql.sql_tab import SqlTabWidget  # not on the start-up path

    widget = window.tabs.currentWidget() if window.tabs.count() else None
    return widget if isinstance(widget, SqlTabWidget) else None


def _on_sql_tab(window: MainWindow, what: str) -> None:
    tab = _current_sql_tab(window)
    if tab is None:
        window.services.post_message("Open a SQL tab first (Ctrl+T makes a new one).", "info")
        return
    if what == "run":
        tab.run()
    elif what == "run_selection":
        if not tab.editor.textCursor().hasSelection():
            window.services.post_message(
                "Select the SQL to run first; Run runs the whole tab.", "info"
            )
            return
        tab.run()  # with a selection, Run runs just the selection
    elif what == "source_run":
        tab.source_run()
    elif what == "cancel":
        tab.cancel()
    elif what == "format":
        tab.format_sql()
    elif what in ("explain", "explain_analyze"):
        tab.explain(analyze=what == "explain_analyze")
    elif what == "definition":
        tab.go_to_definition()


def build_query_menu(window: MainWindow, menu: QMenu, cancel_any: QAction) -> None:
    """Run, Run selection, Source Run and Cancel on the current SQL tab, then the window's
    "cancel whatever query runs" action."""
    window.query_actions = {}
    for entry in (
        ("run", "Run", shortcut("sql_run"), "run", "Run the current SQL tab"),
        (
            "run_selection",
            "Run selection",
            shortcut("sql_run"),
            "run",
            "Run only the selected SQL (an exploratory look)",
        ),
        (
            "source_run",
            "Source Run",
            shortcut("sql_source_run"),
            "source-run",
            "Recompute the tabs this one reads, then this tab",
        ),
        ("cancel", "Cancel", None, "stop", "Cancel the current tab's query"),
        None,
        (
            "format",
            "Format SQL",
            shortcut("sql_format"),
            "format",
            "Format the current tab's SQL (comments kept; one undoable edit)",
        ),
        (
            "explain",
            "Explain",
            shortcut("sql_explain"),
            "plan-tree",
            "The current tab's query plan, without running it",
        ),
        (
            "explain_analyze",
            "Explain Analyze",
            shortcut("sql_explain_analyze"),
            "plan-tree",
            "Run the current tab's query and show its plan with timings",
        ),
        (
            "definition",
            "Go to definition",
            shortcut("sql_definition"),
            None,
            "Open the tab or table browser of the table under the cursor",
        ),
    ):
        if entry is None:
            menu.addSeparator()
            continue
        what, text, key, icon_name, tip = entry
        action = _menu_action(
            window, text, key, lambda w=what: _on_sql_tab(window, w), icon_name, tip
        )
        window.query_actions[what] = action
        menu.addAction(action)
    menu.addSeparator()
    menu.addAction(cancel_any)
