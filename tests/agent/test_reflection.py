"""Reflect before reporting: the review before update_report and before a final numeric
answer in Executing, with the real loop, ledger and files on the sample workspace."""

from __future__ import annotations

import json

import pytest

from lantide.agent.model_client import ModelError
from lantide.agent.reflection import CHECKLIST, parse_verdict, states_a_number
from tests.agent.scripted_model import reply

COUNT = {"sql": "SELECT count(*) AS churned FROM customers", "purpose": "churned customers"}
REPORT = "# Report: Q3 churn\n\n2,000 customers were counted in Q3 [^s:LAST].\n"


def citing_last_step(session, outcome, also=None):
    """Scripted replies are written before the run; the step id is the ledger's: the
    citation placeholder LAST becomes the id of the last step when the reply is taken."""

    def expect(messages, tools):
        if also is not None:
            also(messages, tools)
        step_id = session.ledger.steps()[-1]["step_id"]
        for call in outcome.tool_calls:
            call.arguments = call.arguments.replace("LAST", step_id)

    return expect


def verdict(ok: bool, problems=(), failing=()) -> str:
    return json.dumps(
        {
            "ok": ok,
            "checklist": {
                item: {"ok": item not in failing, "note": f"{item} looked at"} for item in CHECKLIST
            },
            "problems": list(problems),
        }
    )


PASS = verdict(True)
FAIL = verdict(False, ["the denominator counts test accounts"], failing=("filters",))


def review(answer: str | BaseException):
    """The reflection's request in the script: no tools, the checklist as system prompt."""

    def is_review(messages, tools):
        assert tools == [] and "skeptical reviewer" in messages[0]["content"]

    return (answer if isinstance(answer, BaseException) else reply(answer)), is_review


def reflection_calls(scripted):
    return [
        (r["messages"][0]["content"], r["messages"][1]["content"])
        for r in scripted.requests
        if not r["tools"] and "skeptical reviewer" in r["messages"][0]["content"]
    ]


def run(session, message):
    return list(session.run_turn(message))


@pytest.fixture
def executing(open_ws):
    open_ws.project("q3-churn").approve_plan()
    return open_ws


def report_text(ws) -> str:
    return (ws.root / "projects" / "q3-churn" / "report.md").read_text()


def test_a_failing_review_refuses_update_report_and_the_agent_asks(
    session_factory, scripted, executing
):
    before = report_text(executing)
    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(
        reply(
            "[[QUERY_STEP]] churned customers — 412 rows counted",
            ("update_report", {"content": REPORT}),
        )
    )
    scripted.add(*review(FAIL))

    def sees_refusal(messages, tools):
        result = json.loads([m for m in messages if m["role"] == "tool"][-1]["content"])
        assert result["error"] == "REFLECTION_FAILED"
        assert "test accounts" in result["message"] and "ask_user" in result["hint"]

    scripted.add(
        reply("", ("ask_user", {"question": "Exclude test accounts from the count?"})),
        expect=sees_refusal,
    )
    s = session_factory()
    events = run(s, "Write the churn count into the Report")
    assert events[-1].reason == "question"
    assert report_text(executing) == before  # nothing reported past the problem
    recorded = [e.reflection for e in events if e.name == "reflection_recorded"]
    assert len(recorded) == 1 and recorded[0]["ok"] is False
    step_ids = [st["step_id"] for st in s.ledger.steps()]
    assert recorded[0]["subject"] == "update_report" and recorded[0]["steps"] == step_ids
    assert {i["item"]: i["ok"] for i in recorded[0]["checklist"]}["filters"] is False
    lines = [json.loads(x) for x in s.ledger.path.read_text().splitlines()]
    assert [x["tool"] for x in lines] == ["run_query", "reflection"]
    assert lines[1]["problems"] == ["the denominator counts test accounts"]
    assert len(step_ids) == 1  # the reflection is not a query step
    system, user = reflection_calls(scripted)[0]
    assert "denominator" in system and REPORT.strip() in user
    assert "SELECT count(*) AS churned FROM customers" in user and "Churned" in user  # the Plan
    scripted.assert_done()


