"""A ``[[QUERY_STEP]]`` line lands on its own step, or on none: by the id it names, by
position only when one step waits, otherwise it is kept as unattributed and the steps stay
``missing``. Driven through the real ``openai`` client and the loopback server."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lantide.agent.ledger import Ledger, mark_missing, parse_step_lines, resolve_summaries
from tests.agent.live import live_session
from tests.fakes.openai_server import ToolCall, Turn

BY_CHANNEL = "SELECT channel, count(*) AS n FROM orders GROUP BY channel"
CUSTOMERS = "SELECT count(*) AS n FROM customers"


def run_scripting_after_steps(session, server, message, after_steps):
    """Run a turn; after each recorded step, script the turns ``after_steps(step_ids)``
    returns (the ids are known only once the steps ran)."""
    events, ids = [], []
    for event in session.run_turn(message):
        events.append(event)
        if event.name == "step_recorded":
            ids.append(event.step["step_id"])
            turns = after_steps(list(ids))
            if turns:
                server.script(*turns)
    return events


def test_an_id_less_line_with_two_steps_waiting_is_not_guessed(session_factory, fake_openai):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": BY_CHANNEL})]),
        Turn(text="Web leads.\n[[QUERY_STEP]] Orders per channel — web leads"),
    )
    s = live_session(session_factory, fake_openai)
    events = list(s.run_turn("Customers, and orders per channel?"))
    fake_openai.assert_done()
    first, second = s.ledger.steps()
    assert first["summary_status"] == "missing" and first["summary"] is None
    assert second["summary_status"] == "missing" and second["summary"] is None
    (kept,) = s.ledger.unattributed()
    assert kept["raw"] == "[[QUERY_STEP]] Orders per channel — web leads"
    assert kept["waiting_steps"] == [first["step_id"], second["step_id"]]
    assert "cannot be paired with the 2 step(s)" in kept["why"]
    assert [e.summary_status for e in events if e.name == "step_summarized"] == ["missing"] * 2


def test_a_line_lands_on_the_step_it_names(session_factory, fake_openai):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": BY_CHANNEL})]),
    )

    def name_the_second(ids):
        if len(ids) == 2:
            return [Turn(text=f"[[QUERY_STEP]] {ids[1]}: orders per channel — web leads")]
        return None

    s = live_session(session_factory, fake_openai)
    run_scripting_after_steps(s, fake_openai, "Customers, and orders per channel?", name_the_second)
    fake_openai.assert_done()
    first, second = s.ledger.steps()
    assert second["summary"] == "orders per channel — web leads"
    assert second["summary_status"] == "parsed"
    assert first["summary_status"] == "missing"
    assert s.ledger.unattributed() == []


def test_a_line_naming_an_unknown_step_is_not_attributed(session_factory, fake_openai):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]),
        Turn(text="[[QUERY_STEP]] 0123456789ab: customer count — 2,000"),
    )
    s = live_session(session_factory, fake_openai)
    list(s.run_turn("How many customers?"))
    fake_openai.assert_done()
    (step,) = s.ledger.steps()
    assert step["summary_status"] == "missing" and step["summary"] is None
    (kept,) = s.ledger.unattributed()
    assert kept["step_ref"] == "0123456789ab" and "not waiting" in kept["why"]


def test_a_line_naming_a_step_already_summarized_is_not_moved(session_factory, fake_openai):
    fake_openai.script(Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]))

    def turns(ids):
        if len(ids) == 1:
            return [
                Turn(
                    text=f"[[QUERY_STEP]] {ids[0]}: customer count — 2,000",
                    tool_calls=[ToolCall("run_query", {"sql": BY_CHANNEL})],
                )
            ]
        return [Turn(text=f"[[QUERY_STEP]] {ids[0]}: customer count — 2,000 again")]

    s = live_session(session_factory, fake_openai)
    run_scripting_after_steps(s, fake_openai, "Customers and channels", turns)
    fake_openai.assert_done()
    first, second = s.ledger.steps()
    assert first["summary"] == "customer count — 2,000"
    assert second["summary_status"] == "missing"
    assert [k["step_ref"] for k in s.ledger.unattributed()] == [first["step_id"]]


def test_as_many_id_less_lines_as_waiting_steps_are_paired_in_order(session_factory, fake_openai):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": BY_CHANNEL})]),
        Turn(
            text="[[QUERY_STEP]] customer count — 2,000 customers\n"
            "[[QUERY_STEP]] orders per channel — web leads"
        ),
    )
    s = live_session(session_factory, fake_openai)
    list(s.run_turn("Customers, and orders per channel?"))
    fake_openai.assert_done()
    assert [st["summary"] for st in s.ledger.steps()] == [
        "customer count — 2,000 customers",
        "orders per channel — web leads",
    ]
    assert s.ledger.unattributed() == []


def test_one_step_and_one_id_less_line_are_paired(session_factory, fake_openai):
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": CUSTOMERS})]),
        Turn(text="2,000.\n[[QUERY_STEP]] customer count — 2,000 customers"),
    )
    s = live_session(session_factory, fake_openai)
    list(s.run_turn("How many customers?"))
    (step,) = s.ledger.steps()
    assert step["summary"] == "customer count — 2,000 customers"
    assert step["summary_status"] == "parsed"


def test_the_prompt_asks_for_the_step_id(session_factory):
    core = session_factory().prompt_preview(32_000).layer("core").text
    assert "starting with the step id" in core
    # its example names a step as every screen does: the 12 hex digits (issue 30 item 3)
    example = re.search(r"\[\[QUERY_STEP\]\] (\S+):", core)
    assert example and re.fullmatch(r"[0-9a-f]{12}", example.group(1)), example


_LINE = st.tuples(
    st.sampled_from(["", "s1", "s2", "s3", "0123456789ab", "abcdef012345", "Churn"]),
    st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x00"), max_size=30),
)


@settings(max_examples=60, deadline=None)
@given(pending_n=st.integers(0, 3), lines=st.lists(_LINE, max_size=4))
@pytest.mark.slow
def test_no_line_is_ever_attributed_to_a_step_it_does_not_name_unless_alone(
    tmp_path_factory, pending_n, lines
):
    """Property: a step gets a line only if the line names it, or the lines naming no step
    are exactly as many as the waiting steps no line names, and it gets the line of its
    rank."""
    import uuid

    ledger = Ledger(tmp_path_factory.getbasetemp() / "ledgers", uuid.uuid4().hex)
    for i in range(3):
        ledger.append({"step_id": f"s{i + 1}", "tool": "run_query"})
    pending = [f"s{i + 1}" for i in range(3 - pending_n, 3)]
    waiting = list(pending)
    text = "\n".join(
        f"[[QUERY_STEP]] {ref + ': ' if ref else ''}summary text {body}" for ref, body in lines
    )
    updated = resolve_summaries(ledger, pending, text)
    mark_missing(ledger, pending)
    parsed = parse_step_lines(text, {"s1", "s2", "s3"})
    id_less = [line.summary for line in parsed if line.step_ref is None]
    unnamed = [w for w in waiting if w not in {line.step_ref for line in parsed}]
    for step in updated:
        named = [line for line in parsed if line.step_ref == step["step_id"]]
        in_order = (
            len(id_less) == len(unnamed)
            and step["step_id"] in unnamed
            and step["summary"] in (None, id_less[unnamed.index(step["step_id"])])
        )
        assert named or in_order, (step, lines, waiting)
