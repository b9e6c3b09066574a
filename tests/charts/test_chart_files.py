"""Chart files on a real workspace: checked, filled from real DuckDB tables, drawn, written.

Bad input names the file (and line) and leaves every file as it was.
"""

from __future__ import annotations

import json
import re

import pytest

from lantide import charts
from lantide.charts import ChartError

BAR = {
    "title": "Products by category",
    "data": {"table": "products"},
    "mark": "bar",
    "encoding": {
        "x": {"field": "category", "type": "nominal"},
        "y": {"aggregate": "count", "type": "quantitative"},
    },
}


def _categories(query) -> set[str]:
    rows = query.fetch_rows("products", 0, 1000)
    return {r[2] for r in rows if r[2] is not None}  # the sample has a product with none


def test_a_chart_of_a_table_draws_the_tables_values_as_svg(opened):
    ws, query, project = opened
    path = charts.write_chart(project, "by_category", BAR, by="agent")
    assert path == project.dir / "charts" / "by_category.vl.json"
    on_disk = json.loads(path.read_text())
    assert on_disk["data"] == {"table": "products"}  # a reference, not a copy of numbers
    assert "values" not in path.read_text()

    svg, loaded = charts.render_chart(path, query)
    assert svg.startswith("<svg")
    texts = set(re.findall(r"<text[^>]*>([^<]*)</text>", svg))
    assert _categories(query) <= texts  # every category is an axis label
    assert "Products by category" in texts
    assert loaded.tables == ["products"] and loaded.notes == []
    assert len(loaded.spec["data"]["values"]) == 120


def test_a_chart_of_a_step_reads_the_cached_table_that_step_made(opened):
    ws, query, project = opened
    result = query.run_query(
        "SELECT category, count(*) AS n FROM products GROUP BY category ORDER BY category",
        "products_per_category",
        "count products per category",
        project=project.dirname,
    )
    step_id = result["step"]["step_id"] if "step" in result else result["step_id"]
    assert charts.step_table(query, step_id) == result["cached_table_name"]
    spec = {
        "data": {"step": step_id},
        "mark": "bar",
        "encoding": {
            "x": {"field": "category", "type": "nominal"},
            "y": {"field": "n", "type": "quantitative"},
        },
    }
    path = charts.write_chart(project, "per_step", spec, by="agent", step_id=step_id)
    loaded = charts.load_chart(path, query)
    charted = {v["category"] for v in loaded.spec["data"]["values"]}
    assert charted == _categories(query) | {None}
    assert loaded.tables == [result["cached_table_name"]]


def test_a_step_without_a_cached_result_is_named_with_its_line(opened, tmp_path):
    ws, query, project = opened
    path = tmp_path / "gone.vl.json"
    path.write_text(json.dumps({**BAR, "data": {"step": "0123456789ab"}}, indent=2))
    with pytest.raises(ChartError) as err:
        charts.load_chart(path, query, source="charts/gone.vl.json")
    assert err.value.code == "CHART_MISSING_STEP"
    assert "charts/gone.vl.json, line 3" in err.value.message
    assert "0123456789ab" in err.value.message


def test_a_missing_table_names_the_file_and_line_and_changes_nothing(opened):
    ws, query, project = opened
    path = charts.chart_file(project, "missing")
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({**BAR, "data": {"table": "no_such_table"}}, indent=2)
    path.write_text(text)
    with pytest.raises(ChartError) as err:
        charts.render_chart(path, query, source="projects/q3-churn/charts/missing.vl.json")
    assert err.value.code == "CHART_MISSING_TABLE"
    assert err.value.message.startswith("projects/q3-churn/charts/missing.vl.json, line 3:")
    assert "no_such_table" in err.value.message
    assert path.read_text() == text


@pytest.mark.parametrize(
    "spec, pointer_key",
    [
        ({**BAR, "data": {"url": "https://example.com/data.csv"}}, "url"),
        (
            {
                **BAR,
                "layer": [
                    {"mark": "image", "encoding": {"url": {"value": "http://evil.test/x.png"}}}
                ],
            },
            "url",
        ),
        (
            {
                **BAR,
                "data": {"table": "products"},
                "transform": [
                    {
                        "lookup": "category",
                        "from": {"data": {"url": "file:///etc/passwd"}, "key": "k"},
                    }
                ],
            },
            "url",
        ),
    ],
)
def test_a_url_anywhere_is_refused_offline(opened, tmp_path, spec, pointer_key):
    ws, query, project = opened
    text = json.dumps(spec, indent=2)
    with pytest.raises(ChartError) as err:
        charts.parse_chart(text, "c.vl.json")
    assert err.value.code == "CHART_EXTERNAL_DATA"
    lines = text.splitlines()
    assert f'"{pointer_key}"' in lines[err.value.line - 1]
    with pytest.raises(ChartError):
        charts.write_chart(project, "remote", spec, by="agent")
    assert not charts.chart_file(project, "remote").exists()


