"""What the model is told matches what it gets: the preview row count, show_tables with a
filter and a limit, read_schema's columns once, the analyst's message last. Driven through
the real ``openai`` client and the loopback server."""

from __future__ import annotations

import json

from lantide.tokens import count_tokens
from lantide.workspace.settings import QuerySettings, Settings
from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn


def system_of(body):
    return body["messages"][0]["content"]


def test_the_prompt_states_the_preview_rows_the_result_carries(session_factory, fake_openai):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": "SELECT range AS n FROM range(120)"})]),
        Turn(text="120 numbers."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Count to 120")
    fake_openai.assert_done()
    (result,) = results_by_tool(fake_openai.chat_requests[-1])["run_query"]
    assert (
        len(result["preview"]["rows"] if isinstance(result["preview"], dict) else result["preview"])
        == 120
    )
    assert "previews at most 200 rows" in system_of(fake_openai.chat_requests[0])


def test_the_preview_rows_setting_rules_both(session_factory, fake_openai):
    settings = Settings(query=QuerySettings(preview_rows=50))
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": "SELECT range AS n FROM range(120)"})]),
        Turn(text="Seen."),
    )
    s = live_session(session_factory, fake_openai, settings)
    run(s, "Count to 120")
    (result,) = results_by_tool(fake_openai.chat_requests[-1])["run_query"]
    rows = result["preview"]["rows"] if isinstance(result["preview"], dict) else result["preview"]
    assert len(rows) == 50 and result["row_count"] == 120
    system = system_of(fake_openai.chat_requests[0])
    assert "previews at most 50 rows" in system and "200" not in system


def add_tables(workspace, n):
    for i in range(n):
        (workspace / "data" / f"region_{i:02d}_sales.csv").write_text("id,amount\n1,2.5\n")


