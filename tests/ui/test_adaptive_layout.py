"""A small window gives the centre priority: the docks give up room first, the Plan's
preview goes below its editor, tab titles stay readable, no button or label is clipped,
and a SQL tab's grid gets at least as much height as its editor."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from lantide.ui.adaptive_layout import (
    CENTRE_MIN_WIDTH,
    TAB_TITLE_MIN_CHARS,
    give_back,
    share_shortfall,
)
from lantide.ui.documents.document_tab import PREVIEW_BESIDE_MIN_WIDTH
from tests.ui.conftest import open_document_tab
from tests.ui.text_fit import clipped_widgets


def _resize(qtbot, window, width: int, height: int) -> None:
    window.resize(width, height)
    _settle(qtbot, window)


def _settle(qtbot, window) -> None:
    """The docks adapt after the main window's own layout; wait until nothing moves."""
    last = None
    for _ in range(20):
        qtbot.wait(100)
        now = (window.size(), window.centralWidget().geometry())
        if now == last:
            break
        last = now


def _open_sql(qtbot, window, name: str = "q3_churn_by_region"):
    tab = window.open_tab("sql", "q3-churn", name)
    qtbot.waitUntil(lambda: not tab.editor.isReadOnly(), timeout=15_000)
    return tab


@pytest.mark.parametrize(
    "sizes,minimums,shortfall,expected",
    [
        ([300, 400], [150, 200], 150, [236, 314]),  # in proportion to what each can spare
        ([300, 400], [150, 200], 1000, [150, 200]),  # never below a minimum
        ([300, 400], [300, 200], 100, [300, 300]),  # one at its minimum: the other gives
        ([300, 400], [150, 200], 0, [300, 400]),
    ],
)
def test_share_shortfall(sizes, minimums, shortfall, expected):
    assert share_shortfall(sizes, minimums, shortfall) == expected


def test_give_back_returns_room_up_to_what_was_wanted():
    assert give_back([150, 200], [270, 420], 1000) == [270, 420]
    assert give_back([150, 200], [270, 420], 0) == [150, 200]
    assert sum(give_back([150, 200], [270, 420], 100)) == 450


def test_at_1024x700_the_plan_keeps_the_centre_and_nothing_is_clipped(qtbot, main_window):
    window = main_window
    plan = open_document_tab(qtbot, window, "plan")
    _resize(qtbot, window, 1024, 700)
    assert (window.width(), window.height()) == (1024, 700)  # it did not widen itself
    assert window.centralWidget().width() >= CENTRE_MIN_WIDTH - 20
    assert window.chat_dock.width() < 420 and window.explorer_dock.width() < 270
    # The preview sits below the editor and the editor shows whole words.
    assert plan.text_splitter.orientation() == Qt.Orientation.Vertical
    fm = plan.editor.fontMetrics()
    assert plan.editor.viewport().width() >= fm.horizontalAdvance("Which regions lost the m")
    assert clipped_widgets(window) == []


def test_the_docks_get_their_room_back_when_the_window_grows(qtbot, main_window):
    window = main_window
    open_document_tab(qtbot, window, "plan")
    _resize(qtbot, window, 1440, 900)
    wide_chat = window.chat_dock.width()
    _resize(qtbot, window, 1024, 700)
    assert window.chat_dock.width() < wide_chat
    _resize(qtbot, window, 1440, 900)
    qtbot.waitUntil(lambda: window.chat_dock.width() >= wide_chat - 30, timeout=3000)
    plan = window.tabs.currentWidget()
    window.chat_dock.hide()  # room enough: the preview goes back beside the editor
    qtbot.waitUntil(
        lambda: plan.text_splitter.orientation() == Qt.Orientation.Horizontal, timeout=5_000
    )
    assert plan.text_splitter.width() >= PREVIEW_BESIDE_MIN_WIDTH


def test_a_sql_tab_with_an_error_fits_1024x700(qtbot, main_window):
    window = main_window
    tab = _open_sql(qtbot, window)
    _resize(qtbot, window, 1024, 700)
    done = []
    tab.sig_run_finished.connect(done.append)
    tab.run()  # its upstream is not cached: an error banner above the result
    qtbot.waitUntil(lambda: bool(done), timeout=30_000)
    assert tab.banner.isVisible()
    # what would make the window grow is a minimum (with the banner) above its size
    minimum = window.minimumSizeHint()
    assert minimum.width() <= 1024 and minimum.height() <= 700, minimum
    _settle(qtbot, window)
    assert (window.width(), window.height()) == (1024, 700)
    assert clipped_widgets(window) == []


