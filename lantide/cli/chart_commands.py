"""``lantide chart WS PROJECT [NAME ...] [--svg DIR] [--json]``: check and draw chart files.

Every chart file of the project (or the named ones) is read, checked, filled from its
table and drawn; each is reported as ``ok`` (with its rows, and a note when rows were cut)
or with its error, which names the file and line. ``--svg DIR`` writes each drawing as
``DIR/NAME.svg``. Exit 0 when every chart draws, 1 otherwise. Chart files are never
written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from lantide.cli.common import add_command, open_workspace
from lantide.cli.output import print_json
from lantide.errors import ErrorDict

if TYPE_CHECKING:
    from lantide.charts.data import ChartQuery
    from lantide.workspace.model import Project


def register(subparsers: Any) -> None:  # argparse's private _SubParsersAction
    p = add_command(
        subparsers,
        "chart",
        "check and draw a project's chart files (charts/NAME.vl.json)",
        run_chart,
    )
    p.add_argument("workspace")
    p.add_argument("project", help="project folder or name")
    p.add_argument("names", nargs="*", help="chart names (default: every chart of the project)")
    p.add_argument("--svg", metavar="DIR", help="write each drawing as DIR/NAME.svg")
    p.add_argument("--json", action="store_true", help="print JSON")


class ChartDrawn(TypedDict):
    """``lantide chart --json``: a chart that was drawn."""

    chart: str  # the file, relative to the workspace
    ok: Literal[True]
    tables: list[str]
    rows: int  # the rows it shows
    notes: list[str]
    svg: NotRequired[str]  # with --svg: the file written


class ChartFailed(ErrorDict):
    """``lantide chart --json``: a chart that could not be drawn, and why."""

    chart: str
    ok: Literal[False]
    line: int | None  # in the chart file, when known


def _check(
    project: Project, query: ChartQuery, name: str, svg_dir: Path | None
) -> ChartDrawn | ChartFailed:
    from lantide import charts
    from lantide.workspace import layout
    from lantide.workspace.atomic import atomic_write_text

    shown = layout.project_relpath(project.dirname, layout.chart_project_relpath(name))
    try:
        svg, loaded = charts.render_chart(charts.chart_file(project, name), query, source=shown)
    except charts.ChartError as exc:
        return {"chart": shown, "ok": False, **exc.to_dict(), "line": exc.line}
    out: ChartDrawn = {
        "chart": shown,
        "ok": True,
        "tables": loaded.tables,
        "rows": sum(len(v) for v in _values(loaded.spec)),
        "notes": loaded.notes,
    }
    if svg_dir is not None:
        svg_dir.mkdir(parents=True, exist_ok=True)
        target = svg_dir / f"{name}.svg"
        atomic_write_text(target, svg)
        out["svg"] = str(target)
    return out


def _values(spec: Any) -> list[list[Any]]:
    """Every inline ``values`` list of a loaded spec."""
    found: list[list[Any]] = []
    if isinstance(spec, dict):
        for key, item in spec.items():
            if key == "values" and isinstance(item, list):
                found.append(item)
            else:
                found.extend(_values(item))
    elif isinstance(spec, list):
        for item in spec:
            found.extend(_values(item))
    return found


def run_chart(args: argparse.Namespace) -> int:
    from lantide import charts
    from lantide.query import QueryService

    ws = open_workspace(args.workspace)
    try:
        project = ws.project(args.project)
        names = [
            charts.validate_chart_name(n, existing=True) for n in args.names
        ] or charts.list_charts(project)
        query = QueryService(ws)
        try:
            svg_dir = Path(args.svg) if args.svg else None
            results = [_check(project, query, name, svg_dir) for name in names]
        finally:
            query.close()
    finally:
        ws.close()
    failed = [r for r in results if not r["ok"]]
    if args.json:
        print_json({"project": project.dirname, "ok": not failed, "charts": results})
    else:
        if not results:
            print(f"{project.dirname}: no chart files (charts/NAME.vl.json)")
        for r in results:
            if r["ok"]:
                notes = "".join(f"\n  {n}" for n in r["notes"])
                print(f"{r['chart']}: ok, {r['rows']:,} rows of {', '.join(r['tables'])}{notes}")
            else:
                hint = f"\n  {r['hint']}" if r.get("hint") else ""
                print(f"{r['message']}{hint}")
    if failed:
        sys.stderr.write(f"lantide: {len(failed)} chart(s) could not be drawn\n")
    return 1 if failed else 0
