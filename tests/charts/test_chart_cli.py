"""``lantide chart WS PROJECT``: every chart file checked and drawn, headless; a broken one
is named with its line, exit 1, and no chart file is written."""

from __future__ import annotations

import json


def test_chart_command_draws_good_charts_and_names_broken_ones(run_cli, sample_workspace, tmp_path):
    charts_dir = sample_workspace / "projects/q3-churn/charts"
    charts_dir.mkdir()
    good = {
        "data": {"table": "products"},
        "mark": "bar",
        "encoding": {"x": {"field": "category", "type": "nominal"}, "y": {"aggregate": "count"}},
    }
    (charts_dir / "good.vl.json").write_text(json.dumps(good, indent=2))
    broken_text = '{\n  "data": {"table": "products"},\n  "mark": "bar",,\n}\n'
    (charts_dir / "broken.vl.json").write_text(broken_text)

    out = run_cli("chart", sample_workspace, "q3-churn", "--svg", tmp_path / "svg")
    assert out.returncode == 1
    assert "projects/q3-churn/charts/good.vl.json: ok, 120 rows of products" in out.stdout
    assert "projects/q3-churn/charts/broken.vl.json, line 3: not valid JSON" in out.stdout
    assert "1 chart(s) could not be drawn" in out.stderr
    assert (tmp_path / "svg/good.svg").read_text().startswith("<svg")
    assert not (tmp_path / "svg/broken.svg").exists()
    assert (charts_dir / "broken.vl.json").read_text() == broken_text

    only_good = run_cli("chart", sample_workspace, "q3-churn", "good", "--json")
    assert only_good.returncode == 0, only_good.stderr
    report = json.loads(only_good.stdout)
    assert report["ok"] is True and [c["chart"] for c in report["charts"]] == [
        "projects/q3-churn/charts/good.vl.json"
    ]


def test_chart_json_entries_have_their_declared_shapes(run_cli, sample_workspace, tmp_path):
    from lantide.cli.chart_commands import ChartDrawn, ChartFailed
    from tests.query.shape_check import assert_shape

    charts_dir = sample_workspace / "projects/q3-churn/charts"
    charts_dir.mkdir()
    good = {"data": {"table": "products"}, "mark": "bar", "encoding": {"y": {"aggregate": "count"}}}
    (charts_dir / "good.vl.json").write_text(json.dumps(good))
    (charts_dir / "broken.vl.json").write_text('{"data": {"table": "products"},,}')
    out = run_cli("chart", sample_workspace, "q3-churn", "--json", "--svg", tmp_path / "svg")
    assert out.returncode == 1
    entries = {c["chart"].rsplit("/", 1)[-1]: c for c in json.loads(out.stdout)["charts"]}
    assert entries["good.vl.json"]["ok"] and not entries["broken.vl.json"]["ok"]
    assert_shape(entries["good.vl.json"], ChartDrawn)
    assert_shape(entries["broken.vl.json"], ChartFailed)
