"""**Save as chart file…** in the SQL tab's chart view: the chart as shown becomes
``charts/NAME.vl.json`` naming the tab's cached table (not its numbers), and draws. Real
DuckDB, real files, the real SQL tab (offscreen)."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QInputDialog, QMessageBox

from lantide import charts
from tests.ui.conftest_data import (  # noqa: F401 - fixtures
    app_services,
    big_parquet,
    data_workspace,
    write_tab,
)
from tests.ui.test_sql_tab import make_tab, run_and_wait


def test_save_as_chart_file_writes_a_chart_of_the_tabs_table(qtbot, app_services, monkeypatch):  # noqa: F811
    write_tab(app_services.workspace.root, "p", "regions", "SELECT region, revenue FROM small\n")
    tab = make_tab(qtbot, app_services, "regions")
    run_and_wait(qtbot, tab, ok=True)
    chart = tab.result.chart
    tab.result.views.setCurrentWidget(chart)
    assert chart.table == "regions" and chart.save_button.isEnabled()
    chart.kind_box.setCurrentIndex(0)  # bars of revenue per region, as shown

    asked = []
    monkeypatch.setattr(
        QInputDialog, "getText", lambda *a, **k: asked.append(k.get("text")) or ("revenue", True)
    )
    chart.save_button.click()
    path = app_services.workspace.root / "projects/p/charts/revenue.vl.json"
    qtbot.waitUntil(path.exists, timeout=15_000)
    assert asked == ["regions"]  # the table's name is offered
    spec = json.loads(path.read_text())
    assert spec["data"] == {"table": "regions"}
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["x"]["field"] == "region"
    assert spec["encoding"]["y"]["field"] == "revenue"
    assert "120.5" not in path.read_text()  # the numbers stay in the table
    assert charts.written_by(spec) == "analyst"
    svg, loaded = charts.render_chart(path, app_services.query)
    assert "north" in svg and len(loaded.spec["data"]["values"]) == 4

    # saving again asks before replacing; "No" keeps the file as it is
    before = path.read_bytes()
    chart.kind_box.setCurrentIndex(1)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    chart.save_button.click()
    qtbot.wait(300)
    assert path.read_bytes() == before


def test_a_result_that_is_not_cached_cannot_be_saved_as_a_chart_file(qtbot, app_services):  # noqa: F811
    chart = make_tab(qtbot, app_services, "all_big").result.chart
    chart.set_result(
        [{"name": "region", "type": "VARCHAR"}, {"name": "n", "type": "BIGINT"}],
        [("a", 1), ("b", 2)],
        2,
        None,
        table=None,
    )
    assert chart.spec() is None and not chart.save_button.isEnabled()
    assert "cached result" in chart.save_button.toolTip()