def test_invalid_json_names_the_line_and_the_file_is_never_replaced(opened):
    ws, query, project = opened
    path = charts.chart_file(project, "broken")
    path.parent.mkdir(parents=True, exist_ok=True)
    broken = b'{\n  "mark": "bar",\n  "data": {"table": "products"\n  "encoding": {}\n}\n'
    path.write_bytes(broken)
    with pytest.raises(ChartError) as err:
        charts.read_chart(path, source="charts/broken.vl.json")
    assert err.value.code == "CHART_INVALID_JSON"
    assert "charts/broken.vl.json, line 4" in err.value.message
    for overwrite in (False, True):
        with pytest.raises(ChartError) as refused:
            charts.write_chart(project, "broken", BAR, by="agent", overwrite=overwrite)
        assert refused.value.code == "CHART_EXISTS"
    assert path.read_bytes() == broken


def test_invalid_vega_lite_names_the_property_and_its_line(tmp_path):
    spec = {**BAR, "encoding": {"x": {"field": "category", "type": "nominal"}}, "mark": "barr"}
    text = json.dumps(spec, indent=2)
    with pytest.raises(ChartError) as err:
        charts.parse_chart(text, "charts/typo.vl.json")
    assert err.value.code == "CHART_INVALID_SPEC"
    assert err.value.message.startswith("charts/typo.vl.json, line ")
    assert '"mark"' in text.splitlines()[err.value.line - 1]
    bad_type = {**BAR, "encoding": {"x": {"field": "category", "type": "nomnal"}}}
    text = json.dumps(bad_type, indent=2)
    with pytest.raises(ChartError) as err:
        charts.parse_chart(text, "t.vl.json")
    assert "/encoding/x" in err.value.message
    assert (
        '"type": "nomnal"' in text.splitlines()[err.value.line - 1]
        or '"x"' in (text.splitlines()[err.value.line - 1])
    )


def test_numbers_at_the_top_level_are_refused_a_reference_is_needed():
    spec = {**BAR, "data": {"values": [{"category": "a", "n": 1}]}}
    with pytest.raises(ChartError) as err:
        charts.check_spec(spec, "c.vl.json")
    assert err.value.code == "CHART_NO_DATA"
    # a small inline layer (a threshold line) beside the referenced data is fine
    layered = {
        "data": {"table": "products"},
        "layer": [
            {"mark": "bar", "encoding": {"x": {"field": "category", "type": "nominal"}}},
            {"data": {"values": [{"y": 5}]}, "mark": "rule", "encoding": {"y": {"field": "y"}}},
        ],
    }
    assert [r.name for r in charts.check_spec(layered, "c.vl.json").references] == ["products"]


def test_a_huge_table_is_cut_and_the_cut_is_said(opened):
    ws, query, project = opened
    spec = {
        "data": {"table": "orders"},
        "mark": "point",
        "encoding": {"x": {"field": "order_id", "type": "quantitative"}},
    }
    path = charts.write_chart(project, "all_orders", spec)
    loaded = charts.load_chart(path, query, max_rows=500)
    assert len(loaded.spec["data"]["values"]) == 500
    assert loaded.row_counts == {"orders": 120_000}
    assert loaded.notes and "first 500 of 120,000 rows of 'orders'" in loaded.notes[0]


def test_a_table_of_exactly_the_row_cap_is_whole_and_one_more_is_cut(opened):
    ws, query, project = opened
    query.run_query("SELECT range AS n FROM range(300)", result_label="three_hundred")
    spec = {
        "data": {"table": "three_hundred"},
        "mark": "point",
        "encoding": {"x": {"field": "n", "type": "quantitative"}},
    }
    path = charts.write_chart(project, "cap", spec)
    whole = charts.load_chart(path, query, max_rows=300)
    assert [v["n"] for v in whole.spec["data"]["values"]] == list(range(300))
    assert whole.row_counts == {"three_hundred": 300} and whole.notes == []
    cut = charts.load_chart(path, query, max_rows=299)
    assert len(cut.spec["data"]["values"]) == 299
    assert cut.row_counts == {"three_hundred": 300}
    assert cut.notes and "first 299 of 300 rows" in cut.notes[0]


