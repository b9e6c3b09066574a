"""Column formats from the header's menu and the frozen first column: shown at once, kept
for the tab in .lantide/grid_state.json and back when the tab opens again; copy keeps
every digit; a broken state file is reported and left as it is."""

from __future__ import annotations

import json

from PySide6.QtCore import QItemSelection, QItemSelectionModel
from PySide6.QtWidgets import QApplication, QMenu

from lantide.workspace.layout import grid_state_path
from tests.ui.test_grid_filters import AMOUNT, DAY
from tests.ui.test_sql_tab import make_tab, run_and_wait


def action(menu: QMenu, *path: str):
    """The action at ``path`` (submenu titles, then the action's text) of ``menu``."""
    for title in path[:-1]:
        menu = next(a.menu() for a in menu.actions() if a.menu() and a.text() == title)
    return next(a for a in menu.actions() if a.text() == path[-1])


def test_formats_and_the_frozen_column_are_kept_for_the_tab(qtbot, app_services):
    tab = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, tab, ok=True)
    grid, model = tab.result.grid, tab.result.model
    cell = model.index(999, AMOUNT)
    grid.scrollTo(cell)
    qtbot.waitUntil(lambda: model.is_loaded(999), timeout=20_000)
    assert cell.data() == "1,248.75" and model.index(0, DAY).data() == "2024-01-01"

    action(grid.build_header_menu(AMOUNT), "Format amount", "Decimals", "0 (1)").trigger()
    assert cell.data() == "1,249"
    action(grid.build_header_menu(AMOUNT), "Format amount", "Thousands separators").trigger()
    assert cell.data() == "1249"
    action(grid.build_header_menu(DAY), "Format day", "Date format", "31.03.2024").trigger()
    assert model.index(0, DAY).data() == "01.01.2024"
    # the id column is a number: it gets decimals and separators; a text column no format
    assert action(grid.build_header_menu(1), "Format name", "No format for this type")
    # a copy keeps every digit, whatever the format shows
    grid.selectionModel().select(
        QItemSelection(cell, cell), QItemSelectionModel.SelectionFlag.ClearAndSelect
    )
    grid.copy_selection("\t")
    assert QApplication.clipboard().text() == "1248.75"

    assert not grid.first_column_frozen
    action(grid.build_header_menu(AMOUNT), "Freeze first column").trigger()
    frozen = grid.frozen_view
    assert frozen is not None and frozen.isVisible()
    assert frozen.width() == grid.columnWidth(0)
    assert frozen.model() is model and frozen.selectionModel() is grid.selectionModel()
    assert [frozen.isColumnHidden(c) for c in range(model.columnCount())] == [
        False,
        True,
        True,
        True,
        True,
    ]
    grid.horizontalScrollBar().setValue(grid.horizontalScrollBar().maximum())
    grid.verticalScrollBar().setValue(5000)
    assert (
        frozen.verticalScrollBar().value() == 5000
        and frozen.x() == grid.verticalHeader().width() + grid.frameWidth()
    )

    path = grid_state_path(app_services.workspace.root)
    qtbot.waitUntil(
        lambda: (
            path.exists()
            and json.loads(path.read_text())["tabs"]["p/all_big"].get("freeze_first") is True
        ),
        timeout=10_000,
    )
    assert json.loads(path.read_text())["tabs"]["p/all_big"]["columns"] == {
        "amount": {"decimals": 0, "thousands": False},
        "day": {"date": "dmy_dots"},
    }

    # the tab opened again shows the formats and the frozen column
    again = make_tab(qtbot, app_services, "all_big")
    run_and_wait(qtbot, again, ok=True)
    qtbot.waitUntil(lambda: again.result.grid.first_column_frozen, timeout=10_000)
    assert again.result.model.index(0, DAY).data() == "01.01.2024"
    action(again.result.grid.build_header_menu(DAY), "Format day", "Default format").trigger()
    assert again.result.model.index(0, DAY).data() == "2024-01-01"
    qtbot.waitUntil(
        lambda: "day" not in json.loads(path.read_text())["tabs"]["p/all_big"]["columns"],
        timeout=10_000,
    )

    # a renamed tab keeps its formats under its new name
    again.follow_rename("big renamed")
    qtbot.waitUntil(lambda: "p/big renamed" in json.loads(path.read_text())["tabs"], timeout=10_000)
    tabs = json.loads(path.read_text())["tabs"]
    assert "p/all_big" not in tabs and tabs["p/big renamed"]["freeze_first"] is True
    action(again.result.grid.build_header_menu(AMOUNT), "Format amount", "Default format").trigger()
    qtbot.waitUntil(
        lambda: not json.loads(path.read_text())["tabs"]["p/big renamed"]["columns"],
        timeout=10_000,
    )


def test_a_broken_state_file_is_reported_and_kept(qtbot, app_services):
    path = grid_state_path(app_services.workspace.root)
    path.write_text('{"tabs": [', encoding="utf-8")
    tab = make_tab(qtbot, app_services, "all_big")
    qtbot.waitUntil(lambda: "Column formats are not kept" in tab.banner.text(), timeout=10_000)
    assert "grid_state.json" in tab.banner.text()
    run_and_wait(qtbot, tab, ok=True)
    tab.result.set_column_format("amount", {"decimals": 1})
    assert tab.result.model.index(0, AMOUNT).data() == "0.0"  # shown, not written
    qtbot.wait(300)
    assert path.read_text() == '{"tabs": ['
