"""SQL that reads, in the SQL tab: Format (one undoable edit, refusals leave the text),
Explain / Explain Analyze as a plan tree, go to the definition of a table, and renaming
a tab that others read."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from tests.ui.conftest_data import *  # noqa: F403
from tests.ui.conftest_data import make_tab, write_tab


def test_format_is_one_undoable_edit(qtbot, app_services, data_workspace):
    write_tab(data_workspace, "p", "fmt", "select region, revenue from small -- all regions\n")
    tab = make_tab(qtbot, app_services, "fmt")
    original = tab.editor.toPlainText()
    tab.activateWindow()
    qtbot.waitUntil(tab.isActiveWindow, timeout=5000)
    tab.editor.setFocus()
    with qtbot.waitSignal(tab.sig_format_finished, timeout=10_000):
        qtbot.keyClick(
            tab.editor,
            Qt.Key.Key_F,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
    assert tab.editor.toPlainText() == ("SELECT\n  region,\n  revenue\nFROM small -- all regions\n")
    assert tab.is_dirty()
    tab.editor.undo()  # one Ctrl+Z brings the whole text back
    assert tab.editor.toPlainText() == original


def test_format_refuses_and_leaves_the_text(qtbot, app_services, data_workspace):
    text = "select region from small where revenue between -- low\n 1 and 2\n"
    write_tab(data_workspace, "p", "keep", text)
    tab = make_tab(qtbot, app_services, "keep")
    with qtbot.waitSignal(tab.sig_format_finished, timeout=10_000):
        tab.format_action.trigger()
    assert tab.editor.toPlainText() == text
    assert not tab.is_dirty()
    assert tab.banner.isVisible() and "low" in tab.banner.text()

    tab.editor.setPlainText("select region,\nfrom where")
    with qtbot.waitSignal(tab.sig_format_finished, timeout=10_000):
        tab.format_action.trigger()
    assert tab.editor.toPlainText() == "select region,\nfrom where"
    assert tab.editor.error_position is not None and tab.editor.error_position[0] == 2


def test_text_typed_while_formatting_is_not_replaced(qtbot, app_services, data_workspace):
    write_tab(data_workspace, "p", "typing", "select region from small\n")
    tab = make_tab(qtbot, app_services, "typing")
    with qtbot.waitSignal(tab.sig_format_finished, timeout=10_000) as done:
        tab.format_action.trigger()
        tab.editor.insertPlainText("-- typed meanwhile\n")  # before the worker answers
    assert done.args[0] is None
    assert tab.editor.toPlainText() == "-- typed meanwhile\nselect region from small\n"


def test_explain_analyze_shows_the_plan_tree_with_the_slowest_highlighted(
    qtbot, app_services, data_workspace
):
    write_tab(
        data_workspace,
        "p",
        "per_bucket",
        "SELECT bucket, count(*) AS n, sum(amount) AS total FROM big\n"
        "WHERE amount > 10 GROUP BY bucket ORDER BY bucket\n",
    )
    tab = make_tab(qtbot, app_services, "per_bucket")
    with qtbot.waitSignal(tab.sig_plan_finished, timeout=60_000) as done:
        tab.explain_analyze_action.trigger()
    plan = done.args[0]
    assert not isinstance(plan, BaseException), plan
    view = tab.plan_view
    assert tab.result.views.currentWidget() is view
    model = view.model
    assert model.rowCount() >= 1
    operators = [n.operator for n in plan.nodes()]
    top = model.index(0, 0)
    assert top.data() == operators[0]
    assert model.index(0, 1).data() == f"{plan.roots[0].rows:,}"
    assert view.highlighted() == [n.operator for n in plan.hotspots()]
    assert view.highlighted()  # one operator at least takes a tenth of the time
    assert view.headline.text().startswith("Ran in ") and "slowest" in view.headline.text()
    # nothing was cached by it: the tab's table is not there until the tab runs
    assert app_services.query.catalog.cached("per_bucket") is None
    with qtbot.waitSignal(tab.sig_run_finished, timeout=60_000):
        tab.run()  # a run shows its rows again, not the plan
    assert tab.result.views.currentWidget() is tab.result.grid


def test_explain_of_a_refused_statement_shows_the_refusal(qtbot, app_services, data_workspace):
    write_tab(data_workspace, "p", "bad", "SELECT 1;\nDROP TABLE big\n")
    tab = make_tab(qtbot, app_services, "bad")
    with qtbot.waitSignal(tab.sig_plan_finished, timeout=30_000) as done:
        tab.explain_analyze_action.trigger()
    assert getattr(done.args[0], "code", "") == "QUERY_REFUSED_MULTIPLE_STATEMENTS"
    assert tab.banner.isVisible()
    assert tab.plan_view.model.rowCount() == 0


def test_stop_cancels_explain_analyze(qtbot, app_services, data_workspace):
    write_tab(
        data_workspace,
        "p",
        "slow",
        "SELECT count(*) FROM range(5000000000) a WHERE a.range % 7 = 3\n",
    )
    tab = make_tab(qtbot, app_services, "slow")
    with qtbot.waitSignal(tab.sig_plan_finished, timeout=60_000) as done:
        tab.explain_analyze_action.trigger()
        qtbot.waitUntil(lambda: app_services.query.engine.busy, timeout=20_000)
        assert tab.stop_action.isEnabled() and not tab.run_action.isEnabled()
        tab.stop_action.trigger()
    assert getattr(done.args[0], "code", "") == "QUERY_CANCELLED"
    assert tab.run_action.isEnabled() and "cancelled" in tab.plan_view.headline.text()


def _opened(services) -> list[dict]:
    requests: list[dict] = []
    services.sig_open_requested.connect(requests.append)
    return requests


def test_f12_on_a_cached_tab_name_opens_that_tab(qtbot, app_services, data_workspace):
    tab = make_tab(qtbot, app_services, "by_bucket")  # FROM all_big, another tab
    requests = _opened(app_services)
    text = tab.editor.toPlainText()
    cursor = tab.editor.textCursor()
    cursor.setPosition(text.index("all_big") + 3)
    tab.editor.setTextCursor(cursor)
    tab.activateWindow()
    qtbot.waitUntil(tab.isActiveWindow, timeout=5000)  # shortcuts go to the active window
    tab.editor.setFocus()
    with qtbot.waitSignal(tab.sig_definition_found, timeout=20_000) as found:
        qtbot.keyClick(tab.editor, Qt.Key.Key_F12)
    assert found.args[0]["kind"] == "sql_tab"
    assert requests == [{"kind": "sql", "project": "p", "name": "all_big"}]


def test_ctrl_click_on_a_data_file_opens_its_table_browser(qtbot, app_services, data_workspace):
    tab = make_tab(qtbot, app_services, "all_big")  # SELECT * FROM big
    requests = _opened(app_services)
    text = tab.editor.toPlainText()
    cursor = tab.editor.textCursor()
    cursor.setPosition(text.index("big") + 1)
    point = tab.editor.cursorRect(cursor).center()
    tab.editor.moveCursor(QTextCursor.MoveOperation.End)  # the click, not the cursor, decides
    with qtbot.waitSignal(tab.sig_definition_found, timeout=20_000) as found:
        qtbot.mouseClick(
            tab.editor.viewport(),
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.ControlModifier,
            point,
        )
    assert found.args[0]["kind"] == "table"
    assert requests == [{"kind": "table", "project": None, "name": '"big"'}]


def test_a_cte_name_moves_the_cursor_to_its_definition(qtbot, app_services, data_workspace):
    sql = "WITH picked AS (SELECT * FROM small)\nSELECT * FROM picked\n"
    write_tab(data_workspace, "p", "cte", sql)
    tab = make_tab(qtbot, app_services, "cte")
    requests = _opened(app_services)
    with qtbot.waitSignal(tab.sig_definition_found, timeout=20_000):
        tab.go_to_definition(sql.rindex("picked") + 2)
    assert requests == []
    assert tab.editor.textCursor().position() == sql.index("picked")


def test_the_editors_context_menu_and_the_plan_view_offer_the_actions(
    qtbot, app_services, data_workspace
):
    from PySide6.QtCore import QPoint, QTimer
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication, QToolButton

    tab = make_tab(qtbot, app_services, "all_big")
    seen: list[str] = []

    def read_and_close() -> None:
        menu = QApplication.activePopupWidget()
        if menu is None:
            QTimer.singleShot(20, read_and_close)
            return
        seen.extend(a.text().split("\t")[0] for a in menu.actions() if a.text())
        menu.close()

    QTimer.singleShot(0, read_and_close)
    event = QContextMenuEvent(
        QContextMenuEvent.Reason.Mouse, QPoint(20, 10), tab.editor.mapToGlobal(QPoint(20, 10))
    )
    tab.editor.contextMenuEvent(event)
    assert {"Format SQL", "Explain", "Explain Analyze", "Go to definition"} <= set(seen)
    assert "Copy" in " ".join(seen)  # the standard entries stay
    buttons = [b.text() for b in tab.plan_view.findChildren(QToolButton)]
    assert "Explain" in buttons and "Explain Analyze" in buttons


def test_a_remote_tab_is_formatted_in_its_connections_dialect(qtbot, app_services, data_workspace):
    from lantide.query.connections import add_connection

    add_connection(
        app_services.workspace,
        "dw",
        "Driver={ODBC Driver 18 for SQL Server};Server=dw.example.test;Database=sales",
        dialect="tsql",
    )
    text = "-- lantide: connection=dw\nselect top 5 name from dbo.customers with (nolock)\n"
    write_tab(data_workspace, "p", "remote", text)
    tab = make_tab(qtbot, app_services, "remote")
    with qtbot.waitSignal(tab.sig_format_finished, timeout=10_000) as done:
        tab.format_action.trigger()
    assert not isinstance(done.args[0], BaseException), done.args[0]
    formatted = tab.editor.toPlainText()
    assert formatted.startswith("-- lantide: connection=dw\nSELECT\nTOP 5\n")
    assert "WITH (nolock)" in formatted  # read as T-SQL, nothing dropped
