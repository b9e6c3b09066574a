"""Every keyboard shortcut has one owner where it can be pressed.

Two enabled shortcuts with the same key reachable from the same focus make Qt call the key
"Ambiguous shortcut overload" and run neither (Ctrl+F and Ctrl+H in SQL tabs: the window's
Find and the tab's own Find). The audit opens one tab of every kind in the real main
window (active, offscreen), puts the focus in every focusable widget of the window in turn
and presses every key any action or shortcut of the window binds, through Qt's own shortcut
map (``QTest.keyClick`` sends the shortcut-override event first). A recorder swallows the
shortcut and key events, so nothing the keys would do runs; it notes each shortcut Qt
dispatched and whether Qt found it ambiguous.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog, QWidget

from lantide.ui.shortcuts import SHORTCUTS
from tests.ui.conftest import open_main_window

SWALLOWED = (QEvent.Type.Shortcut, QEvent.Type.KeyPress, QEvent.Type.KeyRelease)


class ShortcutRecorder(QObject):
    """Swallows key and shortcut events; keeps (focus, key, ambiguous) per dispatch."""

    def __init__(self) -> None:
        super().__init__()
        self.dispatched: list[tuple[str, str, bool]] = []
        self.focus = ""

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Shortcut:
            self.dispatched.append((self.focus, event.key().toString(), bool(event.isAmbiguous())))
        return event.type() in SWALLOWED


def _bound_keys(window: QWidget) -> list[QKeySequence]:
    keys = {s.keys: s.sequence() for s in SHORTCUTS}
    for action in window.findChildren(QAction):
        for seq in action.shortcuts():
            keys.setdefault(seq.toString(), seq)
    for short in window.findChildren(QShortcut):
        for seq in short.keys():  # noqa: SIM118 - QShortcut.keys(), not a dict
            keys.setdefault(seq.toString(), seq)
    return [seq for text, seq in sorted(keys.items()) if text and seq.count() == 1]


def _owners(window: QWidget, seq: QKeySequence) -> list[str]:
    """Who binds ``seq``: for the failure message."""
    out = []
    for action in window.findChildren(QAction):
        if seq in action.shortcuts():
            parent = action.parent()
            out.append(f"QAction {action.text()!r} of {type(parent).__name__}")
    for short in window.findChildren(QShortcut):
        if seq in short.keys():  # noqa: SIM118 - QShortcut.keys(), not a dict
            out.append(f"QShortcut of {type(short.parent()).__name__}")
    return out


def _focusable(window: QWidget) -> list[QWidget]:
    return [
        w
        for w in window.findChildren(QWidget)
        if w.isVisible()
        and w.isEnabled()
        and w.focusPolicy() != Qt.FocusPolicy.NoFocus
        and w.window() is window
    ]


def _label(widget: QWidget) -> str:
    chain = []
    w: QWidget | None = widget
    while w is not None and len(chain) < 4:
        chain.append(w.objectName() or type(w).__name__)
        w = w.parentWidget()
    return " < ".join(chain)


def _press_everywhere(qtbot, window, what: str) -> list[str]:
    """Press every bound key in every focusable widget; the ambiguous ones, described."""
    app = QApplication.instance()
    recorder = ShortcutRecorder()
    keys = _bound_keys(window)
    found: list[str] = []
    widgets = _focusable(window)
    assert len(widgets) > 10, f"{what}: too few widgets to press keys in"
    app.installEventFilter(recorder)
    try:
        for widget in widgets:
            if not widget.isVisible():
                continue  # a key before may have hidden it (nothing runs, but be sure)
            widget.setFocus(Qt.FocusReason.OtherFocusReason)
            recorder.focus = _label(widget)
            for seq in keys:
                combo = seq[0]
                QTest.keyClick(widget, combo.key(), combo.keyboardModifiers())
    finally:
        app.removeEventFilter(recorder)
    for focus, key, ambiguous in recorder.dispatched:
        if ambiguous:
            owners = "; ".join(_owners(window, QKeySequence(key)))
            found.append(f"{what}: {key} in {focus} is ambiguous ({owners})")
    # the recorder saw the window's own shortcuts: the walk pressed keys where Qt looks
    assert any(key == "Ctrl+S" for _f, key, _a in recorder.dispatched), what
    return sorted(set(found))


def test_no_key_has_two_owners_in_any_tab_kind(qtbot, shell_services, sample_workspace, run_cli):
    done = run_cli("report", "html", sample_workspace, "q3-churn")
    assert done.returncode == 0, done.stderr
    window = open_main_window(qtbot, shell_services(), restore=False)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=10_000)
    for go_to in (window.act_focus_explorer, window.act_focus_chat, window.act_focus_ledger):
        go_to.trigger()  # the docks' panels made and shown, as an analyst has them
    tabs = {
        "welcome page": None,
        "Plan": ("plan", "q3-churn", ""),
        "Report": ("report", "q3-churn", ""),
        "HTML Report": ("report", "q3-churn", "report.html"),
        "SQL tab": ("sql", "q3-churn", "clean_orders"),
        "table tab": ("table", None, "customers"),
    }
    problems: list[str] = []
    for what, ref in tabs.items():
        if ref is not None:
            tab = window.open_tab(*ref)
            assert tab is not None, what
            qtbot.waitUntil(tab.isVisible, timeout=15_000)
        problems += _press_everywhere(qtbot, window, what)
    assert not problems, "\n".join(problems)


def test_ctrl_f_and_ctrl_h_open_the_sql_tabs_find_bar(qtbot, main_window):
    window = main_window
    tab = window.open_tab("sql", "q3-churn", "clean_orders")
    qtbot.waitUntil(lambda: tab.isVisible() and not tab.editor.isReadOnly(), timeout=15_000)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=10_000)
    tab.editor.setFocus()
    qtbot.keyClick(tab.editor, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert tab.find_bar.isVisible() and not tab.find_bar.replace_row.isVisible()
    assert QApplication.focusWidget() is tab.find_bar.find_edit
    tab.find_bar.close_bar()
    qtbot.keyClick(tab.editor, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    assert tab.find_bar.isVisible() and tab.find_bar.replace_row.isVisible()


def test_ctrl_s_saves_a_new_sql_tab_made_from_the_dialog(qtbot, main_window, sample_workspace):
    """The name dialog closes; the window is active again (no window manager hands the
    focus back offscreen or on a bare X server), so its Ctrl+S reaches the new tab."""
    window = main_window
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=10_000)

    def name_it() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, QInputDialog)
        dialog.setTextValue("answer_tab")
        dialog.accept()

    QTimer.singleShot(200, name_it)
    window.act_new_sql.trigger()  # Ctrl+T's action; returns once the dialog is closed
    qtbot.waitUntil(
        lambda: getattr(window.tabs.currentWidget(), "tab_name", "") == "answer_tab",
        timeout=15_000,
    )
    tab = window.tabs.currentWidget()
    qtbot.waitUntil(lambda: not tab.editor.isReadOnly(), timeout=15_000)
    tab.editor.setFocus()
    qtbot.keyClicks(tab.editor, "SELECT 42 AS answer")
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)
    qtbot.keyClick(tab.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    path = sample_workspace / "projects/q3-churn/sql/answer_tab.sql"
    qtbot.waitUntil(path.is_file, timeout=10_000)
    assert path.read_text(encoding="utf-8").strip() == "SELECT 42 AS answer"
    assert not tab.is_dirty()
