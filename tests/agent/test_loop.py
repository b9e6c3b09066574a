"""The ReAct loop with a scripted model and the real engine layers on the sample workspace."""

from __future__ import annotations

import json
import threading

from lantide.agent.cancel import CancelToken
from lantide.agent.model_client import ContextLengthExceeded, ModelReply, ModelStreamBroken
from lantide.workspace.settings import AgentSettings, Settings
from tests.agent.scripted_model import reply

SLOW_SQL = "SELECT sum(hash(a.range * b.range)) AS h FROM range(200000) a, range(200000) b"


def run(session, message, cancel=None):
    return list(session.run_turn(message, cancel))


def tool_results(request):
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_ask_user_pauses_and_the_next_message_answers(session_factory, scripted):
    scripted.add(
        reply(
            "",
            (
                "ask_user",
                {
                    "question": "Which denominator?",
                    "choices": ["All Q2 actives", "Signed up before Q2"],
                },
            ),
        )
    )
    s = session_factory()
    events = run(s, "Resolve the denominator question")
    asked = [e for e in events if e.name == "question_asked"]
    assert asked and asked[0].choices == ["All Q2 actives", "Signed up before Q2"]
    assert events[-1].reason == "question"
    assert s.conversation.pending_question()["question"] == "Which denominator?"

    def sees_answer(messages, tools):
        assert messages[-1]["role"] == "user" or "Active tab" in messages[-1]["content"]
        assert "Your last question" in messages[0]["content"]
        assert "Which denominator?" in messages[0]["content"]
        user = [m["content"] for m in messages if m["role"] == "user"]
        assert "All Q2 actives" in user

    scripted.add(reply("Using all Q2 actives."), expect=sees_answer)
    events = run(s, "All Q2 actives")
    assert events[-1].reason == "answered"
    assert s.conversation.pending_question() is None
    assert s.conversation.last_answer()["answer"] == "All Q2 actives"
    scripted.assert_done()


def test_iteration_limit_ends_with_an_honest_message(session_factory, scripted):
    for _ in range(3):
        scripted.add(reply("", ("get_app_context", {})))
    s = session_factory(settings=Settings(agent=AgentSettings(max_iterations=3)))
    events = run(s, "Explore everything")
    finished = events[-1]
    assert finished.reason == "iteration_limit" and finished.iterations == 3
    assert "stopped after 3 steps" in finished.message
    last = s.conversation.message_records()[-1]["message"]
    assert last == {"role": "assistant", "content": finished.message}
    scripted.assert_done()


def test_repeating_the_same_failing_call_is_stopped_early(session_factory, scripted):
    bad = ("read_sql_tab", {"tab": "no_such_tab"})
    for _ in range(3):
        scripted.add(reply("", bad))
    s = session_factory()
    events = run(s, "Show me the tab")
    returned = [e.result["error"] for e in events if e.name == "tool_returned"]
    assert returned == ["TAB_NOT_FOUND", "REPEATED_CALL", "REPEATED_CALL"]
    assert events[-1].reason == "repeated_failure"
    assert "no_such_tab" in events[-1].message
    scripted.assert_done()


