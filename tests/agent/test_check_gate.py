"""What resolves an error check (issue 26): a later clean step that recomputes the number,
or the analyst's waiver in the step's own ledger; nothing else (a hand-written waiver of
a warning, a waiver in another conversation's ledger, a check marked resolved on the
line). Real ledger files, a real Report, ``lantide report check``/``waive``."""

from __future__ import annotations

import json

from lantide.agent.ledger import Ledger
from lantide.agent.report_check import StepIndex, check_text
from lantide.workspace.atomic import append_jsonl

FAN_OUT = {"code": "JOIN_FAN_OUT", "severity": "error", "message": "repeats customers"}
EMPTY = {"code": "EMPTY_RESULT", "severity": "warning", "message": "no rows"}


def _step(ledger, step_id, at, value, checks=(), column="customers"):
    return ledger.append(
        {
            "step_id": step_id,
            "at": at,
            "tool": "run_query",
            "project": "q3-churn",
            "purpose": "customers",
            "sql": "SELECT 1",
            "row_count": 1,
            "evidence": "formal",
            "checks": list(checks),
            "result_cells": {"columns": [column], "rows": [[value]]},
        }
    )


def _check(ws, text):
    index = StepIndex.of_workspace(ws / ".lantide/ledger", "q3-churn")
    return check_text(text, index).results


def test_a_later_clean_step_that_recomputes_the_number_resolves_the_check(sample_workspace):
    ledger = Ledger(sample_workspace / ".lantide/ledger", "20261204-100000-aaaa")
    _step(ledger, "s1", "2026-12-04T10:00:00Z", 2000, [FAN_OUT])
    _step(ledger, "s2", "2026-12-04T10:05:00Z", 2000)  # count(DISTINCT …): the same number
    _step(ledger, "s3", "2026-12-04T10:00:00Z", 1500, [FAN_OUT])
    _step(ledger, "s4", "2026-12-04T10:06:00Z", 1499)  # recomputed: another number
    _step(ledger, "s5", "2026-12-04T09:00:00Z", 1500)  # earlier, not a recomputation
    _step(ledger, "s6", "2026-12-04T10:07:00Z", 1500, column="orders")  # another column
    first, second = _check(
        sample_workspace, "We have 2,000 customers [^s:s1] and 1,500 customers [^s:s3].\n"
    )
    assert first["status"] == "matching" and first["resolved_by"] == "s2"
    assert first["cells"] == [{"step": "s2", "row": 1, "column": "customers"}]
    assert second["status"] == "check_failed" and second["steps"] == ["s3"]
    assert second["checks"] == [
        {"step": "s3", "code": "JOIN_FAN_OUT", "message": "repeats customers"}
    ]


def test_only_the_analysts_waiver_of_an_error_check_in_the_steps_ledger_resolves_it(
    sample_workspace, run_cli
):
    root = sample_workspace / ".lantide/ledger"
    ledger = Ledger(root, "20261204-100000-aaaa")
    _step(ledger, "s1", "2026-12-04T10:00:00Z", 2000, [FAN_OUT, EMPTY])
    marked = dict(FAN_OUT, resolved=True)  # a hand-edited line cannot mark itself resolved
    _step(ledger, "s2", "2026-12-04T10:00:00Z", 1500, [marked])
    other = Ledger(root, "20261204-110000-bbbb")  # another conversation: its own s1
    waiver = {"kind": "waiver", "check": "JOIN_FAN_OUT", "by": "x", "at": "now", "reason": "r"}
    append_jsonl(other.path, {**waiver, "step_id": "s1"})
    append_jsonl(ledger.path, {**waiver, "step_id": "s1", "check": "EMPTY_RESULT"})
    report = sample_workspace / "projects/q3-churn/report.md"
    report.write_text("We have 2,000 customers [^s:s1] and 1,500 more [^s:s2].\n")
    assert [r["status"] for r in _check(sample_workspace, report.read_text())] == [
        "check_failed",
        "check_failed",
    ]
    assert ledger.steps() and not ledger.problems  # waiver lines are no broken steps

    no_reason = run_cli("report", "waive", sample_workspace, "q3-churn", "s1", "JOIN_FAN_OUT")
    assert no_reason.returncode == 2 and "--reason" in no_reason.stderr
    misplaced = run_cli("report", "check", sample_workspace, "q3-churn", "s1")
    assert misplaced.returncode == 2 and "report waive" in misplaced.stderr
    warning = run_cli(
        "report", "waive", sample_workspace, "q3-churn", "s1", "EMPTY_RESULT", "--reason", "r"
    )
    assert warning.returncode == 1 and "no error-severity check 'EMPTY_RESULT'" in warning.stderr
    done = run_cli(
        "report", "waive", sample_workspace, "q3-churn", "s1", "JOIN_FAN_OUT",
        "--reason", "order lines on purpose", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["waiver"]["reason"] == "order lines on purpose"
    assert json.loads(ledger.path.read_text().splitlines()[-1])["conversation_id"] == (
        "20261204-100000-aaaa"
    )
    first, second = _check(sample_workspace, report.read_text())
    assert (
        first["status"] == "matching" and first["waivers"][0]["reason"] == "order lines on purpose"
    )
    assert second["status"] == "check_failed"


def test_hand_broken_cells_and_waiver_lines_never_break_the_check(sample_workspace, run_cli):
    ledger = Ledger(sample_workspace / ".lantide/ledger", "20261204-100000-aaaa")
    common = {"tool": "run_query", "project": "q3-churn", "purpose": "p", "sql": "SELECT 1"}
    broken_cells = [
        {"columns": "customers", "rows": [[2000], "bad", None, [{"a": 1}, "NaN", "1e400"]]},
        {"columns": [None, {"x": 1}], "rows": [[1, 2, 3, 2000]]},
        ["not", "an", "object"],
        {"rows": 7},
    ]
    for n, cells in enumerate(broken_cells, 1):
        ledger.append(
            {**common, "step_id": f"b{n}", "row_count": 1, "evidence": "formal",
             "result_cells": cells, "checks": [FAN_OUT, "garbage", None], "result_values": 7,
             "waivers": [{"step_id": f"b{n}", "check": "JOIN_FAN_OUT"}]}  # not a waiver line
        )  # fmt: skip
    for waiver in (
        {
            "kind": "waiver",
            "step_id": 5,
            "check": "JOIN_FAN_OUT",
            "by": "x",
            "at": "t",
            "reason": "r",
        },
        {"kind": "waiver", "step_id": "b1", "check": ["JOIN_FAN_OUT"], "by": "x", "reason": "r"},
        {"kind": "waiver"},
    ):
        append_jsonl(ledger.path, waiver)
    report = sample_workspace / "projects/q3-churn/report.md"
    report.write_text("".join(f"We have 2,000 customers [^s:b{n}].\n\n" for n in range(1, 5)))
    out = run_cli("report", "check", sample_workspace, "q3-churn", "--json")
    assert out.returncode == 1, out.stderr
    statuses = [r["status"] for r in json.loads(out.stdout)["results"]]
    assert statuses == ["check_failed"] * 4  # the error check stands; no waiver was valid
