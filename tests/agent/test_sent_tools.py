"""What a request carries of the tools: a schema is sent when the tool can do something
now (focus_project with another project to move to, sync_tab_content with a tab open,
activate_analysis in the turn of a yes to consent), an optional ``project`` argument when
it can name a project a missing one does not. A tool or argument left out is still
accepted when called. Driven through the real ``openai`` client and the loopback server."""

from __future__ import annotations

import json

from lantide.agent.app_state import AppState, OpenTab
from tests.agent.live import live_session, results_by_tool, run
from tests.agent.test_app_state_and_tools import LiveApp
from tests.fakes.openai_server import ToolCall, Turn


def sent(body: dict) -> dict[str, set[str]]:
    """tool name -> the argument names its sent schema carries."""
    return {
        t["function"]["name"]: set(t["function"].get("parameters", {}).get("properties", {}))
        for t in body.get("tools") or []
    }


def test_with_one_project_no_project_argument_nor_focus_project_is_sent(
    session_factory, fake_openai, open_ws
):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("read_plan", {"project": "q3-churn"})]),
        Turn(tool_calls=[ToolCall("focus_project", {"project": "q3-churn"})]),
        Turn(text="The Plan is about Q3 churn."),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "What does the Plan say?")
    fake_openai.assert_done()
    first = fake_openai.chat_requests[0]
    tools = sent(first)
    assert "focus_project" not in tools
    assert tools["read_plan"] == set() and tools["update_plan"] == {"content"}
    assert not any("project" in args for args in tools.values())
    system = first["messages"][0]["content"]
    assert "A project argument is" not in system
    # still accepted when called: the argument names the focused project, the focus stays
    results = results_by_tool(fake_openai.chat_requests[-1])
    assert "Plan: Q3 churn" in json.dumps(results["read_plan"][0])
    assert [e.ok for e in events if e.name == "tool_returned"] == [True, True]


def test_with_another_project_the_project_argument_and_focus_project_are_sent(
    session_factory, fake_openai, open_ws
):
    open_ws.create_project("Retention")
    fake_openai.script(Turn(text="Two projects."))
    s = live_session(session_factory, fake_openai)
    run(s, "Which projects are there?")
    body = fake_openai.chat_requests[0]
    tools = sent(body)
    assert tools["focus_project"] == {"project"}
    assert tools["read_plan"] == {"project"} and tools["update_plan"] == {"content", "project"}
    assert "A project argument is a project's folder or name" in body["messages"][0]["content"]


def test_without_a_focused_project_focus_project_is_sent(session_factory, fake_openai, open_ws):
    open_ws.focus_project(None)
    fake_openai.script(Turn(text="No project is focused."))
    s = live_session(session_factory, fake_openai)
    run(s, "Where are we?")
    assert sent(fake_openai.chat_requests[0])["focus_project"] == {"project"}


def test_sync_tab_content_is_sent_only_while_a_tab_is_open(session_factory, fake_openai):
    app = LiveApp(AppState("q3-churn", [], None))
    fake_openai.script(
        Turn(tool_calls=[ToolCall("sync_tab_content", {"path": "projects/q3-churn/plan.md"})]),
        Turn(text="Reloaded."),
    )
    s = live_session(session_factory, fake_openai)
    s.app = app
    events = run(s, "Reload the Plan")
    assert "sync_tab_content" not in sent(fake_openai.chat_requests[0])
    assert [e.ok for e in events if e.name == "tool_returned"] == [True]  # still accepted

    app.state.open_tabs.append(OpenTab("plan", "projects/q3-churn/plan.md"))
    fake_openai.script(Turn(text="The Plan tab is open."))
    run(s, "And now?")
    assert "sync_tab_content" in sent(fake_openai.chat_requests[-1])


def test_activate_analysis_is_sent_only_in_the_turn_of_a_yes_to_consent(
    session_factory, fake_openai, open_ws
):
    open_ws.project("q3-churn").approve_plan()
    ask = {
        "question": "May I compute the correlation of price and quantity?",
        "choices": ["Yes", "No"],
        "kind": "analysis_consent",
    }
    from lantide.agent.tools import default_registry

    if "analysis" in default_registry().get("ask_user").parameters["properties"]:
        ask["analysis"] = ["correlation"]  # where a consent question names its kinds
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "correlation"})]),
        Turn(tool_calls=[ToolCall("ask_user", ask)]),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Is price related to quantity?")
    first = fake_openai.chat_requests[0]
    assert "activate_analysis" not in sent(first) and "ask_user" in sent(first)
    refused = next(e for e in events if e.name == "tool_returned")
    assert refused.result["error"] == "CONSENT_REQUIRED"  # a call is still the rule's to judge

    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "correlation"})]),
        Turn(text="Approved; I will state the method and its assumptions."),
    )
    seen = len(fake_openai.chat_requests)
    events = run(s, "Yes")
    answer_turn = fake_openai.chat_requests[seen:]
    assert "activate_analysis" in sent(answer_turn[0])
    assert [e.ok for e in events if e.name == "tool_returned"] == [True]
    # spent: the next request no longer carries it
    assert "activate_analysis" not in sent(answer_turn[1])
    fake_openai.assert_done()
