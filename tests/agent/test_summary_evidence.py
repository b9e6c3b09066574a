"""Step summaries are evidence too (issue 26 item 4, DESIGN.md section 9): a
``[[QUERY_STEP]]`` summary whose numbers its step's result does not hold is stored as
``mismatch``, and the model is told in its next tool result, as it is of duplicate and
unknown step ids. Driven through the real ``openai`` client and the loopback server."""

from __future__ import annotations

from lantide.templates import render_prompt
from tests.agent.live import live_session, results_by_tool
from tests.agent.test_step_attribution import run_scripting_after_steps
from tests.fakes.openai_server import ToolCall, Turn

CUSTOMERS = "SELECT count(*) AS n FROM customers"  # 2,000 in the sample workspace
ORDERS = "SELECT count(*) AS n FROM orders"  # 120,000


def _last_results(server, tool: str) -> list[dict]:
    return results_by_tool(server.chat_requests[-1])[tool]


def test_swapped_ids_end_as_mismatch_and_the_next_request_says_so(session_factory, fake_openai):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": ORDERS})]),
    )

    def swap(ids):
        if len(ids) < 2:
            return None
        customers, orders = ids
        return [
            Turn(
                text=f"[[QUERY_STEP]] {customers}: order count — 120,000 orders\n"
                f"[[QUERY_STEP]] {orders}: customer count — 2,000 customers",
                tool_calls=[ToolCall("show_tables", {})],
            ),
            Turn(text="There are 2,000 customers and 120,000 orders."),
        ]

    s = live_session(session_factory, fake_openai)
    events = run_scripting_after_steps(s, fake_openai, "Customers and orders?", swap)
    fake_openai.assert_done()
    customers, orders = s.ledger.steps()
    assert customers["summary"] == "order count — 120,000 orders"
    assert customers["summary_status"] == "mismatch"
    assert customers["summary_unmatched"] == ["120,000"]
    assert orders["summary_status"] == "mismatch"
    assert orders["summary_unmatched"] == ["2,000"]
    assert [e.summary_status for e in events if e.name == "step_summarized"] == ["mismatch"] * 2

    (shown,) = _last_results(fake_openai, "show_tables")
    told = shown["step_summaries"]
    assert [(p["problem"], p["step_id"], p["numbers"]) for p in told["problems"]] == [
        ("mismatch", customers["step_id"], ["120,000"]),
        ("mismatch", orders["step_id"], ["2,000"]),
    ]
    assert f"{customers['step_id']}: your summary states 120,000" in told["message"]
    assert "its values: 2,000" in told["message"]
    assert "patch_step" in told["message"]


def test_a_summary_its_result_holds_is_parsed_and_nothing_is_told(session_factory, fake_openai):
    fake_openai.script(Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]))

    def summarise(ids):
        return [
            Turn(
                text=f"[[QUERY_STEP]] {ids[0]}: customers in the last 30 days of Q2 2024 — "
                "2,000 customers (2k)",
                tool_calls=[ToolCall("show_tables", {})],
            ),
            Turn(text="2,000 customers."),
        ]

    s = live_session(session_factory, fake_openai)
    run_scripting_after_steps(s, fake_openai, "Customers?", summarise)
    fake_openai.assert_done()
    (step,) = s.ledger.steps()
    assert step["summary_status"] == "parsed"
    assert "summary_unmatched" not in step
    (shown,) = _last_results(fake_openai, "show_tables")
    assert "step_summaries" not in shown


def test_duplicate_and_unknown_ids_are_told_in_the_next_tool_result(session_factory, fake_openai):
    fake_openai.script(Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]))

    def lines(ids):
        return [
            Turn(
                text=f"[[QUERY_STEP]] {ids[0]}: customer count — 2,000 customers\n"
                f"[[QUERY_STEP]] {ids[0]}: customer count again — 2,000\n"
                "[[QUERY_STEP]] s99: churned customers — 140 churned",
                tool_calls=[ToolCall("show_tables", {})],
            ),
            Turn(text="2,000 customers."),
        ]

    s = live_session(session_factory, fake_openai)
    events = run_scripting_after_steps(s, fake_openai, "Customers?", lines)
    fake_openai.assert_done()
    (step,) = s.ledger.steps()
    # issue 30 item 3: each line's real outcome is reported, in order, for the screens
    (read,) = [e for e in events if e.name == "step_lines_read"]
    assert read.lines == (
        {"step_id": step["step_id"], "outcome": "parsed"},
        {"step_id": None, "outcome": "duplicate"},
        {"step_id": None, "outcome": "unknown_step"},
    )
    (kept,) = s.conversation.events(("step_lines_read",))
    assert kept["lines"] == list(read.lines)
    assert step["summary"] == "customer count — 2,000 customers"
    assert step["summary_status"] == "parsed"
    assert [k["step_ref"] for k in s.ledger.unattributed()] == [step["step_id"], "s99"]

    (shown,) = _last_results(fake_openai, "show_tables")
    told = shown["step_summaries"]
    assert [(p["problem"], p["step_id"]) for p in told["problems"]] == [
        ("duplicate", step["step_id"]),
        ("unknown_step", "s99"),
    ]
    assert f"names {step['step_id']}, which already has its summary" in told["message"]
    assert "names s99, which is no step of this conversation" in told["message"]


