"""Nesting depth hides no number (issue 28, item 5): markdown-it's CommonMark preset stops
at 20 levels and dropped everything deeper, so a number 20 lists or block quotes deep was
neither checked (``"ok": true``) nor shown in the HTML Report. Now the Report's parser
keeps the structure to 45 levels and, deeper, the rest of a block as one paragraph of its
text. A real workspace, a real ledger, the real ``lantide report check`` and the HTML
Report."""

from __future__ import annotations

import json

import pytest

from lantide.agent.report_check import check_project
from lantide.agent.report_html import publish_html
from lantide.docs.markdown_map import markdown_parser
from tests.docs.html_report_helpers import make_report_project

pytestmark = [pytest.mark.security]


def _lists(depth: int, last: str) -> str:
    return "".join("  " * i + f"- level {'x' * (i + 1)}\n" for i in range(depth)) + (
        "  " * depth + f"- {last}\n"
    )


def _quotes(depth: int, last: str) -> str:
    return "> " * depth + last + "\n"


@pytest.mark.parametrize("depth", [20, 30, 400])
def test_a_number_deep_in_lists_and_block_quotes_is_checked_and_published(tmp_path, run_cli, depth):
    report = (
        "# Report: Q3 churn\n\n"
        + _lists(depth, "We count 1,204 customers [^s:a1b2c3d4e5f6].")
        + "\n"
        + _quotes(depth, "Churn was 9,999 accounts, uncited.")
        + "\n"
        + _lists(depth, "> " * depth + "Refunds were 4.3% [^s:0badc0ffee00].")
    )
    ws, project = make_report_project(tmp_path / "ws", report)
    result = check_project(ws, project)
    got = [(r["number"], r["status"]) for r in result.results]
    assert got == [("1,204", "matching"), ("9,999", "uncited"), ("4.3%", "matching")]
    assert not result.ok and result.problems[0]["line"] == depth + 5

    out = run_cli("report", "check", ws.root, "q3", "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["counts"]["uncited"] == 1

    publish_html(ws, project)
    page = (project.dir / "report.html").read_text(encoding="utf-8")
    evidence = page.split("<dt>Evidence check</dt><dd>")[1].split("</dd>")[0]
    assert "clean" not in evidence and "1 uncited" in evidence
    for shown in ("1,204 customers", "9,999 accounts", "4.3%"):
        assert shown in page
    ws.close()


@pytest.mark.slow
def test_hostile_nesting_is_parsed_without_running_out_of_stack():
    md = markdown_parser()
    for text in ("> " * 20_000 + "5%", "[" * 5_000 + "x" + "]" * 5_000, _lists(3_000, "7")):
        tokens = md.parse(text)
        assert md.renderer.render(tokens, md.options, {})