@pytest.mark.usefixtures("agent_edits_apply")  # the Report is written at once
def test_a_passing_review_lets_update_report_write(session_factory, scripted, executing):
    s = session_factory()
    scripted.add(reply("", ("run_query", COUNT)))
    writes = reply("", ("update_report", {"content": REPORT}))
    scripted.add(writes, expect=citing_last_step(s, writes))
    scripted.add(*review(PASS))
    scripted.add(reply("The Report states the count with its step."))
    events = run(s, "Write the churn count into the Report")
    assert events[-1].reason == "answered"
    assert report_text(executing) == REPORT.replace("LAST", s.ledger.steps()[-1]["step_id"])
    assert [r["ok"] for r in s.ledger.reflections()] == [True]
    scripted.assert_done()


@pytest.mark.parametrize(
    "garbage",
    [
        "Looks good to me!",
        '{"ok": true}',  # no checklist at all
        '{"ok": "yes", "checklist": {}, "problems": []}',
        json.dumps(
            {"ok": True, "checklist": {i: {"ok": "true"} for i in CHECKLIST}, "problems": []}
        ),
        json.dumps(
            {
                "ok": True,
                "checklist": {i: {"ok": True} for i in CHECKLIST},
                "problems": ["grain unclear"],
            }
        ),
        "[true]",
        "",
    ],
)
def test_garbage_from_the_reviewer_is_never_a_pass(garbage):
    v = parse_verdict(garbage)
    assert v.ok is False and v.problems


def test_a_fenced_passing_review_is_read():
    assert parse_verdict(f"Here you go:\n```json\n{PASS}\n```").ok is True


def test_garbage_review_blocks_the_report(session_factory, scripted, executing):
    before = report_text(executing)
    scripted.add(reply("", ("run_query", COUNT), ("update_report", {"content": REPORT})))
    scripted.add(*review("Sure, ship it."))
    scripted.add(reply("I could not get the review to pass; the Report is unchanged."))
    s = session_factory()
    events = run(s, "Report the churn count")
    returned = [e for e in events if e.name == "tool_returned"]
    assert [(e.tool, e.ok) for e in returned] == [("run_query", True), ("update_report", False)]
    assert report_text(executing) == before
    line = s.ledger.reflections()[0]
    assert line["ok"] is False and line["raw"] == "Sure, ship it."
    scripted.assert_done()


def test_a_model_error_during_the_review_is_a_failure(session_factory, scripted, executing):
    before = report_text(executing)
    scripted.add(reply("", ("run_query", COUNT), ("update_report", {"content": REPORT})))
    scripted.add(*review(ModelError("the server answered HTTP 500")))
    scripted.add(reply("The review could not run."))
    s = session_factory()
    run(s, "Report the churn count")
    assert report_text(executing) == before
    assert "could not run" in s.ledger.reflections()[0]["problems"][0]
    scripted.assert_done()


def test_a_final_numeric_answer_is_reviewed_and_fixed_before_the_turn_ends(
    session_factory, scripted, executing
):
    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(reply("[[QUERY_STEP]] s1: churned customers — 412\n412 customers churned."))
    scripted.add(*review(FAIL))

    def sees_problems(messages, tools):
        notes = [
            m["content"]
            for m in messages
            if m["role"] == "user"
            and m["content"].startswith("[Lantide reflection, not the analyst]")
        ]
        assert len(notes) == 1 and "test accounts" in notes[0]

    fixed = {
        "sql": "SELECT count(*) AS churned FROM customers WHERE NOT is_test_account",
        "purpose": "churned, no test accounts",
    }
    scripted.add(reply("", ("run_query", fixed)), expect=sees_problems)
    scripted.add(
        reply(
            "[[QUERY_STEP]] s2: churned, no test accounts — 389\n"
            "389 customers churned (test accounts excluded)."
        )
    )
    scripted.add(*review(PASS))
    s = session_factory()
    events = run(s, "How many customers churned?")
    assert events[-1].reason == "answered"
    assert [r["ok"] for r in s.ledger.reflections()] == [False, True]
    assert [r["subject"] for r in s.ledger.reflections()] == ["final_answer"] * 2
    assert s.ledger.reflections()[1]["steps"] == [st["step_id"] for st in s.ledger.steps()]
    assert len(s.ledger.steps()) == 2
    # the feedback is an engine message in the history, not the analyst's words
    feedback = [r for r in s.conversation.message_records() if r.get("reflection")]
    assert len(feedback) == 1 and feedback[0]["engine_note"] is True
    scripted.assert_done()


