"""Consent to statistical analysis is bound to its question, judged in the analyst's
language, usable once in its turn, and visible. Driven through the real ``openai`` client
and the loopback server; the rule table is property-tested."""

from __future__ import annotations

import pytest

from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn

CORR = {"sql": "SELECT corr(quantity, unit_price) AS r FROM orders", "purpose": "price vs qty"}


def consent_question(
    question="May I compute the correlation of price and quantity?", analysis=("correlation",)
):
    return ToolCall(
        "ask_user",
        {
            "question": question,
            "choices": ["Yes", "No"],
            "kind": "analysis_consent",
            "analysis": list(analysis),
        },
    )


@pytest.fixture
def executing(open_ws):
    open_ws.project("q3-churn").approve_plan()
    return open_ws


def returned(events):
    return {e.tool: e for e in events if e.name == "tool_returned"}


def test_a_yes_to_another_question_is_not_consent(session_factory, fake_openai, executing):
    """The issue's case: "yes" to "exclude test accounts?" let corr() run later."""
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall(
                    "ask_user", {"question": "Exclude test accounts?", "choices": ["Yes", "No"]}
                )
            ]
        )
    )
    s = live_session(session_factory, fake_openai)
    run(s, "Is price related to quantity?")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "correlation"})]),
        Turn(tool_calls=[ToolCall("run_query", CORR)]),
        Turn(text="I need your consent first."),
    )
    events = run(s, "yes")
    fake_openai.assert_done()
    got = returned(events)
    assert got["activate_analysis"].result["error"] == "CONSENT_REQUIRED"
    assert "Exclude test accounts?" in got["activate_analysis"].result["message"]
    assert got["run_query"].result["error"] == "CONSENT_REQUIRED"
    assert not s.ledger.steps() and not s.conversation.events(("analysis_activated",))


@pytest.mark.parametrize(
    "answer",
    [
        "可以",
        "да",
        "はい、お願いします",
        "Ja, bitte",
        "oui",
        "sí, adelante",
        "Sim",
        "Sì, procedi",
        "Ja hoor",
        "Yes",
    ],
)
def test_a_yes_in_the_analysts_language_is_consent(session_factory, fake_openai, executing, answer):
    fake_openai.script(Turn(tool_calls=[consent_question()]))
    s = live_session(session_factory, fake_openai)
    run(s, "Is price related to quantity?")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]),
        Turn(tool_calls=[ToolCall("run_query", CORR)]),
        Turn(text="r is close to zero."),
    )
    events = run(s, answer)
    fake_openai.assert_done()
    got = returned(events)
    assert got["activate_analysis"].ok, got["activate_analysis"].result
    assert got["run_query"].ok
    (answered,) = s.conversation.events(("question_answered",))
    assert answered["consent"] == "yes" and answered["question_kind"] == "analysis_consent"


@pytest.mark.parametrize(
    "answer",
    ["不可以", "нет", "nein", "non", "not yet", "yes but no", "いいえ", "Nee", "No, don't", "yes?"],
)
def test_a_refusal_in_any_language_is_not_consent(session_factory, fake_openai, executing, answer):
    fake_openai.script(Turn(tool_calls=[consent_question()]))
    s = live_session(session_factory, fake_openai)
    run(s, "Is price related to quantity?")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]),
        Turn(text="Staying descriptive."),
    )
    events = run(s, answer)
    fake_openai.assert_done()
    assert returned(events)["activate_analysis"].result["error"] == "CONSENT_NOT_GIVEN"
    assert not s.conversation.events(("analysis_activated",))


def test_a_click_on_a_button_is_read_by_its_position(session_factory, fake_openai, executing):
    fake_openai.script(Turn(tool_calls=[consent_question()]))
    s = live_session(session_factory, fake_openai)
    events = run(s, "Is price related to quantity?")
    (asked,) = [e for e in events if e.name == "question_asked"]
    no = asked.choices[1]
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]),
        Turn(text="Staying descriptive."),
    )
    events = run(s, no)
    assert returned(events)["activate_analysis"].result["error"] == "CONSENT_NOT_GIVEN"

    fake_openai.script(Turn(tool_calls=[consent_question()]))
    run(s, "Actually, ask me again")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]), Turn(text="Approved.")
    )
    events = run(s, asked.choices[0])
    fake_openai.assert_done()
    assert returned(events)["activate_analysis"].ok