def _in_view(widget, bar) -> bool:
    """Shown on the toolbar, not moved into its overflow menu nor past its right end."""
    right = widget.mapTo(bar, widget.rect().topRight()).x()
    return widget.isVisible() and right < bar.width()


def test_at_1024x700_with_the_docks_the_sql_toolbar_keeps_the_purpose_and_picker(
    qtbot, main_window
):
    window = main_window
    tab = _open_sql(qtbot, window, "clean_orders")
    _resize(qtbot, window, 1024, 700)
    assert window.explorer_dock.isVisible() and window.chat_dock.isVisible()
    bar, edit, picker = tab.toolbar, tab.purpose_edit, tab.connection_picker
    assert _in_view(picker, bar) and picker.currentText() == "DuckDB"
    assert _in_view(edit, bar)
    assert edit.width() >= edit.fontMetrics().horizontalAdvance(edit.placeholderText()) + 16
    # Run and Source Run are icons here; their names stay in the tooltip and for a reader
    for action in (tab.run_action, tab.source_run_action):
        button = bar.widgetForAction(action)
        assert _in_view(button, bar) and button.accessibleName() == action.text()
        assert action.text() in action.toolTip()
    # a purpose near its limit (its count shown) and a run's outcome push nothing out
    done = []
    tab.sig_run_finished.connect(done.append)
    edit.setText("churn by region for the q3 review")
    assert tab.purpose_count.isVisible()
    tab.run()
    qtbot.waitUntil(lambda: bool(done), timeout=30_000)
    assert "rows in" in tab.status_label.text()
    tab._busy_action.setVisible(True)  # as while a run goes on
    _settle(qtbot, window)
    for widget in (picker, edit, tab.purpose_count, tab.busy, tab.status_label):
        assert _in_view(widget, bar), widget
    assert clipped_widgets(window) == []
    # a long connection name keeps the picker's width: its start and "…", whole in the tip
    width = picker.width()
    picker.set_connections(["sales_warehouse_eu"])
    picker.show_connection("sales_warehouse_eu")
    _settle(qtbot, window)
    assert picker.width() == width and _in_view(edit, bar)
    assert picker.shown_text().endswith("…") and "sales_warehouse_eu" in picker.toolTip()
    # with room again the buttons show their words
    _resize(qtbot, window, 1440, 900)
    run_button = bar.widgetForAction(tab.run_action)
    assert run_button.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon
    assert _in_view(edit, bar) and _in_view(tab.status_label, bar)


def test_at_1360x840_the_result_grid_gets_at_least_the_editors_height(qtbot, main_window):
    window = main_window
    _resize(qtbot, window, 1360, 840)
    tab = _open_sql(qtbot, window)
    _settle(qtbot, window)
    grid = tab.result.grid.viewport()
    assert grid.height() >= tab.editor.height(), (grid.height(), tab.editor.height())


def test_tab_titles_keep_a_readable_part_in_a_narrow_window(qtbot, main_window):
    window = main_window
    for name in ("clean_orders", "customer_quarters", "q3_churn_by_region"):
        _open_sql(qtbot, window, name)
    open_document_tab(qtbot, window, "plan")
    open_document_tab(qtbot, window, "report")
    _resize(qtbot, window, 1024, 700)
    bar = window.tabs.tabBar()
    fm = bar.fontMetrics()
    for i in range(bar.count()):
        text = bar.tabText(i)
        shown = min(len(text), TAB_TITLE_MIN_CHARS)
        assert bar.tabRect(i).width() >= fm.horizontalAdvance(text[:shown]), text


def test_a_tool_cards_long_sql_is_elided_not_cut_in_a_narrow_chat(qtbot):
    from lantide.ui.chat.tool_card import ToolCardWidget

    card = ToolCardWidget(
        "c1",
        "run_query",
        {"sql": "SELECT region, count(*) AS customers\nFROM customers GROUP BY region"},
    )
    qtbot.addWidget(card)
    card.resize(220, 60)
    card.show()
    qtbot.waitExposed(card)
    assert card.gist_label.text() == "SELECT region, count(*) AS customers"
    assert card.gist_label.shown_text().endswith("…")
    assert clipped_widgets(card) == []
