"""The quick chart starts from a sensible pair on real results (DuckDB, a parquet file of
raw rows): never a line of ids over dates."""

from __future__ import annotations

from tests.ui.conftest_data import write_tab
from tests.ui.test_sql_tab import make_tab, run_and_wait


def _chart_of(qtbot, services, name: str, sql: str):
    write_tab(services.workspace.root, "p", name, sql)
    tab = make_tab(qtbot, services, name)
    run_and_wait(qtbot, tab, ok=True)
    chart = tab.result.chart
    tab.result.views.setCurrentWidget(chart)
    return chart


def test_raw_rows_get_no_line_of_ids_over_dates(qtbot, app_services):
    chart = _chart_of(qtbot, app_services, "raw", "SELECT id, day, amount FROM big\n")
    assert chart.canvas.data is None  # nothing obvious: the analyst picks
    assert "pick the x and y" in chart.canvas.message
    chart.kind_box.setCurrentIndex(0)  # the analyst picks: the chart draws
    chart.x_box.setCurrentIndex(1)
    assert chart.canvas.data is not None


def test_a_grouped_result_gets_bars_of_its_category(qtbot, app_services):
    chart = _chart_of(
        qtbot,
        app_services,
        "grouped",
        "SELECT name, id, sum(amount) AS total FROM big\n"
        "WHERE id < 40 GROUP BY name, id ORDER BY id\n",
    )
    data = chart.current_data()
    assert data.kind == "bar" and data.x_label == "name" and data.y_label == "total"
