"""The agent sees what the analyst sees: the active Plan/Report/SQL tab's unsaved text
reaches the model's request (scripted OpenAI-compatible server, real client, real agent
loop, real main window), captured on the UI thread when the turn starts and again when the
agent asks during the turn. Nothing is written to disk by it."""

from __future__ import annotations

import json

from PySide6.QtCore import QThread
from PySide6.QtGui import QTextCursor

from tests.fakes.openai_server import FakeOpenAIServer, ToolCall, Turn
from tests.ui.conftest import open_document_tab, open_main_window


def _window_with_model(qtbot, shell_services, monkeypatch, server):
    for key, value in server.env().items():
        monkeypatch.setenv(key, value)
    window = open_main_window(qtbot, shell_services(), restore=False)
    qtbot.waitUntil(lambda: window.chat._model is True, timeout=15_000)
    return window


def _type_at_end(editor, text: str) -> None:
    cursor = editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    editor.setTextCursor(cursor)
    editor.insertPlainText(text)


def _request_text(body: dict) -> str:
    return "\n".join(
        m.get("content") or "" for m in body["messages"] if isinstance(m.get("content"), str)
    )


def _active_tab_message(body: dict) -> str:
    """The active tab payload: the last user message that starts with its header."""
    return next(
        m["content"]
        for m in reversed(body["messages"])
        if m["role"] == "user" and m["content"].startswith("# Active tab:")
    )


def _ask_and_wait(qtbot, window, text: str) -> None:
    with qtbot.waitSignal(
        window.chat.bridge.sig_turn_running,
        timeout=30_000,
        check_params_cb=lambda running: running is False,
    ):
        window.chat.ask(text)


def test_unsaved_plan_text_reaches_the_model_and_follows_edits_during_the_turn(
    qtbot, shell_services, monkeypatch, sample_workspace
):
    plan_path = sample_workspace / "projects" / "q3-churn" / "plan.md"
    on_disk = plan_path.read_bytes()
    with FakeOpenAIServer(background_reply="Plan check") as server:
        window = _window_with_model(qtbot, shell_services, monkeypatch, server)
        tab = open_document_tab(qtbot, window, "plan")
        _type_at_end(tab.editor, "\nUNSAVED-LINE-ONE about the refund denominator\n")
        assert tab.is_dirty()
        # The first answer streams slowly, so the analyst types on while the turn runs.
        server.script(
            Turn(
                text="Reading your plan now.",
                chunk_size=2,
                delay=0.05,
                tool_calls=[ToolCall("get_app_context", {})],
            ),
            Turn(text="Both lines are in the plan."),
        )
        with qtbot.waitSignal(
            window.chat.bridge.sig_turn_running,
            timeout=30_000,
            check_params_cb=lambda running: running is False,
        ):
            window.chat.ask("What does my plan say now?")
            qtbot.waitUntil(lambda: len(server.chat_requests) >= 1, timeout=15_000)
            _type_at_end(tab.editor, "UNSAVED-LINE-TWO typed while the agent works\n")
        server.assert_done()

    first, second = server.chat_requests
    payload = _active_tab_message(first)
    assert payload.startswith("# Active tab: plan projects/q3-churn/plan.md (unsaved edits shown)")
    assert "UNSAVED-LINE-ONE about the refund denominator" in payload
    assert "UNSAVED-LINE-TWO" not in _request_text(first)
    # asked again for the next iteration: the text typed meanwhile is there
    assert "UNSAVED-LINE-TWO typed while the agent works" in _active_tab_message(second)
    # the tool's view of the app agrees: the active tab is the dirty Plan
    tool_result = next(m for m in second["messages"] if m["role"] == "tool")
    context = json.loads(tool_result["content"])
    active = context["open_tabs"][context["active_tab"]]
    assert active == {"type": "plan", "path": "projects/q3-churn/plan.md", "dirty": True}
    # nothing was saved for the agent's sake
    assert plan_path.read_bytes() == on_disk
    assert tab.is_dirty()


def test_unsaved_sql_reaches_the_model_and_a_clean_tab_sends_the_file(
    qtbot, shell_services, monkeypatch, sample_workspace
):
    sql_path = sample_workspace / "projects" / "q3-churn" / "sql" / "clean_orders.sql"
    on_disk = sql_path.read_text(encoding="utf-8")
    with FakeOpenAIServer(background_reply="SQL check") as server:
        window = _window_with_model(qtbot, shell_services, monkeypatch, server)
        tab = window.open_tab("sql", "q3-churn", "clean_orders")
        qtbot.waitUntil(lambda: tab.editor.toPlainText() == on_disk, timeout=15_000)

        server.script(Turn(text="The saved query."))
        _ask_and_wait(qtbot, window, "What does this tab compute?")
        clean = _active_tab_message(server.chat_requests[-1])
        assert clean.startswith("# Active tab: sql projects/q3-churn/sql/clean_orders.sql\n")
        assert on_disk.strip() in clean

        tab.editor.selectAll()
        tab.editor.insertPlainText("SELECT 42 AS unsaved_answer -- not saved yet")
        server.script(Turn(text="Your edited query."))
        _ask_and_wait(qtbot, window, "And now?")
        server.assert_done()
    dirty = _active_tab_message(server.chat_requests[-1])
    assert "(unsaved edits shown)" in dirty.splitlines()[0]
    assert "SELECT 42 AS unsaved_answer -- not saved yet" in dirty
    assert on_disk.strip() not in dirty
    assert sql_path.read_text(encoding="utf-8") == on_disk


def test_the_snapshot_is_taken_on_the_ui_thread_even_when_a_worker_asks(qtbot, shell_services):
    window = open_main_window(qtbot, shell_services(), restore=False)
    tab = open_document_tab(qtbot, window, "report")
    _type_at_end(tab.editor, "draft sentence")
    provider = window.chat.bridge.app_state
    threads = []
    original = provider.capture

    def spy():
        threads.append(QThread.currentThread() is provider.thread())
        return original()

    provider.capture = spy
    seen = []
    window.services.workers.submit(lambda _ctx: provider.app_state(), on_result=seen.append)
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    state = seen[0]
    assert state.active.type == "report" and state.active.dirty
    assert state.active.content.endswith("draft sentence")
    assert threads == [True]  # answered by the UI thread, not the worker
