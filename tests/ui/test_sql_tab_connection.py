"""The SQL tab's connection picker against a real PostgreSQL server: picking a connection
writes the tab's header line (one undoable edit) and the tab then runs on the source; a
header edited by hand moves the picker; a name a header cannot hold is refused in words."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextCursor

from lantide.ui.sql.connection_picker import LOCAL, NOT_SET_UP
from lantide.ui.sql.sql_tab import SqlTabWidget
from tests.ui.conftest_data import *  # noqa: F403
from tests.ui.conftest_data import make_tab, open_services, write_tab

pytestmark = pytest.mark.postgres

SQL = "SELECT region, count(*) AS n\nFROM public.customers GROUP BY region ORDER BY region\n"


@pytest.fixture
def pg_services(qtbot, data_workspace, pg_server, memory_keyring):
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace

    ws = Workspace.open(data_workspace, lock=False)
    for name in ("pg", "my dw"):  # the second one's name cannot go in a header
        add_connection(
            ws,
            name,
            pg_server.connection_string,
            dialect="postgres",
            user=pg_server.user,
            password=pg_server.password,
        )
    write_tab(data_workspace, "p", "regions", SQL)
    services = open_services(qtbot, data_workspace)
    yield services
    services.close()
    services.workspace.close()


def pick(tab: SqlTabWidget, text: str) -> None:
    """What a click on the picker's item does."""
    picker = tab.connection_picker
    index = picker.findText(text)
    assert index >= 0, [picker.itemText(i) for i in range(picker.count())]
    picker.setCurrentIndex(index)
    picker.activated.emit(index)


def test_picking_a_connection_binds_the_tab_and_it_runs_on_the_source(qtbot, pg_services):
    tab = make_tab(qtbot, pg_services, "regions")
    picker = tab.connection_picker
    assert [picker.itemText(i) for i in range(picker.count())] == [LOCAL, "pg", "my dw"]
    assert picker.currentText() == LOCAL
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)

    pick(tab, "pg")
    assert tab.editor.toPlainText() == "-- lantide: connection=pg\n" + SQL
    assert tab.is_dirty() and picker.currentText() == "pg"
    assert tab.editor.textCursor().atEnd()  # the analyst's cursor stays where it was
    tab.editor.undo()  # one step takes the header back out
    assert tab.editor.toPlainText() == SQL and picker.currentText() == LOCAL
    tab.editor.redo()
    assert picker.currentText() == "pg"

    with qtbot.waitSignal(tab.sig_run_finished, timeout=60_000) as run:
        tab.run()  # saves, then runs wholly on PostgreSQL
    result = run.args[0]
    assert not isinstance(result, BaseException), result
    assert result["status"] == "ok" and result["row_count"] == 3
    assert tab.path.read_text(encoding="utf-8").startswith("-- lantide: connection=pg\n")
    assert pg_services.query.relation_info("regions")["row_count"] == 3

    pick(tab, LOCAL)  # back to DuckDB: the header line goes
    assert tab.editor.toPlainText() == SQL


def test_editing_the_header_by_hand_moves_the_picker(qtbot, pg_services):
    tab = make_tab(qtbot, pg_services, "regions")
    picker = tab.connection_picker
    cursor = tab.editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.Start)
    cursor.insertText("-- lantide: connection=nowhere from=duckdb\n")
    assert picker.currentText() == "nowhere" + NOT_SET_UP
    cursor.movePosition(QTextCursor.MoveOperation.Start)
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    cursor.insertText("-- lantide: connection=PG from=duckdb")  # a name's case is not its own
    assert picker.currentText() == "pg"
    pick(tab, LOCAL)  # the picker keeps the header's other option
    assert tab.editor.toPlainText() == "-- lantide: from=duckdb\n" + SQL
    cursor = tab.editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.Start)
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    cursor.insertText("-- lantide: connection=pg")
    assert picker.currentText() == "pg"
    tab.editor.selectAll()
    tab.editor.textCursor().removeSelectedText()
    tab.editor.insertPlainText(SQL)
    assert picker.currentText() == LOCAL


def test_a_name_a_header_cannot_hold_is_told_and_nothing_changes(qtbot, pg_services):
    tab = make_tab(qtbot, pg_services, "regions")
    pick(tab, "my dw")
    assert tab.editor.toPlainText() == SQL and not tab.is_dirty()
    assert tab.connection_picker.currentText() == LOCAL
    assert tab.banner.isVisible()
    shown = tab.banner.title_label.text()
    assert "CONNECTION_NAME_UNSUITED" in shown and "my dw" in shown


def test_a_pick_before_the_file_is_read_changes_nothing(qtbot, pg_services):
    tab = SqlTabWidget(pg_services, "p", "regions")
    qtbot.addWidget(tab)
    with qtbot.waitSignal(tab.sig_loaded, timeout=10_000):
        pick(tab, "pg")  # the file is read in a worker: the editor is not ready yet
        assert tab.connection_picker.currentText() == LOCAL
    assert tab.editor.toPlainText() == SQL and not tab.is_dirty()
    assert tab.connection_picker.currentText() == LOCAL