def test_answers_that_keep_failing_stop_the_turn_honestly(session_factory, scripted, executing):
    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(reply("412 customers churned."))
    scripted.add(*review(FAIL))
    scripted.add(reply("Still 412 customers churned."))
    scripted.add(*review(FAIL))
    s = session_factory()
    events = run(s, "How many customers churned?")
    finished = events[-1]
    assert finished.reason == "reflection_failed"
    assert "unverified" in finished.message and "test accounts" in finished.message
    assert s.conversation.message_records()[-1]["message"]["content"] == finished.message
    scripted.assert_done()


def test_no_review_when_nothing_numeric_is_reported(session_factory, scripted, open_ws):
    # nothing but these replies is scripted: a review would take one and fail the test
    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(reply("Exploratory: 412 customers in the table."))  # planning: not a finding
    s = session_factory()
    assert run(s, "How many customers are there?")[-1].reason == "answered"
    open_ws.project("q3-churn").approve_plan()
    scripted.add(reply("The count is in the step above; nothing to add."))  # no query this turn
    scripted.add(reply("", ("get_app_context", {})))
    scripted.add(reply("12 tabs are open."))  # a number, but the turn ran no query step
    assert run(s, "Thanks")[-1].reason == "answered"
    assert run(s, "How many tabs are open?")[-1].reason == "answered"
    assert reflection_calls(scripted) == [] and s.ledger.reflections() == []
    scripted.assert_done()


def test_unresolved_error_checks_are_listed_in_the_review_input(
    session_factory, scripted, executing
):
    s = session_factory()
    check = {
        "code": "JOIN_FANOUT",
        "severity": "error",
        "message": "the join repeats customers 3.1x",
        "evidence": {"ratio": 3.1},
    }
    warning = {"code": "ALL_NULL", "severity": "warning", "message": "refund is all NULL"}

    def add_checks(messages, tools):  # as the query layer records them on the step
        s.ledger.update(s.ledger.steps()[-1]["step_id"], {"checks": [check, warning]}, by="engine")

    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(reply("", ("update_report", {"content": REPORT})), expect=add_checks)
    scripted.add(*review(FAIL))
    scripted.add(reply("The join needs fixing first."))
    run(s, "Write the count into the Report")
    user = reflection_calls(scripted)[0][1]
    assert user.startswith("# Unresolved error checks")  # what matters comes first
    unresolved = user.split("# Unresolved error checks")[1].split("# The analyst's question")[0]
    step_id = s.ledger.steps()[0]["step_id"]
    assert f"{step_id}: JOIN_FANOUT: the join repeats customers 3.1x" in unresolved
    assert "ALL_NULL" not in unresolved
    assert s.ledger.reflections()[0]["unresolved_checks"][0]["code"] == "JOIN_FANOUT"
    scripted.assert_done()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("412 customers churned.", True),
        ("Churn was 7.5% in Q3.", True),
        ("Revenue fell by 1,204,000 EUR.", True),
        ("[[QUERY_STEP]] s1: churned — 412 rows\nThe count is in the step.", False),
        ("1. Read the Plan\n2. Check step s3 for Q3 2025", False),
        ("No numbers here, see s2.", False),
    ],
)
def test_what_counts_as_a_numeric_answer(text, expected):
    assert states_a_number(text) is expected


