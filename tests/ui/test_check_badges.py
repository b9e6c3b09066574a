"""Result checks as badges in the chat's tool card and the ledger panel: the code in its
severity's colour, a click opens the message and evidence. Real results from DuckDB on
the sample workspace."""

from __future__ import annotations

from lantide.ui.chat.ledger_panel import LedgerPanel
from lantide.ui.chat.tool_card import ToolCardWidget
from lantide.ui.theme import colors
from tests.ui.conftest_data import open_services

FAN_OUT_SQL = (
    "SELECT c.segment, count(*) AS customers FROM customers c "
    "JOIN orders o USING (customer_id) GROUP BY 1"
)


def test_tool_card_badges_open_the_check(qtbot, sample_workspace):
    services = open_services(qtbot, sample_workspace, watcher=False)
    try:
        result = services.query.run_query(FAN_OUT_SQL)
        clean = services.query.run_query("SELECT count(*) AS n FROM customers")
    finally:
        services.close()
        services.workspace.close()
    card = ToolCardWidget("call_1", "run_query", {"sql": FAN_OUT_SQL})
    qtbot.addWidget(card)
    card.show()
    card.set_result(True, result, 12)
    assert card.badges.isVisible()
    (badge,) = card.badges.buttons
    # words first; the code in the tooltip (issue 30 item 11)
    assert badge.text() == "Join repeats rows" and badge.toolTip().endswith("(JOIN_FAN_OUT)")
    assert colors().danger.name() in badge.styleSheet()
    assert not card.badges.detail.isVisible()
    badge.click()
    shown = card.badges.detail.text()
    assert card.badges.detail.isVisible() and "counts rows of customers" in shown
    assert shown.index("Join repeats rows") < shown.index("JOIN_FAN_OUT")
    assert "max_repeat" in shown and "customer_id" in shown  # the evidence
    badge.click()
    assert not card.badges.detail.isVisible()
    # a result without checks shows no badges
    other = ToolCardWidget("call_2", "run_query", {"sql": "SELECT count(*) AS n FROM customers"})
    qtbot.addWidget(other)
    other.show()
    other.set_result(True, clean, 3)
    assert not other.badges.isVisible() and other.badges.buttons == []


def test_ledger_panel_shows_check_badges_that_open(qtbot, sample_workspace):
    from lantide.agent.ledger import Ledger

    services = open_services(qtbot, sample_workspace, watcher=False)
    try:
        result = services.query.run_query(FAN_OUT_SQL)
        ledger = Ledger(services.workspace.lantide_dir / "ledger", "conv1")
        ledger.append(result["step"])
        ledger.append(services.query.run_query("SELECT count(*) AS n FROM customers")["step"])
        panel = LedgerPanel(services)
        qtbot.addWidget(panel)
        panel.show()
        panel.load_ledger("conv1")
        qtbot.waitUntil(lambda: panel.step_tree.topLevelItemCount() == 2, timeout=5000)
        first, second = (panel.step_tree.topLevelItem(i) for i in range(2))
        assert first.foreground(0).color().name() == colors().danger.name()
        assert "Join repeats rows (JOIN_FAN_OUT)" in first.toolTip(0)
        assert "Unresolved" not in second.toolTip(0)
        panel.step_tree.setCurrentItem(first)
        details = panel.step_details.toPlainText()
        assert "[Join repeats rows JOIN_FAN_OUT]" in details and "max_repeat" not in details
        from PySide6.QtCore import QUrl

        panel.step_details.anchorClicked.emit(QUrl("check:0"))
        opened = panel.step_details.toPlainText()
        assert "counts rows of customers" in opened and "max_repeat" in opened
        panel.step_details.anchorClicked.emit(QUrl("check:0"))
        assert "max_repeat" not in panel.step_details.toPlainText()
        panel.step_tree.setCurrentItem(second)
        assert "Checks:" not in panel.step_details.toPlainText()
    finally:
        services.close()
        services.workspace.close()
