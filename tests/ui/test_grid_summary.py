"""The selection's quick summary below the grid: a whole column of a 1.5-million-row cached
table summed by DuckDB (over the filtered rows once filtered), a few cells from the loaded
values, text and dates counted and bounded."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel

from tests.ui.conftest_data import BIG_ROWS
from tests.ui.test_grid_filters import AMOUNT, DAY, NAME
from tests.ui.test_sql_tab import make_tab, run_and_wait


def select(grid, model, top: int, left: int, bottom: int, right: int) -> None:
    grid.selectionModel().select(
        QItemSelection(model.index(top, left), model.index(bottom, right)),
        QItemSelectionModel.SelectionFlag.ClearAndSelect,
    )


def summary_after(qtbot, panel, action) -> str:
    panel.selection_summary.setText("stale")
    action()
    qtbot.waitUntil(
        lambda: panel.selection_summary.text() not in ("stale", "", "Summing…"), timeout=30_000
    )
    return panel.selection_summary.text()


def test_whole_columns_are_summed_by_duckdb_and_cells_from_the_grid(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    panel, grid, model = tab.result, tab.result.grid, tab.result.model
    assert panel.selection_summary.text() == ""

    # amount = (i % 1000) * 1.25: each value 1,500 times
    text = summary_after(qtbot, panel, lambda: grid.selectColumn(AMOUNT))
    assert text == (
        f"Count {BIG_ROWS:,} · Sum 936,562,500.00 · Avg 624.375 · Min 0.00 · Max 1,248.75"
    )
    label = panel.selection_summary  # beside the Grid and Chart tabs, never over them
    qtbot.waitUntil(lambda: label.isVisible() and label.width() > 100, timeout=5_000)
    tabs = panel.views.tabBar()
    assert label.geometry().left() >= tabs.geometry().right()
    assert not any(model.is_loaded(r) for r in (700_000, 1_400_000))  # not through Python

    # the header's menu selects a column too, as Ctrl+Space does from a cell
    menu = grid.build_header_menu(DAY)
    select_day = next(a for a in menu.actions() if a.text().startswith("Select day"))
    text = summary_after(qtbot, panel, select_day.trigger)
    assert text == f"Count {BIG_ROWS:,} · Min 2024-01-01 · Max 2024-12-30"

    # a few loaded cells: ids, names and amounts of rows 0-2 are only counted (text and
    # numbers); the amounts alone are summed, the names bounded
    text = summary_after(qtbot, panel, lambda: select(grid, model, 0, 0, 2, AMOUNT))
    assert text == "Count 9"
    text = summary_after(qtbot, panel, lambda: select(grid, model, 0, AMOUNT, 2, AMOUNT))
    assert text == "Count 3 · Sum 3.75 · Avg 1.25 · Min 0.00 · Max 2.50"
    text = summary_after(qtbot, panel, lambda: select(grid, model, 0, NAME, 1, NAME))
    assert text == "Count 2 · Min customer 0 · Max customer 1"

    # once filtered, a whole column is summed over the rows passing the filter
    panel.apply_filters([{"column": "amount", "op": "range", "low": "1240"}])
    qtbot.waitUntil(lambda: bool(model.filters) and not model.counting, timeout=30_000)
    text = summary_after(qtbot, panel, lambda: grid.selectColumn(AMOUNT))
    # amounts 1,240.00 .. 1,248.75: 8 values, 1,500 rows each
    assert text == "Count 12,000 · Sum 14,932,500.00 · Avg 1,244.375 · Min 1,240.00 · Max 1,248.75"


def test_a_column_selected_in_pieces_counts_as_whole_and_a_gap_does_not(qtbot, app_services):
    from PySide6.QtCore import QItemSelectionModel as Flags

    from lantide.ui.sql.result_grid import column_fully_selected

    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    grid, model = tab.result.grid, tab.result.model
    selection = grid.selectionModel()
    select(grid, model, 0, AMOUNT, 700_000, AMOUNT)
    assert not column_fully_selected(selection, AMOUNT)
    selection.select(
        QItemSelection(model.index(600_000, NAME), model.index(BIG_ROWS - 1, AMOUNT)),
        Flags.SelectionFlag.Select,
    )
    assert column_fully_selected(selection, AMOUNT)
    assert not column_fully_selected(selection, NAME) and not column_fully_selected(selection, DAY)
