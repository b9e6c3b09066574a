"""Compaction never hides what the model has not read, at an 8,192-token window (the
default, and the size of several local models): older material gives way first, the
newest result is cut only to what fits (its first rows), every stub points at rows that
really come back, and a request that cannot fit ends the turn with a message naming the
window. Driven through the real ``openai`` client and the loopback server."""

from __future__ import annotations

import json

import pytest

from lantide.agent.prompt import output_reserve
from tests.agent.live import calls_of, live_session, run, tool_results
from tests.fakes.openai_server import ToolCall, Turn

FORTY = "SELECT * FROM orders ORDER BY order_id LIMIT 40"
WIDE = "SELECT * FROM orders ORDER BY order_id LIMIT 200"
WIDE_CUSTOMERS = "SELECT * FROM customers ORDER BY customer_id LIMIT 200"


@pytest.fixture
def window_8k(fake_openai):
    fake_openai.context_length = 8_192
    return fake_openai


SMALL = 6_144  # after the token diet much fits in 8k: the mechanisms are shown in less


@pytest.fixture
def window_small(fake_openai):
    fake_openai.context_length = SMALL
    return fake_openai


def rows_of(result):
    preview = result["preview"]
    return preview["rows"] if isinstance(preview, dict) else preview


def request_tokens(body):
    from lantide.tokens import count_tokens

    return sum(count_tokens(m.get("content") or "") for m in body["messages"]) + count_tokens(
        json.dumps(body["tools"])
    )


def test_a_forty_row_preview_reaches_the_model_whole(session_factory, window_8k):
    server = window_8k
    server.script(Turn(tool_calls=[ToolCall("show_tables", {})]), Turn(text="Five tables."))
    s = live_session(session_factory, server)
    run(s, "Which tables are there?")
    server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": FORTY})]), Turn(text="Forty orders seen.")
    )
    events = run(s, "Show me the first forty orders")
    server.assert_done()
    body = server.chat_requests[-1]
    names = calls_of(body)
    (result,) = [r for cid, r in tool_results(body).items() if names[cid] == "run_query"]
    assert "compacted" not in result and len(rows_of(result)) == 40
    assert events[-1].reason == "answered"


def test_results_too_big_are_cut_to_their_first_rows_never_to_a_stub(session_factory, window_small):
    server = window_small
    server.script(
        Turn(
            tool_calls=[
                ToolCall("run_query", {"sql": WIDE}),
                ToolCall("run_query", {"sql": WIDE_CUSTOMERS}),
            ]
        ),
        Turn(text="Looking closer."),
    )
    s = live_session(session_factory, server)
    events = run(s, "Show me orders and customers")
    assert events[-1].reason == "answered", events[-1]
    body = server.chat_requests[-1]
    assert request_tokens(body) <= SMALL - output_reserve(SMALL)
    orders, customers = tool_results(body).values()
    expected = s.services.query()
    cut = []
    for result, sql in ((orders, WIDE), (customers, WIDE_CUSTOMERS)):
        assert "compacted" not in result and rows_of(result), result
        first_rows = expected.preview_sql(sql, len(rows_of(result)))["rows"]
        assert rows_of(result) == json.loads(json.dumps(first_rows))  # its first rows
        if "did not fit" in result.get("preview_note", ""):
            cut.append(result)
            assert f"read_step with step_id {result['step_id']}" in result["preview_note"]
    assert cut, "at least one result had to be cut to fit"

    server.script(
        Turn(tool_calls=[ToolCall("read_step", {"step_id": cut[0]["step_id"], "rows": 60})]),
        Turn(text="Done."),
    )
    events = run(s, "Show me more of it")
    assert events[-1].reason == "answered", events[-1]
    server.assert_done()
    (read,) = [e for e in events if e.name == "tool_returned" and e.tool == "read_step"]
    page = read.result["rows"]
    assert read.ok and 0 < len(page["rows"]) <= 60 and page["row_count"] == 200
    # a page that fits what the window has left, and the offset of the next one
    assert page["next_offset"] == len(page["rows"]) and "offset" in page["note"]
    sql = next(st["sql"] for st in s.ledger.steps() if st["step_id"] == cut[0]["step_id"])
    first = s.services.query().preview_sql(sql, 60)["rows"]
    assert page["rows"] == json.loads(json.dumps(first[: len(page["rows"])]))


