"""While a query runs in the chat, its card counts the elapsed time and the footer says
"running a query…" (not "thinking…"); the real agent loop, the loopback model server and
a real DuckDB query that takes long enough to watch."""

from __future__ import annotations

import re

from lantide.ui.chat.chat_activity import RUNNING_QUERY, THINKING, elapsed_text, footer_text
from lantide.ui.chat.tool_card import ToolCardWidget
from tests.fakes.openai_server import ToolCall, Turn
from tests.ui.test_chat import make_panel

SLOW = "SELECT count(*) AS n FROM big a, big b WHERE (a.id * 7 + b.id * 13) % 1000003 = 17"


def test_footer_and_elapsed_texts():
    assert footer_text([]) == THINKING
    assert footer_text(["show_tables", "run_query"]) == RUNNING_QUERY
    assert footer_text(["show_tables"]) == "running show_tables…"
    assert elapsed_text(4.25) == "running… 4.2 s"
    assert elapsed_text(75) == "running… 1 min 15 s"


def test_a_running_query_shows_its_elapsed_time_and_says_so(qtbot, app_services, model_server):
    model_server.script(
        Turn(
            text="Counting.",
            tool_calls=[ToolCall("run_query", {"sql": SLOW, "purpose": "slow count"})],
        ),
        Turn(text="Stopped."),
    )
    panel = make_panel(qtbot, app_services)
    qtbot.waitUntil(lambda: panel.send_button.isEnabled(), timeout=10_000)  # model known
    panel.input.setPlainText("How many?")
    panel.send_typed()
    qtbot.waitUntil(lambda: bool(panel.transcript.widgets(ToolCardWidget)), timeout=30_000)
    card = panel.transcript.widgets(ToolCardWidget)[0]
    qtbot.waitUntil(
        lambda: re.fullmatch(r"running… [1-9]\d*\.\d s", card.status_label.text()) is not None,
        timeout=30_000,
    )
    assert panel.model_label.text() == RUNNING_QUERY
    first = card.status_label.text()
    qtbot.waitUntil(lambda: card.status_label.text() != first, timeout=5000)  # it counts
    with qtbot.waitSignal(
        panel.bridge.sig_turn_running,
        timeout=30_000,
        check_params_cb=lambda running: running is False,
    ):
        panel.stop()
    assert not card.status_label.text().startswith("running…")
    assert panel.model_label.text() not in (RUNNING_QUERY, THINKING)