def test_consent_expires_with_its_turn_and_is_spent_by_one_activation(
    session_factory, fake_openai, executing
):
    fake_openai.script(Turn(tool_calls=[consent_question()]))
    s = live_session(session_factory, fake_openai)
    run(s, "Is price related to quantity?")
    fake_openai.script(Turn(text="Noted."))
    run(s, "Yes")  # the model did not activate in the turn of the yes
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]),
        Turn(text="I will ask again."),
    )
    events = run(s, "Go on")
    assert returned(events)["activate_analysis"].result["error"] == "CONSENT_EXPIRED"

    fake_openai.script(Turn(tool_calls=[consent_question()]))
    run(s, "Ask me")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]), Turn(text="On.")
    )
    assert returned(run(s, "Yes"))["activate_analysis"].ok
    assert s.conversation.events(("analysis_activated",))[0]["project"] == "q3-churn"

    # a new phase of the project ends the analysis; the old yes does not turn it back on
    fake_openai.script(
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "planning"})]),
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "executing"})]),
        Turn(tool_calls=[ToolCall("run_query", CORR)]),
        Turn(text="Needs consent again."),
    )
    events = run(s, "Replan, then execute again")
    assert returned(events)["run_query"].result["error"] == "CONSENT_REQUIRED"
    fake_openai.assert_done()


def test_the_consent_state_is_in_the_context_summary(session_factory, fake_openai, executing):
    fake_openai.script(Turn(tool_calls=[consent_question()]))
    s = live_session(session_factory, fake_openai)
    run(s, "Is price related to quantity?")
    assert (
        "Statistical analysis: not approved"
        in fake_openai.chat_requests[-1]["messages"][0]["content"]
    )
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "price/quantity correlation"})]),
        Turn(text="Approved."),
    )
    run(s, "yes")
    system = fake_openai.chat_requests[-1]["messages"][0]["content"]
    assert (
        "Statistical analysis: approved in turn 2 for q3-churn (price/quantity correlation)"
    ) in system
    assert (
        results_by_tool(fake_openai.chat_requests[-1])["activate_analysis"][0]["analysis_active"]
        is True
    )


REGR = {
    "sql": "SELECT regr_slope(quantity, unit_price) AS slope FROM orders",
    "purpose": "price effect on quantity",
}


@pytest.mark.parametrize(
    "answer",
    [
        "OK, only descriptive statistics please",
        "Sure, just the averages",
        "Bitte nur deskriptive Statistik",
        "Хорошо, только описательная статистика",
        "好的，只做描述性统计",
        "Sure, after the review meeting",
        "Okay let me think about it",
        "ok...",
        "嗯",
    ],
)
def test_a_qualified_answer_does_not_let_corr_run(session_factory, fake_openai, executing, answer):
    """The issue's answers: a yes with a restriction, a condition or hesitation."""
    fake_openai.script(Turn(tool_calls=[consent_question()]))
    s = live_session(session_factory, fake_openai)
    run(s, "Is price related to quantity?")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]),
        Turn(tool_calls=[ToolCall("run_query", CORR)]),
        Turn(text="Keeping to what you said."),
    )
    events = run(s, answer)
    fake_openai.assert_done()
    got = returned(events)
    refused = got["activate_analysis"].result
    assert refused["error"] == "CONSENT_QUALIFIED", refused
    assert answer[:20] in refused["message"] and "ask_user" in refused["hint"]
    assert got["run_query"].result["error"] == "CONSENT_REQUIRED"
    assert not s.ledger.steps() and not s.conversation.events(("analysis_activated",))
    (answered,) = s.conversation.events(("question_answered",))
    assert answered["consent"] == "qualified"
    assert answered["qualified_by"] in ("restriction", "condition", "hesitation")


def test_the_consent_question_is_lantides_not_the_models(session_factory, fake_openai, executing):
    """The issue's case: "Should I exclude test accounts?" sent as a consent question and
    answered "Yes" unlocked regr_slope and corr."""
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall(
                    "ask_user",
                    {
                        "question": "Should I exclude test accounts?",
                        "choices": ["Yes", "No"],
                        "kind": "analysis_consent",
                    },
                )
            ]
        ),
        Turn(text="Which one do you want?"),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Is price related to quantity?")
    assert not [e for e in events if e.name == "question_asked"]  # Lantide asked nothing
    assert returned(events)["ask_user"].result["error"] == "CONSENT_NEEDS_ANALYSIS"
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "regression"})]),
        Turn(tool_calls=[ToolCall("run_query", REGR), ToolCall("run_query", CORR)]),
        Turn(text="I need your consent first."),
    )
    events = run(s, "Yes")
    fake_openai.assert_done()
    assert returned(events)["activate_analysis"].result["error"] == "CONSENT_REQUIRED"
    refusals = [e.result.get("error") for e in events if e.name == "tool_returned"]
    assert refusals[-2:] == ["CONSENT_REQUIRED", "CONSENT_REQUIRED"]
    assert not s.ledger.steps()

    # asked properly, the question the analyst sees is Lantide's, naming project and kind
    fake_openai.script(
        Turn(tool_calls=[consent_question("Should I exclude test accounts?", ("correlation",))])
    )
    events = run(s, "Ask me properly")
    (asked,) = [e for e in events if e.name == "question_asked"]
    project = s.workspace.project("q3-churn")
    assert asked.question.startswith(f'Statistical analysis in the project "{project.name}"')
    assert "a correlation (corr())" in asked.question and "regr_slope" not in asked.question
    assert "The agent's reason, in its words: Should I exclude test accounts?" in asked.question
    assert asked.choices == ["Yes", "No, stay descriptive"]  # Lantide's buttons, not the model's
    # a yes to a correlation unlocks corr(), never regr_slope()
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "correlation"})]),
        Turn(tool_calls=[ToolCall("run_query", REGR)]),
        Turn(tool_calls=[ToolCall("run_query", CORR)]),
        Turn(text="r computed; no regression."),
    )
    events = run(s, "Yes")
    fake_openai.assert_done()
    results = [e.result for e in events if e.name == "tool_returned" and e.tool == "run_query"]
    assert results[0]["error"] == "CONSENT_NOT_FOR_THIS_ANALYSIS"
    assert "step_id" in results[1]
    core = fake_openai.chat_requests[-1]["messages"][0]["content"]
    assert "the consent question is asked by the app" in core


