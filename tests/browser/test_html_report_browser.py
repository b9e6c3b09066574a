"""The HTML Report in a real browser: Debian's ``chromium``, headless, driven over the
DevTools protocol (``tests/browser/cdp.py``), renders ``report.html`` to a screenshot in
test-output/; the test fails if the page makes any request or logs a JavaScript error.
A hostile page checks that the observer does see requests and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lantide.agent.report_html import html_path, publish_html
from tests.browser.cdp import CHROMIUM, open_page
from tests.docs.html_report_helpers import make_report_project

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "test-output"


def test_chromium_is_installed():
    # the README's test command installs it (apt package chromium); without it the browser
    # tests below cannot run, and that is a failure, not a skip
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} missing: apt-get install -y chromium"


@pytest.mark.slow  # a headless Chromium started for the test: 1.5-3 s
def test_the_html_report_renders_offline_without_errors(tmp_path):
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    page = open_page(
        html_path(project),
        probes={
            "chunks": "document.querySelectorAll('[data-lantide-chunk]').length",
            "resources": "performance.getEntriesByType('resource').length",
            "first_citation": "(() => { const a = document.querySelector('a.lt-cite');"
            " a.click(); return [a.textContent, location.hash,"
            " document.querySelector(':target').textContent]; })()",
            "height": "document.body.scrollHeight",
        },
    )
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "html_report.png").write_bytes(page.screenshot)
    assert page.requests == [], page.requests
    assert page.errors == [], page.errors
    assert page.values["resources"] == 0
    assert page.values["chunks"] == 6
    label, target, appendix_text = page.values["first_citation"]
    assert label == "[1]" and target == "#step-a1b2c3d4e5f6"
    assert "real customers" in appendix_text and "SELECT count(*)" in appendix_text
    assert page.values["height"] > 600
    assert page.screenshot.startswith(b"\x89PNG") and len(page.screenshot) > 20_000


@pytest.mark.slow  # a headless Chromium started for the test: 1.5-3 s
def test_the_html_report_follows_a_dark_colour_scheme(tmp_path):
    ws, project = make_report_project(tmp_path / "ws")
    publish_html(ws, project)
    background = "getComputedStyle(document.documentElement).backgroundColor"
    light = open_page(html_path(project), probes={"bg": background}, settle=0.3)
    dark = open_page(html_path(project), probes={"bg": background}, settle=0.3, dark=True)
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "html_report-dark.png").write_bytes(dark.screenshot)
    assert light.values["bg"] == "rgb(255, 255, 255)"
    assert dark.values["bg"] == "rgb(27, 31, 39)"
    assert dark.requests == [] and dark.errors == []


@pytest.mark.slow  # a headless Chromium started for the test: 1.5-3 s
def test_the_observer_sees_requests_and_script_errors(tmp_path):
    hostile = tmp_path / "hostile.html"
    hostile.write_text(
        '<!DOCTYPE html><html><body><p>x</p><img src="http://127.0.0.1:9/pixel.png">'
        '<script>fetch("http://127.0.0.1:9/beacon"); notDefined();</script></body></html>'
    )
    page = open_page(hostile, settle=0.5)
    assert "http://127.0.0.1:9/pixel.png" in page.requests
    assert "http://127.0.0.1:9/beacon" in page.requests
    assert any("notDefined" in e for e in page.errors), page.errors


@pytest.mark.slow  # a headless Chromium started for the test: 1.5-3 s
def test_a_chart_is_drawn_in_the_browser_with_tooltips_and_no_script(sample_workspace):
    from lantide import charts
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace)
    try:
        project = ws.project("q3-churn")
        charts.write_chart(
            project,
            "by_category",
            {
                "title": "Products by category",
                "data": {"table": "products"},
                "mark": "bar",
                "encoding": {
                    "x": {"field": "category", "type": "nominal"},
                    "y": {"aggregate": "count", "type": "quantitative"},
                },
            },
            by="agent",
        )
        project.report_path.write_text(
            "# Report\n\n## Products\n\n![Products by category](charts/by_category.vl.json)\n"
        )
        publish_html(ws, project)  # the command's way: it opens the query service itself
    finally:
        ws.close()
    page = open_page(
        html_path(project),
        settle=0.5,
        probes={
            "scripts": "document.scripts.length",
            "bars": "document.querySelectorAll('#chart-by_category .mark-rect path').length",
            "tooltip": "document.querySelector('#chart-by_category .mark-rect path > title')"
            ".textContent",
            "width": "document.querySelector('#chart-by_category svg')"
            ".getBoundingClientRect().width",
        },
    )
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "html_report-chart.png").write_bytes(page.screenshot)
    assert page.requests == [], page.requests
    assert page.errors == [], page.errors
    assert page.values["scripts"] == 0  # drawn at export: the page runs no script
    assert page.values["bars"] >= 3 and page.values["width"] > 100
    assert "category" in page.values["tooltip"]  # the hovered bar's native tooltip
