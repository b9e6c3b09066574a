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


def test_the_workspace_name_is_shown_as_typed(qtbot, shell_services, sample_workspace):
    """The page is plain text: a name with markup characters is not read as HTML (it was a
    rich-text heading)."""
    import json

    from lantide.ui.welcome import WelcomeWidget

    meta = sample_workspace / ".lantide" / "workspace.json"
    data = json.loads(meta.read_text(encoding="utf-8"))
    data["name"] = "Sales <b>2026</b> & co"
    meta.write_text(json.dumps(data), encoding="utf-8")
    page = WelcomeWidget(shell_services(query=False, watcher=False))
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    title = page.title
    assert title.text() == "Sales <b>2026</b> & co"
    # drawn as typed: as wide as the plain string in the title's (bold, larger) font
    assert title.sizeHint().width() >= title.fontMetrics().horizontalAdvance(title.text())
    assert title.font().bold() and title.font().pointSizeF() > page.font().pointSizeF()
