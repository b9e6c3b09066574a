"""Charts in the HTML Report (issue 16 parts 3 and 4): a Markdown image
``![title](charts/NAME.vl.json)`` becomes the chart as inline SVG with each mark's
tooltip as an SVG <title> (issue 28: the page runs no script). A bad
chart stops the publish with the chart's file and line; nothing is written. Real sample
workspace, real DuckDB, real chart files."""

from __future__ import annotations

import json

import pytest

from lantide import charts
from lantide.agent.report_html import html_path, patch_chunk, publish_html, read_chunks
from lantide.charts import ChartError
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
def test_a_bad_chart_stops_the_publish_naming_file_and_line(opened, content, code):
    ws, query, project = opened
    path = charts.chart_file(project, "by_category")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    project.report_path.write_text(REPORT)
    with pytest.raises(ChartError) as err:
        publish_html(ws, project, query=lambda: query)
    assert "by_category.vl.json" in err.value.message and "line" in err.value.message
    if code:
        assert err.value.code == code
    assert not html_path(project).exists() and path.read_text() == content


def test_a_chart_reference_outside_the_projects_charts_is_refused(opened):
    ws, query, project = opened
    project.report_path.write_text("# R\n\n![x](../other/charts/a.vl.json)\n")
    with pytest.raises(ChartError) as err:
        publish_html(ws, project, query=lambda: query)
    assert "charts/NAME.vl.json" in (err.value.hint or "")
    assert not html_path(project).exists()
