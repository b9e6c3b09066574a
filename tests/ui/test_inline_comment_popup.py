"""The inline comment box stays whole and on screen when the editor is narrow."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect

from tests.ui.conftest import open_document_tab
from tests.ui.test_document_tab import _select


def _visible_in_window(widget) -> bool:
    window = widget.window()
    top_left = widget.mapTo(window, QPoint(0, 0))
    return window.rect().contains(QRect(top_left, widget.size()))


def test_the_comment_box_fits_a_narrow_editor(main_window, qtbot):
    tab = open_document_tab(qtbot, main_window)
    tab.splitter.setSizes([230, 600, 400])  # a narrow editor column
    qtbot.waitUntil(lambda: tab.editor.viewport().width() < 300, timeout=5_000)
    _select(tab, "net revenue: gross minus discounts and refunds")
    main_window.act_annotate.trigger()
    box = tab.comment_box
    assert box.isVisible()
    for widget in (box, box.ok_button, box.edit):
        assert _visible_in_window(widget), widget
    # the whole box, its Comment button included, is inside the document tab
    tab_rect = QRect(QPoint(0, 0), tab.size())
    for widget in (box, box.ok_button):
        assert tab_rect.contains(QRect(widget.mapTo(tab, QPoint(0, 0)), widget.size()))
    assert box.ok_button.visibleRegion().boundingRect().size() == box.ok_button.size()


def test_the_comment_box_at_the_bottom_opens_above_the_selection(main_window, qtbot):
    tab = open_document_tab(qtbot, main_window)
    cursor = tab.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    cursor.movePosition(cursor.MoveOperation.StartOfBlock, cursor.MoveMode.MoveAnchor)
    tab.editor.setTextCursor(cursor)
    tab.editor.ensureCursorVisible()
    _select(tab, tab.editor.toPlainText().strip().splitlines()[-1][-12:])
    main_window.act_annotate.trigger()
    box = tab.comment_box
    assert box.isVisible() and _visible_in_window(box)
    assert box.ok_button.visibleRegion().boundingRect().size() == box.ok_button.size()
