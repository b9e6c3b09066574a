"""Opening a document or a SQL tab never makes the window wider than the analyst made it."""

from __future__ import annotations

import pytest

from tests.ui.conftest import open_document_tab


@pytest.mark.parametrize("width", [1360, 1300])
def test_the_first_document_does_not_widen_the_window(main_window, qtbot, width):
    window = main_window
    window.resize(width, 760)
    qtbot.waitUntil(lambda: window.width() == width, timeout=5_000)
    open_document_tab(qtbot, window, "plan")
    qtbot.wait(200)
    assert window.width() == width
    window.open_tab("sql", "q3-churn", "clean_orders")
    qtbot.wait(200)
    assert window.width() == width
