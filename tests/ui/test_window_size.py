"""Opening a document or a SQL tab never makes the window wider than the analyst made it."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import open_document_tab


def assert_keeps_its_width(window, width: int) -> None:
    # What would widen the window is content that needs more room than it has: the
    # window's minimum, computed from the widgets as they are now (no waiting for a
    # resize that a slow machine has not got round to yet).
    assert window.minimumSizeHint().width() <= width
    assert window.minimumWidth() <= width
    QApplication.sendPostedEvents()  # the layout requests of what was just added
    assert window.width() == width


@pytest.mark.parametrize("width", [1360, 1300])
def test_the_first_document_does_not_widen_the_window(main_window, qtbot, width):
    window = main_window
    window.resize(width, 760)
    qtbot.waitUntil(lambda: window.width() == width, timeout=5_000)
    open_document_tab(qtbot, window, "plan")  # its text is loaded and shown
    assert_keeps_its_width(window, width)
    tab = window.open_tab("sql", "q3-churn", "clean_orders")
    qtbot.waitUntil(lambda: not tab.editor.isReadOnly(), timeout=15_000)  # loaded
    assert_keeps_its_width(window, width)


LONG = (
    "Registered /home/analyst/data/very/long/path/" + "nested_folder/" * 20 + "orders.parquet "
    "(120,000 rows) and refreshed the cached tables of every project in the workspace"
)


@pytest.mark.parametrize("width", [1360, 1024])
def test_a_long_status_message_does_not_widen_the_window(main_window, qtbot, width):
    window = main_window
    window.resize(width, 700)
    qtbot.waitUntil(lambda: window.width() == width, timeout=5_000)
    for level in ("info", "warning", "error"):
        window.services.post_message(f"{level}: {LONG}", level)
        assert_keeps_its_width(window, width)
    status = window.status.message_label
    assert status.text() == f"error: {LONG}"  # the whole text stays, for the tooltip
    assert status.width() < status.fontMetrics().horizontalAdvance(LONG)  # shown elided
    assert status.toolTip() == f"error: {LONG}"
