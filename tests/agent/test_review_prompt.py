"""The reviewer's instructions carry the rule about unresolved error checks only when the
input lists some: without any, the sentence is tokens in every review for nothing."""

from __future__ import annotations

import json

from lantide.agent.reflection import CHECKLIST
from tests.agent.scripted_model import reply

COUNT = {"sql": "SELECT count(*) AS n FROM customers", "purpose": "customer count"}
PASS = json.dumps(
    {"ok": True, "checklist": {i: {"ok": True, "note": "holds"} for i in CHECKLIST}, "problems": []}
)
RULE = 'A step under "Unresolved error checks" is not a finding'


def review_systems(scripted):
    return [
        r["messages"][0]["content"]
        for r in scripted.requests
        if not r["tools"] and "skeptical reviewer" in r["messages"][0]["content"]
    ]


def test_the_unresolved_checks_rule_is_sent_only_with_unresolved_checks(
    session_factory, scripted, open_ws
):
    open_ws.project("q3-churn").approve_plan()
    s = session_factory()
    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(reply("[[QUERY_STEP]] customer count — 2,000\n\nThere are 2,000 customers."))
    scripted.add(reply(PASS))
    list(s.run_turn("How many customers?"))
    (clean,) = review_systems(scripted)
    assert RULE not in clean and "- checks:" in clean

    check = {"code": "JOIN_FAN_OUT", "severity": "error", "message": "the join repeats rows"}

    def add_check(messages, tools):  # as the query layer records it on the step
        s.ledger.update(s.ledger.steps()[-1]["step_id"], {"checks": [check]}, by="engine")

    scripted.add(reply("", ("run_query", COUNT)))
    scripted.add(
        reply("[[QUERY_STEP]] customer count — 2,000\n\nStill 2,000 customers."),
        expect=add_check,
    )
    scripted.add(reply(PASS))
    # where the rule overrides an ok verdict over a failed check, the turn goes on once more
    scripted.add(reply("The count rests on a failed check; I will fix the query first."))
    list(s.run_turn("Count them again"))
    flagged = review_systems(scripted)[1]
    assert RULE in flagged
