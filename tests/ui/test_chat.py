"""The chat panel against the scripted OpenAI-compatible server (real ``openai`` client,
real agent loop, real query service): streamed answers, tool cards, the ledger link,
ask_user inline, Stop, conversations renamed and reopened, and no model configured."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from lantide.agent.conversation import list_conversations
from lantide.agent.ledger import Ledger
from lantide.ui.chat.chat_answer import AssistantMessageWidget
from lantide.ui.chat.chat_messages import NoticeWidget, QuestionWidget, UserMessageWidget
from lantide.ui.chat.chat_panel import ChatPanel
from lantide.ui.chat.tool_card import ToolCardWidget
from tests.fakes.openai_server import ToolCall, Turn

SQL = "SELECT region, revenue\nFROM small\nORDER BY revenue DESC NULLS LAST"


def make_panel(qtbot, services) -> ChatPanel:
    panel = ChatPanel(services)
    qtbot.addWidget(panel)
    panel.resize(480, 900)
    panel.show()
    return panel


def send_and_wait(qtbot, panel: ChatPanel, text: str, timeout: int = 30_000) -> None:
    with qtbot.waitSignal(
        panel.bridge.sig_turn_running,
        timeout=timeout,
        check_params_cb=lambda running: running is False,
    ):
        panel.input.setPlainText(text)
        qtbot.keyClick(panel.input, Qt.Key.Key_Return)


def test_a_turn_streams_markdown_and_shows_tool_cards_linked_to_the_ledger(
    qtbot, app_services, model_server
):
    model_server.script(
        Turn(text="Checking the tables first.", tool_calls=[ToolCall("show_tables", {})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": SQL, "purpose": "revenue by region"})]),
        Turn(
            text="**north** leads with 120.5.\n\n[[QUERY_STEP]] revenue by region: north "
            "leads\n\nAnything else?",
            chunk_size=5,
        ),
    )
    panel = make_panel(qtbot, app_services)
    steps = []
    app_services.sig_step_recorded.connect(steps.append)
    send_and_wait(qtbot, panel, "Which region has the most revenue?")
    model_server.assert_done()

    entries = panel.transcript.widgets()
    kinds = [type(w).__name__ for w in entries]
    assert kinds[:5] == [
        "UserMessageWidget",
        "AssistantMessageWidget",
        "ToolCardWidget",
        "ToolCardWidget",
        "AssistantMessageWidget",
    ]
    show_card, query_card = panel.transcript.widgets(ToolCardWidget)
    assert show_card.tool == "show_tables" and show_card.ok
    assert query_card.tool == "run_query" and query_card.ok
    assert query_card.result["row_count"] == 4
    assert query_card.gist_label.text() == "SELECT region, revenue"
    assert "4 rows" in query_card.status_label.text()
    query_card.set_expanded(True)
    rows = query_card.preview.toHtml()  # the preview table, in a box of its own
    assert "north" in rows and "120.5" in rows and query_card.preview.wide
    assert "ORDER" in query_card.body.toPlainText()

    answer = panel.transcript.widgets(AssistantMessageWidget)[-1]
    text = answer.plain_text()
    assert "north leads with 120.5." in text and "**" not in text  # rendered, not raw
    assert "step: revenue by region: north leads" in text
    assert "[[QUERY_STEP]]" not in text

    # the step is in the ledger file, reached by the link on the card
    conversation_id = panel.bridge.conversation_id
    ledger = Ledger(app_services.workspace.ledger_dir, conversation_id).steps()
    assert len(ledger) == 1 and ledger[0]["sql"] == SQL
    assert ledger[0]["summary"] == "revenue by region: north leads"
    assert query_card.step_id == ledger[0]["step_id"]
    assert any(s.get("step_id") == ledger[0]["step_id"] for s in steps)
    with qtbot.waitSignal(app_services.sig_step_selected, timeout=2000) as blocker:
        query_card.step_link.linkActivated.emit("step")
    assert blocker.args == [conversation_id, ledger[0]["step_id"]]
    assert app_services.conversation_id == conversation_id
    # the secondary profile names the conversation in the background
    try:
        qtbot.waitUntil(
            lambda: "Revenue by region" in panel.picker.combo.currentText(), timeout=10_000
        )
    except Exception:
        notices = [w.text() for w in panel.transcript.widgets(NoticeWidget)]
        raise AssertionError(
            f"no title: {panel.picker.combo.currentText()!r}, "
            f"items {panel.picker.combo.count()}, current {panel.picker.current}, "
            f"infos {[(i.id, i.title) for i in panel.picker.infos]}, "
            f"titles {panel.picker._titles}, "
            f"background requests {len(model_server.background_requests)}, "
            f"notices {notices}"
        ) from None
    assert app_services.tokens_used > 0


def test_ask_user_choices_answer_inline(qtbot, app_services, model_server):
    def answered(body: dict) -> None:
        assert body["messages"][-1] == {"role": "user", "content": "SMB"}

    model_server.script(
        Turn(
            tool_calls=[
                ToolCall(
                    "ask_user", {"question": "Which segment first?", "choices": ["Consumer", "SMB"]}
                )
            ]
        ),
        Turn(text="Looking at SMB.", expect=answered),
    )
    panel = make_panel(qtbot, app_services)
    send_and_wait(qtbot, panel, "Break revenue down by segment")
    question = panel.transcript.widgets(QuestionWidget)[-1]
    assert question.question == "Which segment first?"
    assert [b.text() for b in question.buttons] == ["Consumer", "SMB"]
    assert not panel.transcript.widgets(ToolCardWidget)  # the question is the card
    with qtbot.waitSignal(
        panel.bridge.sig_turn_running,
        timeout=30_000,
        check_params_cb=lambda running: running is False,
    ):
        question.buttons[1].click()
    model_server.assert_done()
    assert question.answer == "SMB" and not question.buttons[0].isEnabled()
    assert "Looking at SMB." in panel.transcript.widgets(AssistantMessageWidget)[-1].plain_text()


def test_stop_cancels_the_turn_and_closes_the_stream(qtbot, app_services, model_server):
    model_server.script(Turn(text="word " * 400, chunk_size=5, delay=0.05))
    panel = make_panel(qtbot, app_services)
    panel.input.setPlainText("Write me a long essay")
    panel.send_typed()
    qtbot.waitUntil(
        lambda: (
            bool(panel.transcript.widgets(AssistantMessageWidget))
            and "word" in panel.transcript.widgets(AssistantMessageWidget)[-1].text
        ),
        timeout=15_000,
    )
    assert panel.stop_button.isVisible() and not panel.send_button.isVisible()
    with qtbot.waitSignal(
        panel.bridge.sig_turn_running,
        timeout=5000,
        check_params_cb=lambda running: running is False,
    ):
        qtbot.keyClick(panel.input, Qt.Key.Key_Escape)  # the same as the Stop button
    notices = [w.text() for w in panel.transcript.widgets(NoticeWidget)]
    assert any(n.startswith("Stopped.") for n in notices)
    assert panel.send_button.isVisible()
    qtbot.waitUntil(lambda: model_server.client_disconnects >= 1, timeout=10_000)
    streamed = panel.transcript.widgets(AssistantMessageWidget)[-1].text
    assert 0 < len(streamed) < len("word " * 400)


def test_instructions_look_different_and_conversations_reopen(qtbot, app_services, model_server):
    model_server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": SQL})]),
        Turn(text="Done.\n\n[[QUERY_STEP]] checked revenue"),
    )
    panel = make_panel(qtbot, app_services)
    with qtbot.waitSignal(
        panel.bridge.sig_turn_running,
        timeout=30_000,
        check_params_cb=lambda running: running is False,
    ):
        panel.ask("Resolve the 2 open annotations in the Plan.")
    first = panel.transcript.widgets(UserMessageWidget)[0]
    assert first.instruction and first.objectName() == "InstructionMessage"
    assert (
        model_server.chat_requests[0]["messages"][-1]["content"]
        == "Resolve the 2 open annotations in the Plan."
    )
    conversation_id = panel.bridge.conversation_id

    model_server.script(Turn(text="A second conversation."))
    panel.new_conversation()
    assert panel.transcript.widgets() == [] and panel.picker.current is None
    send_and_wait(qtbot, panel, "hello")
    assert panel.bridge.conversation_id != conversation_id
    qtbot.waitUntil(
        lambda: len(list_conversations(app_services.workspace.conversations_dir)) == 2, timeout=5000
    )

    # a new panel (the next start) reopens the newest; the first one reopens on request
    again = make_panel(qtbot, app_services)
    qtbot.waitUntil(lambda: again.bridge.session is not None, timeout=10_000)
    assert again.bridge.conversation_id == panel.bridge.conversation_id
    with qtbot.waitSignal(again.bridge.sig_conversation_changed, timeout=10_000):
        again.open_conversation(conversation_id)
    qtbot.waitUntil(lambda: bool(again.transcript.widgets(ToolCardWidget)), timeout=5000)
    replayed = again.transcript.widgets()
    assert isinstance(replayed[0], UserMessageWidget) and replayed[0].instruction
    card = again.transcript.widgets(ToolCardWidget)[0]
    assert card.tool == "run_query" and card.ok and card.step_id
    answer = again.transcript.widgets(AssistantMessageWidget)[-1]
    assert answer.step_lines == [(card.step_id, "parsed")]  # the line links to the same step
    assert "step: checked revenue" in answer.plain_text()

    # renamed by hand
    again.rename_conversation("Plan annotations")
    qtbot.waitUntil(lambda: "Plan annotations" in again.picker.combo.currentText(), timeout=5000)
    titles = {i.id: i.title for i in list_conversations(app_services.workspace.conversations_dir)}
    assert titles[conversation_id] == "Plan annotations"


def test_without_a_model_the_chat_explains_and_the_app_works(qtbot, app_services):
    panel = make_panel(qtbot, app_services)
    qtbot.waitUntil(panel.no_model.isVisible, timeout=5000)  # the profile is looked up in a worker
    assert "Settings" in panel.no_model.text() and "OPENAI_BASE_URL" in panel.no_model.text()
    # the set-up card is the hint: the empty transcript's own hint would show below it
    # cut to its last lines in a short dock
    assert panel.transcript.empty_label.isHidden()
    # ... and the empty transcript gives its height to the card, which keeps its own
    # height at the top of a tall dock (not stretched, its lines spread apart)
    assert panel.transcript.isHidden()
    card = panel.no_model
    qtbot.waitUntil(lambda: card.height() > 0, timeout=2_000)
    assert card.height() <= card.heightForWidth(card.width()) + 4 and card.y() <= 4
    assert not panel.send_button.isEnabled()
    panel.input.setPlainText("hello?")
    qtbot.keyClick(panel.input, Qt.Key.Key_Return)
    assert not panel.running
    notices = panel.transcript.widgets(NoticeWidget)
    assert notices and "No model is configured" in notices[-1].text()
    assert not panel.transcript.isHidden()  # a notice brings the transcript back
    assert panel.no_model.button.text() == "Open Settings"
    assert not list_conversations(app_services.workspace.conversations_dir)  # nothing written
    # the query engine is unaffected
    assert app_services.query.run_query("SELECT count(*) AS n FROM small")["preview"] == [[4]]


def test_key_never_reaches_the_conversation_files(qtbot, app_services, model_server):
    model_server.script(Turn(text="ok"))
    panel = make_panel(qtbot, app_services)
    send_and_wait(qtbot, panel, "hi")
    written = "".join(
        p.read_text(encoding="utf-8") for p in app_services.workspace.lantide_dir.rglob("*.json*")
    )
    assert model_server.api_key not in written
    assert json.loads(model_server.requests[-1].raw or b"{}") is not None


def test_light_dark_switch_recolours_cards_and_sql(qtbot, app_services, model_server, monkeypatch):
    from lantide.ui import theme

    model_server.script(Turn(tool_calls=[ToolCall("run_query", {"sql": SQL})]), Turn(text="Done."))
    panel = make_panel(qtbot, app_services)
    send_and_wait(qtbot, panel, "revenue?")
    card = panel.transcript.widgets(ToolCardWidget)[0]
    card.set_expanded(True)
    light_sheet, light_body = card.styleSheet(), card.body.toHtml()
    assert theme._LIGHT.panel.name() in light_sheet
    # the system switches to dark: the theme's colours change and the app palette follows,
    # as ThemeManager.apply does
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    before, sheet = app.palette(), app.styleSheet()
    monkeypatch.setattr(theme, "_current", theme._DARK)
    try:
        app.setPalette(theme._dark_palette())
        app.setStyleSheet(sheet + "\n/* dark */")
        qtbot.waitUntil(lambda: theme._DARK.panel.name() in card.styleSheet(), timeout=2000)
        assert card.body.toHtml() != light_body  # SQL re-coloured for the dark background
        bubble = panel.transcript.widgets(UserMessageWidget)[0]
        assert bubble.styleSheet() != ""
        assert panel.transcript.widgets(AssistantMessageWidget)[-1].plain_text().strip() == "Done."
    finally:
        app.setPalette(before)
        app.setStyleSheet(sheet)


def test_a_step_line_stating_numbers_its_result_lacks_still_links_to_its_step(
    qtbot, app_services, model_server
):
    model_server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": SQL})]),
        Turn(text="Done.\n\n[[QUERY_STEP]] revenue by region — 999,999 in total"),
    )
    panel = make_panel(qtbot, app_services)
    send_and_wait(qtbot, panel, "Revenue by region?")
    card = panel.transcript.widgets(ToolCardWidget)[0]
    ledger = Ledger(app_services.workspace.ledger_dir, panel.bridge.conversation_id)
    (step,) = ledger.steps()
    assert step["summary_status"] == "mismatch" and step["summary_unmatched"] == ["999,999"]
    answer = panel.transcript.widgets(AssistantMessageWidget)[-1]
    assert answer.step_lines == [(card.step_id, "mismatch")]
    assert "numbers are not in the step's result" in answer.plain_text()
    again = make_panel(qtbot, app_services)  # replayed from the files, the same link
    qtbot.waitUntil(lambda: bool(again.transcript.widgets(AssistantMessageWidget)), timeout=10_000)
    replayed = again.transcript.widgets(AssistantMessageWidget)[-1]
    assert replayed.step_lines == [(card.step_id, "mismatch")]


def test_a_step_line_naming_no_step_is_shown_as_not_recorded(qtbot, app_services, model_server):
    # issue 30 item 3: the first line names a step that does not exist; the second (no id)
    # lands on the one step waiting. Each line shows what the engine did with it.
    model_server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": SQL})]),
        Turn(
            text="Done.\n\n[[QUERY_STEP]] ffffffffffff: made-up step — 7 regions\n"
            "[[QUERY_STEP]] revenue by region: north leads with 120.5"
        ),
    )
    panel = make_panel(qtbot, app_services)
    send_and_wait(qtbot, panel, "Revenue by region?")
    card = panel.transcript.widgets(ToolCardWidget)[0]
    (step,) = Ledger(app_services.workspace.ledger_dir, panel.bridge.conversation_id).steps()
    assert step["step_id"] == card.step_id and step["summary_status"] == "parsed"
    answer = panel.transcript.widgets(AssistantMessageWidget)[-1]
    assert answer.step_lines == [(None, "unknown_step"), (card.step_id, "parsed")]
    made_up, real = [line for line in answer.plain_text().splitlines() if line.startswith("▸ step")]
    assert "not recorded: no step has that id" in made_up and "ledger" not in made_up
    assert "(recorded)" in real and "ledger" in real
    # reopened from the files: the same outcomes, not the steps' order
    again = make_panel(qtbot, app_services)
    qtbot.waitUntil(lambda: bool(again.transcript.widgets(AssistantMessageWidget)), timeout=10_000)
    replayed = again.transcript.widgets(AssistantMessageWidget)[-1]
    assert replayed.step_lines == [(None, "unknown_step"), (card.step_id, "parsed")]