def test_stop_during_the_review_cancels_the_turn_and_writes_nothing(
    session_factory, scripted, executing
):
    from lantide.agent.cancel import CancelToken

    before = report_text(executing)
    cancel = CancelToken()
    scripted.add(reply("", ("run_query", COUNT), ("update_report", {"content": REPORT})))
    scripted.add(reply(PASS), expect=lambda messages, tools: cancel.cancel())
    s = session_factory()
    events = list(s.run_turn("Report the churn count", cancel))
    assert events[-1].reason == "cancelled"
    assert report_text(executing) == before
    assert s.ledger.reflections() == []
    results = [
        json.loads(r["message"]["content"])
        for r in s.conversation.message_records()
        if r["message"]["role"] == "tool"
    ]
    assert results[-1]["error"] == "CANCELLED"  # the history stays valid
    scripted.assert_done()


def test_malformed_checks_on_a_ledger_line_do_not_break_the_review(
    session_factory, scripted, executing
):
    s = session_factory()

    def spoil(messages, tools):  # a hand-edited or older ledger line
        s.ledger.update(
            s.ledger.steps()[-1]["step_id"],
            {
                "checks": [{"severity": "error"}, "JOIN_FANOUT", None, 3],
                "columns": [{"type": "BIGINT"}, None],
            },
            by="engine",
        )

    scripted.add(reply("", ("run_query", COUNT)))
    writes = reply("", ("update_report", {"content": REPORT}))
    scripted.add(writes, expect=citing_last_step(s, writes, also=spoil))
    scripted.add(*review(PASS))
    scripted.add(reply("Not written: the step carries an error check."))
    before = report_text(executing)
    events = run(s, "Report the churn count")
    assert events[-1].reason == "answered"
    assert s.ledger.reflections()[0]["unresolved_checks"] == [
        {"step_id": s.ledger.steps()[0]["step_id"], "code": "?", "message": "", "evidence": ""}
    ]
    # an error-severity check, however malformed, still makes the number no finding
    assert report_text(executing) == before
    refused = [
        json.loads(r["message"]["content"])
        for r in s.conversation.message_records()
        if r["message"]["role"] == "tool"
    ][-1]
    assert "check_failed" in refused["message"]
    scripted.assert_done()


def test_the_review_reads_the_knowledge_entries_not_the_agents_instructions(
    session_factory, scripted, executing
):
    """The reviewer needs what the analyst approved, not how the agent should use it."""
    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(reply("412 customers churned."))
    scripted.add(*review(PASS))
    s = session_factory()
    assert run(s, "How many customers churned?")[-1].reason == "answered"
    ((system, user),) = reflection_calls(scripted)
    knowledge = user.split("# Approved knowledge")[1].split("# Query steps")[0]
    assert (
        '"Exclude test accounts (customers.is_test_account) from every customer count."'
        in knowledge
    )
    agent_layer = s.last_prompt.layer("knowledge").text
    preamble = agent_layer[: agent_layer.index("\n### ")]
    assert preamble.strip() and preamble.strip() not in user
    assert "Knowledge the analyst approved" not in user
    scripted.assert_done()


def test_a_step_summary_the_draft_already_states_is_not_repeated(
    session_factory, scripted, executing
):
    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(
        reply("[[QUERY_STEP]] churned customers — 412 rows counted\n\n412 customers churned.")
    )
    scripted.add(*review(PASS))
    s = session_factory()
    assert run(s, "How many customers churned?")[-1].reason == "answered"
    ((_, user),) = reflection_calls(scripted)
    assert s.ledger.steps()[0]["summary"] == "churned customers — 412 rows counted"
    assert user.count("churned customers — 412 rows counted") == 1
    assert "Summary:" not in user and "SQL: SELECT count(*) AS churned" in user
    scripted.assert_done()


