"""Report numbers traced to ledger steps, end to end: a scripted model (real ``openai``
client, loopback server) runs three formal steps and writes the Report citing them; the
Report checks clean, and properties hold on it: one changed digit is reported at its line,
a deleted ledger step makes its citations missing, numbers in code fences and tables of
contents are ignored. Real DuckDB, real files, the ``lantide report check`` command."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lantide.agent.reflection import CHECKLIST
from lantide.agent.report_check import StepIndex, check_text
from tests.agent.live import live_session, results_by_tool, run
from tests.fakes.openai_server import ToolCall, Turn

QUERIES = [
    {
        "sql": "SELECT count(*) AS customers FROM customers WHERE NOT is_test_account",
        "purpose": "real customers",
    },
    {
        "sql": "SELECT avg(CASE WHEN status = 'refunded' THEN 1 ELSE 0 END) AS refund_share "
        "FROM orders",
        "purpose": "refund share of orders",
    },
    {"sql": "SELECT sum(quantity * unit_price) AS gross FROM orders", "purpose": "gross revenue"},
]
PASS = json.dumps(
    {"ok": True, "checklist": {i: {"ok": True, "note": "fine"} for i in CHECKLIST}, "problems": []}
)


def _value(step) -> float:
    (value,) = step["result_values"]  # one row, one column: the row count is not a value
    return value


def report_from(steps) -> str:
    """A Report as an analyst would write it from the three steps' results."""
    customers, share, gross = steps
    return (
        f"# Report: Q3 churn\n\n## Contents\n\n- [1. Customers](#customers)\n"
        f"- [2. Revenue](#revenue)\n\n## 1. Customers\n\n"
        f"We count {_value(customers):,.0f} customers [^s:{customers['step_id']}], test "
        f"accounts excluded (since 2024-01-01).\n\n"
        f"## 2. Revenue\n\nRefunds were {_value(share) * 100:.1f}% of orders "
        f"[^s:{share['step_id']}],\n"
        f"for a gross revenue of ${_value(gross):,.2f} [^s:{gross['step_id']}].\n"
    )


