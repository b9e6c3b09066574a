"""Issue 32 item 5: the lineage of a project's tabs as a picture, in a SQL tab's Lineage
panel: tabs and their sources laid out left to right, the tab's upstream chain highlighted,
stale and never-run tabs said in words, a missing table as a dashed node; arrow keys walk
it, Enter opens, and Source Run of a node goes through that tab's own Source Run."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from lantide.ui.sql.lineage_graph_items import node_caption
from tests.ui.conftest import open_main_window
from tests.ui.conftest_data import write_tab

PROJECT = "q3-churn"


def _graph_ready(tab, wanted: str) -> bool:
    return wanted in tab.lineage.graph_view.nodes


def test_the_graph_highlights_the_chain_marks_states_and_runs_from_a_node(
    qtbot, shell_services, sample_workspace
):
    root = sample_workspace
    write_tab(root, PROJECT, "lost", "SELECT * FROM no_such_table\n")
    services = shell_services(watcher=False)
    q = services.query
    q.run_sql_tab(PROJECT, "clean_orders", purpose_required=False)
    q.run_sql_tab(PROJECT, "customer_quarters", purpose_required=False)
    # clean_orders changes after its run: stale; customer_quarters read the old result
    path = root / "projects" / PROJECT / "sql" / "clean_orders.sql"
    path.write_text(path.read_text() + "  AND o.quantity > 0\n", encoding="utf-8")
    window = open_main_window(qtbot, services)
    tab = window.open_tab("sql", PROJECT, "q3_churn_by_region")
    tab.bottom.setCurrentWidget(tab.lineage)
    tab.lineage.show_graph_mode()
    tab.refresh_lineage()
    qtbot.waitUntil(lambda: _graph_ready(tab, 'missing:"no_such_table"'), timeout=20_000)
    view = tab.lineage.graph_view
    nodes = view.nodes

    # left to right by depth
    x = {key: item.pos().x() for key, item in nodes.items()}
    assert x['data:"orders"'] < x["tab:clean_orders"] < x["tab:customer_quarters"]
    assert x["tab:customer_quarters"] < x["tab:q3_churn_by_region"]
    # states in words (not only colour), the missing table dashed and said
    captions = {key: node_caption(item.node) for key, item in nodes.items()}
    assert captions["tab:clean_orders"] == "▲ stale"
    assert captions["tab:customer_quarters"] == "✓ up to date"
    assert captions["tab:q3_churn_by_region"] == "○ never run"
    assert captions['missing:"no_such_table"'] == "✕ not found"
    # this tab is selected and its upstream chain highlighted; the rest is faint
    assert view.selected_id() == "tab:q3_churn_by_region"
    assert view.highlighted_ids() == {
        "tab:q3_churn_by_region",
        "tab:customer_quarters",
        "tab:clean_orders",
        'data:"orders"',
        'data:"customers"',
    }
    assert not nodes["tab:lost"].highlighted
    assert view.run_button.isEnabled()

    # click selects another node: its chain is highlighted instead
    canvas = view.canvas
    center = canvas.mapFromScene(nodes["tab:lost"].sceneBoundingRect().center())
    QTest.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=center)
    assert view.selected_id() == "tab:lost"
    assert view.highlighted_ids() == {"tab:lost", 'missing:"no_such_table"'}

    # the keys: back to this tab, ← walks upstream, Enter opens that tab
    view.select("tab:q3_churn_by_region")
    canvas.setFocus()
    QTest.keyClick(canvas, Qt.Key.Key_Left)  # the tab it reads, in the next column
    assert view.selected_id() == "tab:customer_quarters"
    QTest.keyClick(canvas, Qt.Key.Key_Left)
    assert view.selected_id() == "tab:clean_orders"
    QTest.keyClick(canvas, Qt.Key.Key_Right)
    assert view.selected_id() == "tab:customer_quarters"
    QTest.keyClick(canvas, Qt.Key.Key_Return)
    assert window.tabs.currentWidget().tab_name == "customer_quarters"

    # zoom and fit
    before = canvas.transform().m11()
    QTest.keyClick(canvas, Qt.Key.Key_Plus)
    assert canvas.transform().m11() > before
    canvas.fit()
    shown = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    assert all(shown.contains(item.sceneBoundingRect()) for item in nodes.values())

    # Source Run of a node of the graph: the other tab opens and runs its own Source Run
    window.tabs.setCurrentWidget(tab)
    view.select("tab:clean_orders")
    view.run_button.click()
    runner = window.tabs.currentWidget()
    assert runner.tab_name == "clean_orders"
    with qtbot.waitSignal(runner.sig_run_finished, timeout=30_000) as finished:
        pass
    report = finished.args[0]
    assert report["ok"] and [e["tab"] for e in report["tabs"]] == ["clean_orders"]
    assert runner.bottom.currentWidget() in (runner.result, runner.source_run_view)
    states = {t["tab"]: t["state"] for t in q.list_sql_tabs(PROJECT)}
    assert states["clean_orders"] == "up_to_date"


def test_a_cycle_is_drawn_and_the_node_menu_offers_source_run(
    qtbot, shell_services, sample_workspace
):
    root = sample_workspace
    write_tab(root, PROJECT, "loop_a", "SELECT * FROM loop_b\n")
    write_tab(root, PROJECT, "loop_b", "SELECT * FROM loop_a\n")
    services = shell_services(watcher=False)
    window = open_main_window(qtbot, services)
    tab = window.open_tab("sql", PROJECT, "loop_a")
    tab.bottom.setCurrentWidget(tab.lineage)
    tab.lineage.show_graph_mode()
    tab.refresh_lineage()
    qtbot.waitUntil(lambda: _graph_ready(tab, "tab:loop_b"), timeout=20_000)
    view = tab.lineage.graph_view
    back = [e for e in view.edges if e.back]
    assert len(back) == 1 and back[0].pen().style() == Qt.PenStyle.DashLine
    assert "cycle" in tab.lineage.headline.text()
    item = view.nodes["tab:loop_b"]
    view.show_menu(item, view.mapToGlobal(view.rect().center()))
    texts = [a.text() for a in view.menu.actions()]
    assert "Open" in texts and "Source Run loop_b" in texts
    view.menu.close()
