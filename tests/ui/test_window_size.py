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
