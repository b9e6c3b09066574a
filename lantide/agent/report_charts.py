"""Charts in the HTML Report: a Markdown image ``![title](charts/NAME.vl.json)`` of the
Report becomes the chart as inline SVG, drawn at export (vendored vega in QuickJS,
:mod:`lantide.charts.render`), each mark's description as its tooltip
(:func:`with_tooltips`). The page runs no script at all (issue 28: its
Content-Security-Policy has ``script-src 'none'``), so there is no zoom or pan.

:class:`ReportCharts` is the :data:`lantide.docs.html_report.ChartHook` that
:func:`lantide.agent.report_html.publish_html` gives the page builder: it reads each chart
file with :mod:`lantide.charts` (checked, filled from DuckDB, drawn as SVG offline).
A chart that cannot be shown (a bad reference, a file that is not Vega-Lite, a missing
table, a drawing that fails) does not stop the publish: its place shows the chart module's
error, naming the file (and line), and :attr:`ReportCharts.failed` lists it for the
caller (issue 28, item 9).

A chart drawn from a step with an unresolved error-severity check carries the same mark
as a number cited to it (:func:`chart_steps` finds its steps; ``step_marks`` is given by
:func:`lantide.agent.report_html.report_source`, which knows the ledger).
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET  # vega's own SVG output, not outside input
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from lantide.charts import (
    ChartError,
    chart_file,
    chart_links,
    error_svg,
    read_chart,
    render_chart,
    validate_chart_name,
)
from lantide.workspace import layout

if TYPE_CHECKING:
    from lantide.query.service import QueryService
    from lantide.workspace.model import Project

_ID = re.compile(r"[^A-Za-z0-9_-]+")


def chart_steps(spec: dict[str, Any], references: Any, query: Any) -> list[str]:
    """The ledger steps a chart's rows come from: its ``{"step": ID}`` references, the
    steps that made the cached tables it reads, and the step its ``usermeta`` names."""
    out: list[str] = []
    for ref in references:
        if ref.kind == "step":
            out.append(ref.name)
        else:
            try:
                cached = query.catalog.cached(ref.name) if query is not None else None
            except (AttributeError, LookupError, ValueError):
                cached = None
            if cached is not None and getattr(cached, "step_id", None):
                out.append(str(cached.step_id))
    meta = (spec.get("usermeta") or {}).get("lantide") if isinstance(spec, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get("step_id"), str):
        out.append(meta["step_id"])
    return list(dict.fromkeys(out))


def chart_check_notes(project: Project, markdown: str, index: Any) -> dict[str, str]:
    """``src`` of each chart of the Report -> the note its preview shows: the unresolved
    error checks (and waivers) of the steps it is drawn from, as its citations show them
    (``index``: a :class:`lantide.agent.report_check.StepIndex`). Without a query service
    a chart of a plain table counts only the step its ``usermeta`` names."""
    from lantide.agent.check_gate import describe_waiver

    out: dict[str, str] = {}
    for link in chart_links(markdown):
        parts = PurePosixPath(layout.link_target_path(link.src)).parts
        if len(parts) != 2 or parts[0] != "charts" or link.src in out:
            continue
        try:
            chart = read_chart(chart_file(project, validate_chart_name(parts[1])))
        except (ChartError, OSError):
            continue  # the chart's own error is shown in its place
        notes = []
        for step_id in chart_steps(chart.spec, chart.references, None):
            found = index.get(step_id)
            if found is None:
                continue
            notes += [
                f"check failed: {c.get('code')} on step {step_id}: {c.get('message') or ''}"
                for c in found.failed
            ]
            notes += [describe_waiver(w) for w in found.waivers]
        if notes:
            out[link.src] = "; ".join(notes)
    return out


class ReportCharts:
    def __init__(self, project: Project, query: Callable[[], QueryService]):
        self.project = project
        self._query_factory = query
        self._query: QueryService | None = None
        self.drawn: list[str] = []
        self.failed: list[dict[str, str]] = []  # {src, code, message} per chart not drawn
        # step ids -> the HTML mark of their unresolved (or waived) checks, or ""
        self.step_marks: Callable[[list[str]], str] | None = None

    def query(self) -> QueryService:
        if self._query is None:
            self._query = self._query_factory()
        return self._query

    def __call__(self, src: str, title: str) -> str | None:
        if not src.strip().lower().endswith(layout.CHART_SUFFIX):
            return None
        element = self._element(src)
        try:
            svg, notes = self._draw(src)
        except ChartError as exc:  # this chart's place is marked; the rest is published
            self.failed.append({"src": src, "code": exc.code, "message": exc.message})
            return (
                f'<figure class="lt-chart lt-chart-failed"><div class="lantide-chart" '
                f'id="{element}">{error_svg(exc.message)}</div><figcaption>'
                f'{html.escape(title)}: <span class="lt-bad">chart not drawn: '
                f"{html.escape(exc.message)}</span></figcaption></figure>"
            )
        return (
            f'<figure class="lt-chart"><div class="lantide-chart" id="{element}">'
            f"{with_tooltips(svg)}</div>"
            f"<figcaption>{html.escape(title)}{notes}</figcaption></figure>"
        )

    def _element(self, src: str) -> str:
        """The chart's element id: ``chart-NAME``, ``-2``, ``-3`` when shown again."""
        element = "chart-" + _ID.sub("-", PurePosixPath(src.strip()).stem.removesuffix(".vl"))
        n = sum(1 for d in self.drawn if d == element)
        self.drawn.append(element)
        return f"{element}-{n + 1}" if n else element

    def _draw(self, src: str) -> tuple[str, str]:
        """The chart's SVG and its notes; :class:`ChartError` naming the file otherwise."""
        parts = PurePosixPath(layout.link_target_path(src)).parts
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
        mark = ""
        if self.step_marks is not None:
            chart = read_chart(path, source=shown)
            mark = self.step_marks(chart_steps(chart.spec, chart.references, self.query()))
        return svg, "".join(f" {html.escape(note)}" for note in loaded.notes) + mark


_SVG_NS = "http://www.w3.org/2000/svg"
_NOT_MARKS = frozenset({"axis", "legend", "title"})


def with_tooltips(svg: str) -> str:
    """vega's SVG with each mark's description (its ``aria-label``: "region: north; n: 3")
    as an SVG ``<title>``: the browser shows it as the mark's tooltip, with no script."""
    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    try:
        root = ET.fromstring(svg)
    except ET.ParseError:
        return svg  # not XML: shown as drawn (the sanitizer still rules the page)
    for element in root.iter():
        label = element.get("aria-label")
        if (
            label
            and element.get("role") == "graphics-symbol"
            and element.get("aria-roledescription") not in _NOT_MARKS
        ):
            title = ET.Element(f"{{{_SVG_NS}}}title")
            title.text = label
            element.insert(0, title)
    return ET.tostring(root, encoding="unicode")