def test_a_problem_in_a_final_answer_is_told_in_the_next_turns_first_tool_result(
    session_factory, fake_openai
):
    fake_openai.script(Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]))

    def answer(ids):
        return [Turn(text=f"120,000 customers.\n[[QUERY_STEP]] {ids[0]}: count — 120,000")]

    s = live_session(session_factory, fake_openai)
    run_scripting_after_steps(s, fake_openai, "Customers?", answer)
    fake_openai.script(
        Turn(tool_calls=[ToolCall("show_tables", {})]),
        Turn(text="Done."),
    )
    list(s.run_turn("And the tables?"))
    fake_openai.assert_done()
    (step,) = s.ledger.steps()
    assert step["summary_status"] == "mismatch"
    (shown,) = _last_results(fake_openai, "show_tables")
    assert shown["step_summaries"]["problems"][0]["numbers"] == ["120,000"]
    # once its result has left the history, Recent Query Steps keeps saying it
    recent = render_prompt("recent_steps.md.j2", steps=[step])
    assert "count — 120,000 (summary mismatch: its result holds no 120,000)" in recent


def test_a_notice_waiting_when_the_session_ends_reaches_the_next_session(
    session_factory, fake_openai
):
    """``lantide chat`` runs one turn per process: the notice is kept in the conversation
    until a tool result carries it, once."""
    fake_openai.script(Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]))

    def answer(ids):
        return [Turn(text=f"[[QUERY_STEP]] {ids[0]}: count — 120,000")]

    first = live_session(session_factory, fake_openai)
    run_scripting_after_steps(first, fake_openai, "Customers?", answer)
    conversation_id = first.conversation.id
    first.close()
    fake_openai.script(
        Turn(tool_calls=[ToolCall("show_tables", {})]),
        Turn(tool_calls=[ToolCall("show_tables", {"name": "orders"})]),
        Turn(text="Done."),
    )
    second = live_session(session_factory, fake_openai, conversation_id=conversation_id)
    list(second.run_turn("And the tables?"))
    fake_openai.assert_done()
    told, after = _last_results(fake_openai, "show_tables")
    assert told["step_summaries"]["problems"][0]["numbers"] == ["120,000"]
    assert "step_summaries" not in after  # carried once
    third = live_session(session_factory, fake_openai, conversation_id=conversation_id)
    assert third.summary_notices == []


def test_patch_step_with_a_number_the_result_does_not_hold_stays_a_mismatch(
    session_factory, fake_openai
):
    fake_openai.script(Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]))

    def patch(ids):
        return [
            Turn(
                text=f"[[QUERY_STEP]] {ids[0]}: customer count — 2,000 customers",
                tool_calls=[
                    ToolCall("patch_step", {"step_id": ids[0], "summary": "count — 2,500"})
                ],
            ),
            Turn(tool_calls=[ToolCall("patch_step", {"step_id": ids[0], "summary": "count — 2k"})]),
            Turn(text="2,000 customers."),
        ]

    s = live_session(session_factory, fake_openai)
    run_scripting_after_steps(s, fake_openai, "Customers?", patch)
    fake_openai.assert_done()
    first, second = _last_results(fake_openai, "patch_step")
    assert first["summary_status"] == "mismatch"
    assert first["step_summaries"]["problems"][0]["numbers"] == ["2,500"]
    assert "summary_status" not in second
    (step,) = s.ledger.steps()
    assert step["summary"] == "count — 2k" and step["summary_status"] == "patched"
    assert step["summary_unmatched"] is None


def test_the_numbers_of_a_finding_are_read_as_written():
    from lantide.agent.summary_check import findings_part, summary_numbers, unmatched_numbers

    step = {"result_values": [0.123, 1412, -0.04], "row_count": 12}
    assert findings_part("Q2 churn of top 10 — 12.3% churned") == "12.3% churned"
    assert findings_part("no dash 1,412") == "no dash 1,412"
    # rounding, percent as fraction, scale words, sign not compared unless written, row count
    assert unmatched_numbers("churn — 12% (0.12), 1.4k active, fell 4%, 12 rows", step) == []
    assert unmatched_numbers("churn — rose +4%", step) == ["+4%"]
    assert unmatched_numbers("churn — 12.5%, 1,413 active", step) == ["12.5%", "1,413"]
    # dates, a year alone, labels and numbers glued to words are no findings
    texts = [n.text for n in summary_numbers("x — in 2024, on 2024-03-01, week 12, Q2, s3: 7")]
    assert texts == ["7"]
    # a step whose values the ledger holds only in part cannot be judged
    assert unmatched_numbers("x — 99", {**step, "result_values_cut": True}) == []
    assert unmatched_numbers("x — 99", {"row_count": 3}) == []
