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


def test_the_expanded_card_shows_the_agents_sql_formatted(qtbot):
    sql = "select region, sum(amount) as revenue from sales -- paid only\ngroup by region"
    card = ToolCardWidget("c2", "run_query", {"sql": sql})
    qtbot.addWidget(card)
    card.set_expanded(True)
    shown = card.body.toPlainText()
    assert "SELECT\n  region,\n  SUM(amount) AS revenue\nFROM sales -- paid only\nGROUP BY" in shown
    assert card.gist_label.text() == "select region, sum(amount) as revenue from sales -- paid only"


def test_sql_that_cannot_be_formatted_is_shown_as_the_agent_wrote_it(qtbot):
    sql = "select a from t where a between -- low end\n 1 and 2"
    card = ToolCardWidget("c3", "run_query", {"sql": sql})
    qtbot.addWidget(card)
    card.set_expanded(True)
    assert sql in card.body.toPlainText()