def test_statistics_need_consent_asked_answered_and_activated(session_factory, scripted, open_ws):
    open_ws.project("q3-churn").approve_plan()
    corr = {"sql": "SELECT corr(quantity, unit_price) AS r FROM orders", "purpose": "price vs qty"}
    scripted.add(reply("", ("run_query", corr), ("activate_analysis", {"reason": "test"})))
    scripted.add(
        reply(
            "",
            (
                "ask_user",
                {
                    "question": "May I compute the correlation?",
                    "choices": ["Yes", "No"],
                    "kind": "analysis_consent",
                    "analysis": ["correlation"],
                },
            ),
        )
    )
    s = session_factory()
    events = run(s, "Is price related to quantity?")
    refused = [e.result for e in events if e.name == "tool_returned"]
    assert [r.get("error") for r in refused[:2]] == ["CONSENT_REQUIRED", "CONSENT_REQUIRED"]
    # activate_analysis' refusal says how to ask and when to activate (the core only
    # states the rule; the tool itself is sent only in the turn of a yes)
    assert 'kind "analysis_consent"' in refused[1]["hint"] and "same turn" in refused[1]["hint"]
    assert events[-1].reason == "question"

    scripted.add(
        reply(
            "", ("activate_analysis", {"reason": "price/quantity correlation"}), ("run_query", corr)
        )
    )
    scripted.add(reply("r is close to zero.\n[[QUERY_STEP]] correlation of price and quantity"))
    events = run(s, "Yes, go ahead")
    returned = {e.tool: e for e in events if e.name == "tool_returned"}
    assert returned["activate_analysis"].ok and returned["run_query"].ok
    step = s.ledger.steps()[-1]
    assert "corr(" in step["sql"] and step["purpose"] == "price vs qty"
    assert step["summary"] == "correlation of price and quantity"
    scripted.assert_done()


def test_a_no_is_not_consent(session_factory, scripted, open_ws):
    open_ws.project("q3-churn").approve_plan()
    scripted.add(
        reply(
            "",
            (
                "ask_user",
                {
                    "question": "Run a regression?",
                    "kind": "analysis_consent",
                    "analysis": ["regression"],
                },
            ),
        )
    )
    s = session_factory()
    run(s, "Why do customers churn?")
    scripted.add(reply("", ("activate_analysis", {"reason": "regression"})))
    scripted.add(reply("Understood, descriptive only."))
    events = run(s, "No, don't")
    assert [e.result.get("error") for e in events if e.name == "tool_returned"] == [
        "CONSENT_NOT_GIVEN"
    ]
    assert not s.conversation.analysis_active()


def test_planning_runs_no_statistics(session_factory, scripted):
    scripted.add(
        reply("", ("run_query", {"sql": "SELECT regr_slope(quantity, unit_price) FROM orders"}))
    )
    scripted.add(reply("Not while planning."))
    s = session_factory()
    events = run(s, "Fit a slope")
    assert [e.result.get("error") for e in events if e.name == "tool_returned"] == [
        "ANALYSIS_NOT_IN_THIS_STATE"
    ]


def test_cancel_interrupts_a_running_query_and_keeps_the_history_valid(session_factory, scripted):
    scripted.add(reply("", ("run_query", {"sql": SLOW_SQL}), ("show_tables", {})))
    s = session_factory()
    cancel = CancelToken()
    events = []
    for event in s.run_turn("Heavy query please", cancel):
        events.append(event)
        if event.name == "tool_called" and event.tool == "run_query":
            threading.Timer(0.5, cancel.cancel).start()
    assert events[-1].reason == "cancelled"
    assert not s.ledger.steps()
    tools = [r for r in s.conversation.message_records() if r["message"]["role"] == "tool"]
    assert [json.loads(r["message"]["content"])["error"] for r in tools] == ["CANCELLED"] * 2

    def history_is_valid(messages, names):
        ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
        answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert ids == answered

    scripted.add(reply("Stopped as asked."), expect=history_is_valid)
    assert run(s, "never mind")[-1].reason == "answered"
    scripted.assert_done()


def test_a_broken_stream_keeps_the_partial_answer(session_factory, scripted):
    partial = ModelReply("Churn was highest in", [])
    scripted.add(ModelStreamBroken("the answer broke off after 20 characters", partial))
    s = session_factory()
    events = run(s, "Where was churn highest?")
    assert [e.name for e in events][-2:] == ["error", "turn_finished"]
    assert events[-1].reason == "error"
    kept = s.conversation.message_records()[-1]
    assert kept["message"] == {"role": "assistant", "content": "Churn was highest in"}
    assert kept["partial"] is True


