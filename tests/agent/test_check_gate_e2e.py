"""Certified means checked (issue 26): a number from a step whose result check failed is no
finding anywhere. A scripted model (real ``openai`` client, loopback server) runs the
fan-out query on the sample workspace and charts it; ``update_report`` citing its 70,098
"customers" is refused as check_failed even though the review said ok; the Report the
analyst writes by hand fails the report_review gate, ``lantide report check`` and the
HTML Report's evidence line (and its chart is marked); the analyst's waiver (``lantide
report waive``) turns it into matching, the waiver shown in the check and the page."""

from __future__ import annotations

import json

from lantide.agent.reflection import CHECKLIST
from lantide.agent.report_html import publish_html
from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn

FAN_OUT_SQL = (
    "SELECT c.segment, count(*) AS customers FROM customers c "
    "JOIN orders o ON o.customer_id = c.customer_id GROUP BY 1"
)
PASS = json.dumps(
    {"ok": True, "checklist": {i: {"ok": True, "note": "fine"} for i in CHECKLIST}, "problems": []}
)
CHART = {
    "title": "Customers per segment",
    "mark": "bar",
    "encoding": {
        "x": {"field": "segment", "type": "nominal"},
        "y": {"field": "customers", "type": "quantitative"},
    },
}


def _fan_out_step(s, fake_openai):
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("run_query", {"sql": FAN_OUT_SQL, "purpose": "customers per segment"})
            ]
        ),
        Turn(text="[[QUERY_STEP]] Customers per segment, joined with orders."),
    )
    run(s, "How many customers per segment?")
    (step,) = s.ledger.steps()
    assert [c["code"] for c in step["checks"]] == ["JOIN_FAN_OUT"]
    assert step["checks"][0]["severity"] == "error" and step["evidence"] == "formal"
    return step


def test_a_fan_out_number_is_check_failed_everywhere_until_the_analyst_waives_it(
    session_factory, fake_openai, open_ws, run_cli
):
    project = open_ws.project("q3-churn")
    project.approve_plan()
    s = live_session(session_factory, fake_openai)
    step = _fan_out_step(s, fake_openai)
    sid = step["step_id"]
    report_path = project.report_path
    before = report_path.read_bytes()
    draft = f"# Report: Q3 churn\n\nWe have 70,098 customers [^s:{sid}].\n"

    fake_openai.script_background(Turn(text=PASS), Turn(text=PASS))  # the reviewer: "ok"
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("create_chart", {"name": "segments", "spec": CHART, "step_id": sid})
            ]
        ),
        Turn(tool_calls=[ToolCall("update_report", {"content": draft})]),
        Turn(text="The Report could not take the number: the step's check failed."),
    )
    run(s, "Chart it and write the Report")
    fake_openai.assert_done()
    results = results_by_tool(fake_openai.chat_requests[-1])
    assert "error" not in results["create_chart"][0]
    refused = results["update_report"][0]
    assert refused["error"] in ("REPORT_EVIDENCE", "REFLECTION_FAILED")
    assert "check_failed" in refused["message"] and "JOIN_FAN_OUT" in refused["message"]
    assert report_path.read_bytes() == before  # the Report is unchanged
    review = s.ledger.reflections()[0]  # the reviewer said ok; the rule overrode it
    assert review["subject"] == "update_report" and review["ok"] is False
    assert "JOIN_FAN_OUT" in review["overridden_by_rule"]["numbers"][0]

    # the analyst writes the number in by hand, with the chart; the agent's move is refused
    report_path.write_text(draft + "\n![Customers per segment](charts/segments.vl.json)\n")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "report_review"})]),
        Turn(text="The Report is not ready: the number's check failed."),
    )
    run(s, "Send the Report to review")
    gate = results_by_tool(fake_openai.chat_requests[-1])["set_project_status"][0]
    assert gate["error"] == "REPORT_CHECK_FAILED"
    assert any("check_failed" in p and "JOIN_FAN_OUT" in p for p in gate["problems"])
    assert open_ws.project("q3-churn").status == "executing"

    checked = run_cli("report", "check", open_ws.root, "q3-churn", "--json")
    assert checked.returncode == 1, checked.stdout
    out = json.loads(checked.stdout)
    (problem,) = out["problems"]
    assert problem["status"] == "check_failed" and problem["steps"] == [sid]
    assert problem["checks"][0]["code"] == "JOIN_FAN_OUT"
    assert "repeats" in problem["checks"][0]["message"]
    (cell,) = problem["cells"]  # the Consumer row: the query has no ORDER BY
    assert cell["step"] == sid and cell["column"] == "customers" and cell["row"] in (1, 2, 3)
    text = run_cli("report", "check", open_ws.root, "q3-churn")
    assert text.returncode == 1 and "check failed" in text.stdout and "JOIN_FAN_OUT" in text.stdout

    # the HTML Report (as Publish HTML does it in the app, whose query service it shares)
    published = publish_html(open_ws, project, query=s.services.query)
    assert published.check_ok is False
    page = (project.dir / "report.html").read_text()
    evidence = page.split("<dt>Evidence check</dt><dd>")[1].split("</dd>")[0]
    assert "clean" not in evidence and "check failed" in evidence and "JOIN_FAN_OUT" in evidence
    caption = page.split("<figcaption>")[1].split("</figcaption>")[0]
    assert "check failed: JOIN_FAN_OUT" in caption

    # a waiver naming an unknown step or check is refused, nothing written
    ledger_before = s.ledger.path.read_bytes()
    unknown_step = run_cli(
        "report", "waive", open_ws.root, "q3-churn", "s99", "JOIN_FAN_OUT", "--reason", "x"
    )
    assert unknown_step.returncode == 1 and "no step 's99'" in unknown_step.stderr
    unknown_check = run_cli(
        "report", "waive", open_ws.root, "q3-churn", sid, "EMPTY_RESULT", "--reason", "x"
    )
    assert unknown_check.returncode == 1 and "JOIN_FAN_OUT" in unknown_check.stderr
    assert s.ledger.path.read_bytes() == ledger_before

    waived = run_cli(
        "report", "waive", open_ws.root, "q3-churn", sid, "JOIN_FAN_OUT",
        "--reason", "counts order lines per segment on purpose", "--by", "ana",
    )  # fmt: skip
    assert waived.returncode == 0, waived.stderr
    line = json.loads(s.ledger.path.read_text().splitlines()[-1])
    assert line["kind"] == "waiver" and line["by"] == "ana" and line["step_id"] == sid
    assert not s.ledger.problems and len(s.ledger.steps()) == 2  # the waiver is no step

    checked = run_cli("report", "check", open_ws.root, "q3-churn", "--json")
    assert checked.returncode == 0, checked.stdout
    (result,) = json.loads(checked.stdout)["results"]
    assert result["status"] == "matching"
    assert result["waivers"][0]["reason"] == "counts order lines per segment on purpose"
    text = run_cli("report", "check", open_ws.root, "q3-churn").stdout
    assert "JOIN_FAN_OUT of step" in text and "waived by ana" in text

    assert publish_html(open_ws, project, query=s.services.query).check_ok is True
    page = (project.dir / "report.html").read_text()
    evidence = page.split("<dt>Evidence check</dt><dd>")[1].split("</dd>")[0]
    assert "clean" in evidence and "waived by ana" in evidence
    assert "waived by ana" in page.split("<figcaption>")[1].split("</figcaption>")[0]
