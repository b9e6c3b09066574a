"""The ledger panel: live steps of the chat's conversation selected from the chat's step
links, and the query history of SQL tab runs, persisted and filterable."""

from __future__ import annotations

import re

import pytest

from lantide.ui.chat.chat_panel import ChatPanel
from lantide.ui.chat.ledger_panel import LedgerPanel
from lantide.ui.chat.tool_card import ToolCardWidget
from lantide.ui.sql.sql_tab import SqlTabWidget
from tests.fakes.openai_server import FakeOpenAIServer, ToolCall, Turn
from tests.ui.conftest_data import write_tab


@pytest.fixture
def model_server(monkeypatch):
    with FakeOpenAIServer(background_reply="Ledger test") as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


def test_steps_appear_live_and_chat_links_select_them(qtbot, app_services, model_server):
    model_server.script(
        Turn(
            tool_calls=[
                ToolCall(
                    "run_query",
                    {"sql": "SELECT count(*) AS n FROM small", "purpose": "count regions"},
                )
            ]
        ),
        Turn(
            tool_calls=[
                ToolCall(
                    "run_query",
                    {"sql": "SELECT max(revenue) AS top FROM small", "purpose": "top revenue"},
                )
            ]
        ),
        Turn(
            text="Four regions, top revenue 120.5.\n[[QUERY_STEP]] counted regions: 4\n"
            "[[QUERY_STEP]] top revenue: 120.5"
        ),
    )
    ledger = LedgerPanel(app_services)
    chat = ChatPanel(app_services)
    for widget in (ledger, chat):
        qtbot.addWidget(widget)
        widget.show()
    with qtbot.waitSignal(
        chat.bridge.sig_turn_running,
        timeout=30_000,
        check_params_cb=lambda running: running is False,
    ):
        chat.input.setPlainText("How many regions, and the top revenue?")
        chat.send_typed()
    assert ledger.conversation_id == chat.bridge.conversation_id
    qtbot.waitUntil(lambda: ledger.step_tree.topLevelItemCount() == 2, timeout=5000)
    purposes = [ledger.step_tree.topLevelItem(i).text(3) for i in range(2)]
    summaries = [ledger.step_tree.topLevelItem(i).text(4) for i in range(2)]
    assert purposes == ["count regions", "top revenue"]
    # the conversation's title, named in the background, reaches the ledger's picker
    qtbot.waitUntil(lambda: ledger.conversation_box.currentText() == "Ledger test", timeout=10_000)
    assert summaries == ["counted regions: 4", "top revenue: 120.5"]
    # issue 30 item 3: the panel shows each step's real id (the one citations use), the
    # same the chat's tool cards carry, not a row number
    shown = [ledger.step_tree.topLevelItem(i).text(0) for i in range(2)]
    cards = chat.transcript.widgets(ToolCardWidget)
    assert shown == [card.step_id for card in cards[:2]]
    assert all(re.fullmatch(r"[0-9a-f]{12}", step_id) for step_id in shown)

    second = chat.transcript.widgets(ToolCardWidget)[1]
    second.step_link.linkActivated.emit("step")
    selected = ledger.current_step()
    assert selected["step_id"] == second.step_id and selected["purpose"] == "top revenue"
    details = ledger.step_details.toPlainText()
    assert "SELECT max(revenue) AS top FROM small" in details
    assert "top revenue: 120.5" in details

    # a reopened panel (next start) reads the same ledger from disk
    fresh = LedgerPanel(app_services)
    qtbot.addWidget(fresh)
    fresh.load_ledger(chat.bridge.conversation_id)
    qtbot.waitUntil(lambda: fresh.step_tree.topLevelItemCount() == 2, timeout=5000)
    assert fresh.step_tree.topLevelItem(1).text(4) == "top revenue: 120.5"


def test_query_history_records_runs_and_survives_a_restart(qtbot, app_services):
    write_tab(app_services.workspace.root, "p", "ok_tab", "SELECT * FROM small\n")
    write_tab(app_services.workspace.root, "p", "bad_tab", "SELECT nope FROM small\n")
    ledger = LedgerPanel(app_services)
    qtbot.addWidget(ledger)
    for name in ("ok_tab", "bad_tab"):
        tab = SqlTabWidget(app_services, "p", name)
        qtbot.addWidget(tab)
        qtbot.waitUntil(lambda t=tab: not t.editor.isReadOnly(), timeout=10_000)
        with qtbot.waitSignal(tab.sig_run_finished, timeout=30_000):
            tab.run()
    qtbot.waitUntil(lambda: ledger.history_view.history_tree.topLevelItemCount() == 2, timeout=5000)
    newest = ledger.history_view.history_tree.topLevelItem(0)
    # words first, the code after (issue 30 item 11)
    assert newest.text(1) == "p/bad_tab" and newest.text(2).startswith("error: ")
    assert newest.text(2).endswith("(BIND_ERROR)") and len(newest.text(2)) > 30
    assert newest.toolTip(2).strip() and "BIND_ERROR" not in newest.text(2)[:20]
    oldest = ledger.history_view.history_tree.topLevelItem(1)
    assert oldest.text(1) == "p/ok_tab" and oldest.text(2) == "ok" and oldest.text(3) == "4"

    ledger.history_view.history_filter.setText("nope")
    assert ledger.history_view.history_tree.topLevelItemCount() == 1
    with qtbot.waitSignal(app_services.sig_open_requested, timeout=2000) as blocker:
        ledger.history_view.history_tree.itemDoubleClicked.emit(
            ledger.history_view.history_tree.topLevelItem(0), 0
        )
    assert blocker.args[0] == {"kind": "sql", "project": "p", "name": "bad_tab"}

    from lantide.query.history import read_history

    qtbot.waitUntil(lambda: len(read_history(app_services.workspace)) == 2, timeout=5000)
    restarted = LedgerPanel(app_services)
    qtbot.addWidget(restarted)
    qtbot.waitUntil(
        lambda: restarted.history_view.history_tree.topLevelItemCount() == 2, timeout=5000
    )
    restarted.history_view.history_tree.setCurrentItem(
        restarted.history_view.history_tree.topLevelItem(0)
    )
    assert "SELECT nope FROM small" in restarted.history_view.history_details.toPlainText()
    assert "nope" in restarted.history_view.history_details.toPlainText()


def test_a_summary_stating_numbers_not_in_its_result_says_so_in_the_panel():
    from lantide.ui.chat.ledger_panel import summary_text

    step = {
        "summary": "order count — 120,000 orders",
        "summary_status": "mismatch",
        "summary_unmatched": ["120,000"],
    }
    assert summary_text(step) == "order count — 120,000 orders (not in its result: 120,000)"
    assert summary_text({**step, "summary_status": "parsed"}) == step["summary"]
