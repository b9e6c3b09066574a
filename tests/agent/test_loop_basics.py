"""The loop against a scripted model: events, history, tools by state, limits."""

from __future__ import annotations

import json

from lantide.agent.events import TurnFinished
from tests.agent.scripted_model import reply


def run(session, message, cancel=None):
    return list(session.run_turn(message, cancel))


def kinds(events):
    return [e.name for e in events]


def test_plain_answer_is_streamed_recorded_and_titled(session_factory, scripted):
    scripted.add(reply("There are four data files."))
    s = session_factory()
    events = run(s, "What data do we have?")
    assert kinds(events)[0] == "turn_started"
    assert "".join(e.text for e in events if e.name == "text_delta") == "There are four data files."
    assert events[-1] == TurnFinished("answered", s.conversation.id, 1, None)
    assert s.background.wait(5)
    records = [json.loads(line) for line in s.conversation.path.read_text().splitlines()]
    assert records[0]["type"] == "conversation"
    from lantide.agent.conversation import Conversation

    reopened = Conversation.open(s.conversation.path.parent, s.conversation.id)
    assert [r["message"]["role"] for r in reopened.message_records()] == ["user", "assistant"]
    assert s.conversation.title == "Scripted title"
    scripted.assert_done()


def test_tool_call_result_goes_back_and_unknown_tool_does_not_crash(session_factory, scripted):
    def sees_results(messages, tools):
        tool_msgs = [m for m in messages if m["role"] == "tool"]
        assert len(tool_msgs) == 2
        ctx = json.loads(tool_msgs[0]["content"])
        assert ctx["focused_project"]["dir"] == "q3-churn"
        err = json.loads(tool_msgs[1]["content"])
        assert err["error"] == "UNKNOWN_TOOL" and "get_app_context" in err["hint"]

    scripted.add(reply("", ("get_app_context", {}), ("drop_table", {"t": 1})))
    scripted.add(reply("Done."), expect=sees_results)
    s = session_factory()
    events = run(s, "Where am I?")
    returned = [e for e in events if e.name == "tool_returned"]
    assert [r.ok for r in returned] == [True, False]
    assert events[-1].reason == "answered"
    scripted.assert_done()
