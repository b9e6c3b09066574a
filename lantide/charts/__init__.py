"""Charts as data: Vega-Lite files whose data is a workspace table or a ledger step.

Layer: above ``query`` (it reads tables through :class:`~lantide.query.service.QueryService`)
and ``workspace``, beside ``docs``; ``agent``, ``cli`` and ``ui`` use it. No Qt.

The file format (``projects/P/charts/NAME.vl.json``) is documented in
:mod:`lantide.charts.spec` and docs/evidence.md (section Charts).

Public API (stable; the HTML Report and the desktop preview call these):

- :func:`read_chart` ``(path, *, source=None) -> ChartSpec``: read and check a chart file
  (JSON, Vega-Lite schema, no ``url``, data is a reference). Raises :class:`ChartError`
  whose message names the file (``source``, else the path) and the line.
- :func:`load_chart` ``(path, query, *, source=None, max_rows=MAX_CHART_ROWS) ->
  LoadedChart``: the same, with each reference replaced by inline ``values`` read from
  DuckDB; ``LoadedChart.spec`` is ready to draw, ``.notes`` says when rows were cut.
- :func:`render_svg` ``(spec) -> str``: SVG text of a spec with inline data (offline,
  in-process, QuickJS; thread-safe; cached by spec).
- :func:`render_chart` ``(path, query, *, source=None) -> (svg, LoadedChart)``: both at once.
- :func:`chart_scripts` ``() -> str``: vega + vega-lite + vega-embed JavaScript to inline
  once in an HTML page; :func:`chart_embed_html` ``(spec, element_id, *, svg=None) -> str``:
  one interactive chart (a ``<div>`` and its ``<script>``).
- :func:`write_chart` ``(project, name, spec, *, by="analyst", overwrite=False, **meta)``:
  the one writer (atomic; refuses to replace a malformed or analyst-written file).
- :func:`chart_file`, :func:`list_charts`, :func:`validate_chart_name`: names and paths.
- :func:`chart_links` ``(markdown) -> list[ChartLink]``: a document's chart image links
  (``title``, ``src`` relative to the project folder, 1-based ``line``); not inside code.
- :func:`error_svg` ``(message) -> str``: an SVG that shows an error in place of a chart.
- :func:`quick_chart_spec` ``(kind, table, x, y, *, x_type="", title=None)``: the SQL
  tab's quick chart as a chart spec ("Save as chart file").
"""

from __future__ import annotations

from lantide.charts.data import MAX_CHART_ROWS, step_table
from lantide.charts.errors import ChartError
from lantide.charts.files import (
    LoadedChart,
    chart_file,
    list_charts,
    load_chart,
    read_chart,
    render_chart,
    validate_chart_name,
    write_chart,
)
from lantide.charts.html import chart_embed_html, chart_scripts
from lantide.charts.links import ChartLink, chart_links
from lantide.charts.placeholder import error_svg
from lantide.charts.quick import quick_chart_spec
from lantide.charts.render import render_svg
from lantide.charts.spec import AGENT, ANALYST, ChartSpec, check_spec, parse_chart, written_by

__all__ = [
    "AGENT",
    "ANALYST",
    "MAX_CHART_ROWS",
    "ChartError",
    "ChartLink",
    "ChartSpec",
    "LoadedChart",
    "chart_embed_html",
    "chart_file",
    "chart_links",
    "chart_scripts",
    "check_spec",
    "error_svg",
    "list_charts",
    "load_chart",
    "parse_chart",
    "quick_chart_spec",
    "read_chart",
    "render_chart",
    "render_svg",
    "step_table",
    "validate_chart_name",
    "write_chart",
    "written_by",
]
