"""Proposals after a turn: only from the analyst's own words, appended as [queued]."""

from __future__ import annotations

import json

import pytest
from knowledge_samples import HAND_WRITTEN

ANALYST = (
    "For this project churn means no order in the last 90 days. "
    "Also, the fiscal year starts in April."
)
REPLY = "Understood. I guess refunds are probably excluded from revenue too."


class Scripted:
    """A model stand-in that answers a fixed text and records what it was asked."""

    def __init__(self, answer):
        self.answer = answer
        self.calls: list[tuple[str, str]] = []

    def __call__(self, system: str, user: str) -> str:
        self.calls.append((system, user))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer if isinstance(self.answer, str) else json.dumps(self.answer)


def proposal(text, quote, section="Rules", scope="project", **extra):
    return {"text": text, "quote": quote, "section": section, "scope": scope, **extra}


def test_proposals_from_the_analysts_words_are_queued_with_their_source(make_kb, files):
    kb = make_kb(HAND_WRITTEN)
    before = files[1].read_text(encoding="utf-8")
    model = Scripted(
        {
            "proposals": [
                proposal(
                    "Churn means no order in the last 90 days.",
                    "churn means no order in the last 90 days",
                ),
                proposal("Refunds are excluded from revenue.", "refunds are probably excluded"),
                proposal(
                    "The fiscal year starts in April.",
                    "the fiscal year starts in April",
                    section="Info",
                    scope="user",
                ),
            ]
        }
    )
    result = kb.propose(
        model, conversation_id="conv-42", turn=3, analyst_messages=[ANALYST], assistant_reply=REPLY
    )
    assert result.error is None
    assert [(e.scope, e.section, e.status, e.text) for e in result.added] == [
        ("project", "Rules", "queued", "Churn means no order in the last 90 days."),
        ("user", "Info", "queued", "The fiscal year starts in April."),
    ]
    assert all(
        e.source["conversation"] == "conv-42" and e.source["turn"] == 3 for e in result.added
    )
    # the assistant's guess is not the analyst's statement
    assert [d["text"] for d in result.dropped] == ["Refunds are excluded from revenue."]
    assert "not in the analyst's messages" in result.dropped[0]["reason"]
    # the model saw the turn as quoted data and the existing entries
    system, user = model.calls[0]
    assert "quote" in system and json.dumps(ANALYST) in user and json.dumps(REPLY) in user
    assert '"Revenue means net revenue: gross minus refunds."' in user
    # nothing already in the file moved or changed: the proposal was appended
    after = files[1].read_text(encoding="utf-8")
    assert after.replace(result.added[0].raw, "", 1) == before
    assert "conversation=conv-42 turn=3" in result.added[0].raw
    # queued proposals never reach the model's prompt
    assert "90 days" not in kb.layer().text and "fiscal year starts in April" not in kb.layer().text
    kb.approve(result.added[0].ref)
    assert '"Churn means no order in the last 90 days."' in kb.layer().text


@pytest.mark.parametrize(
    "answer",
    [
        "Sure! Here are some ideas: churn is 90 days.",
        '{"proposals": "churn"}',
        "",
    ],
)
def test_an_unusable_answer_adds_nothing_and_says_why(make_kb, files, answer):
    kb = make_kb(HAND_WRITTEN)
    result = kb.propose(Scripted(answer), conversation_id="c", turn=1, analyst_messages=ANALYST)
    assert result.added == [] and "not usable" in result.error
    assert files[1].read_text(encoding="utf-8") == HAND_WRITTEN


def test_a_failing_model_call_is_reported_not_raised(make_kb, files):
    kb = make_kb(HAND_WRITTEN)
    result = kb.propose(
        Scripted(TimeoutError("secondary model timed out")),
        conversation_id="c",
        turn=1,
        analyst_messages=ANALYST,
    )
    assert result.error == "the model call failed: TimeoutError: secondary model timed out"
    assert files[1].read_text(encoding="utf-8") == HAND_WRITTEN


