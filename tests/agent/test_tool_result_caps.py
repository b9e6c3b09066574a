"""Huge cells reach neither the model nor the conversation file whole."""

from __future__ import annotations

import json

from lantide.agent.conversation import STORED_CELL_CHARS, Conversation
from lantide.agent.tools import default_registry
from lantide.agent.tools.query_tools import MODEL_CELL_CHARS
from lantide.query.results import cut_marker


def test_run_query_tool_cuts_cells_and_says_how_to_read_more(session_factory):
    session = session_factory()
    ctx = session.tool_context()
    registry = default_registry()
    outcome = registry.call("run_query", {"sql": "SELECT repeat('x', 5000000) AS big"}, ctx)
    result = outcome.result
    cell = result["preview"][0][0]
    assert cell == "x" * MODEL_CELL_CHARS + cut_marker(MODEL_CELL_CHARS)
    assert "max_cell_chars" in result["cell_note"] and "substr" in result["cell_note"]
    more = registry.call(
        "run_query", {"sql": "SELECT repeat('x', 5000000) AS big", "max_cell_chars": 50_000}, ctx
    ).result
    assert more["preview"][0][0] == "x" * 50_000 + cut_marker(50_000)


def test_stored_tool_results_are_capped(tmp_path):
    conv = Conversation.create(tmp_path)
    huge = json.dumps({"status": "ok", "preview": [["y" * 5_000_000, 1]], "note": "kept"})
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
            for cid in ("c1", "c2")
        ],
    }
    conv.add_messages(
        [
            call,
            {"role": "tool", "tool_call_id": "c1", "content": huge},
            {"role": "tool", "tool_call_id": "c2", "content": "z" * 5_000_000},
        ],
        1,
        [{}, {"tool": "run_query"}, {"tool": "other"}],
    )
    size = conv.path.stat().st_size
    assert size < 500_000, f"the conversation file holds {size:,} bytes"
    reopened = Conversation.open(tmp_path, conv.id)
    stored = [r["message"] for r in reopened.message_records() if r["message"]["role"] == "tool"]
    first = json.loads(stored[0]["content"])
    assert first["preview"][0] == ["y" * STORED_CELL_CHARS + cut_marker(STORED_CELL_CHARS), 1]
    assert first["note"] == "kept" and "read_step" in first["stored_note"]
    assert stored[1]["content"].endswith(cut_marker(200_000))
    # small results are stored as they were
    # (a result is replayed only after its call: lantide.agent.conversation_replay)
    conv.add_messages(
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c3",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c3", "content": '{"ok": true}'},
        ],
        2,
        [{}, {}],
    )
    assert (
        Conversation.open(tmp_path, conv.id).message_records()[-1]["message"]["content"]
        == '{"ok": true}'
    )


def test_read_step_sends_rows_not_the_ledgers_evidence_values(session_factory):
    """The ledger keeps the distinct numbers of a step's result for ``lantide report
    check``; read_step does not send them to the model (it has the rows), so a wide step
    read again can still be cut to its first rows to fit a small window."""
    from lantide.agent.history import shrink_result

    session = session_factory()
    ctx = session.tool_context()
    registry = default_registry()
    sql = "SELECT * FROM orders ORDER BY order_id LIMIT 200"
    assert registry.call("run_query", {"sql": sql}, ctx).ok
    step = session.ledger.steps()[0]
    assert len(step["result_values"]) > 100  # the ledger keeps them
    read = registry.call("read_step", {"step_id": step["step_id"], "rows": 60}, ctx)
    assert read.ok and len(read.result["rows"]["rows"]) == 60
    sent = read.result["step"]
    assert "result_values" not in sent and "result_values_cut" not in sent
    assert sent["step_id"] == step["step_id"] and sent["evidence"] == step["evidence"]
    assert session.ledger.step(step["step_id"])["result_values"] == step["result_values"]
    cut = shrink_result(json.dumps(read.result), 600)
    assert cut is not None and 0 < len(json.loads(cut)["rows"]["rows"]) < 60
