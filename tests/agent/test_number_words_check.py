"""Every number is seen (issue 26): numbers in words, scale words and ranges are read and
checked like digits, and what cannot be read is ``unreadable``, never skipped. A real
ledger file, a real Markdown Report, the ``lantide report check`` command."""

from __future__ import annotations

import json

from lantide.agent.ledger import Ledger

SID = "c0ffee000026"


def _step(root):
    rows = [[None, 0.12, 0.75, 0.101]] + [[None, 0.2, 0.5, 0.112]] * 11
    Ledger(root / ".lantide/ledger", "20261204-120000-words").append(
        {
            "step_id": SID,
            "tool": "run_query",
            "project": "q3-churn",
            "purpose": "shares per segment",
            "sql": "SELECT segment, churn_share, stay_share, refund_share FROM shares",
            "row_count": 12,
            "evidence": "formal",
            "result_cells": {
                "columns": ["segment", "churn_share", "stay_share", "refund_share"],
                "rows": rows,
            },
        }
    )


def test_numbers_in_words_and_ranges_are_checked_and_the_unreadable_reported(
    sample_workspace, run_cli
):
    _step(sample_workspace)
    (sample_workspace / "projects/q3-churn/report.md").write_text(
        "# Report\n\n"
        f"Churn was twelve percent [^s:{SID}] across a dozen segments [^s:{SID}].\n\n"
        f"Three quarters of users [^s:{SID}] stayed; refunds were 10–11% [^s:{SID}].\n\n"
        "We saw twenty twelve anomalies in 1,23,456 rows.\n\n"
        "A dozen stores closed.\n"
    )
    proc = run_cli("report", "check", sample_workspace, "q3-churn", "--json")
    assert proc.returncode == 1, proc.stdout
    out = json.loads(proc.stdout)
    got = [(r["number"], r["status"]) for r in out["results"]]
    assert got == [
        ("twelve percent", "matching"),
        ("a dozen", "matching"),
        ("Three quarters of", "matching"),
        ("10–11% [low]", "matching"),
        ("10–11% [high]", "matching"),
        ("twenty twelve", "unreadable"),
        ("1,23,456", "unreadable"),
        ("A dozen", "uncited"),
    ]
    twelve, dozen, quarters, low, high = out["results"][:5]
    assert twelve["cells"] == [{"step": SID, "row": 1, "column": "churn_share"}]
    assert dozen["cells"] == [{"step": SID, "row_count": 12}]  # "a dozen segments" counts rows
    assert quarters["cells"] == [{"step": SID, "row": 1, "column": "stay_share"}]
    assert low["cells"] == [{"step": SID, "row": 1, "column": "refund_share"}]
    assert {c["row"] for c in high["cells"]} == set(range(2, 13))
    assert out["counts"]["unreadable"] == 2 and out["counts"]["uncited"] == 1
    text = run_cli("report", "check", sample_workspace, "q3-churn").stdout
    assert "line 7: twenty twelve: unreadable" in text and "line 7: 1,23,456: unreadable" in text
