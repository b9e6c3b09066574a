"""The step ledger: fields, [[QUERY_STEP]] parsing, corrections kept as an audit trail."""

from __future__ import annotations

import json

from lantide.agent.ledger import (
    STEP_FIELDS,
    Ledger,
    StepNotFoundError,
    mark_missing,
    parse_step_lines,
    resolve_summaries,
)


def make(tmp_path, n=2):
    ledger = Ledger(tmp_path / "ledger", "c1")
    for i in range(n):
        ledger.append(
            {
                "step_id": f"abc{i}",
                "tool": "run_query",
                "sql": f"SELECT {i}",
                "row_count": i,
                "columns": [{"name": "x", "type": "INTEGER"}],
                "materialized": False,
                "materialize_reason": "exploratory_preview",
                "warnings": [],
                "duration_ms": 3,
                "project": "q3-churn",
                "purpose": None,
                "result_label": None,
                "cached_table_name": None,
            }
        )
    return ledger


def test_appended_step_has_every_design_field(tmp_path):
    ledger = make(tmp_path, 1)
    line = json.loads(ledger.path.read_text().splitlines()[0])
    assert set(STEP_FIELDS) <= set(line)
    assert line["conversation_id"] == "c1" and line["summary"] is None
    assert line["summary_status"] == "pending" and line["at"].endswith("Z")


def test_parse_step_lines_by_id_and_in_order():
    text = (
        "Results below.\n[[QUERY_STEP]] abc1: Q2 actives — 1,412 customers\n"
        "- [[QUERY_STEP]] Churn: share of Q2 actives gone in Q3 — 12%\n[[QUERY_STEP]]\n"
    )
    lines = parse_step_lines(text, {"abc0", "abc1"})
    assert [(line.step_ref, line.summary) for line in lines] == [
        ("abc1", "Q2 actives — 1,412 customers"),
        (None, "Churn: share of Q2 actives gone in Q3 — 12%"),
        (None, ""),
    ]
    assert lines[2].problem == "empty [[QUERY_STEP]] line"


def test_summaries_resolve_pending_steps_and_missing_ones_are_recorded(tmp_path):
    ledger = make(tmp_path, 3)
    pending = ["abc0", "abc1", "abc2"]
    updated = resolve_summaries(
        ledger, pending, "[[QUERY_STEP]] abc1: second step — 5 rows\n[[QUERY_STEP]] ok\n"
    )
    # the id-less line could belong to abc0 or abc2: kept unattributed, never guessed
    assert [(s["step_id"], s["summary_status"]) for s in updated] == [("abc1", "parsed")]
    assert [u["raw"] for u in ledger.unattributed()] == ["[[QUERY_STEP]] ok"]
    assert pending == ["abc0", "abc2"]
    pending.remove("abc0")
    updated = resolve_summaries(ledger, pending, "[[QUERY_STEP]] ok")  # one waits: its line
    assert [(s["step_id"], s["summary_status"]) for s in updated] == [("abc2", "malformed")]
    assert ledger.step("abc2")["summary_raw"] == "[[QUERY_STEP]] ok"
    assert ledger.step("abc2")["summary"] is None
    pending.append("abc0")
    mark_missing(ledger, pending)
    assert ledger.step("abc0")["summary_status"] == "missing" and pending == []
    assert len(ledger.steps()) == 3  # unattributed lines are not steps
    assert ledger.step("abc1")["summary"] == "second step — 5 rows"
    assert "patches" not in ledger.step("abc1")  # the engine's own bookkeeping


def test_patch_keeps_old_values_and_other_lines_byte_identical(tmp_path):
    ledger = make(tmp_path, 2)
    with open(ledger.path, "a") as fh:
        fh.write('{"torn line\n')
    before = ledger.path.read_text().splitlines()
    ledger.update(
        "abc1", {"summary": "corrected summary text", "summary_status": "patched"}, by="agent"
    )
    after = ledger.path.read_text().splitlines()
    assert after[0] == before[0] and after[2] == before[2]  # untouched, torn line kept
    step = ledger.step("abc1")
    assert step["summary"] == "corrected summary text"
    assert step["patches"][0]["old"] == {"summary": None, "summary_status": "pending"}
    try:
        ledger.update("nope", {"summary": "x"}, by="agent")
    except StepNotFoundError as exc:
        assert "nope" in exc.message
    else:
        raise AssertionError("expected StepNotFoundError")
