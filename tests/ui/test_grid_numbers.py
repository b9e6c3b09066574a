"""Numbers in the result grid: a double is shown without floating-point noise (at 13
significant digits: a SUM's rounding errors reach the 15th), a FLOAT at its own precision, a
DECIMAL with its scale, both grouped the locale's way; integers ungrouped; copy and export
keep every digit."""

from __future__ import annotations

import csv
import io

import duckdb
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtWidgets import QApplication

from lantide.ui.sql.result_model import display_value
from tests.ui.conftest_data import write_tab
from tests.ui.test_sql_tab import make_tab, run_and_wait

SQL = (
    "SELECT 646.08 - 0.0000000000001 + 0.0000000000001 AS exact, "
    "CAST(0.1 AS DOUBLE) + CAST(0.2 AS DOUBLE) AS noisy, "
    "CAST(9618.2 AS DOUBLE) + CAST(0.1 AS DOUBLE) AS total, "
    "CAST(0.1 AS FLOAT) AS single, CAST(12.5 AS DECIMAL(10, 2)) AS money, "
    "CAST(0.0000001 AS DECIMAL(18, 9)) AS tiny, CAST(1e300 AS DOUBLE) * 10 AS huge, "
    "CAST(1 AS DOUBLE) / 3 AS third, CAST(8262570.909999993 AS DOUBLE) AS summed, "
    "CAST(1234567 AS BIGINT) AS orders\n"
)


def test_display_value_rules():
    assert display_value(0.1 + 0.2, "DOUBLE") == "0.3"
    assert display_value(9618.2 + 0.1, "DOUBLE") == "9618.3"
    assert display_value(646.0799999999999, "DOUBLE") == "646.08"
    assert display_value(1 / 3, "DOUBLE") == "0.3333333333333"
    assert display_value(8262570.909999993, "DOUBLE") == "8262570.91"  # a SUM's noise
    assert display_value(1e301, "DOUBLE") == "1e+301"
    assert display_value(-0.0, "DOUBLE") == "-0.0"
    assert display_value(float("nan"), "DOUBLE") == "nan"
    assert display_value(0.10000000149011612, "FLOAT") == "0.1"
    assert display_value(16777217.0, "FLOAT") == "16777217.0"  # not a FLOAT: as a double
    assert display_value(123456789.0, "DOUBLE") == "123456789.0"


def test_numbers_are_grouped_the_locales_way():
    from lantide.ui.sql.result_model import NumberLocale

    english, german = NumberLocale(",", "."), NumberLocale(".", ",")
    assert display_value(8262570.909999993, "DOUBLE", locale=english) == "8,262,570.91"
    assert display_value(8262570.909999993, "DOUBLE", locale=german) == "8.262.570,91"
    assert display_value(-1234.5, "DOUBLE", locale=english) == "-1,234.5"
    assert display_value(999.25, "DOUBLE", locale=english) == "999.25"
    assert display_value(1e301, "DOUBLE", locale=german) == "1e+301"
    import decimal

    assert display_value(decimal.Decimal("1234567.50"), "DECIMAL", locale=german) == (
        "1.234.567,50"
    )
    assert display_value(1234567, "BIGINT", locale=english) == "1234567"  # ids, years


def test_the_grid_shows_no_noise_and_copy_and_export_keep_every_digit(
    qtbot, app_services, tmp_path
):
    write_tab(app_services.workspace.root, "p", "numbers", SQL)
    tab = make_tab(qtbot, app_services, "numbers")
    run_and_wait(qtbot, tab, ok=True)
    model = tab.result.model
    shown = {
        model.headerData(c, Qt.Orientation.Horizontal): model.index(0, c).data()
        for c in range(model.columnCount())
    }
    assert shown["noisy"] == "0.3" and shown["total"] == "9,618.3"
    assert shown["single"] == "0.1" and shown["money"] == "12.50"
    assert shown["tiny"] == "0.000000100" and shown["huge"] == "1e+301"
    assert shown["third"] == "0.3333333333333"
    assert shown["summed"] == "8,262,570.91" and shown["orders"] == "1234567"
    # the whole value is one hover away
    noisy_col = [
        model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())
    ].index("noisy")
    assert "0.30000000000000004" in model.index(0, noisy_col).data(Qt.ItemDataRole.ToolTipRole)
    # copy keeps full precision
    grid = tab.result.grid
    selection = QItemSelection(model.index(0, 0), model.index(0, model.columnCount() - 1))
    grid.selectionModel().select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)
    grid.copy_selection(",")
    header, row = list(csv.reader(io.StringIO(QApplication.clipboard().text())))
    copied = dict(zip(header, row, strict=True))
    assert copied["noisy"] == repr(0.1 + 0.2) and copied["total"] == repr(9618.2 + 0.1)
    assert copied["money"] == "12.50"
    assert copied["summed"] == "8262570.909999993"  # exact, ungrouped
    # export keeps full precision
    target = tmp_path / "numbers.csv"
    with qtbot.waitSignal(tab.result.sig_export_finished, timeout=30_000):
        tab.result.export_to(target)
    noisy, total = duckdb.sql(f"SELECT noisy, total FROM '{target}'").fetchall()[0]
    assert noisy == 0.1 + 0.2 and total == 9618.2 + 0.1