def test_the_agent_never_replaces_what_the_analyst_wrote_unless_asked(opened):
    ws, query, project = opened
    path = charts.write_chart(project, "mine", BAR)  # the analyst's (the app's save)
    analyst_bytes = path.read_bytes()
    with pytest.raises(ChartError) as err:
        charts.write_chart(project, "mine", {**BAR, "mark": "point"}, by="agent")
    assert err.value.code == "CHART_EXISTS" and "analyst" in err.value.message
    assert path.read_bytes() == analyst_bytes
    charts.write_chart(project, "mine", {**BAR, "mark": "point"}, by="agent", overwrite=True)
    assert json.loads(path.read_text())["mark"] == "point"

    # the agent may redo its own chart, until the analyst edits it by hand
    agent_path = charts.write_chart(project, "theirs", BAR, by="agent")
    charts.write_chart(project, "theirs", {**BAR, "mark": "line"}, by="agent")
    assert charts.written_by(json.loads(agent_path.read_text())) == "agent"
    edited = json.loads(agent_path.read_text())
    edited["mark"] = "area"
    agent_path.write_text(json.dumps(edited, indent=2))
    assert charts.written_by(edited) == "analyst"
    with pytest.raises(ChartError):
        charts.write_chart(project, "theirs", BAR, by="agent")
    assert json.loads(agent_path.read_text())["mark"] == "area"


@pytest.mark.parametrize("name", ["", "../escape", "a/b", "con", ".hidden", "x" * 81])
def test_bad_chart_names_are_refused(opened, name):
    ws, query, project = opened
    with pytest.raises(ChartError) as err:
        charts.write_chart(project, name, BAR)
    assert err.value.code == "CHART_BAD_NAME"
    assert not (project.dir / "charts").exists() or not any((project.dir / "charts").iterdir())


def test_vega_lite_errors_at_draw_time_name_the_file(opened):
    ws, query, project = opened
    # valid against the schema, but the expression does not parse: vega says so when drawing
    spec = {
        "data": {"table": "products"},
        "mark": "bar",
        "encoding": {"x": {"field": "category", "type": "nominal"}},
        "transform": [{"calculate": "datum.list_price +* 2", "as": "bad"}],
    }
    path = charts.write_chart(project, "bad_expr", spec)
    with pytest.raises(ChartError) as err:
        charts.render_chart(path, query, source="charts/bad_expr.vl.json")
    assert err.value.message.startswith("charts/bad_expr.vl.json: ")
    assert err.value.code == "CHART_RENDER"


def test_html_embed_is_inline_and_safe_in_a_script_element():
    scripts = charts.chart_scripts()
    assert "</script" not in scripts.lower()
    assert "vegaEmbed" in scripts and "vegaLite" in scripts
    spec = {**BAR, "data": {"values": [{"category": "</script><script>alert(1)</script>"}]}}
    html = charts.chart_embed_html(spec, "chart-1", svg="<svg></svg>")
    assert html.count("</script>") == 1  # only the element's own end tag
    assert '<div class="lantide-chart" id="chart-1"><svg></svg></div>' in html
    assert '"actions": false' in html


def test_error_svg_escapes_the_message():
    svg = charts.error_svg("charts/x.vl.json: <b>bad</b> & worse")
    assert "&lt;b&gt;bad&lt;/b&gt; &amp; worse" in svg and "<b>" not in svg


def test_chart_links_of_a_report_skip_code_and_other_images():
    text = (
        "# Report\n\nIntro.\n\n![Revenue by month](charts/revenue.vl.json)\n\n"
        "```\n![not a chart](charts/in_code.vl.json)\n```\n\n"
        "A photo ![logo](logo.png) and `![inline code](charts/x.vl.json)`.\n\n"
        "- item ![Top 10](charts/top_10.vl.json)\n"
    )
    links = charts.chart_links(text)
    assert [(lk.title, lk.src, lk.line) for lk in links] == [
        ("Revenue by month", "charts/revenue.vl.json", 5),
        ("Top 10", "charts/top_10.vl.json", 13),
    ]
