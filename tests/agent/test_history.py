"""History kept by meaning; compaction keeps the fields a reviewer needs."""

from __future__ import annotations

import json

from lantide.agent.history import (
    SQL_PREVIEW_CHARS,
    Turn,
    TurnCompaction,
    compact_result,
    compact_turn,
    fit_history,
    messages_tokens,
)

LONG_SQL = "SELECT " + ", ".join(f"col_{i}" for i in range(80)) + " FROM orders"


def query_turn(n, rows=150):
    call_id = f"call{n}"
    result = {
        "status": "ok",
        "step_id": f"step{n}",
        "columns": [{"name": "a", "type": "INT"}],
        "preview": [[i, "x" * 20] for i in range(rows)],
        "row_count": 5000,
        "materialized": True,
        "reason_code": "large_result",
        "cached_table_name": f"r{n}",
        "warnings": ["the preview shows the first 200 of 5,000 rows"],
    }
    return Turn(
        n,
        [
            {"role": "user", "content": f"question {n}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "run_query",
                            "arguments": json.dumps({"sql": LONG_SQL}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)},
            {"role": "assistant", "content": f"answer {n}"},
        ],
    )


def test_compacted_query_result_keeps_the_reviewers_fields():
    turn = query_turn(1)
    out = json.loads(compact_result(turn.messages[2]["content"], "run_query", {"sql": LONG_SQL}))
    assert out["compacted"] is True
    assert out["step_id"] == "step1" and out["cached_table_name"] == "r1"
    assert out["materialized"] is True and out["materialize_reason"] == "large_result"
    assert out["warnings"] == ["the preview shows the first 200 of 5,000 rows"]
    assert out["sql_preview"] == LONG_SQL[:SQL_PREVIEW_CHARS]
    assert "preview" not in out


def test_result_checks_survive_compaction_without_their_evidence():
    turn = query_turn(1)
    result = json.loads(turn.messages[2]["content"])
    result["checks"] = [
        {
            "code": "JOIN_FAN_OUT",
            "severity": "error",
            "message": "repeats rows",
            "evidence": {"joins": ["x" * 500]},
            "advice": "count distinct keys",
        }
    ]
    out = json.loads(compact_result(json.dumps(result), "run_query", {"sql": LONG_SQL}))
    assert out["checks"] == [
        {"code": "JOIN_FAN_OUT", "severity": "error", "message": "repeats rows"}
    ]
    clean = json.loads(compact_result(turn.messages[2]["content"], "run_query", {"sql": LONG_SQL}))
    assert "checks" not in clean


def test_errors_survive_compaction():
    content = json.dumps(
        {"error": "QUERY_REFUSED_DDL", "message": "DROP is not allowed", "hint": "use SELECT"}
    )
    assert json.loads(compact_result(content, "run_query", {}))["error"] == "QUERY_REFUSED_DDL"


def test_old_turns_are_compacted_then_dropped_newest_kept_whole():
    from lantide.agent.history import compacted_messages

    turns = [query_turn(n) for n in range(1, 7)]
    full = messages_tokens(turns[-1].messages)
    compact = messages_tokens(compacted_messages(turns[0].messages))
    assert compact < full // 4
    budget = full + 2 * compact + compact // 2
    fitted = fit_history(turns, budget)
    assert fitted.messages[-4:] == turns[-1].messages  # the latest turn whole
    assert fitted.dropped_turns and fitted.dropped_turns == list(
        range(1, fitted.dropped_turns[-1] + 1)
    )
    assert fitted.compacted_turns
    ids = [m.get("tool_call_id") for m in fitted.messages if m["role"] == "tool"]
    calls = [c["id"] for m in fitted.messages for c in m.get("tool_calls") or []]
    assert ids == calls  # every kept call travels with its result
    assert fitted.compacted_turns == [4, 5] and fitted.dropped_turns == [1, 2, 3]
    assert fitted.tokens <= budget


def test_compaction_within_a_turn_starts_with_the_oldest_results():
    msgs = []
    for n in range(3):
        msgs += query_turn(n).messages[1:3]
    msgs.append({"role": "assistant", "content": "thinking"})
    state = TurnCompaction()
    assert compact_turn(msgs, state, 10) == 1
    assert state.compacted_ids == {"call0"}
    sent = state.apply(msgs)
    assert json.loads(sent[1]["content"])["compacted"] is True
    assert json.loads(sent[3]["content"]).get("compacted") is None
    assert json.loads(msgs[1]["content"]).get("compacted") is None  # the record is unchanged


def test_compacted_results_are_compact_json_like_the_results_they_replace():
    """Tool results go to the model with the SDK's compact separators; their compacted forms
    (query, error, any other result, arguments cut in an earlier turn) too."""

    def compact(text):
        return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))

    query = query_turn(1).messages[2]["content"]
    for out in (
        compact_result(query, "run_query", {"sql": LONG_SQL}),
        compact_result(json.dumps({"error": "X", "message": "m", "hint": "h"}), "t", {}),
        compact_result(json.dumps({"tables": [{"name": "a" * 400}]}), "show_tables", {}),
        compact_result("not json at all", "t", {}),
    ):
        assert out == compact(out)
    from lantide.agent.history import compacted_messages

    call = compacted_messages(query_turn(2).messages)[1]["tool_calls"][0]["function"]
    assert call["arguments"] == compact(call["arguments"])


def test_a_result_shorter_than_its_compact_form_is_sent_as_it_is():
    """An earlier turn's one-row count was sent "compacted" in 93 tokens instead of its own
    87: the compact form is used only when it is shorter."""
    small = json.dumps(
        {"step_id": "s1", "row_count": 1, "preview": [[1980]], "cached_table_name": "step_s1"},
        separators=(",", ":"),
    )
    assert compact_result(small, "run_query", {"sql": LONG_SQL}) == small
    big = query_turn(1).messages[2]["content"]
    out = json.loads(compact_result(big, "run_query", {"sql": LONG_SQL}))
    assert out["compacted"] is True and len(json.dumps(out)) < len(big)


def test_an_earlier_turns_step_results_lose_their_step_line_reminder(session_factory, fake_openai):
    """The reminder of the [[QUERY_STEP]] line to write is for the turn that ran the step; in
    later requests the earlier turn's result comes without it, its other fields unchanged."""
    from tests.agent.live import live_session, results_by_tool
    from tests.fakes.openai_server import ToolCall
    from tests.fakes.openai_server import Turn as Scripted

    def ask(sql):
        return [
            Scripted(tool_calls=[ToolCall("run_query", {"sql": sql})]),
            Scripted(text="[[QUERY_STEP]] count — 2,000\n\nThere are 2,000."),
        ]

    s = live_session(session_factory, fake_openai)
    fake_openai.script(*ask("SELECT count(*) AS n FROM customers"))
    list(s.run_turn("How many customers?"))
    first = results_by_tool(fake_openai.chat_requests[-1])["run_query"][0]
    assert first["next"].startswith("[[QUERY_STEP]] ")
    fake_openai.script(*ask("SELECT count(DISTINCT customer_id) AS n FROM customers"))
    list(s.run_turn("How many distinct ones?"))
    fake_openai.assert_done()
    earlier, current = results_by_tool(fake_openai.chat_requests[-1])["run_query"]
    assert "next" not in earlier and current["next"].startswith("[[QUERY_STEP]] ")
    assert earlier == {k: v for k, v in first.items() if k != "next"}
    # the conversation file keeps the result as the tool gave it
    stored = [
        json.loads(r["message"]["content"])
        for r in s.conversation.message_records()
        if r["message"].get("role") == "tool"
    ]
    assert all("next" in r for r in stored)