def test_an_ok_review_over_a_number_on_a_failed_check_is_overridden_by_the_rule(
    session_factory, scripted, executing
):
    fan_out = {
        "sql": "SELECT c.segment, count(*) AS customers FROM customers c "
        "JOIN orders o ON o.customer_id = c.customer_id GROUP BY 1",
        "purpose": "customers per segment",
    }
    scripted.add(reply("", ("run_query", fan_out)))
    scripted.add(reply("[[QUERY_STEP]] s1: customers per segment\nConsumer has 70,098 customers."))
    scripted.add(*review(PASS))  # the reviewer waves it through

    def told(messages, tools):
        note = messages[-1]["content"]
        assert note.startswith("[Lantide reflection, not the analyst]")
        assert "overridden by the rule" in note and "70,098 is check_failed" in note
        assert "JOIN_FAN_OUT" in note

    scripted.add(reply("The join repeats customers: I need to count distinct ids."), expect=told)
    s = session_factory()
    events = run(s, "How many customers per segment?")
    assert events[-1].reason == "answered"
    (reflection,) = s.ledger.reflections()
    assert reflection["ok"] is False and reflection["subject"] == "final_answer"
    assert reflection["overridden_by_rule"]["verdict"] == "ok"
    (number,) = reflection["overridden_by_rule"]["numbers"]
    assert "70,098" in number and "JOIN_FAN_OUT" in number
    assert [c["code"] for c in reflection["unresolved_checks"]] == ["JOIN_FAN_OUT"]
    scripted.assert_done()


@pytest.mark.usefixtures("agent_edits_apply")  # the Report is written at once
def test_the_rule_judges_the_lines_update_report_writes_not_the_analysts(
    session_factory, scripted, executing
):
    fan_out = {
        "sql": "SELECT c.segment, count(*) AS customers FROM customers c "
        "JOIN orders o ON o.customer_id = c.customer_id GROUP BY 1",
        "purpose": "customers per segment",
    }
    scripted.add(reply("", ("run_query", fan_out)))
    scripted.add(reply("[[QUERY_STEP]] s1: customers per segment"))
    s = session_factory()
    run(s, "Customers per segment")
    path = executing.root / "projects/q3-churn/report.md"
    analysts = (
        f"# Report: Q3 churn\n\nWe have 70,098 customers [^s:{s.ledger.steps()[0]['step_id']}].\n"
    )
    path.write_text(analysts)  # the analyst's own line, on a failed check
    edit = analysts + "\nThe segments differ in size.\n"
    scripted.add(reply("", ("update_report", {"content": edit})))
    scripted.add(*review(PASS))
    scripted.add(reply("Added a sentence."))
    run(s, "Add that the segments differ in size")
    assert report_text(executing) == edit
    assert [r["ok"] for r in s.ledger.reflections()] == [True]
    scripted.assert_done()


def test_an_uncited_number_a_clean_step_behind_the_answer_also_holds_is_not_overridden(
    session_factory, scripted, executing
):
    fan_out = {
        "sql": "SELECT c.segment, count(*) AS customers FROM customers c "
        "JOIN orders o ON o.customer_id = c.customer_id GROUP BY 1",
        "purpose": "customers per segment",
    }
    clean = {"sql": "SELECT 70098 AS customers", "purpose": "the same count, clean"}
    scripted.add(reply("", ("run_query", fan_out), ("run_query", clean)))
    scripted.add(
        reply("[[QUERY_STEP]] s1: per segment\n[[QUERY_STEP]] s2: clean\n70,098 customers.")
    )
    scripted.add(*review(PASS))
    s = session_factory()
    assert run(s, "How many customers?")[-1].reason == "answered"
    (reflection,) = s.ledger.reflections()
    assert reflection["ok"] is True and "overridden_by_rule" not in reflection
    scripted.assert_done()
