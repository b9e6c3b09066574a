"""Charts in the HTML Report: a Markdown image ``![title](charts/NAME.vl.json)`` of the
Report becomes the chart, interactive in a browser (vega-embed: tooltips on every mark;
zoom and pan on a single view with two continuous axes, :func:`with_zoom`) with its SVG
inside as the no-script fallback.

:class:`ReportCharts` is the :data:`lantide.docs.html_report.ChartHook` that
:func:`lantide.agent.report_html.publish_html` gives the page builder: it reads each chart
file with :mod:`lantide.charts` (checked, filled from DuckDB, drawn as SVG offline), and
:meth:`ReportCharts.head` gives the vega scripts to inline once, when a chart was drawn.
A chart file that is bad (not Vega-Lite, a missing table) stops the publish with the
chart module's error, naming the file and line; nothing is written.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from lantide.charts import (
    ChartError,
    chart_embed_html,
    chart_file,
    chart_scripts,
    render_chart,
    validate_chart_name,
)
from lantide.workspace import layout

if TYPE_CHECKING:
    from lantide.query.service import QueryService
    from lantide.workspace.model import Project

_ID = re.compile(r"[^A-Za-z0-9_-]+")


_CONTINUOUS = ("quantitative", "temporal")


def with_zoom(spec: dict[str, Any]) -> dict[str, Any]:
    """Zoom and pan (an interval bound to the scales) for a single view whose x and y are
    both continuous and that has no selection of its own: where zooming makes sense."""
    encoding = spec.get("encoding")
    if "mark" not in spec or spec.get("params") or not isinstance(encoding, dict):
        return spec
    axes = [encoding.get(axis) for axis in ("x", "y")]
    if not all(isinstance(a, dict) and a.get("type") in _CONTINUOUS for a in axes):
        return spec
    return {**spec, "params": [{"name": "zoom", "select": "interval", "bind": "scales"}]}


class ReportCharts:
    def __init__(self, project: Project, query: Callable[[], QueryService]):
        self.project = project
        self._query_factory = query
        self._query: QueryService | None = None
        self.drawn: list[str] = []

    def query(self) -> QueryService:
        if self._query is None:
            self._query = self._query_factory()
        return self._query

    def __call__(self, src: str, title: str) -> str | None:
        parts = PurePosixPath(layout.link_target_path(src)).parts
        if not src.strip().lower().endswith(layout.CHART_SUFFIX):
            return None
        if len(parts) != 2 or parts[0] != "charts":
            raise ChartError(
                f"{self.project.report}: chart {src!r} is not a chart of the project",
                hint="Refer to a chart as ![title](charts/NAME.vl.json).",
                code="CHART_BAD_REFERENCE",
            )
        name = validate_chart_name(parts[1], existing=True)
        path = chart_file(self.project, name)
        shown = layout.project_relpath(self.project.dirname, f"charts/{path.name}")
        svg, loaded = render_chart(path, self.query(), source=shown)
        element = "chart-" + _ID.sub("-", name)
        n = sum(1 for d in self.drawn if d == element)
        self.drawn.append(element)
        if n:
            element = f"{element}-{n + 1}"
        spec = with_zoom(loaded.spec)
        notes = "".join(f" {html.escape(note)}" for note in loaded.notes)
        return (
            f'<figure class="lt-chart">{chart_embed_html(spec, element, svg=svg)}'
            f"<figcaption>{html.escape(title)}{notes}</figcaption></figure>"
        )

    def head(self) -> str:
        return f"<script>\n{chart_scripts()}\n</script>\n" if self.drawn else ""
