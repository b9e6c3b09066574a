"""``create_chart`` in an agent turn: a scripted model (real ``openai`` client, loopback
server) charts a step's result and a table; hostile or wrong charts are refused with the
file named, and nothing is written for them; an analyst's chart is kept."""

from __future__ import annotations

import json

from lantide import charts
from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn

BARS = {
    "title": "Products per category",
    "mark": "bar",
    "encoding": {
        "x": {"field": "category", "type": "nominal"},
        "y": {"field": "products", "type": "quantitative"},
    },
}
COUNTS = {
    "mark": "bar",
    "encoding": {"x": {"field": "category", "type": "nominal"}, "y": {"aggregate": "count"}},
}


def test_the_agent_charts_a_steps_result_and_bad_charts_are_refused(
    session_factory, fake_openai, open_ws
):
    project = open_ws.project("q3-churn")
    project.approve_plan()
    s = live_session(session_factory, fake_openai)
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall(
                    "run_query",
                    {
                        "sql": "SELECT category, count(*) AS products FROM products "
                        "GROUP BY category ORDER BY category",
                        "purpose": "products per category",
                    },
                )
            ]
        ),
        Turn(text="[[QUERY_STEP]] Products per category."),
    )
    run(s, "Count products per category")
    (step,) = s.ledger.steps()
    assert step["cached_table_name"]  # executing: the step's result is cached

    analyst_chart = charts.write_chart(project, "mine", {**COUNTS, "data": {"table": "products"}})
    analyst_bytes = analyst_chart.read_bytes()
    charts_dir = project.dir / "charts"
    good = ToolCall(
        "create_chart", {"name": "per_category", "spec": BARS, "step_id": step["step_id"]}
    )
    remote = {**BARS, "data": {"url": "https://example.com/x.csv"}}
    typo = {**BARS, "encoding": {"x": {"field": "categry"}}}
    fake_openai.script(  # the loop stops after 4 failures in a row: a success in between
        Turn(
            tool_calls=[
                ToolCall("create_chart", {"name": "remote", "spec": remote}),
                ToolCall("create_chart", {"name": "nowhere", "spec": BARS, "table": "no_such"}),
                ToolCall("create_chart", {"name": "typo", "spec": typo, "table": "products"}),
                good,
            ]
        ),
        Turn(
            tool_calls=[
                ToolCall(
                    "create_chart",
                    {"name": "bad", "spec": {**BARS, "mark": "barr"}, "table": "products"},
                ),
                ToolCall("create_chart", {"name": "mine", "spec": COUNTS, "table": "products"}),
            ]
        ),
        Turn(text="Chart saved."),
    )
    run(s, "Chart it for the Report")
    fake_openai.assert_done()
    remote, nowhere, typo, made, bad, mine = results_by_tool(fake_openai.chat_requests[-1])[
        "create_chart"
    ]

    assert made["chart"] == "projects/q3-churn/charts/per_category.vl.json"
    assert made["markdown"] == "![Products per category](charts/per_category.vl.json)"
    assert made["data_step_id"] == step["step_id"] and made["rows_charted"] >= 3
    on_disk = json.loads((charts_dir / "per_category.vl.json").read_text())
    assert on_disk["data"] == {"step": step["step_id"]}  # the reference, no numbers
    assert charts.written_by(on_disk) == "agent"
    chart_step = s.ledger.step(made["step_id"])
    assert chart_step["tool"] == "create_chart"
    # one id form (issue 30 item 3): the chart's step id has the query step's form
    assert len(made["step_id"]) == len(step["step_id"]) == 12
    assert int(made["step_id"], 16) >= 0 and made["step_id"] != step["step_id"]
    assert chart_step["chart"] == made["chart"]
    assert chart_step["cached_table_name"] == step["cached_table_name"]

    assert remote["error"] == "CHART_EXTERNAL_DATA" and "remote.vl.json" in remote["message"]
    assert nowhere["error"] == "CHART_MISSING_TABLE" and "no_such" in nowhere["message"]
    assert typo["error"] == "UNKNOWN_FIELD" and "'categry'" in typo["message"]
    assert "category" in typo["hint"]
    assert bad["error"] == "CHART_INVALID_SPEC" and "/mark" in bad["message"]
    assert mine["error"] == "CHART_EXISTS"
    assert analyst_chart.read_bytes() == analyst_bytes
    assert sorted(p.name for p in charts_dir.iterdir()) == ["mine.vl.json", "per_category.vl.json"]


def test_create_chart_is_offered_while_executing_only(session_factory, open_ws):
    planning = session_factory().prompt_preview(context_window=32_000)
    assert "create_chart" not in {t["function"]["name"] for t in planning.tools}
    open_ws.project("q3-churn").approve_plan()
    executing = session_factory().prompt_preview(context_window=32_000)
    assert "create_chart" in {t["function"]["name"] for t in executing.tools}


def test_a_spec_with_an_error_key_is_checked_as_a_spec_not_sent_back_as_the_tool_error(
    session_factory, fake_openai, open_ws
):
    # The model's spec is its own JSON: a top-level "error" key in it once made
    # create_chart answer with the spec itself, read by the loop as a failed call that
    # said nothing (no message, no hint, the model's own spec echoed back).
    open_ws.project("q3-churn").approve_plan()
    s = live_session(session_factory, fake_openai)
    spec = {**BARS, "error": "not a Vega-Lite property"}
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("create_chart", {"name": "odd", "spec": spec, "table": "products"})
            ]
        ),
        Turn(text="Done."),
    )
    run(s, "Chart the products")
    (result,) = results_by_tool(fake_openai.chat_requests[-1])["create_chart"]
    assert result != {**spec, "data": {"table": "products"}}
    assert result["error"] == "CHART_INVALID_SPEC" and "odd.vl.json" in result["message"]
