"""The actions of a SQL tab's error banner do what their button says.

Found by mypy: the "Go to line N" callback was a lambda with the line and column as default
arguments, and a button's ``clicked(bool)`` fills the first of them with ``checked``
(False), so the button went to line 1 and marked the error at line "False"."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from tests.ui import conftest_data
from tests.ui.conftest_data import write_tab
from tests.ui.test_sql_tab import make_tab, run_and_wait

# The data fixtures, made visible to pytest in this module.
big_parquet = conftest_data.big_parquet
data_workspace = conftest_data.data_workspace
app_services = conftest_data.app_services


def test_go_to_line_button_puts_the_cursor_on_the_error(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "broken", "SELECT id,\n       amountx\nFROM big\n")
    tab = make_tab(qtbot, app_services, "broken")
    error = run_and_wait(qtbot, tab, ok=False)
    assert error.position == (2, 8)
    cursor = tab.editor.textCursor()  # the analyst moves away from the error
    cursor.movePosition(QTextCursor.MoveOperation.End)
    tab.editor.setTextCursor(cursor)
    assert tab.editor.textCursor().blockNumber() == 3

    (button,) = [b for b in tab.banner.buttons() if b.text() == "Go to line 2"]
    button.click()

    assert tab.editor.error_position == (2, 8)
    assert tab.editor.textCursor().blockNumber() == 1
    assert tab.editor.textCursor().positionInBlock() == 7
