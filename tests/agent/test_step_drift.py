"""A step run again is checked for drift as ``lantide sql`` checks a re-run: a step
recorded with 162 rows that comes back through ``read_step`` with 648 (the data changed)
says ROW_COUNT_DRIFT, in what the model receives. Driven through the real ``openai``
client and the loopback server, on a real CSV file in the workspace."""

from __future__ import annotations

import json
import os

from tests.agent.live import live_session, run, tool_results
from tests.fakes.openai_server import ToolCall, Turn

SQL = "SELECT * FROM visits ORDER BY visit_id"


def write_visits(path, n):
    lines = ["visit_id,customer_id,minutes"] + [f"{i},{i % 37},{i % 90}" for i in range(1, n + 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_step_read_again_with_four_times_its_rows_says_row_count_drift(
    session_factory, fake_openai, open_ws
):
    visits = open_ws.root / "data" / "visits.csv"
    write_visits(visits, 162)
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": SQL})]), Turn(text="162 visits.")
    )
    s = live_session(session_factory, fake_openai)
    run(s, "How many visits?")
    (step,) = s.ledger.steps()
    assert step["row_count"] == 162 and not step.get("materialized")

    write_visits(visits, 648)  # the data changed since the step ran
    later = visits.stat().st_mtime + 5
    os.utime(visits, (later, later))
    fake_openai.script(
        Turn(tool_calls=[ToolCall("read_step", {"step_id": step["step_id"], "rows": 5})]),
        Turn(text="The data changed."),
    )
    events = run(s, "Show me that step's rows again")
    fake_openai.assert_done()
    (read,) = [e for e in events if e.name == "tool_returned" and e.tool == "read_step"]
    page = read.result["rows"]
    assert page["row_count"] == 648
    (drift,) = [c for c in page["checks"] if c["code"] == "ROW_COUNT_DRIFT"]
    assert "162" in drift["message"] and "648" in drift["message"]
    # ... in what the model receives
    sent = list(tool_results(fake_openai.chat_requests[-1]).values())[-1]
    assert "ROW_COUNT_DRIFT" in json.dumps(sent)


def test_a_step_read_again_unchanged_has_no_drift(session_factory, fake_openai, open_ws):
    visits = open_ws.root / "data" / "visits.csv"
    write_visits(visits, 162)
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": SQL})]), Turn(text="162 visits.")
    )
    s = live_session(session_factory, fake_openai)
    run(s, "How many visits?")
    (step,) = s.ledger.steps()
    fake_openai.script(
        Turn(tool_calls=[ToolCall("read_step", {"step_id": step["step_id"], "rows": 5})]),
        Turn(text="Same."),
    )
    events = run(s, "Again")
    (read,) = [e for e in events if e.name == "tool_returned" and e.tool == "read_step"]
    assert read.result["rows"]["row_count"] == 162 and "checks" not in read.result["rows"]
