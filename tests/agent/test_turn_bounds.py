"""How a turn is bounded: a pending question stops its sibling calls, a successful call
repeated in a loop is stopped, and the iteration limit may continue automatically.
Driven through the real ``openai`` client and the loopback server."""

from __future__ import annotations

from lantide.workspace.settings import AgentSettings, Settings
from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn


def test_calls_beside_ask_user_are_not_run(session_factory, fake_openai, open_ws):
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("set_project_status", {"status": "executing"}),
                ToolCall("ask_user", {"question": "Is the Plan agreed?", "choices": ["Yes", "No"]}),
                ToolCall("read_plan", {}),
            ]
        )
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Start when the plan is agreed")
    assert events[-1].reason == "question"
    assert open_ws.project("q3-churn").status == "planning"
    assert not s.conversation.events(("status_changed",))
    returned = {e.tool: e for e in events if e.name == "tool_returned"}
    assert returned["ask_user"].ok
    for sibling in ("set_project_status", "read_plan"):
        assert not returned[sibling].ok
        assert returned[sibling].result["error"] == "NOT_RUN_QUESTION_PENDING"

    fake_openai.script(Turn(text="Thanks, the Plan stays as it is."))
    run(s, "No, not yet")
    fake_openai.assert_done()
    results = results_by_tool(fake_openai.chat_requests[-1])
    (status_result,) = results["set_project_status"]
    assert status_result["error"] == "NOT_RUN_QUESTION_PENDING"
    assert "Is the Plan agreed?" in status_result["message"]
    assert results["ask_user"][0]["status"] == "asked"
    assert open_ws.project("q3-churn").status == "planning"


def test_only_the_first_of_two_questions_is_asked(session_factory, fake_openai):
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("ask_user", {"question": "Which quarter?"}),
                ToolCall("ask_user", {"question": "Which region?"}),
            ]
        )
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Churn please")
    assert [e.question for e in events if e.name == "question_asked"] == ["Which quarter?"]
    assert s.conversation.pending_question()["question"] == "Which quarter?"


def test_a_malformed_ask_user_holds_nothing_back(session_factory, fake_openai):
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("read_schema", {"table": "customers"}),
                ToolCall("ask_user", '{"question": '),
            ]
        ),
        Turn(text="Customers have a region column."),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Columns of customers?")
    fake_openai.assert_done()
    got = {e.tool: e for e in events if e.name == "tool_returned"}
    assert got["read_schema"].ok and got["ask_user"].result["error"] == "BAD_ARGUMENTS"
    assert events[-1].reason == "answered" and s.conversation.pending_question() is None


def test_a_successful_call_repeated_in_a_loop_is_stopped(session_factory, fake_openai):
    same = ToolCall("read_schema", {"table": "customers"})
    fake_openai.script(*[Turn(tool_calls=[same]) for _ in range(4)])
    s = live_session(session_factory, fake_openai)
    events = run(s, "What columns do customers have?")
    fake_openai.assert_done()
    returned = [e for e in events if e.name == "tool_returned"]
    assert [e.ok for e in returned] == [True, True, False, False]
    assert returned[2].result["error"] == "REPEATED_CALL"
    assert "already ran 2 times" in returned[2].result["message"]
    finished = events[-1]
    assert finished.reason == "repeated_call"
    assert "read_schema" in finished.message and "same arguments" in finished.message


def test_repeats_with_other_arguments_are_not_a_loop(session_factory, fake_openai):
    fake_openai.script(
        *[
            Turn(tool_calls=[ToolCall("read_schema", {"table": t})])
            for t in ("customers", "orders", "customers", "products")
        ],
        Turn(text="Read them all."),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Read the schemas")
    fake_openai.assert_done()
    assert all(e.ok for e in events if e.name == "tool_returned")
    assert events[-1].reason == "answered"


def test_iteration_limit_continues_automatically_when_set(session_factory, fake_openai):
    settings = Settings(agent=AgentSettings(max_iterations=2, auto_continue_rounds=2))
    tables = ("customers", "orders", "products", "regions", "customers")
    fake_openai.script(
        *[Turn(tool_calls=[ToolCall("read_schema", {"table": t})]) for t in tables],
        Turn(text="All read."),
    )
    s = live_session(session_factory, fake_openai, settings)
    events = run(s, "Read every schema")
    fake_openai.assert_done()
    assert events[-1].reason == "answered" and events[-1].iterations == 6
    continued = [e for e in events if e.name == "turn_continued"]
    assert [(e.round, e.rounds) for e in continued] == [(1, 2), (2, 2)]
    assert [e["round"] for e in s.conversation.events(("turn_continued",))] == [1, 2]


def test_automatic_continuation_is_bounded(session_factory, fake_openai):
    settings = Settings(agent=AgentSettings(max_iterations=2, auto_continue_rounds=1))
    tables = ("customers", "orders", "products", "regions")
    fake_openai.script(*[Turn(tool_calls=[ToolCall("read_schema", {"table": t})]) for t in tables])
    s = live_session(session_factory, fake_openai, settings)
    events = run(s, "Read every schema")
    fake_openai.assert_done()
    assert events[-1].reason == "iteration_limit" and events[-1].iterations == 4
    assert "stopped after 4 steps" in events[-1].message


def test_continuation_is_off_by_default(session_factory, fake_openai):
    settings = Settings(agent=AgentSettings(max_iterations=2))
    fake_openai.script(
        *[Turn(tool_calls=[ToolCall("read_schema", {"table": t})]) for t in ("customers", "orders")]
    )
    s = live_session(session_factory, fake_openai, settings)
    events = run(s, "Read every schema")
    assert events[-1].reason == "iteration_limit" and events[-1].iterations == 2
    assert not [e for e in events if e.name == "turn_continued"]
