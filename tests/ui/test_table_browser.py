"""The table browser against the real query service: schema and DDL, first rows paged
like a result, the column profile computed in DuckDB, refresh after a change."""

from __future__ import annotations

from PySide6.QtCore import Qt

from lantide.ui.explorer.column_profile_view import HISTOGRAM_COLUMN, ROLE_HISTOGRAM
from lantide.ui.explorer.table_browser import TableBrowserWidget
from lantide.ui.sql.sql_tab import SqlTabWidget
from tests.ui.conftest_data import BIG_ROWS, write_tab


def open_browser(qtbot, services, table: str) -> TableBrowserWidget:
    widget = TableBrowserWidget(services, table)
    qtbot.addWidget(widget)
    widget.resize(1000, 600)
    widget.show()
    qtbot.waitUntil(lambda: widget.schema is not None or widget.banner.isVisible(), timeout=15_000)
    return widget


def test_browser_shows_schema_and_pages_rows(qtbot, app_services):
    browser = open_browser(qtbot, app_services, "big")
    assert browser.title() == "big"
    assert [c["name"] for c in browser.schema["columns"]] == [
        "id",
        "name",
        "amount",
        "day",
        "bucket",
    ]
    assert browser.columns_table.rowCount() == 5
    assert browser.columns_table.item(3, 1).text() == "DATE"
    assert browser.ddl.toPlainText().startswith('CREATE TABLE "big" (\n    "id" BIGINT,')
    assert f"{BIG_ROWS:,} rows" in browser.heading.text()
    model = browser.rows.model
    assert model.rowCount() == BIG_ROWS
    browser.rows.grid.scrollTo(model.index(1_234_567, 0))
    qtbot.waitUntil(lambda: model.is_loaded(1_234_567), timeout=10_000)
    assert model.index(1_234_567, 1).data() == f"customer {1_234_567 % 5000}"


def test_profile_counts_nulls_distincts_and_bins(qtbot, app_services):
    browser = open_browser(qtbot, app_services, "big")
    with qtbot.waitSignal(browser.sig_profile_finished, timeout=60_000) as blocker:
        browser.views.setCurrentIndex(2)  # the profile starts when it is shown
    profile = blocker.args[0]
    assert isinstance(profile, dict), profile
    by_name = {c["name"]: c for c in profile["columns"]}
    assert by_name["bucket"]["null_count"] == BIG_ROWS // 10
    assert abs(by_name["bucket"]["distinct_count"] - 7) <= 1  # estimated above 1M rows
    assert by_name["amount"]["min"] == 0.0 and by_name["amount"]["max"] == 1248.75
    view = browser.profile_view
    model = view.model()
    row = [model.index(r, 0).data() for r in range(model.rowCount())].index("bucket")
    assert model.index(row, 2).data() == f"{BIG_ROWS // 10:,} (10.0%)"
    counts = model.index(row, HISTOGRAM_COLUMN).data(ROLE_HISTOGRAM)
    assert sum(counts) == BIG_ROWS - BIG_ROWS // 10
    tooltip = model.index(row, HISTOGRAM_COLUMN).data(Qt.ItemDataRole.ToolTipRole)
    assert tooltip.count("\n") == len(counts) - 1
    name_row = [model.index(r, 0).data() for r in range(model.rowCount())].index("name")
    # above a million rows DuckDB's estimate is used, and the grid says so
    shown = model.index(name_row, 3).data()
    assert shown.startswith("≈ ") and abs(int(shown[2:].replace(",", "")) - 5000) < 500
    image = view.viewport().grab().toImage()
    drawn = {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 3)
        for y in range(0, image.height(), 3)
    }
    assert "#3b82f6" in drawn  # the histogram bars are painted


def test_workbook_sheet_and_missing_table(qtbot, app_services, tmp_path):
    import duckdb

    path = app_services.workspace.root / "data" / "book.parquet"
    duckdb.sql(f"COPY (SELECT 'x' AS k, 1 AS v) TO '{path}' (FORMAT parquet)")
    app_services.query.refresh_sources()
    browser = open_browser(qtbot, app_services, '"book"')
    assert browser.schema["kind"] == "data_file"
    assert browser.rows.model.rowCount() == 1
    missing = open_browser(qtbot, app_services, "no_such_table")
    assert missing.schema is None
    assert "no_such_table" in missing.banner.text()
    assert any(b.text() == "Try again" for b in missing.banner.buttons())


def test_cached_table_browser_follows_a_rerun(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "few", "SELECT * FROM small WHERE orders > 2\n")
    tab = SqlTabWidget(app_services, "p", "few")
    qtbot.addWidget(tab)
    qtbot.waitUntil(lambda: not tab.editor.isReadOnly(), timeout=10_000)
    with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000):
        tab.run()
    browser = open_browser(qtbot, app_services, "few")
    assert browser.schema["kind"] == "cached_table"
    assert browser.info["row_count"] == 2
    tab.editor.selectAll()
    tab.editor.insertPlainText("SELECT * FROM small\n")  # typed: the tab is dirty
    assert tab.is_dirty()
    with qtbot.waitSignal(browser.sig_loaded, timeout=30_000):
        tab.run()
    assert browser.info["row_count"] == 4
    assert browser.rows.model.rowCount() == 4
