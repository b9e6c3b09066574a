"""What analysts expect from an IDE's menus: a command palette (Ctrl+Shift+P) listing every
action with its key, a Query menu (Run, Run selection, Source Run, Cancel) and an Edit menu
(Undo, Redo, Cut, Copy, Paste, Find, Replace) acting on the focused editor."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from lantide.ui.command_palette import menu_commands, palette_matches, rank
from tests.ui.conftest import open_document_tab


def _sql_tab(qtbot, window, name: str = "clean_orders"):
    tab = window.open_tab("sql", "q3-churn", name)
    qtbot.waitUntil(lambda: not tab.editor.isReadOnly(), timeout=15_000)
    return tab


def _menu(window, title: str):
    for action in window.menuBar().actions():
        if action.text().replace("&", "") == title:
            return action.menu()
    raise AssertionError(f"no {title} menu")


def _texts(menu) -> list[str]:
    return [a.text().split("\t")[0] for a in menu.actions() if not a.isSeparator()]


def test_palette_search_rule():
    assert palette_matches("sou run", "Query › Source Run")
    assert palette_matches("SOURCE", "Query › Source Run")
    assert not palette_matches("source plan", "Query › Source Run")
    texts = ["File › Save all", "Query › Run", "Query › Run selection", "Query › Source Run"]
    assert rank("run sel", texts) == [2]
    assert rank("", texts) == [0, 1, 2, 3]
    assert rank("run", texts)[:1] == [1]  # words that start with it first, in menu order


def test_ctrl_shift_p_opens_a_palette_of_every_action_with_its_key(qtbot, main_window):
    window = main_window
    window.activateWindow()
    qtbot.keyClick(
        window,
        Qt.Key.Key_P,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(
        lambda: getattr(window, "palette", None) is not None and window.palette.isVisible(),
        timeout=3000,
    )
    palette = window.palette
    every = menu_commands(window.menuBar())
    assert palette.shown() == [c.path for c in every]
    paths = {c.path: c.key for c in every}
    assert paths["Query › Source Run"] == "Ctrl+Shift+Return"
    assert paths["View › Command palette…"] == "Ctrl+Shift+P"
    assert paths["Edit › Undo"] == "Ctrl+Z"
    assert "View › Appearance › Dark" in paths
    qtbot.keyClicks(palette.search, "open plan")
    assert palette.shown()[0] == "File › Open Plan"
    qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    assert not palette.isVisible()
    qtbot.waitUntil(lambda: window.tabs.count() == 1, timeout=10_000)
    assert window.tabs.currentWidget().title() == "plan.md"


def test_query_menu_runs_the_current_sql_tab(qtbot, main_window):
    window = main_window
    query = _menu(window, "Query")
    assert _texts(query) == [
        "Run",
        "Run selection",
        "Source Run",
        "Cancel",
        "Format SQL",
        "Explain",
        "Explain Analyze",
        "Go to definition",
        "Cancel running query",
    ]
    tab = _sql_tab(qtbot, window)
    with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000) as run:
        window.query_actions["source_run"].trigger()
    assert isinstance(run.args[0], dict) and tab.source_run_view.isVisibleTo(tab) is not None
    # Run selection without a selection says what to do and runs nothing.
    messages = []
    window.services.sig_message_posted.connect(lambda text, *_: messages.append(text))
    window.query_actions["run_selection"].trigger()
    assert messages and "Select the SQL" in messages[-1] and not tab.running
    # With a selection it runs just that.
    tab.editor.setPlainText("SELECT 41 + 1 AS answer")
    cursor = tab.editor.textCursor()
    cursor.select(QTextCursor.SelectionType.Document)
    tab.editor.setTextCursor(cursor)
    with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000) as run:
        window.query_actions["run_selection"].trigger()
    assert run.args[0]["row_count"] == 1
    assert tab.result.columns[0]["name"] == "answer"
    with qtbot.waitSignal(tab.sig_format_finished, timeout=10_000):
        window.query_actions["format"].trigger()  # Query › Format SQL formats the current tab
    assert tab.editor.toPlainText() == "SELECT\n  41 + 1 AS answer"
    with qtbot.waitSignal(tab.sig_plan_finished, timeout=30_000) as explained:
        window.query_actions["explain_analyze"].trigger()
    assert explained.args[0].analyzed and tab.plan_view.model.rowCount() >= 1


def test_edit_menu_acts_on_the_focused_editor(qtbot, main_window):
    window = main_window
    edit = _menu(window, "Edit")
    assert _texts(edit)[:5] == ["Undo", "Redo", "Cut", "Copy", "Paste"]
    assert "Find…" in _texts(edit) and "Replace…" in _texts(edit)
    tab = _sql_tab(qtbot, window)
    original = tab.editor.toPlainText()
    tab.editor.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is tab.editor, timeout=3000)
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(tab.editor, " -- note")
    window.menuBar().setFocus()  # as when the menu is opened: the editor loses the focus
    window.edit_actions["undo"].trigger()
    assert tab.editor.toPlainText() == original
    window.edit_actions["redo"].trigger()
    assert tab.editor.toPlainText().endswith(" -- note")
    tab.editor.selectAll()
    window.edit_actions["copy"].trigger()
    assert QApplication.clipboard().text().endswith(" -- note")
    # Paste goes where the focus went next: the chat input.
    window.chat.input.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.chat.input, timeout=3000)
    window.edit_actions["paste"].trigger()
    assert window.chat.input.toPlainText().endswith(" -- note")
    window.edit_actions["cut"].trigger() if window.chat.input.textCursor().hasSelection() else None
    # Find opens the current tab's find bar.
    window.act_find.trigger()
    assert tab.find_bar.isVisible()


def test_edit_menu_copies_the_result_grids_selection(qtbot, main_window):
    window = main_window
    tab = _sql_tab(qtbot, window)
    tab.editor.setPlainText("SELECT 'north' AS region, 7 AS n")
    tab.editor.selectAll()  # a selection: an exploratory run, the tab's table stays
    with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000) as run:
        tab.run()
    assert isinstance(run.args[0], dict), run.args[0]
    grid = tab.result.grid
    qtbot.waitUntil(
        lambda: grid.model() is not None and grid.model().rowCount() == 1, timeout=10_000
    )
    grid.setFocus()
    grid.selectAll()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is grid, timeout=3000)
    QApplication.clipboard().clear()
    window.edit_actions["copy"].trigger()
    qtbot.waitUntil(lambda: "north" in QApplication.clipboard().text(), timeout=10_000)
    assert QApplication.clipboard().text().strip() == "region\tn\nnorth\t7"  # all: with header


def test_plan_editor_undo_from_the_menu(qtbot, main_window):
    window = main_window
    plan = open_document_tab(qtbot, window, "plan")
    before = plan.editor.toPlainText()
    plan.editor.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is plan.editor, timeout=3000)
    plan.editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(plan.editor, "More text.")
    assert plan.editor.toPlainText() != before
    window.edit_actions["undo"].trigger()
    assert plan.editor.toPlainText() == before
