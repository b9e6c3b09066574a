"""The agent sees result checks and can profile columns: ``lantide chat`` in a subprocess,
the real ``openai`` client, the loopback server, the sample workspace (and a Source Run
through the scripted model at the engine's boundary)."""

from __future__ import annotations

import json

from tests.fakes.openai_server import ToolCall, Turn

FAN_OUT_SQL = (
    "SELECT c.segment, count(*) AS customers FROM customers c "
    "JOIN orders o USING (customer_id) GROUP BY 1"
)
FIXED_SQL = (
    "SELECT c.segment, count(DISTINCT c.customer_id) AS customers FROM customers c "
    "JOIN orders o USING (customer_id) GROUP BY 1"
)


def chat(run_cli, ws, server, message):
    proc = run_cli("chat", ws, "--json", message, env=server.env())
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def tool_messages(body):
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def test_the_model_sees_the_fan_out_check_and_the_ledger_keeps_it(
    run_cli, sample_workspace, fake_openai
):
    seen = {}

    def saw_fan_out(body):
        (result,) = tool_messages(body)
        fan = [c for c in result["checks"] if c["code"] == "JOIN_FAN_OUT"]
        assert fan and fan[0]["severity"] == "error"
        assert fan[0]["evidence"]["repeated_side"] == "customers c"
        assert "count distinct keys" in fan[0]["advice"]
        seen["fan_out"] = fan[0]

    def saw_clean_rerun(body):
        results = tool_messages(body)
        assert "checks" not in results[-1]  # count(DISTINCT …): nothing to say, nothing sent

    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": FAN_OUT_SQL})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": FIXED_SQL})], expect=saw_fan_out),
        Turn(
            text="Consumer has the most customers (exploratory).\n"
            "[[QUERY_STEP]] Customers per segment, first try — inflated by the join\n"
            "[[QUERY_STEP]] Customers per segment — distinct customers",
            expect=saw_clean_rerun,
        ),
    )
    events = chat(run_cli, sample_workspace, fake_openai, "How many customers per segment?")
    fake_openai.assert_done()
    assert seen["fan_out"]["evidence"]["joins"][0]["key"] == ["customer_id"]
    system = fake_openai.chat_requests[0]["messages"][0]["content"]
    assert "unresolved error-severity check" in system and "not a finding" in system
    conversation = [e for e in events if e["event"] == "turn_finished"][0]["conversation_id"]
    ledger = sample_workspace / ".lantide" / "ledger" / f"{conversation}.jsonl"
    first, second = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert [c["code"] for c in first["checks"]] == ["JOIN_FAN_OUT"]
    assert "advice" not in first["checks"][0]  # the ledger keeps the facts, not the prompt
    assert second["checks"] == []
    listed = json.loads(run_cli("ledger", sample_workspace, "--json").stdout)
    assert listed["steps"][0]["checks"][0]["code"] == "JOIN_FAN_OUT"
    table = run_cli("ledger", sample_workspace).stdout.splitlines()
    assert "checks" in table[0]
    assert [line for line in table if "JOIN_FAN_OUT" in line] == [
        line for line in table if first["step_id"] in line
    ]


def test_profile_columns_through_chat(run_cli, sample_workspace, fake_openai):
    def saw_profile(body):
        (profile,) = tool_messages(body)
        assert profile["table"] == "customers" and profile["row_count"] == 2_000
        by_name = {c["name"]: c for c in profile["columns"]}
        assert list(by_name) == ["segment", "customer_id"]
        assert by_name["customer_id"]["distinct_count"] == 2_000
        assert by_name["customer_id"]["null_count"] == 0
        assert {v for v, _ in by_name["segment"]["top_values"]} == {"Consumer", "SMB", "Enterprise"}
        assert sum(n for _, n in by_name["segment"]["top_values"]) == 2_000

    def saw_refusal(body):
        refusal = tool_messages(body)[-1]
        assert refusal["error"] == "COLUMN_NOT_FOUND" and "segment" in refusal["hint"]

    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall(
                    "profile_columns", {"table": "customers", "columns": ["segment", "CUSTOMER_ID"]}
                )
            ]
        ),
        Turn(
            tool_calls=[ToolCall("profile_columns", {"table": "customers", "columns": ["segmnt"]})],
            expect=saw_profile,
        ),
        Turn(
            text="customer_id is a clean key: 2,000 distinct values, no NULLs.", expect=saw_refusal
        ),
    )
    events = chat(run_cli, sample_workspace, fake_openai, "Is customer_id a clean key?")
    fake_openai.assert_done()
    assert [e["ok"] for e in events if e["event"] == "tool_returned"] == [True, False]
    offered = {t["function"]["name"] for t in fake_openai.chat_requests[0]["tools"]}
    assert "profile_columns" in offered


def test_source_run_gives_each_tabs_checks_with_advice(session_factory, scripted, open_ws):
    from tests.agent.scripted_model import reply

    project = open_ws.project("q3-churn")
    project.approve_plan()
    (project.sql_dir / "segment_sizes.sql").write_text(
        "SELECT c.segment, count(*) AS customers\nFROM clean_orders o\n"
        "JOIN customers c USING (customer_id)\nGROUP BY 1\n"
    )
    seen: list = []
    scripted.add(
        reply("", ("source_run_sql_tab", {"tab": "segment_sizes", "purpose": "segment sizes"}))
    )
    scripted.add(
        reply("The segment sizes are inflated by the join; fixing it next."),
        expect=lambda messages, tools: seen.append(json.loads(messages[-1]["content"])),
    )
    session = session_factory()
    list(session.run_turn("How big is each segment?"))
    scripted.assert_done()
    (report,) = seen
    by_tab = {t["tab"]: t for t in report["tabs"]}
    fan = [c for c in by_tab["segment_sizes"]["checks"] if c["code"] == "JOIN_FAN_OUT"]
    assert fan and fan[0]["advice"].startswith("The join repeats rows")
    assert all("advice" in c for t in report["tabs"] for c in t.get("checks", []))
    step = next(
        s for s in session.ledger.steps() if s["step_id"] == by_tab["segment_sizes"]["step_id"]
    )
    assert [c["code"] for c in step["checks"]] == ["JOIN_FAN_OUT"]
