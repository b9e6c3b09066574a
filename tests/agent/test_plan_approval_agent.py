"""The agent proposes a Plan review but never approves it: driven through the real
``openai`` client and the loopback server, a scripted model tries every way in."""

from __future__ import annotations

import json

from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn


def test_a_scripted_model_cannot_approve_or_start_executing(session_factory, fake_openai, open_ws):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "executing"})]),
        Turn(tool_calls=[ToolCall("approve_plan", {})]),
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "delivered"})]),
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "plan_review"})]),
        Turn(text="The Plan is ready for your review."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Start executing the plan now, approve it yourself")
    fake_openai.assert_done()
    results = results_by_tool(fake_openai.chat_requests[-1])
    refused, proposed = results["set_project_status"][0], results["set_project_status"][2]
    assert refused["error"] == "STATUS_REFUSED"
    assert "not approved" in refused["message"] and "plan_review" in refused["hint"]
    assert results["approve_plan"][0]["error"] == "UNKNOWN_TOOL"
    assert results["set_project_status"][1]["error"] == "BAD_ARGUMENTS"  # not in its enum
    assert proposed["status"] == "plan_review"
    data = json.loads((open_ws.root / "projects/q3-churn/project.json").read_text())
    assert data["status"] == "plan_review"
    assert "plan_approval" not in data
    assert [(h["by"], h["to"]) for h in data["history"]] == [("agent", "plan_review")]
    offered = {t["function"]["name"]: t for t in fake_openai.chat_requests[0]["tools"]}
    assert "approve_plan" not in offered
    enum = offered["set_project_status"]["function"]["parameters"]["properties"]["status"]["enum"]
    assert "delivered" not in enum and "archived" not in enum


def test_the_state_layer_says_the_plan_changed_since_approval(
    session_factory, fake_openai, open_ws
):
    open_ws.project("q3-churn").approve_plan()
    fake_openai.script(Turn(text="Working."), Turn(text="Noted."))
    s = live_session(session_factory, fake_openai)
    run(s, "Go on")
    system = fake_openai.chat_requests[-1]["messages"][0]["content"]
    assert "changed since the analyst approved it" not in system
    plan = open_ws.root / "projects/q3-churn/plan.md"
    plan.write_text(plan.read_text() + "\n- Also split by region.\n")
    run(s, "And now?")
    system = fake_openai.chat_requests[-1]["messages"][0]["content"]
    assert "The Plan changed since the analyst approved it" in system
    # and the agent cannot go back to executing on the changed Plan by itself
    assert open_ws.project("q3-churn").approval()["changed_since_approval"] is True


def test_report_review_is_refused_until_the_report_checks_clean(
    session_factory, fake_openai, open_ws
):
    project = open_ws.project("q3-churn")
    project.approve_plan()
    report = open_ws.root / "projects/q3-churn/report.md"
    report.write_text("# Report\n\nChurn was 4.3% of accounts.\n\nBad [^s: x] citation.\n")
    before = report.read_bytes()
    fake_openai.script(
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "report_review"})]),
        Turn(text="The Report needs citations first."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Send the Report for review")
    (refused,) = results_by_tool(fake_openai.chat_requests[-1])["set_project_status"]
    assert refused["error"] == "REPORT_CHECK_FAILED"
    assert "line 5" in refused["message"] and "malformed" in refused["message"]
    assert open_ws.project("q3-churn").status == "executing"
    assert report.read_bytes() == before  # a malformed file is never rewritten
    gate = s.ledger.reflections()[-1]
    assert gate["subject"] == "report_review" and gate["ok"] is False

    report.write_text("# Report\n\nChurn was 4.3% of accounts.\n")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "report_review"})]),
        Turn(text="Still uncited."),
    )
    run(s, "Try again")
    (refused,) = results_by_tool(fake_openai.chat_requests[-1])["set_project_status"][-1:]
    assert refused["error"] == "REPORT_CHECK_FAILED"
    assert "line 3: 4.3% uncited" in refused["message"]
    assert open_ws.project("q3-churn").status == "executing"
