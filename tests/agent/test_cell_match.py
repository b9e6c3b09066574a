"""A citation matches a cell, not a bag of values (issue 26): real steps of the sample
workspace (a scripted model through the real ``openai`` client, real DuckDB), real
Report text, the row-count rule, the column a word names, several cells said, older
ledger lines still read."""

from __future__ import annotations

import json

from lantide.agent.report_check import StepIndex, check_text
from tests.agent.live import live_session, run
from tests.fakes.openai_server import ToolCall, Turn

STATUS_SQL = (
    "SELECT status, count(*) AS orders, count(DISTINCT customer_id) AS customers "
    "FROM orders GROUP BY 1 ORDER BY 1"
)  # cancelled 4,962 orders / 1,838 customers; completed 107,845 / 2,000; refunded 7,193 / 1,945
TWINS_SQL = "SELECT 'a' AS side, 12 AS left_n, 12 AS right_n"


def _steps(session_factory, fake_openai, open_ws):
    open_ws.project("q3-churn").approve_plan()
    s = live_session(session_factory, fake_openai)
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("run_query", {"sql": STATUS_SQL, "purpose": "orders by status"}),
                ToolCall("run_query", {"sql": TWINS_SQL, "purpose": "twin counts"}),
            ]
        ),
        Turn(text="[[QUERY_STEP]] Orders by status.\n[[QUERY_STEP]] Twin counts."),
    )
    run(s, "Orders by status")
    status, twins = s.ledger.steps()
    assert status["row_count"] == 3 and status["evidence"] == "formal"
    return s, status["step_id"], twins["step_id"]


def _results(text, steps):
    return {r["number"]: r for r in check_text(text, StepIndex(steps, "q3-churn")).results}


def test_a_number_matches_a_cell_of_the_column_its_word_names_never_the_row_count(
    session_factory, fake_openai, open_ws, run_cli
):
    s, sid, twins = _steps(session_factory, fake_openai, open_ws)
    text = (
        f"Churn was 3% [^s:{sid}]. We lost 4,962 customers [^s:{sid}] and kept "
        f"1,838 customers [^s:{sid}] of 4,962 orders [^s:{sid}] in 3 statuses [^s:{sid}].\n\n"
        f"Both sides counted 12 [^s:{twins}].\n"
    )
    checked = check_text(text, StepIndex(s.ledger.steps(), "q3-churn"))
    assert [(p["number"], p["status"]) for p in checked.problems] == [
        ("3%", "not_matching"),
        ("4,962", "not_matching"),
    ]
    churn, lost, kept, orders, statuses, twelve = checked.results
    assert churn["number"] == "3%" and churn["status"] == "not_matching"  # no 3% cell
    assert lost["number"] == "4,962" and lost["status"] == "not_matching"  # orders, not customers
    assert kept["cells"] == [{"step": sid, "row": 1, "column": "customers"}]
    assert orders["number"] == "4,962" and orders["status"] == "matching"
    assert orders["cells"] == [{"step": sid, "row": 1, "column": "orders"}]
    assert statuses["cells"] == [{"step": sid, "row_count": 3}]  # "3 statuses" counts rows
    assert twelve["status"] == "matching" and twelve["several_cells"] is True
    assert [c["column"] for c in twelve["cells"]] == ["left_n", "right_n"]

    project = open_ws.project("q3-churn")
    project.report_path.write_text(f"We kept 1,838 customers [^s:{sid}].\n")
    out = run_cli("report", "check", open_ws.root, "q3-churn", "--json")
    assert out.returncode == 0, out.stdout
    (result,) = json.loads(out.stdout)["results"]
    assert result["cells"] == [{"step": sid, "row": 1, "column": "customers"}]


def test_an_older_ledger_line_without_cells_matches_as_before_except_the_row_count(
    session_factory, fake_openai, open_ws
):
    s, sid, _twins = _steps(session_factory, fake_openai, open_ws)
    old = [dict(step) for step in s.ledger.steps()]
    for step in old:  # as a ledger line written before cells were kept
        step.pop("result_cells")
    assert 3 in old[0]["result_values"]  # the row count was one of its values
    got = _results(f"Churn was 3% [^s:{sid}], 1,838 customers [^s:{sid}].\n", old)
    assert got["3%"]["status"] == "not_matching"
    assert got["1,838"]["status"] == "matching"
    assert got["1,838"]["cells"] == [{"step": sid, "row": None, "column": None}]
