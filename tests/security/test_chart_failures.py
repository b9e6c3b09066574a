"""A chart that cannot be drawn (issue 28, item 9): it used to fail as "console is not
defined" / "setTimeout is not defined" (the offline renderer, QuickJS, is no browser), and
one such chart stopped the whole HTML Report. Now vega gets a console and timers that are
counted, never run; a chart that still cannot be drawn says why in a reader's words, and
its place in the page shows the error while the rest of the Report is published. Real
sample workspace, real DuckDB, real chart files, the real command."""

from __future__ import annotations

import pytest

from lantide import charts
from lantide.agent.report_html import html_path, publish_html, read_chunks
from lantide.charts import ChartError
from lantide.workspace.model import Workspace

pytestmark = pytest.mark.security

BAR = {
    "title": "Products by category",
    "data": {"table": "products"},
    "mark": "bar",
    "encoding": {
        "x": {"field": "category", "type": "nominal"},
        "y": {"aggregate": "count", "type": "quantitative"},
    },
}
# a selection driven by timer events: vega asks for setTimeout while it sets them up
TIMER = {**BAR, "params": [{"name": "tick", "select": {"type": "point", "on": "timer"}}]}
# a vega expression calling a function that does not exist: cannot be drawn at all
BROKEN = {**BAR, "transform": [{"calculate": "nosuchfn(datum.category)", "as": "q"}]}
REPORT = (
    "# Report\n\n## Good\n\n![Good](charts/good.vl.json)\n\n"
    "## Timer\n\n![Timer](charts/timer.vl.json)\n\n"
    "## Broken\n\n![Broken](charts/broken.vl.json)\n\nThe text after the broken chart.\n\n"
    "## Next\n\nMore to come.\n"
)


def test_one_chart_that_fails_marks_its_place_and_the_rest_is_published(sample_workspace, run_cli):
    ws = Workspace.open(sample_workspace)
    try:
        project = ws.project("q3-churn")
        charts.write_chart(project, "good", BAR, by="agent")
        charts.write_chart(project, "timer", TIMER, by="agent")
        charts.write_chart(project, "broken", BROKEN, by="agent")
        project.report_path.write_text(REPORT)
    finally:
        ws.close()
    done = run_cli("report", "html", sample_workspace, "q3-churn")
    assert done.returncode == 0, done.stderr
    assert "chart not drawn (CHART_RENDER)" in done.stderr and "broken.vl.json" in done.stderr
    assert "Traceback" not in done.stderr
    ws = Workspace.open(sample_workspace)
    try:
        project = ws.project("q3-churn")
        page = html_path(project).read_text(encoding="utf-8")
        for good in ("s-good", "s-timer"):  # drawn: the timer chart no longer fails
            chunk = read_chunks(project, good)["content"]
            assert "<svg" in chunk and "lt-chart-failed" not in chunk, chunk[:300]
        broken = read_chunks(project, "s-broken")["content"]
        assert "lt-chart-failed" in broken and "chart not drawn" in broken
        assert "nosuchfn" in broken and "broken.vl.json" in broken
        assert "The text after the broken chart." in broken
        assert "More to come." in page
        assert "is not defined" not in page
    finally:
        ws.close()


def test_publish_reports_the_chart_it_could_not_draw(sample_workspace):
    ws = Workspace.open(sample_workspace)
    try:
        project = ws.project("q3-churn")
        charts.write_chart(project, "broken", BROKEN, by="agent")
        project.report_path.write_text("# R\n\n![Broken](charts/broken.vl.json)\n")
        result = publish_html(ws, project)
    finally:
        ws.close()
    (failed,) = result.chart_errors
    assert failed["src"] == "charts/broken.vl.json" and failed["code"] == "CHART_RENDER"
    assert result.to_dict()["chart_errors"] == [failed]


def test_a_drawing_that_waits_on_a_timer_says_so_in_a_readers_words():
    # an image mark waits for its image to load (a timer): never, offline
    spec = {
        "data": {"values": [{"x": 1, "img": "data:image/png;base64,iVBORw0KGgo="}]},
        "mark": "image",
        "encoding": {"x": {"field": "x", "type": "quantitative"}, "url": {"field": "img"}},
    }
    with pytest.raises(ChartError) as err:
        charts.render_svg(spec)
    assert "timer" in err.value.message and "is not defined" not in err.value.message
    assert err.value.code == "CHART_RENDER" and "image marks" in (err.value.hint or "")
