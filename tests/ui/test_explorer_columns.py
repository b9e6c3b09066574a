"""Issue 32 item 4: the explorer's data files, sheets, cached tables and connection tables
open to their columns (fetched in a worker), a column shows its profile on hover (counted
in DuckDB, abandoned when the mouse moves on), and a table or column dragged into the SQL
editor is inserted as the query layer quoted it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QTreeWidgetItem

from lantide.ui.explorer.explorer import ROLE_NODE, ExplorerPanel
from lantide.ui.tree_items import child_items
from tests.ui.conftest_data import open_services


def _explorer(qtbot, services) -> ExplorerPanel:
    explorer = ExplorerPanel(services)
    qtbot.addWidget(explorer)
    explorer.resize(420, 900)
    explorer.show()
    qtbot.waitUntil(explorer.tables_listed, timeout=30_000)
    return explorer


def _table_item(explorer, sql_name: str) -> QTreeWidgetItem | None:
    for item in explorer._all_items():
        if (item.data(0, ROLE_NODE) or {}).get("columns_of") == sql_name:
            return item
    return None


def _columns(item: QTreeWidgetItem) -> dict[str, str]:
    return {
        c.text(0): c.text(1)
        for c in child_items(item)
        if (c.data(0, ROLE_NODE) or {}).get("kind") == "column"
    }


def _expand(qtbot, explorer, sql_name: str, column: str) -> QTreeWidgetItem:
    qtbot.waitUntil(lambda: _table_item(explorer, sql_name) is not None, timeout=15_000)
    item = _table_item(explorer, sql_name)
    assert item.childIndicatorPolicy() == QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator
    item.setExpanded(True)
    qtbot.waitUntil(
        lambda: column in _columns(_table_item(explorer, sql_name) or QTreeWidgetItem()),
        timeout=15_000,
    )
    return _table_item(explorer, sql_name)


def _column_item(explorer, sql_name: str, column: str) -> QTreeWidgetItem:
    item = _table_item(explorer, sql_name)
    return next(c for c in child_items(item) if c.text(0) == column)


def _drop(editor, mime, point: QPoint) -> None:
    viewport = editor.viewport()
    action = Qt.DropAction.CopyAction
    buttons, mods = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(point, action, mime, buttons, mods)
    QApplication.sendEvent(viewport, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(viewport, QDragMoveEvent(point, action, mime, buttons, mods))
    drop = QDropEvent(point.toPointF(), action, mime, buttons, mods)
    QApplication.sendEvent(viewport, drop)


def test_tables_open_to_their_columns_profile_on_hover_and_drag_into_the_editor(
    qtbot, shell_services
):
    from lantide.ui.sql.sql_editor import SqlEditor

    services = shell_services(watcher=False)
    explorer = _explorer(qtbot, services)
    # a data file: nothing fetched until it is opened
    item = _table_item(explorer, '"customers"')
    assert item is not None and item.childCount() == 0
    customers = _expand(qtbot, explorer, '"customers"', "region")
    assert _columns(customers)["region"] == "varchar"
    assert _columns(customers)["is_test_account"] == "boolean"
    # a workbook's sheet
    sheet = _expand(qtbot, explorer, '"targets"."Regional"', "target_revenue")
    assert _columns(sheet)["target_revenue"] == "bigint"
    # a cached table (the result of a tab)
    services.query.run_sql_tab("q3-churn", "clean_orders", purpose_required=False)
    explorer.refresh_tables()
    cached = _expand(qtbot, explorer, '"clean_orders"', "net_revenue")
    assert _columns(cached)["net_revenue"] == "double"

    # hovering a column (a real mouse move over its row) shows its profile
    column = _column_item(explorer, '"customers"', "region")
    explorer.tree.scrollToItem(column)
    point = explorer.tree.visualItemRect(column).center()
    QTest.mouseMove(explorer.tree.viewport(), point)
    qtbot.waitUntil(
        lambda: "nulls 59" in _column_item(explorer, '"customers"', "region").toolTip(0),
        timeout=15_000,
    )
    tip = _column_item(explorer, '"customers"', "region").toolTip(0)
    assert "2,000 rows" in tip and "distinct 10" in tip and "min DE-BE · max US-TX" in tip

    # drag a column, then a sheet, into the SQL editor: inserted quoted where dropped
    editor = SqlEditor()
    qtbot.addWidget(editor)
    editor.resize(600, 200)
    editor.show()
    editor.setPlainText("SELECT")
    end = editor.cursorRect(editor.textCursor()).center() + QPoint(200, 0)
    mime = explorer.tree.mimeData([_column_item(explorer, '"customers"', "region")])
    _drop(editor, mime, end)
    assert editor.toPlainText() == 'SELECT "region"'
    editor.setPlainText('SELECT "region" FROM')
    mime = explorer.tree.mimeData([_table_item(explorer, '"targets"."Regional"')])
    _drop(editor, mime, end)
    assert editor.toPlainText() == 'SELECT "region" FROM "targets"."Regional"'
    # the context menu copies the same quoted name
    menu = explorer.context_menu(_table_item(explorer, '"targets"."Regional"'))
    next(a for a in menu.actions() if a.text() == "Copy name for SQL").trigger()
    assert QApplication.clipboard().text() == '"targets"."Regional"'
    # rows that stand for no table or column do not drag
    group = explorer.tree.topLevelItem(0)
    assert not group.flags() & Qt.ItemFlag.ItemIsDragEnabled


def test_a_large_files_profile_is_abandoned_when_the_mouse_moves_on(qtbot, data_workspace):
    services = open_services(qtbot, data_workspace, watcher=False)
    try:
        explorer = _explorer(qtbot, services)
        _expand(qtbot, explorer, '"big"', "amount")
        columns = explorer.columns
        columns.hover(_column_item(explorer, '"big"', "name"))
        assert columns.profile_pending() == ('"big"', "name")
        columns.leave()  # the mouse left before the 1.5 million rows were counted
        assert columns.profile_pending() is None
        # the same when Qt says the mouse left the rows' area (the tree's viewport)
        columns.hover(_column_item(explorer, '"big"', "name"))
        assert columns.profile_pending() == ('"big"', "name")
        QApplication.sendEvent(explorer.tree.viewport(), QEvent(QEvent.Type.Leave))
        assert columns.profile_pending() is None
        # another column is profiled to the end; the UI stays free meanwhile
        with qtbot.waitSignal(columns.sig_summary_shown, timeout=30_000) as shown:
            columns.hover(_column_item(explorer, '"big"', "bucket"))
        assert shown.args == ['"big"', "bucket"]
        summary = columns.summary_of('"big"', "bucket")
        assert summary["row_count"] == 1_500_000 and summary["null_count"] == 150_000
        assert summary["distinct_exact"] is False and summary["max"] == 6
        # a second rest on the same column asks nothing again
        columns.leave()
        columns.hover(_column_item(explorer, '"big"', "bucket"))
        assert columns.profile_pending() is None
        assert "nulls 150,000 (10.0%)" in _column_item(explorer, '"big"', "bucket").toolTip(0)
    finally:
        services.close()
        services.workspace.close()


@pytest.mark.postgres
def test_connection_tables_list_columns_and_an_unreachable_one_says_so(
    qtbot, shell_services, sample_workspace, pg_server
):
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(
        ws, "shop", pg_server.connection_string, user=pg_server.user, password=pg_server.password
    )
    add_connection(ws, "gone", "Driver={PostgreSQL Unicode};Server=127.0.0.1;Port=9;Database=x")
    services = shell_services(watcher=False)
    explorer = _explorer(qtbot, services)
    invoices = _expand(qtbot, explorer, '"shop"."sales"."invoices"', "amount")
    assert _columns(invoices) == {
        "invoice_id": "bigint",
        "customer_id": "integer",
        "amount": "double",
        "issued": "timestamp",
    }
    # listing the tables again (after every run) does not ask the server again; Refresh does
    shown = []
    explorer.columns.sig_columns_shown.connect(shown.append)
    with qtbot.waitSignal(explorer.sig_tree_refreshed, timeout=15_000):
        explorer.refresh_tables()
    qtbot.wait(500)
    assert '"shop"."sales"."invoices"' not in shown
    assert "amount" in _columns(_table_item(explorer, '"shop"."sales"."invoices"'))
    with qtbot.waitSignal(
        explorer.columns.sig_columns_shown,
        check_params_cb=lambda table: table == '"shop"."sales"."invoices"',
        timeout=15_000,
    ):
        explorer._refresh_all()
    gone = explorer.find_item("connection", name="gone")
    rows = [c.text(0) for c in child_items(gone)]
    assert len(rows) == 1 and rows[0].startswith("Cannot list tables: connection 'gone'")
    # nothing was staged to list the columns
    listed = services.query.show_tables()["tables"]
    assert not [t for t in listed if t["kind"] == "cached_table" and "invoice" in t["name"]]


def test_a_long_text_min_or_max_stays_one_short_line_in_the_tooltip():
    from lantide.ui.explorer.explorer_columns import TIP_VALUE_CHARS, summary_text

    text = summary_text(
        {
            "name": "note",
            "type": "VARCHAR",
            "row_count": 3,
            "null_count": 0,
            "null_fraction": 0.0,
            "distinct_count": 3,
            "distinct_exact": True,
            "min": "first line\nsecond line",
            "max": "x" * 500,
        }
    )
    lines = text.splitlines()
    assert lines[0] == "note · varchar" and len(lines) == 3
    assert lines[2].startswith("min first line ⏎ second line · max xxx")
    assert lines[2].endswith("…") and len(lines[2]) < 2 * TIP_VALUE_CHARS + 20
