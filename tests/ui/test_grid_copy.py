"""Copying from the result grid as CSV, Markdown and SQL VALUES (the selection or the rows
on screen), and the whole filtered result as CSV under a cap, from a real cached table."""

from __future__ import annotations

import csv
import io

import duckdb
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtWidgets import QApplication

from lantide.ui.sql import result_grid
from lantide.ui.sql.result_grid import MARKDOWN, SQL_VALUES
from tests.ui.conftest_data import write_tab
from tests.ui.test_sql_tab import make_tab, run_and_wait

SQL = """SELECT i AS id,
       CASE i WHEN 1 THEN 'a, "b" | c' WHEN 2 THEN 'two
lines' WHEN 3 THEN 'it''s' ELSE 'row ' || i END AS note,
       CASE WHEN i = 2 THEN NULL ELSE DATE '2024-01-01' + CAST(i AS INTEGER) END AS day
FROM range(5000) r(i)
"""


def copied(qtbot, grid, action) -> str:
    with qtbot.waitSignal(grid.sig_copy_finished, timeout=20_000):
        action()
    return QApplication.clipboard().text()


def test_copy_formats_of_the_selection_and_the_rows_on_screen(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "notes", SQL)
    tab = make_tab(qtbot, app_services, "notes")
    run_and_wait(qtbot, tab, ok=True)
    grid, model = tab.result.grid, tab.result.model
    grid.selectionModel().select(
        QItemSelection(model.index(1, 0), model.index(3, 2)),
        QItemSelectionModel.SelectionFlag.ClearAndSelect,
    )
    text = copied(qtbot, grid, lambda: grid.copy_selection(","))
    assert list(csv.reader(io.StringIO(text))) == [
        ["id", "note", "day"],
        ["1", 'a, "b" | c', "2024-01-02"],
        ["2", "two\nlines", ""],
        ["3", "it's", "2024-01-04"],
    ]
    text = copied(qtbot, grid, lambda: grid.copy_selection(MARKDOWN))
    assert text.splitlines() == [
        "| id | note | day |",
        "| --- | --- | --- |",
        '| 1 | a, "b" \\| c | 2024-01-02 |',
        "| 2 | two<br>lines |  |",
        "| 3 | it's | 2024-01-04 |",
    ]
    text = copied(qtbot, grid, lambda: grid.copy_selection(SQL_VALUES))
    back = duckdb.connect().execute(text.rstrip().rstrip(";")).fetchall()
    assert [(r[0], r[1], None if r[2] is None else str(r[2])) for r in back] == [
        (1, 'a, "b" | c', "2024-01-02"),
        (2, "two\nlines", None),
        (3, "it's", "2024-01-04"),
    ]

    # the rows on screen, every column, wherever the grid is scrolled to
    grid.scrollTo(model.index(4000, 0), grid.ScrollHint.PositionAtTop)
    qtbot.waitUntil(lambda: model.is_loaded(grid.rowAt(0)), timeout=20_000)
    first, last = grid.rowAt(0), grid.rowAt(grid.viewport().height() - 1)
    text = copied(qtbot, grid, lambda: grid.copy_selection(",", visible=True))
    ids = [int(r[0]) for r in list(csv.reader(io.StringIO(text)))[1:]]
    assert ids == list(range(first, last + 1)) and first >= 3990


def test_the_whole_filtered_result_as_csv_and_the_cap(qtbot, app_services, monkeypatch):
    write_tab(app_services.workspace.root, "p", "notes", SQL)
    tab = make_tab(qtbot, app_services, "notes")
    run_and_wait(qtbot, tab, ok=True)
    panel, model = tab.result, tab.result.model
    panel.apply_filters([{"column": "note", "op": "contains", "value": "row 49"}])
    qtbot.waitUntil(lambda: bool(model.filters) and not model.counting, timeout=20_000)
    panel.grid.sort_by(0, Qt.SortOrder.DescendingOrder)
    QApplication.clipboard().clear()
    panel.copy_result_csv()
    qtbot.waitUntil(lambda: QApplication.clipboard().text() != "", timeout=20_000)
    rows = list(csv.reader(io.StringIO(QApplication.clipboard().text())))
    assert rows[0] == ["id", "note", "day"]
    assert [int(r[0]) for r in rows[1:]] == sorted(
        [i for i in range(4, 5000) if str(i).startswith("49")], reverse=True
    )

    monkeypatch.setattr(result_grid, "MAX_COPY_ROWS", 50)
    monkeypatch.setattr("lantide.ui.sql.result_panel.MAX_COPY_ROWS", 50)
    QApplication.clipboard().setText("before")
    with qtbot.waitSignal(panel.sig_problem_reported, timeout=20_000) as problem:
        panel.copy_result_csv()
    assert "111 rows are too many for the clipboard (the limit is 50)" in problem.args[0]
    assert "Export" in problem.args[0]
    assert QApplication.clipboard().text() == "before"