def test_context_length_error_is_learned_and_not_sent_again_unchanged(session_factory, scripted):
    # nothing in a first message can be compacted: the same request would fail again, so
    # the turn ends with a message naming the window instead of sending it (issue 11, 14)
    scripted.add(ContextLengthExceeded("maximum context length is 9000 tokens", 9000))
    s = session_factory()
    events = run(s, "hello")
    assert scripted.learned == [9000] and len(scripted.requests) == 1
    assert events[-1].reason == "error"
    (error,) = [e for e in events if e.name == "error"]
    assert error.code == "CONTEXT_WINDOW_TOO_SMALL" and "context window" in error.message
    scripted.assert_done()


def test_long_turn_compacts_earlier_results_keeping_the_step_fields(session_factory, scripted):
    wide = (
        "SELECT "
        + ", ".join(
            [
                "order_id",
                "customer_id",
                "product_id",
                "order_date",
                "quantity",
                "unit_price",
                "status",
                "channel",
            ]
        )
        + " FROM orders"
    )
    for i in range(4):
        scripted.add(
            reply("", ("run_query", {"sql": f"{wide} WHERE order_id % 4 = {i} LIMIT 200"}))
        )

    def compacted(messages, names):
        first = json.loads([m for m in messages if m["role"] == "tool"][0]["content"])
        assert first["compacted"] is True
        assert set(first) >= {
            "step_id",
            "cached_table_name",
            "materialized",
            "materialize_reason",
            "warnings",
            "sql_preview",
        }
        assert first["sql_preview"] == f"{wide} WHERE order_id % 4 = 0 LIMIT 200"[:200]

    scripted.add(reply("Four slices seen."), expect=compacted)
    scripted.window = (
        8_192  # the default window (the fixed layers and the answer's reserve take about half)
    )
    s = session_factory()
    events = run(s, "Look at orders in four slices")
    assert any(e.name == "context_compacted" for e in events)
    assert events[-1].reason == "answered"
    ledger_ids = [st["step_id"] for st in s.ledger.steps()]
    first = json.loads(
        [m for m in scripted.requests[-1]["messages"] if m["role"] == "tool"][0]["content"]
    )
    assert first["step_id"] == ledger_ids[0]
    assert all(st["summary_status"] == "missing" for st in s.ledger.steps())
    scripted.assert_done()


def test_conversation_reopens_with_its_history(session_factory, scripted):
    scripted.add(reply("", ("focus_project", {"project": "q3-churn"})))
    scripted.add(reply("Focused."))
    first = session_factory()
    run(first, "Focus the churn project")

    def sees_turn_one(messages, names):
        contents = [m.get("content") for m in messages]
        assert "Focus the churn project" in contents and "Focused." in contents

    scripted.add(reply("Still here."), expect=sees_turn_one)
    again = session_factory(first.conversation.id)
    assert again.conversation.last_turn == 1
    assert run(again, "Still there?")[-1].reason == "answered"
    assert again.conversation.events(("project_focused",))[0]["project"] == "q3-churn"
    scripted.assert_done()


def test_patch_step_corrects_a_missing_summary(session_factory, scripted):
    scripted.add(reply("", ("run_query", {"sql": "SELECT count(*) AS n FROM customers"})))
    scripted.add(reply("There are 2,000 customers."))  # no [[QUERY_STEP]] line
    s = session_factory()
    events = run(s, "How many customers?")
    step = s.ledger.steps()[0]
    assert step["summary_status"] == "missing" and step["summary"] is None
    assert [e.summary_status for e in events if e.name == "step_summarized"] == ["missing"]
    scripted.add(
        reply(
            "",
            (
                "patch_step",
                {"step_id": step["step_id"], "summary": "customer count — 2,000 rows in customers"},
            ),
        )
    )
    scripted.add(reply("Corrected."))
    run(s, "Fix the ledger")
    fixed = s.ledger.step(step["step_id"])
    assert fixed["summary"] == "customer count — 2,000 rows in customers"
    assert fixed["summary_status"] == "patched" and fixed["patches"][0]["by"] == "agent"