@pytest.mark.usefixtures("agent_edits_apply")  # checks the Report the agent wrote
def test_the_scripted_agents_report_from_three_steps_checks_clean(
    session_factory, fake_openai, open_ws, run_cli
):
    open_ws.project("q3-churn").approve_plan()
    s = live_session(session_factory, fake_openai)
    fake_openai.script(
        Turn(tool_calls=[ToolCall("run_query", q) for q in QUERIES]),
        Turn(text="[[QUERY_STEP]] Three steps run."),
    )
    run(s, "Run the Plan's three steps")
    steps = s.ledger.steps()
    assert [st["evidence"] for st in steps] == ["formal"] * 3
    report_path = open_ws.root / "projects/q3-churn/report.md"
    good = report_from(steps)

    # a first draft with a number not cited: refused with its line, nothing written
    before = report_path.read_bytes()
    uncited = good.replace("(since 2024-01-01)", "(since 2024-01-01, 17 left out)")
    fake_openai.script_background(Turn(text=PASS), Turn(text=PASS))  # the reviews (no tools)
    fake_openai.script(
        Turn(tool_calls=[ToolCall("update_report", {"content": uncited})]),
        Turn(tool_calls=[ToolCall("update_report", {"content": good})]),
        Turn(tool_calls=[ToolCall("set_project_status", {"status": "report_review"})]),
        Turn(text="The Report is ready for your review."),
    )
    run(s, "Write the Report")
    fake_openai.assert_done()
    results = results_by_tool(fake_openai.chat_requests[-1])
    refused = results["update_report"][0]
    assert refused["error"] == "REPORT_NUMBERS_UNCITED"
    assert "line 10: 17 uncited" in refused["message"]
    assert "error" not in results["update_report"][1]
    assert results["set_project_status"][0]["status"] == "report_review"
    assert report_path.read_text() == good and report_path.read_bytes() != before
    gate = s.ledger.reflections()[-1]
    assert gate["subject"] == "report_review" and gate["ok"] is True

    checked = run_cli("report", "check", open_ws.root, "q3-churn", "--json")
    assert checked.returncode == 0, checked.stderr
    out = json.loads(checked.stdout)
    assert out["ok"] is True and out["counts"]["matching"] == 3 and out["numbers"] == 3
    listed = run_cli("ledger", open_ws.root)
    assert "evidence" in listed.stdout.splitlines()[0] and listed.stdout.count("formal") == 3

    index = StepIndex(steps, "q3-churn")
    lines = good.splitlines()
    number_lines = [i for i, line in enumerate(lines) if "[^s:" in line]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one_changed_digit_is_reported_at_its_line(data):
        at = data.draw(st.sampled_from(number_lines))
        line = lines[at]
        cut = line.index("[^s:")
        digits = [
            i
            for i, c in enumerate(line[:cut])
            if c.isdigit()
            and not line[max(0, i - 9) : i + 1].startswith("2024-01-0")
            and "2024-01-01" not in line[max(0, i - 9) : i + 10]
        ]
        pos = data.draw(st.sampled_from(digits))
        new_digit = data.draw(st.sampled_from([d for d in "0123456789" if d != line[pos]]))
        changed = lines[:at] + [line[:pos] + new_digit + line[pos + 1 :]] + lines[at + 1 :]
        result = check_text("\n".join(changed) + "\n", index)
        assert [(p["line"], p["status"]) for p in result.problems] == [(at + 1, "not_matching")]

    one_changed_digit_is_reported_at_its_line()

    # a ledger line deleted by hand: its citations are missing
    ledger = s.ledger.path
    kept = [
        ln
        for ln in ledger.read_text().splitlines()
        if json.loads(ln).get("step_id") != steps[1]["step_id"]
    ]
    ledger.write_text("\n".join(kept) + "\n")
    missing = run_cli("report", "check", open_ws.root, "q3-churn")
    assert missing.returncode == 1
    assert (
        f"line 14: {_value(steps[1]) * 100:.1f}%: missing [{steps[1]['step_id']}]" in missing.stdout
    )
    assert "2 matching" in missing.stdout and "1 missing" in missing.stdout

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.lists(
            st.one_of(
                st.integers(-(10**9), 10**9).map(lambda n: f"{n:,}"),
                st.floats(0, 1e6, allow_nan=False).map(lambda f: f"{f:.2f}%"),
            ),
            min_size=1,
            max_size=6,
        )
    )
    def numbers_in_code_and_contents_are_ignored(numbers):
        fence = "```sql\nSELECT " + ", ".join(numbers) + "\n```\n"
        toc = "".join(f"- [{n} section](#s{i})\n" for i, n in enumerate(numbers))
        text = (
            good.replace("## Contents\n\n", "## Contents\n\n" + toc)
            + "\n"
            + fence
            + "\n    "
            + " ".join(numbers)
            + "\n\nInline `"
            + numbers[0]
            + "` code.\n"
        )
        result = check_text(text, StepIndex(steps, "q3-churn"))
        assert result.ok and result.counts["matching"] == 3

    numbers_in_code_and_contents_are_ignored()


def test_a_source_run_step_keeps_the_values_of_its_cached_table(
    session_factory, fake_openai, open_ws
):
    """A Source Run reads no preview rows; its formal steps still carry result values,
    read from their cached tables, so the Report can cite them."""
    open_ws.project("q3-churn").approve_plan()
    s = live_session(session_factory, fake_openai)
    fake_openai.script(
        Turn(
            tool_calls=[
                ToolCall(
                    "source_run_sql_tab",
                    {"tab": "q3_churn_by_region", "purpose": "churn by region"},
                )
            ]
        ),
        Turn(text="Done."),
    )
    run(s, "Source Run the churn tab")
    steps = s.ledger.steps()
    assert steps and all(st["evidence"] == "formal" for st in steps)
    final = steps[-1]
    assert final["cached_table_name"] == "q3_churn_by_region"
    cached = s.services.query().fetch_rows("q3_churn_by_region", 0, 200)
    numbers = {
        float(v)
        for row in cached
        for v in row
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    assert numbers and numbers <= set(map(float, final["result_values"]))
