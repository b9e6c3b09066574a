"""Sorting the result grid by clicking a column header: DuckDB sorts (``fetch_rows`` with
``order_by``), the grid pages the sorted 1.5-million-row result as before, off the UI
thread, and a third click brings back the result's own order."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QItemSelection, QItemSelectionModel, QPoint, Qt
from PySide6.QtWidgets import QApplication

from lantide.ui.sql.result_model import PagedResultModel
from tests.ui.conftest_data import BIG_ROWS
from tests.ui.test_sql_tab import make_tab, run_and_wait

AMOUNT, BUCKET = 2, 4
GROUP = BIG_ROWS // 1000  # rows per amount value: amount = (id % 1000) * 1.25, DECIMAL


def click_header(qtbot, grid, column: int) -> None:
    header = grid.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))


def rows_at(qtbot, grid, model, first: int, count: int = 5) -> list[list[str]]:
    grid.scrollTo(model.index(first, 0), grid.ScrollHint.PositionAtTop)
    for row in (first, first + count - 1):
        qtbot.waitUntil(lambda r=row: model.is_loaded(r), timeout=20_000)
    return [
        [model.index(r, c).data() for c in range(model.columnCount())]
        for r in range(first, first + count)
    ]


def fetches_running(services) -> list:
    return [w for w in services.workers.running if w.name.startswith("fetch rows")]


@pytest.mark.slow
def test_clicking_a_header_pages_the_sorted_table_from_duckdb(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    grid, model = tab.result.grid, tab.result.model
    header = grid.horizontalHeader()
    assert not header.isSortIndicatorShown()

    click_header(qtbot, grid, AMOUNT)
    assert model.order_by == [("amount", "asc")]
    assert header.isSortIndicatorShown() and header.sortIndicatorSection() == AMOUNT
    assert not model.is_loaded(0)  # the UI thread did not wait: the sorted page is coming
    assert "sorted by amount ascending" in tab.result.summary.text()
    top = rows_at(qtbot, grid, model, 0)
    assert [r[AMOUNT] for r in top] == ["0.00"] * 5
    assert all(int(r[0]) % 1000 == 0 for r in top)
    for first in (1_000_000, 737_777, BIG_ROWS - 5):  # deep pages, sorted as well
        rows = rows_at(qtbot, grid, model, first)
        expected = [f"{(r // GROUP) * 1.25:,.2f}" for r in range(first, first + 5)]
        assert [r[AMOUNT] for r in rows] == expected
        assert len({r[0] for r in rows}) == 5  # no row twice
    assert len(model.loaded_blocks) <= 96

    click_header(qtbot, grid, AMOUNT)
    assert model.order_by == [("amount", "desc")]
    top = rows_at(qtbot, grid, model, 0)
    assert [r[AMOUNT] for r in top] == ["1,248.75"] * 5
    # a copy of rows not loaded follows the order shown
    grid.selectionModel().select(
        QItemSelection(model.index(500_000, AMOUNT), model.index(500_002, AMOUNT)),
        QItemSelectionModel.SelectionFlag.Select,
    )
    with qtbot.waitSignal(grid.sig_copy_finished, timeout=20_000):
        grid.copy_selection("\t", header=False)
    assert QApplication.clipboard().text().split() == [f"{(999 - 500_000 // GROUP) * 1.25:.2f}"] * 3

    click_header(qtbot, grid, AMOUNT)
    assert model.order_by is None and not header.isSortIndicatorShown()
    assert "sorted" not in tab.result.summary.text()
    assert [r[0] for r in rows_at(qtbot, grid, model, 0)] == ["0", "1", "2", "3", "4"]
    assert [r[0] for r in rows_at(qtbot, grid, model, 900_000)] == [
        str(i) for i in range(900_000, 900_005)
    ]


def test_nulls_sort_last_both_ways_and_late_pages_of_an_old_order_are_dropped(
    qtbot, app_services, monkeypatch
):
    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    grid, model = tab.result.grid, tab.result.model
    # the page of the first order asked for is held back until the last order's pages show
    query, let_go = app_services.query, threading.Event()
    fetch_rows = query.fetch_rows

    def late_for_amount(relation, offset, limit, order_by=None):
        if order_by and order_by[0][0] == "amount":
            assert let_go.wait(60)
        return fetch_rows(relation, offset, limit, order_by=order_by)

    monkeypatch.setattr(query, "fetch_rows", late_for_amount)
    try:
        grid.sort_by(AMOUNT, Qt.SortOrder.DescendingOrder)
        qtbot.waitUntil(lambda: len(fetches_running(app_services)) == 1, timeout=10_000)
        # two more orders at once: only the last one's pages may show
        grid.sort_by(0, Qt.SortOrder.DescendingOrder)
        grid.sort_by(BUCKET, Qt.SortOrder.DescendingOrder)
        assert model.order_by == [("bucket", "desc")]
        top = rows_at(qtbot, grid, model, 0, 3)
        assert [r[BUCKET] for r in top] == ["6", "6", "6"]
        bottom = rows_at(qtbot, grid, model, BIG_ROWS - 3, 3)
        assert [r[BUCKET] for r in bottom] == ["NULL"] * 3
    finally:
        let_go.set()  # the old order's page arrives now, after the new order's
    # every page fetch has delivered (the pool forgets a worker after its result has been
    # handed to the model): the late page has landed, and must have been dropped
    qtbot.waitUntil(lambda: not fetches_running(app_services), timeout=20_000)
    assert [r[BUCKET] for r in rows_at(qtbot, grid, model, 0, 3)] == ["6", "6", "6"]

    grid.sort_by(BUCKET, Qt.SortOrder.AscendingOrder)
    assert [r[BUCKET] for r in rows_at(qtbot, grid, model, 0, 3)] == ["0", "0", "0"]
    assert [r[BUCKET] for r in rows_at(qtbot, grid, model, BIG_ROWS - 3, 3)] == ["NULL"] * 3
    # a new result starts in its own order
    run_and_wait(qtbot, tab, ok=True)
    assert tab.result.model.order_by is None
    assert not grid.horizontalHeader().isSortIndicatorShown()


def test_a_preview_without_a_table_is_sorted_in_memory(qtbot, app_services):
    columns = [{"name": "region", "type": "VARCHAR"}, {"name": "revenue", "type": "DOUBLE"}]
    rows = [("north", 120.5), ("east", None), ("south", 80.25), ("west", 42.0)]
    model = PagedResultModel(columns, 4, None, app_services.workers, preview=rows)
    order = []
    model.sig_order_changed.connect(order.append)
    model.sort(1, Qt.SortOrder.DescendingOrder)
    assert [model.index(r, 0).data() for r in range(4)] == ["north", "south", "west", "east"]
    model.sort(1, Qt.SortOrder.AscendingOrder)
    assert [model.index(r, 1).data() for r in range(4)] == ["42.0", "80.25", "120.5", "NULL"]
    model.sort(-1)
    assert [model.index(r, 0).data() for r in range(4)] == ["north", "east", "south", "west"]
    assert order == [[("revenue", "desc")], [("revenue", "asc")], []]
