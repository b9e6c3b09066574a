"""A real workspace with a real ledger and a cited Report, for the HTML Report tests."""

from __future__ import annotations

from pathlib import Path

from lantide.agent.ledger import Ledger
from lantide.workspace.model import Project, Workspace

STEPS = [
    {
        "step_id": "a1b2c3d4e5f6",
        "tool": "run_query",
        "project": "q3",
        "purpose": "real customers",
        "sql": "SELECT count(*) AS customers FROM customers WHERE NOT is_test_account",
        "row_count": 1,
        "evidence": "formal",
        "result_values": [1204.0],
    },
    {
        "step_id": "0badc0ffee00",
        "tool": "run_query",
        "project": "q3",
        "purpose": "refund share of orders",
        "sql": "SELECT avg(refunded::INT) AS share FROM orders WHERE amount < 5000",
        "row_count": 1,
        "evidence": "formal",
        "result_values": [0.043],
    },
]
REPORT = """# Report: Q3 churn

## Customers

We count 1,204 customers [^s:a1b2c3d4e5f6], test accounts excluded.

## Refunds

Refunds were 4.3% of orders [^s:0badc0ffee00].

```sql
SELECT 99 FROM t
```

## Next steps

Talk to the *retention* team.
"""


def make_report_project(root: Path, report: str = REPORT) -> tuple[Workspace, Project]:
    ws = Workspace.create(root)
    ledger = Ledger(ws.ledger_dir, "20261201-120000-html")
    for step in STEPS:
        ledger.append(dict(step))
    project = ws.create_project("q3", plan_text="# Plan\n\nCount customers.\n", report_text=report)
    project.approve_plan()
    return ws, project
