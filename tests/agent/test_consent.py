"""Consent to statistical analysis is bound to its question, judged in the analyst's
language, usable once in its turn, and visible. Driven through the real ``openai`` client
and the loopback server; the rule table is property-tested."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lantide.agent.consent_answers import (
    APPROVALS,
    DECLINING_MARKS,
    DECLINING_WORDS,
    NO,
    YES,
    judge_answer,
    judge_free_text,
)
from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn

CORR = {"sql": "SELECT corr(quantity, unit_price) AS r FROM orders", "purpose": "price vs qty"}


def consent_question(
    choices=("Yes", "No"), question="May I compute the correlation of price and quantity?"
):
    return ToolCall(
        "ask_user", {"question": question, "choices": list(choices), "kind": "analysis_consent"}
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
    fake_openai.script(Turn(tool_calls=[consent_question(["OK", "Stop"])]))
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


def test_a_click_on_a_choice_is_read_by_its_position(session_factory, fake_openai, executing):
    choices = ["Run the correlation", "Stay descriptive"]
    fake_openai.script(Turn(tool_calls=[consent_question(choices)]))
    s = live_session(session_factory, fake_openai)
    run(s, "Is price related to quantity?")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]),
        Turn(text="Staying descriptive."),
    )
    events = run(s, "Stay descriptive")
    assert returned(events)["activate_analysis"].result["error"] == "CONSENT_NOT_GIVEN"

    fake_openai.script(Turn(tool_calls=[consent_question(choices)]))
    run(s, "Actually, ask me again")
    fake_openai.script(
        Turn(tool_calls=[ToolCall("activate_analysis", {"reason": "corr"})]), Turn(text="Approved.")
    )
    events = run(s, "Run the correlation")
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


# -- the rule table ----------------------------------------------------------------------

REFUSALS = [
    "no",
    "nope",
    "not now",
    "not yet",
    "don't",
    "never",
    "nein",
    "nicht jetzt",
    "später",
    "non",
    "pas encore",
    "non merci",
    "no gracias",
    "todavía no",
    "não",
    "ainda não",
    "no grazie",
    "non ancora",
    "nee",
    "niet nu",
    "нет",
    "не сейчас",
    "不可以",
    "不要",
    "不行",
    "别",
    "还没",
    "いいえ",
    "だめです",
    "やめてください",
    "まだです",
]
ALL_APPROVALS = sorted({p for table in APPROVALS.values() for p in table})


@pytest.mark.parametrize("language", sorted(APPROVALS))
def test_every_language_has_a_plain_yes(language):
    assert judge_free_text(APPROVALS[language][0]) == YES


@pytest.mark.parametrize(
    "answer",
    REFUSALS
    + ["yes but no", "ja, aber nein", "oui mais non", "可以吗", "да, но нет", "maybe", "yes?", ""],
)
def test_refusals_and_doubt_are_not_yes(answer):
    assert judge_free_text(answer) != YES


_FILLER = st.lists(
    st.sampled_from(ALL_APPROVALS + ["please", "the", "Q3", "regression", ",", "!", "."]),
    max_size=4,
)
_REFUSAL_WORD = st.sampled_from(
    REFUSALS + [w for table in DECLINING_WORDS.values() for w in table] + list(DECLINING_MARKS)
)


@settings(max_examples=400, deadline=None)
@given(
    before=_FILLER,
    refusal=_REFUSAL_WORD,
    after=_FILLER,
    sep=st.sampled_from([" ", ", ", "，", "、", " - "]),
)
def test_no_answer_holding_a_refusal_reads_as_yes(before, refusal, after, sep):
    """Property: whatever approvals surround it, an answer that holds a refusal, a negation
    or a hedge is never a yes, typed or matched against choices."""
    answer = sep.join(before + [refusal] + after)
    assert judge_free_text(answer) != YES, answer
    assert judge_answer(answer, ["Yes", "No"]) != YES, answer


@settings(max_examples=200, deadline=None)
@given(
    choices=st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=4),
    pick=st.integers(1, 3),
)
def test_a_click_on_any_choice_but_the_first_is_never_yes(choices, pick):
    pick = min(pick, len(choices) - 1)
    from lantide.agent.consent_answers import _label

    if _label(choices[pick]) == _label(choices[0]):
        return  # the same button twice: the first one counts
    assert judge_answer(choices[pick], choices) != YES


def test_a_first_choice_that_refuses_approves_nothing():
    assert judge_answer("No", ["No", "Yes"]) != YES
    assert judge_answer("Yes", ["No", "Yes"]) == NO