def test_fenced_json_duplicates_rejected_and_limits(make_kb, files):
    kb = make_kb("## Rules\n- Churn means no order in the last 90 days.\n")
    kb.add(
        "Exclude staff accounts from counts.",
        queued=True,
        source={"conversation": "old", "turn": 1},
    )
    kb.reject(2)  # the analyst said no once: never proposed again
    message = (
        "Churn means no order in the last 90 days. Exclude staff accounts from counts. "
        "Orders before 2020 are unreliable. Weeks start on Monday. "
        "Amounts are in EUR cents. Regions use ISO codes."
    )
    answer = {
        "proposals": [
            proposal(
                "Churn means no order in the last 90 days.",
                "Churn means no order in the last 90 days",
            ),
            proposal("Exclude staff accounts from counts.", "Exclude staff accounts from counts"),
            proposal(
                "Orders before 2020 are unreliable.",
                "Orders before 2020 are unreliable",
                section="Info",
            ),
            proposal("Weeks start on Monday.", "Weeks start on Monday."),
            proposal("Amounts are in EUR cents.", "Amounts are in EUR cents", section="info"),
            proposal("Regions use ISO codes.", "Regions use ISO codes", section="Info"),
            proposal("Something", "Weeks start on Monday", section="Elsewhere"),
            proposal("[queued] sneaky", "Weeks start on Monday"),
            proposal("Too short a quote", "Weeks"),
            proposal("Use key sk-abcdefghijklmnop1234 for the API", "Weeks start on Monday"),
        ]
    }
    result = kb.propose(
        Scripted("```json\n" + json.dumps(answer) + "\n```"),
        conversation_id="c2",
        turn=5,
        analyst_messages=[message],
    )
    assert [e.text for e in result.added] == [
        "Orders before 2020 are unreliable.",
        "Weeks start on Monday.",
        "Amounts are in EUR cents.",
    ]
    reasons = {d["text"]: d["reason"] for d in result.dropped}
    assert reasons["Churn means no order in the last 90 days."] == "already in the knowledge"
    assert reasons["Exclude staff accounts from counts."] == "the analyst rejected it before"
    assert "more than 3" in reasons["Regions use ISO codes."]
    assert "section" in reasons["Something"]
    assert "marker" in reasons["[queued] sneaky"]
    assert "no quote" in reasons["Too short a quote"]
    assert "key or token" in reasons["Use key sk-abcdefghijklmnop1234 for the API"]


def test_without_a_project_only_user_proposals_are_kept(make_kb, files):
    kb = make_kb(with_project=False)
    model = Scripted(
        {
            "proposals": [
                proposal(
                    "Churn means no order in the last 90 days.",
                    "churn means no order in the last 90 days",
                    scope="project",
                ),
                proposal(
                    "Fiscal year starts in April.", "the fiscal year starts in April", scope="user"
                ),
            ]
        }
    )
    result = kb.propose(model, conversation_id="c", turn=1, analyst_messages=[ANALYST])
    assert [e.ref for e in result.added] == ["u1"]
    assert "no project knowledge file" in result.dropped[0]["reason"]
    assert '"project"' not in model.calls[0][0]  # the model is not offered a project scope


def test_no_analyst_message_means_no_model_call(make_kb):
    model = Scripted({"proposals": []})
    result = make_kb(HAND_WRITTEN).propose(
        model, conversation_id="c", turn=1, analyst_messages=["", "  "]
    )
    assert model.calls == [] and result.added == [] and result.error is None


def test_a_proposal_lands_under_an_existing_heading(make_kb, files):
    kb = make_kb(HAND_WRITTEN)
    model = Scripted(
        {
            "proposals": [
                proposal(
                    "Weeks are ISO weeks.",
                    "weeks are ISO weeks, starting on Monday",
                    heading="Dates",
                )
            ]
        }
    )
    result = kb.propose(
        model,
        conversation_id="c",
        turn=9,
        analyst_messages=["Remember: weeks are ISO weeks, starting on Monday."],
    )
    (entry,) = result.added
    assert (entry.section, entry.heading, entry.status) == ("Rules", "Dates", "queued")
    assert 'Existing group headings: "Dates"' in model.calls[0][1]


@pytest.mark.parametrize(
    "message",
    [
        "How many customers are there?",
        "How many customers do we have, test accounts excluded?",
        "Which region had the most net revenue in Q3 2025?\nAnd the least?",
        "ok",  # shorter than any quote a proposal needs
        "thanks!",
    ],
)
def test_a_plain_question_proposes_nothing_without_a_model_call(make_kb, files, message):
    model = Scripted({"proposals": [proposal("Customers are counted.", message)]})
    result = make_kb(HAND_WRITTEN).propose(
        model, conversation_id="c", turn=1, analyst_messages=[message]
    )
    assert model.calls == [] and result.added == [] and result.error is None
    assert files[1].read_text(encoding="utf-8") == HAND_WRITTEN


@pytest.mark.parametrize(
    "message",
    [
        ANALYST,
        "All Q2 actives",  # the answer to the agent's question may be a definition
        "How many customers churned? Churn means no order in 90 days.",
        "Which region earns most, where revenue always means net of refunds?",
        "Plot it as bars",
    ],
)
def test_a_message_that_can_state_something_is_sent_to_the_model(make_kb, message):
    from lantide.knowledge.proposals import may_hold_knowledge

    assert may_hold_knowledge(message)
    model = Scripted({"proposals": []})
    make_kb(HAND_WRITTEN).propose(
        model, conversation_id="c", turn=1, analyst_messages=["How many?", message]
    )
    assert len(model.calls) == 1 and json.dumps(message) in model.calls[0][1]