def test_tab_runs_and_source_run_land_in_the_ledger(session_factory, scripted, open_ws):
    open_ws.project("q3-churn").approve_plan()
    scripted.add(reply("", ("run_query", {"sql": "SELECT count(*) AS n FROM orders"})))
    scripted.add(reply("", ("run_sql_tab", {"tab": "clean_orders", "purpose": "clean orders"})))
    scripted.add(
        reply(
            "", ("source_run_sql_tab", {"tab": "q3_churn_by_region", "purpose": "churn by region"})
        )
    )
    scripted.add(reply("Done.\n[[QUERY_STEP]] clean orders — orders without cancellations"))
    s = session_factory()
    events = run(s, "Run the plan")
    results = [e.result for e in events if e.name == "tool_returned"]
    assert results[0]["error"] == "PURPOSE_REQUIRED"  # the QEM's rule while executing
    assert results[1]["cached_table_name"] == "clean_orders"
    report = results[2]
    assert [t["tab"] for t in report["tabs"]] == [
        "clean_orders",
        "customer_quarters",
        "q3_churn_by_region",
    ]
    steps = s.ledger.steps()
    assert [st["tool"] for st in steps] == ["run_sql_tab"] + ["source_run_sql_tab"] * (
        len(steps) - 1
    )
    assert steps[0]["purpose"] == "clean orders"
    assert report["step_ids"] == [st["step_id"] for st in steps[1:]]
    # the line names no step while several wait: kept unattributed, never guessed
    assert {st["summary_status"] for st in steps} == {"missing"}
    assert [u["summary"] for u in s.ledger.unattributed()] == [
        "clean orders — orders without cancellations"
    ]
    assert all(st["conversation_id"] == s.conversation.id for st in steps)


def test_dropped_turns_leave_their_key_events_in_a_note(session_factory, scripted, open_ws):
    s = session_factory()
    scripted.add(
        reply(
            "",
            ("focus_project", {"project": "q3-churn"}),
            ("set_project_status", {"status": "plan_review"}),
        )
    )
    scripted.add(reply("Focused and executing."))
    run(s, "Focus churn and start executing")
    for i in range(6):
        scripted.add(reply("", ("read_plan", {})))
        scripted.add(reply(f"Read the plan again ({i})."))
        run(s, f"Read the plan, round {i}")
    scripted.window = 5_000  # small enough that turn 1 no longer fits

    def note(messages, names):
        system = messages[0]["content"]
        assert "# Earlier in this conversation" in system
        assert "turn 1: focused project q3-churn" in system
        assert "turn 1: project q3-churn status planning → plan_review" in system
        users = [m["content"] for m in messages if m["role"] == "user"]
        assert "Focus churn and start executing" not in users and users[-1] == "and now?"

    scripted.add(reply("Here."), expect=note)
    run(s, "and now?")
    scripted.assert_done()


def test_calls_after_a_stop_get_a_result_so_the_history_stays_valid(session_factory, scripted):
    bad = ("read_sql_tab", {"tab": "no_such_tab"})
    scripted.add(reply("", bad)).add(reply("", bad)).add(reply("", bad, ("get_app_context", {})))
    s = session_factory()
    assert run(s, "Show me the tab")[-1].reason == "repeated_failure"
    last = [r for r in s.conversation.message_records() if r["message"]["role"] == "tool"][-1]
    assert json.loads(last["message"]["content"])["error"] == "NOT_RUN"

    def history_is_valid(messages, names):
        ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
        assert ids == [m["tool_call_id"] for m in messages if m["role"] == "tool"]

    scripted.add(reply("Let us try another way."), expect=history_is_valid)
    assert run(s, "ok")[-1].reason == "answered"


def test_an_unreadable_project_file_ends_the_turn_with_a_clear_error(
    session_factory, scripted, open_ws
):
    scripted.add(reply("", ("get_app_context", {})))
    s = session_factory()
    (open_ws.projects_dir / "q3-churn" / "project.json").write_text("{broken")
    events = run(s, "Where am I?")
    (error,) = [e for e in events if e.name == "error"]
    assert error.code == "FILE_CORRUPT" and "project.json" in error.message
    assert events[-1].reason == "error"
    assert (open_ws.projects_dir / "q3-churn" / "project.json").read_text() == "{broken"
