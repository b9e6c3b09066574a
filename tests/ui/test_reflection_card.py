"""The review before reporting in the chat (a collapsible Reflection card, live and when a
conversation reopens) and the token budget in the status bar, against the scripted
OpenAI-compatible server with the real agent loop."""

from __future__ import annotations

import json

import pytest

from lantide.agent.reflection import CHECKLIST
from lantide.ui.chat.chat_messages import NoticeWidget, UserMessageWidget
from lantide.ui.chat.reflection_card import ReflectionCardWidget
from lantide.ui.status_bar import StatusBarWidget
from tests.fakes.openai_server import FakeOpenAIServer, ToolCall, Turn
from tests.ui.test_chat import SQL, make_panel, send_and_wait

FAIL = json.dumps(
    {
        "ok": False,
        "checklist": {
            i: {"ok": i != "filters", "note": "east has no revenue" if i == "filters" else "fine"}
            for i in CHECKLIST
        },
        "problems": ["east has a NULL revenue: say how it is counted"],
    }
)
PASS = json.dumps(
    {"ok": True, "checklist": {i: {"ok": True, "note": "fine"} for i in CHECKLIST}, "problems": []}
)


@pytest.fixture
def reviewing_server(monkeypatch):
    verdicts = [FAIL, PASS]

    def background(body):
        if "skeptical reviewer" in body["messages"][0]["content"]:
            return verdicts.pop(0)
        return "Revenue by region"

    with FakeOpenAIServer(background_reply=background) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        yield server


def test_reflection_cards_show_the_checklist_live_and_after_reopening(
    qtbot, app_services, reviewing_server
):
    app_services.focus_project("p")  # the app owns the focus the agent reads
    app_services.workspace.project("p").approve_plan()
    reviewing_server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": SQL, "purpose": "revenue by region"})]),
        Turn(text="[[QUERY_STEP]] revenue by region: north leads\n\nnorth leads with 120.5."),
        Turn(text="north leads with 120.5; east has no revenue recorded (NULL), left out."),
    )
    panel = make_panel(qtbot, app_services)
    send_and_wait(qtbot, panel, "Which region has the most revenue?")
    reviewing_server.assert_done()

    cards = panel.transcript.widgets(ReflectionCardWidget)
    assert [c.verdict_label.text() for c in cards] == ["found 1 problem", "passed"]
    assert "before the final answer" in cards[0].title_label.text()
    assert not cards[0].body.isVisible()  # collapsed until asked
    cards[0].toggle.click()
    assert cards[0].expanded and cards[0].body.isVisible()
    body = cards[0].body.toPlainText()
    assert "✗" in body and "east has no revenue" in body and "NULL revenue" in body
    assert [passed for _label, passed, _note in cards[0].items()] == [
        item != "filters" for item in CHECKLIST
    ]
    # the engine's message to the model is not shown as the analyst's
    assert [w.text for w in panel.transcript.widgets(UserMessageWidget)] == [
        "Which region has the most revenue?"
    ]

    again = make_panel(qtbot, app_services)
    with qtbot.waitSignal(again.bridge.sig_conversation_changed, timeout=10_000):
        again.open_conversation(panel.bridge.conversation_id)
    qtbot.waitUntil(lambda: len(again.transcript.widgets(ReflectionCardWidget)) == 2, timeout=5000)
    replayed = again.transcript.widgets(ReflectionCardWidget)
    assert [c.ok for c in replayed] == [False, True]
    assert len(again.transcript.widgets(UserMessageWidget)) == 1


def test_the_status_bar_shows_the_budget_and_warns_from_80_percent(qtbot, app_services):
    status = StatusBarWidget(app_services)
    qtbot.addWidget(status)
    status.show()
    app_services.report_tokens(12_345)
    assert status.tokens_label.text() == "12.3k tokens"  # no budget set
    app_services.settings.agent.token_budget = 20_000
    app_services.report_tokens(12_345)
    assert status.tokens_label.text() == "12.3k / 20.0k tokens"
    assert "color" not in status.tokens_label.styleSheet()
    app_services.report_tokens(16_500)
    assert "color" in status.tokens_label.styleSheet() and "80%" in status.tokens_label.toolTip()
    warning = status.tokens_label.styleSheet()
    app_services.report_tokens(20_001)
    assert status.tokens_label.styleSheet() != warning  # the error colour at the budget


def test_a_spent_budget_ends_the_turn_with_a_notice(qtbot, app_services, monkeypatch):
    app_services.settings.agent.token_budget = 1_000  # the first request alone is larger
    with FakeOpenAIServer(background_reply="A title") as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        server.script(Turn(text="Four regions."))
        panel = make_panel(qtbot, app_services)
        send_and_wait(qtbot, panel, "How many regions?")
        send_and_wait(qtbot, panel, "And the revenue?")  # refused without a request
        server.assert_done()
    notices = [w.text() for w in panel.transcript.widgets(NoticeWidget)]
    assert any("1,000-token budget" in n for n in notices)
    assert app_services.tokens_used > 1_000
