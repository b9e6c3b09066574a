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
    replace_asked = []
    monkeypatch.setattr(
        QMessageBox,
        "question",
        lambda *a, **k: replace_asked.append(a[2]) or QMessageBox.StandardButton.No,
    )
    chart.save_button.click()
    qtbot.waitUntil(lambda: bool(replace_asked), timeout=5_000)
    assert "exists" in replace_asked[0]
    # a save would run on the worker pool: once it is idle, any write has happened
    assert app_services.workers.wait(10_000)
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


def test_a_chart_name_with_spaces_is_offered_as_an_encoded_image_link(
    qtbot,
    app_services,  # noqa: F811
    monkeypatch,
):
    from lantide.charts.links import chart_links

    write_tab(app_services.workspace.root, "p", "regions", "SELECT region, revenue FROM small\n")
    tab = make_tab(qtbot, app_services, "regions")
    run_and_wait(qtbot, tab, ok=True)
    chart = tab.result.chart
    tab.result.views.setCurrentWidget(chart)
    posted: list[str] = []
    app_services.sig_message_posted.connect(lambda text, _level: posted.append(text))
    names = iter(["orders.v2", "orders by region"])
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (next(names), True))
    chart.save_button.click()  # refused by the one rule for names, saying why
    qtbot.waitUntil(lambda: any("'.' is not allowed" in p for p in posted), timeout=5_000)
    chart.save_button.click()
    path = app_services.workspace.root / "projects/p/charts/orders by region.vl.json"
    qtbot.waitUntil(path.exists, timeout=15_000)
    qtbot.waitUntil(lambda: any(p.startswith("Saved") for p in posted), timeout=5_000)
    saved = next(p for p in posted if p.startswith("Saved"))
    assert "(charts/orders%20by%20region.vl.json)" in saved
    markdown = saved[saved.index("![") : saved.index(".vl.json)") + len(".vl.json)")]
    assert [c.src for c in chart_links(markdown)] == ["charts/orders%20by%20region.vl.json"]
