"""Tool cards as the analyst reads them: the header shows the call as written, expanded
cards show arguments and results as readable fields, and the agent's protocol words stay
with the agent."""

from __future__ import annotations

from PySide6.QtCore import Qt

from lantide.ui.chat.tool_card import ToolCardWidget


def test_the_header_shows_quotes_as_quotes(qtbot):
    card = ToolCardWidget(
        "c1", "run_query", {"sql": "SELECT * FROM orders WHERE status = 'shipped' AND a < b"}
    )
    qtbot.addWidget(card)
    card.resize(600, 80)
    card.show()
    label = card.gist_label
    assert label.text() == "SELECT * FROM orders WHERE status = 'shipped' AND a < b"
    assert label.textFormat() == Qt.TextFormat.PlainText  # shown as written, not as HTML
    assert "&#x27;" not in label.toolTip() and "&lt;" not in label.toolTip()