def test_show_tables_has_a_limit_with_a_more_line(session_factory, fake_openai, sample_workspace):
    add_tables(sample_workspace, 55)
    fake_openai.script(
        Turn(tool_calls=[ToolCall("show_tables", {})]),
        Turn(tool_calls=[ToolCall("show_tables", {"limit": 100})]),
        Turn(text="Sixty tables."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Which tables are there?")
    fake_openai.assert_done()
    first, everything = results_by_tool(fake_openai.chat_requests[-1])["show_tables"]
    assert len(first["tables"]) == 40
    assert first["more"].startswith("20 more tables not shown")
    assert count_tokens(json.dumps(first)) < 1_800  # was about 3,800 for 55 tables
    assert len(everything["tables"]) == 60 and "more" not in everything
    # name and limit are not sent with every request: the "more" line names them
    assert "pass name to filter" in json.dumps(fake_openai.chat_requests[-1]["messages"])


def test_show_tables_filters_by_name(session_factory, fake_openai, sample_workspace):
    add_tables(sample_workspace, 12)
    fake_openai.script(
        Turn(tool_calls=[ToolCall("show_tables", {"name": "REGION_1"})]),
        Turn(tool_calls=[ToolCall("show_tables", {"name": "region_*_sales", "limit": 5})]),
        Turn(tool_calls=[ToolCall("show_tables", {"name": "Segments"})]),
        Turn(text="Found them."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Which region tables?")
    fake_openai.assert_done()
    by_part, by_pattern, sheet = results_by_tool(fake_openai.chat_requests[-1])["show_tables"]
    assert sorted(t["name"] for t in by_part["tables"]) == ["region_10_sales", "region_11_sales"]
    assert by_part["matching"] == 2 and "more" not in by_part
    assert len(by_pattern["tables"]) == 5 and by_pattern["matching"] == 12
    assert by_pattern["more"].startswith("7 more tables not shown matching 'region_*_sales'")
    assert [t["qualified_name"] for t in sheet["tables"]] == ['"targets"."Segments"']
    assert all("qualified_name" not in t for t in by_part["tables"])  # only the name quoted


def test_read_schema_gives_the_columns_once(session_factory, fake_openai):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("read_schema", {"table": "orders"})]), Turn(text="Read.")
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Columns of orders?")
    (schema,) = results_by_tool(fake_openai.chat_requests[-1])["read_schema"]
    assert schema["ddl"].startswith('CREATE TABLE "orders" ("order_id" BIGINT')
    assert "columns" not in schema
    assert json.dumps(schema).count("order_id") == 1


def test_the_analysts_message_is_the_last_user_message(
    session_factory, fake_openai, sample_workspace
):
    (sample_workspace / ".lantide" / "session.json").write_text(
        json.dumps(
            {
                "focused_project": "q3-churn",
                "open_tabs": [
                    {"type": "plan", "path": "projects/q3-churn/plan.md", "dirty": False}
                ],
                "active_tab": 0,
            }
        )
    )
    fake_openai.script(Turn(tool_calls=[ToolCall("show_tables", {})]), Turn(text="Five."))
    s = live_session(session_factory, fake_openai)
    run(s, "How many tables are there?")
    fake_openai.assert_done()
    for body in fake_openai.chat_requests:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert users[-1] == "How many tables are there?"
        assert users[-2].startswith("# Active tab: plan projects/q3-churn/plan.md")
        assert "not a message from the analyst" in users[-2]
    last = fake_openai.chat_requests[-1]["messages"]
    assert [m["role"] for m in last[-4:]] == ["user", "user", "assistant", "tool"]


def test_what_the_core_leaves_to_results_reaches_the_model_in_them(session_factory, fake_openai):
    """The core states the rule in short (at most two CTEs, nothing but one SELECT); the
    refusal says how to split, and a join hint that the core no longer explains says itself
    that it does not block and when to follow it."""
    three_ctes = (
        "WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a), c AS (SELECT x FROM b) SELECT * FROM c"
    )
    join = (
        "SELECT p.category, c.segment, sum(o.quantity) AS q FROM orders o JOIN customers c "
        "USING (customer_id) JOIN products p USING (product_id) GROUP BY 1, 2"
    )
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": three_ctes})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": "DROP TABLE orders"})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": join})]),
        Turn(text="Quantities by category and segment."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Quantities by category and segment")
    fake_openai.assert_done()
    system = system_of(fake_openai.chat_requests[0])
    assert "at most two CTEs (else COMPLEXITY_SPLIT_RECOMMENDED)" in system
    assert "optimization_hint" not in system
    refused, dropped, joined = results_by_tool(fake_openai.chat_requests[-1])["run_query"]
    assert refused["error"] == "COMPLEXITY_SPLIT_RECOMMENDED"
    assert "create_sql_tab" in refused["hint"]
    assert "error" in dropped and dropped.get("hint")
    (hint,) = [h for h in joined["hints"] if h["code"] == "CACHE_UPSTREAM_JOIN"]
    assert hint["hint"].startswith("Not blocking.") and "reuse" in hint["hint"]


def test_the_reports_rules_come_with_the_report_not_with_every_request(
    session_factory, fake_openai, open_ws
):
    """While executing, the citation format and the move to report_review are in the
    Report's read (and its tab), where the Report is written from; the state layer points
    there."""
    from lantide.agent.app_state import AppState, OpenTab
    from tests.agent.test_app_state_and_tools import LiveApp

    open_ws.project("q3-churn").approve_plan()
    fake_openai.script(
        Turn(tool_calls=[ToolCall("read_report", {}), ToolCall("read_plan", {})]),
        Turn(text="The Report is empty so far."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "What does the Report say?")
    fake_openai.assert_done()
    system = system_of(fake_openai.chat_requests[0])
    assert "[^s:STEP_ID]" not in system and "report_review" not in system
    assert "the Report (read it first) comes with the format" in system
    results = results_by_tool(fake_openai.chat_requests[-1])
    (report,) = results["read_report"]
    assert "`churn was 4.3% [^s:STEP_ID]`" in report["rules"]
    assert "set the project to report_review" in report["rules"]
    assert "rules" not in results["read_plan"][0]

    s.app = LiveApp(AppState("q3-churn", [OpenTab("report", "projects/q3-churn/report.md")], 0))
    tab = s.prompt_preview(32_000).messages[-1]["content"]
    assert tab.startswith("# Active tab: report") and "[^s:STEP_ID]" in tab
