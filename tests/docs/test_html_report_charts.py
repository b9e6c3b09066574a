"""Charts in the HTML Report (issue 16 parts 3 and 4): a Markdown image
``![title](charts/NAME.vl.json)`` becomes the chart as inline SVG with each mark's
tooltip as an SVG <title> (issue 28: the page runs no script). A bad
chart's place shows its error (file and line); the rest of the page is published. Real sample
workspace, real DuckDB, real chart files."""

from __future__ import annotations

import json

import pytest

from lantide import charts
from lantide.agent.report_html import html_path, patch_chunk, publish_html, read_chunks
from lantide.docs.html_markup import parse_report_html
from tests.charts.test_chart_files import BAR

REPORT = (
    "# Report: Q3 churn\n\n## Products\n\nThe catalogue by category:\n\n"
    "![Products by category](charts/by_category.vl.json)\n\n## Next\n\nMore to come.\n"
)


def test_a_chart_is_inline_svg_with_tooltips_and_no_script(opened):
    ws, query, project = opened
    charts.write_chart(project, "by_category", BAR, by="agent")
    project.report_path.write_text(REPORT)
    publish_html(ws, project, query=lambda: query)
    text = html_path(project).read_text(encoding="utf-8")
    assert "<script" not in text and "vegaEmbed" not in text
    assert "script-src 'none'" in text.split("</head>", 1)[0]
    chunk = read_chunks(project, "s-products")["content"]
    assert '<figure class="lt-chart">' in chunk and 'id="chart-by_category"' in chunk
    assert "<svg" in chunk and "Products by category" in chunk
    # each bar's description is its <title>: the browser's tooltip, with no script
    assert chunk.count("<title>") >= 3 and "category: " in chunk.split("<title>", 2)[1]
    assert [c.id for c in parse_report_html(text)][:3] == [
        "header",
        "s-report-q3-churn",
        "s-products",
    ]
    # the agent may reword around the chart, keeping the chart as it is
    patch_chunk(
        project, "s-products", "<h2>Products</h2><p>Reworded.</p>" + chunk.split("</p>", 1)[1]
    )
    after = read_chunks(project, "s-products")["content"]
    assert "Reworded." in after and after.count("<title>") == chunk.count("<title>")


def test_a_report_without_charts_inlines_no_chart_script(opened):
    ws, query, project = opened
    project.report_path.write_text("# Report\n\nNo charts.\n")
    publish_html(ws, project, query=lambda: query)
    assert "vegaEmbed" not in html_path(project).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ('{\n  "mark": "bar",\n  "data": {"table": "products"},\n  oops\n}', None),
        (json.dumps({**BAR, "data": {"table": "no_such_table"}}, indent=2), "CHART_MISSING_TABLE"),
        (json.dumps({**BAR, "mark": "sparkle"}, indent=2), None),
    ],
)
def test_a_bad_chart_marks_its_place_naming_file_and_line(opened, content, code):
    # issue 28, item 9: one bad chart no longer stops the whole page
    ws, query, project = opened
    path = charts.chart_file(project, "by_category")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    project.report_path.write_text(REPORT)
    result = publish_html(ws, project, query=lambda: query)
    (failed,) = result.chart_errors
    assert "by_category.vl.json" in failed["message"] and "line" in failed["message"]
    if code:
        assert failed["code"] == code
    chunk = read_chunks(project, "s-products")["content"]
    assert "lt-chart-failed" in chunk and "chart not drawn" in chunk
    assert "More to come." in read_chunks(project, "s-next")["content"]
    assert path.read_text() == content


def test_a_chart_reference_outside_the_projects_charts_marks_its_place(opened):
    ws, query, project = opened
    project.report_path.write_text("# R\n\n![x](../other/charts/a.vl.json)\n\nAfter.\n")
    result = publish_html(ws, project, query=lambda: query)
    assert [f["code"] for f in result.chart_errors] == ["CHART_BAD_REFERENCE"]
    text = html_path(project).read_text(encoding="utf-8")
    assert "is not a chart of the project" in text and "After." in text
