"""The welcome page on a small screen: nothing is cut off at the right."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QScrollArea


def _rightmost_text_edge(page) -> int:
    """The right edge of the page's visible labels, in the scroll area's viewport."""
    viewport = page.findChild(QScrollArea).viewport()
    edges = [
        label.mapTo(viewport, label.rect().topRight()).x()
        for label in page.findChildren(QLabel)
        if label.isVisible() and label.text()
    ]
    return max(edges)


def test_narrow_welcome_page_stacks_its_columns_instead_of_clipping(qtbot, shell_services):
    from lantide.ui.welcome import WelcomeWidget

    page = WelcomeWidget(shell_services(query=False, watcher=False))
    qtbot.addWidget(page)
    page.resize(540, 640)  # the centre of a 1024x700 window with the docks open
    page.show()
    qtbot.waitExposed(page)

    def fits() -> bool:  # once the layout has settled
        return _rightmost_text_edge(page) <= page.findChild(QScrollArea).viewport().width()

    qtbot.waitUntil(fits, timeout=3_000)
    assert page.stacked and not page.findChild(QScrollArea).horizontalScrollBar().isVisible()
    page.resize(1000, 640)  # wide again: side by side
    qtbot.waitUntil(lambda: not page.stacked and fits(), timeout=3_000)
