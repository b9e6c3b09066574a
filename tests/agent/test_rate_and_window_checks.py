"""The two result checks the issue found missing reach the model, with their advice: a rate
computed as a fraction that holds 2.27, and a window ``sum() over`` a join that repeats the
summed side. Driven through the real ``openai`` client and the loopback server."""

from __future__ import annotations

from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn

RATE_SQL = (
    "SELECT sum(converted) / sum(visits) AS conversion_rate "
    "FROM (VALUES (227.0, 100.0)) AS t(converted, visits)"
)
WINDOW_SQL = (
    "SELECT c.customer_id, c.segment, sum(c.customer_id) OVER (PARTITION BY c.segment) "
    "AS segment_ids FROM customers c JOIN orders o USING (customer_id)"
)


def test_the_model_sees_the_rate_and_the_window_fan_out_checks(session_factory, fake_openai):
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("run_query", {"sql": RATE_SQL}),
                ToolCall("run_query", {"sql": WINDOW_SQL}),
            ]
        ),
        Turn(text="Neither number is a finding yet."),
    )
    s = live_session(session_factory, fake_openai)
    run(s, "What is the conversion rate, and the ids per segment?")
    fake_openai.assert_done()
    rate, window = results_by_tool(fake_openai.chat_requests[-1])["run_query"]
    (ratio,) = [c for c in rate["checks"] if c["code"] == "IMPLAUSIBLE_RATIO"]
    assert "2.27" in ratio["message"] and ratio["advice"]
    (fan,) = [c for c in window["checks"] if c["code"] == "JOIN_FAN_OUT"]
    assert fan["severity"] == "error" and "OVER" in fan["message"] and fan["advice"]
    # the ledger keeps both checks with their steps
    steps = s.ledger.steps()
    assert "IMPLAUSIBLE_RATIO" in [c["code"] for c in steps[0]["checks"]]
    assert "JOIN_FAN_OUT" in [c["code"] for c in steps[1]["checks"]]