def test_a_compacted_result_points_at_rows_that_come_back(session_factory, window_small):
    server = window_small
    server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": WIDE})]),
        Turn(tool_calls=[ToolCall("run_query", {"sql": WIDE_CUSTOMERS})]),
        Turn(text="Both seen."),
    )
    s = live_session(session_factory, server)
    run(s, "Orders, then customers")
    server.assert_done()
    body = server.chat_requests[-1]
    first = tool_results(body)[next(iter(tool_results(body)))]
    assert first["compacted"] is True and first["cached_table_name"] is None
    assert "read_step with step_id" in first["note"] and "cached table" not in first["note"]

    step_id = first["step_id"]
    server.script(
        Turn(tool_calls=[ToolCall("read_step", {"step_id": step_id, "rows": 5})]),
        Turn(text="Read again."),
    )
    events = run(s, "Look at the orders again")
    (read,) = [e for e in events if e.name == "tool_returned" and e.tool == "read_step"]
    assert read.ok and [r[0] for r in read.result["rows"]["rows"]] == [
        r[0] for r in s.services.query().preview_sql(WIDE, 5)["rows"]
    ]
    assert "run again" in read.result["rows"]["from"]


def test_a_materialized_step_is_read_back_from_its_cached_table(
    session_factory, window_8k, open_ws
):
    server = window_8k
    server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": WIDE, "result_label": "first_orders"})]),
        Turn(text="Cached."),
    )
    s = live_session(session_factory, server)
    run(s, "Cache the first orders")
    step = s.ledger.steps()[0]
    assert step["materialized"] and step["cached_table_name"] == "first_orders"
    from lantide.agent.history import compact_result

    stub = json.loads(
        compact_result(json.dumps({**step, "preview": [[1]]}), "run_query", {"sql": WIDE})
    )
    assert 'cached table "first_orders"' in stub["note"]
    server.script(
        Turn(tool_calls=[ToolCall("read_step", {"step_id": step["step_id"], "rows": 3})]),
        Turn(text="ok"),
    )
    events = run(s, "Again")
    (read,) = [e for e in events if e.name == "tool_returned" and e.tool == "read_step"]
    assert read.result["rows"]["from"] == 'the cached table "first_orders"'
    assert len(read.result["rows"]["rows"]) == 3 and read.result["rows"]["row_count"] == 200


def test_a_request_that_cannot_fit_ends_the_turn_naming_the_window(session_factory, fake_openai):
    fake_openai.context_length = 2_800  # the fixed layers and the answer's reserve pass it
    s = live_session(session_factory, fake_openai)
    events = run(s, "Which tables are there?")
    fake_openai.assert_done()
    assert fake_openai.chat_requests == []  # nothing sent at 4,093 of 4,096 tokens
    finished = events[-1]
    assert finished.reason == "context_full"
    assert "context window of 2,800 tokens" in finished.message
    last = s.conversation.message_records()[-1]["message"]
    assert last == {"role": "assistant", "content": finished.message}


def test_earlier_turns_give_way_before_results_of_this_turn(session_factory, window_small):
    server = window_small
    server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": FORTY})]), Turn(text="Forty orders.")
    )
    s = live_session(session_factory, server)
    run(s, "First forty orders")
    twenty = "SELECT * FROM orders ORDER BY order_id DESC LIMIT 20"
    server.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": twenty})]),
        Turn(tool_calls=[ToolCall("read_schema", {"table": "customers"})]),
        Turn(text="Compared."),
    )
    run(s, "Now the last twenty, and the customers' columns")
    server.assert_done()
    body = server.chat_requests[-1]
    names = calls_of(body)
    results = [(names[cid], r) for cid, r in tool_results(body).items()]
    # this turn's query result was read already but stays whole ...
    assert results[-2][0] == "run_query" and "compacted" not in results[-2][1]
    assert len(rows_of(results[-2][1])) == 20
    # ... while the earlier turn's forty rows were compacted or left out
    earlier = [r for name, r in results[:-2] if name == "run_query"]
    assert all(r.get("compacted") for r in earlier)
    assert request_tokens(body) <= SMALL - output_reserve(SMALL)


def test_rows_read_again_go_through_the_guard_and_leave_nothing_behind(session_factory):
    from lantide.errors import LantideError

    q = session_factory().services.query()
    before = q.show_tables()["counts"]
    with pytest.raises(LantideError) as refused:
        q.preview_sql("DROP TABLE orders", 5)
    assert refused.value.code == "QUERY_REFUSED_DDL"
    out = q.preview_sql("SELECT order_id FROM orders ORDER BY order_id", 3)
    assert out["rows"] == [[1], [2], [3]] and out["row_count"] > 3
    assert q.show_tables()["counts"] == before  # nothing materialized