@pytest.mark.parametrize("by", ["cli", "app"])
def test_a_status_change_outside_the_agent_ends_consent(
    session_factory, fake_openai, executing, run_cli, by
):
    """The issue's case: executing → planning → executing from the CLI or the app kept the
    old consent. The project's lifecycle history is the source."""
    fake_openai.script(Turn(tool_calls=[consent_question()]))
    s = live_session(session_factory, fake_openai)
    run(s, "Is price related to quantity?")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]),
        Turn(tool_calls=[ToolCall("run_query", CORR)]),
        Turn(text="r computed."),
    )
    assert returned(run(s, "Yes"))["run_query"].ok
    from lantide.workspace.lock import WorkspaceLock
    from lantide.workspace.model import Workspace

    relock = WorkspaceLock(s.workspace.root)
    if by == "cli":
        s.workspace.close()  # the app is closed while the analyst uses the command line
        for status in ("planning", "executing"):
            done = run_cli("project", s.workspace.root, "status", "q3-churn", status)
            assert done.returncode == 0, done.stderr
        relock.acquire()  # ... and opened again on the same conversation
    else:  # the app's status menu, on its own Workspace object
        for status in ("planning", "executing"):
            Workspace(s.workspace.root, {}).project("q3-churn").set_status(status)
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", CORR)]),
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr again"})]),
        Turn(text="I need your consent again."),
    )
    events = run(s, "Compute it again")
    fake_openai.assert_done()
    got = returned(events)
    assert got["run_query"].result["error"] == "CONSENT_REQUIRED"
    assert got["activate_analysis"].result["error"] == "CONSENT_EXPIRED"
    assert (
        "Statistical analysis: not approved"
        in (fake_openai.chat_requests[-1]["messages"][0]["content"])
    )
    assert len(s.ledger.steps()) == 1
    relock.release()


def test_source_run_inspects_every_upstream_tab_it_recomputes(
    session_factory, fake_openai, executing
):
    """The issue's case: source_run_sql_tab recomputed an upstream tab computing
    regr_slope with no consent (only the target tab's SQL was inspected)."""
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("create_sql_tab", {"name": "price_fit", "sql": REGR["sql"]}),
                ToolCall(
                    "create_sql_tab",
                    {"name": "fit_report", "sql": "SELECT slope * 100 AS pct FROM price_fit"},
                ),
            ]
        ),
        Turn(tool_calls=[ToolCall("source_run_sql_tab", {"tab": "fit_report", "purpose": "fit"})]),
        Turn(text="The fit needs your consent."),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Recompute the fit report")
    fake_openai.assert_done()
    report = returned(events)["source_run_sql_tab"].result
    tabs = {t["tab"]: t for t in report["tabs"]}
    assert tabs["price_fit"]["status"] == "failed"
    assert tabs["price_fit"]["error"]["error"] == "CONSENT_REQUIRED"
    assert "ask_user" in tabs["price_fit"]["error"]["hint"]
    assert tabs["fit_report"]["status"] == "not_run"
    assert not s.ledger.steps()
    assert s.services.query().catalog.cached("price_fit") is None


def test_a_consent_question_that_asks_nothing_does_not_hold_back_its_siblings(
    session_factory, fake_openai, executing
):
    """Lantide asks nothing for a consent question naming no analysis, so the calls sent
    beside it run (they do not wait for an answer that will not come)."""
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("ask_user", {"question": "May I?", "kind": "analysis_consent"}),
                ToolCall("run_query", {"sql": "SELECT 1 AS one", "purpose": "a probe"}),
            ]
        ),
        Turn(text="Descriptive only, then."),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Correlate price and quantity")
    fake_openai.assert_done()
    got = returned(events)
    assert got["ask_user"].result["error"] == "CONSENT_NEEDS_ANALYSIS"
    assert got["run_query"].ok and events[-1].reason == "answered"
    assert s.conversation.pending_question() is None
