"""The agent's Stop cancels the turn's own query and never the analyst's, which shares the
workspace's query engine (as a SQL tab of the desktop app does)."""

from __future__ import annotations

import json
import threading
import time

from lantide.agent.cancel import CancelToken
from tests.agent.scripted_model import reply
from tests.fakes.gated_query import GatedQuery, wait_until_no_thread

SLOW_SQL = "SELECT sum(hash(a.range * b.range)) AS h FROM range(200000) a, range(200000) b"


def test_stop_cancels_the_turns_query_and_not_the_analysts(session_factory, scripted):
    scripted.add(reply("", ("run_query", {"sql": SLOW_SQL})))
    s = session_factory()
    query = s.services.query()
    analysts_query = GatedQuery()  # stays in DuckDB until the Stop is over
    analyst = {}

    def analysts_tab():
        try:
            analyst["result"] = analysts_query.run(query.engine)
        except Exception as exc:  # reported to the test
            analyst["error"] = exc

    tab = threading.Thread(target=analysts_tab)
    tab.start()
    assert analysts_query.entered.wait(20)
    cancel = CancelToken()
    events = []
    for event in s.run_turn("Heavy query please", cancel):
        events.append(event)
        if event.name == "tool_called" and event.tool == "run_query":
            threading.Timer(0.5, cancel.cancel).start()
    assert events[-1].reason == "cancelled"
    tools = [r for r in s.conversation.message_records() if r["message"]["role"] == "tool"]
    assert [json.loads(r["message"]["content"])["error"] for r in tools] == ["CANCELLED"]
    # the Stop and its re-interrupts are over: had one reached the analyst's cursor, the
    # analyst's statement would fail as soon as it goes on
    wait_until_no_thread("lantide-cancel")
    assert tab.is_alive() and query.engine.busy and not analyst  # still in DuckDB
    analysts_query.open()
    tab.join(30)
    assert analyst == {"result": GatedQuery.expected}


def test_a_stop_before_the_query_starts_still_stops_it(session_factory, scripted):
    scripted.add(reply("", ("run_query", {"sql": SLOW_SQL})))
    s = session_factory()
    s.services.query()  # opened, as in the app
    cancel = CancelToken()
    started = time.monotonic()
    events = []
    for event in s.run_turn("Heavy query please", cancel):
        events.append(event)
        if event.name == "tool_called":
            cancel.cancel()  # before the tool's statement reaches DuckDB
    assert events[-1].reason == "cancelled"
    assert time.monotonic() - started < 10
    assert not s.ledger.steps()