def test_at_a_4096_token_window_rows_reach_the_model_page_by_page(session_factory, fake_openai):
    """The issue's case: at 4,096 tokens a 200-row result reached the model as
    "preview": [] and read_step needed 11,261 tokens: the turn ended context_full."""
    window = 4_096
    fake_openai.context_length = window
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", {"sql": WIDE})]), Turn(text="Seen the first rows.")
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Show me the orders")
    assert events[-1].reason == "answered", events[-1]
    body = fake_openai.chat_requests[-1]
    assert request_tokens(body) <= window - output_reserve(window)
    (result,) = tool_results(body).values()
    truth = json.loads(json.dumps(s.services.query().preview_sql(WIDE, 200)["rows"]))
    shown = rows_of(result)
    assert shown and shown == truth[: len(shown)]  # the first page fits, as its first rows
    step_id = result["step_id"]
    # where the next page starts: said in a note, or (in the tiniest form) as next_offset
    assert result.get("next_offset") == len(shown) or (
        f"read_step with step_id {step_id} and offset {len(shown)}" in result["preview_note"]
    )

    offset = len(shown)
    seen = list(shown)
    for _ in range(2):  # the model walks on, one page at a time, from where it stopped
        fake_openai.script(
            Turn(tool_calls=[ToolCall("read_step", {"step_id": step_id, "offset": offset})]),
            Turn(text="Read the next rows."),
        )
        events = run(s, "Go on")
        assert events[-1].reason == "answered", events[-1]
        body = fake_openai.chat_requests[-1]
        assert request_tokens(body) <= window - output_reserve(window)
        (read,) = [e for e in events if e.name == "tool_returned" and e.tool == "read_step"]
        sent = [r for r in tool_results(body).values() if "rows" in r and "step" in r][-1]
        assert sent == json.loads(json.dumps(read.result))  # fitted by the tool, not cut after
        page = read.result["rows"]
        assert page["rows"] and page["rows"] == truth[offset : offset + len(page["rows"])]
        assert page["next_offset"] == offset + len(page["rows"]) and page["row_count"] == 200
        seen += page["rows"]
        offset = page["next_offset"]
    fake_openai.assert_done()
    assert seen == truth[: len(seen)]


def test_at_4096_tokens_the_newest_of_two_results_keeps_its_first_row(session_factory, fake_openai):
    """Two wide results in one iteration at 4,096 tokens ended the turn context_full; now
    both are sent (neither as a stub: each names its step and where its rows are) and the
    newest keeps its first row."""
    window = 4_096
    fake_openai.context_length = window
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("run_query", {"sql": WIDE}),
                ToolCall("run_query", {"sql": WIDE_CUSTOMERS}),
            ]
        ),
        Turn(text="Seen both."),
    )
    s = live_session(session_factory, fake_openai)
    events = run(s, "Show me orders and customers")
    fake_openai.assert_done()
    assert events[-1].reason == "answered", events[-1]
    body = fake_openai.chat_requests[-1]
    assert request_tokens(body) <= window - output_reserve(window)
    orders, customers = tool_results(body).values()
    steps = [step["step_id"] for step in s.ledger.steps()]
    assert [orders["step_id"], customers["step_id"]] == steps
    assert "compacted" not in orders and "compacted" not in customers
    first = json.loads(json.dumps(s.services.query().preview_sql(WIDE_CUSTOMERS, 1)["rows"]))
    assert rows_of(customers)[:1] == first
    assert orders.get("next_offset") == len(rows_of(orders)) or "offset" in orders["preview_note"]


def test_read_step_pages_hostile_offsets_without_running_away(session_factory, fake_openai):
    fake_openai.script(Turn(tool_calls=[ToolCall("run_query", {"sql": WIDE})]), Turn(text="Seen."))
    s = live_session(session_factory, fake_openai)
    run(s, "Orders")
    step_id = s.ledger.steps()[0]["step_id"]
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall("read_step", {"step_id": step_id, "offset": 500, "rows": 5}),
                ToolCall("read_step", {"step_id": step_id, "offset": 10**9}),
                ToolCall("read_step", {"step_id": step_id, "offset": -1}),
            ]
        ),
        Turn(text="Nothing more there."),
    )
    events = run(s, "Read past the end")
    fake_openai.assert_done()
    past, far, negative = [e for e in events if e.name == "tool_returned"]
    assert (
        past.ok and past.result["rows"]["rows"] == [] and "next_offset" not in past.result["rows"]
    )
    assert far.result["error"] == "OFFSET_TOO_FAR" and "result_label" in far.result["hint"]
    assert not negative.ok and negative.result["error"] == "BAD_ARGUMENTS"
