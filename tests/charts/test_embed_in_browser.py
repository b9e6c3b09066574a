"""The HTML Report's chart embedding in a real browser (Debian's chromium, headless): the
inline vega + vega-lite + vega-embed draw an interactive chart with no network and no
JavaScript error."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from lantide import charts

SPEC = {
    "title": "Orders by region",
    "data": {"values": [{"region": "north", "n": 3}, {"region": "</script>", "n": 5}]},
    "mark": "bar",
    "encoding": {"x": {"field": "region", "type": "nominal"}, "y": {"field": "n"}},
}
# after vega-embed ran: its container class, its SVG, the hostile label drawn as text
PROBE = (
    "setTimeout(function () {"
    " var svg = document.querySelector('#chart-1.vega-embed svg.marks');"
    " var drawn = svg && svg.textContent.indexOf('<\\/script>') >= 0;"
    " document.title = drawn ? 'DRAWN' : 'NO'; }, 800);"
)


@pytest.mark.slow  # a headless Chromium started for the test: 1.5-2 s
def test_an_embedded_chart_draws_in_chromium_offline(tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.fail("chromium is needed: apt-get install -y chromium", pytrace=False)
    page = tmp_path / "chart.html"
    page.write_text(
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:\">"
        f"<script>{charts.chart_scripts()}</script></head><body>"
        f"{charts.chart_embed_html(SPEC, 'chart-1', svg=charts.render_svg(SPEC))}"
        f"<script>{PROBE}</script></body></html>",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    # vega-embed drew it (the container gets its class), over the static SVG
    assert "<title>DRAWN</title>" in done.stdout, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console
