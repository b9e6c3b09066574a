"""A refused tool argument of 200 KB (issue 28, item 10): the refusal used to repeat the
whole value in the chat's error and the conversation file kept it. The error quotes a cut
excerpt, as results are cut, and the conversation holds no copy of the value."""

from __future__ import annotations

import json

import pytest

from tests.agent.scripted_model import reply

pytestmark = pytest.mark.security

HUGE = "Q" * 200_000
# refused by the schema (a string where an array belongs, a too-long id), by a tool's own
# rule (purpose over 40 characters), and by the guard (a table that does not exist)
CALLS = {
    "schema: wrong type": ("resolve_annotations", {"document": "plan", "items": HUGE}),
    "schema: enum": ("resolve_annotations", {"document": HUGE, "items": []}),
    "tool rule": ("run_query", {"sql": "SELECT 1", "purpose": HUGE}),
    "missing table": ("read_schema", {"table": HUGE}),
    "unknown project": ("read_plan", {"project": HUGE}),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_refused_huge_argument_is_cut_in_the_error_and_the_conversation(
    session_factory, scripted, open_ws, case
):
    name, args = CALLS[case]
    scripted.add(reply("", (name, args)))
    scripted.add(reply("I will send less."))
    s = session_factory()
    events = list(s.run_turn("go"))
    (result,) = [e.result for e in events if e.name == "tool_returned"]
    text = json.dumps(result)
    assert "error" in result and result["error"] != "TOOL_FAILED", result
    assert len(text) < 5_000, (case, len(text), text[:300])
    sent = json.dumps(scripted.requests[-1]["messages"])
    assert sent.count("Q" * 1000) <= 1, case  # the model's own call, cut; never the error
    saved = "".join(p.read_text() for p in open_ws.conversations_dir.glob("*.jsonl"))
    assert "Q" * 5_000 not in saved, (case, len(saved))


def test_huge_arguments_that_are_not_json_are_cut_too(session_factory, scripted, open_ws):
    from lantide.agent.model_client import ModelReply, ToolCallRequest

    garbage = '{"sql": "' + HUGE  # never closed: not JSON
    scripted.add(ModelReply("", [ToolCallRequest("call_0", "run_query", garbage)], "tool_calls"))
    scripted.add(reply("I will send JSON."))
    events = list(session_factory().run_turn("go"))
    (result,) = [e.result for e in events if e.name == "tool_returned"]
    assert result["error"] == "BAD_ARGUMENTS" and len(json.dumps(result)) < 5_000
    saved = "".join(p.read_text() for p in open_ws.conversations_dir.glob("*.jsonl"))
    assert "Q" * 5_000 not in saved
    assert "characters cut" in saved
