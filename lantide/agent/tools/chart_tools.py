"""``create_chart``: a Vega-Lite chart file of the project whose data is a table or a step.

The spec is checked (Vega-Lite schema, no ``url``), filled from the table through the query
layer and drawn once before anything is written, so a chart the Report links to is known to
render. The file is written atomically by :func:`lantide.charts.write_chart`, which keeps
a malformed file and an analyst's file (unless ``overwrite``). The chart gets a ledger line
(``tool: "create_chart"``) naming its file, its table and the step it came from.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from lantide.agent.events import TOUCHES_DOCUMENTS, DocumentChanged, StepRecorded
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import (
    EXECUTING,
    PROJECT_ARG,
    Tool,
    ToolError,
    params,
    tool_error,
)
from lantide.errors import LantideError
from lantide.workspace import layout

CHART_SUMMARY_STATUS = "chart"  # a chart's ledger line needs no [[QUERY_STEP]] summary


class ChartArgs(TypedDict):
    name: str
    spec: dict[str, object]  # the model's Vega-Lite spec, checked by lantide.charts
    table: NotRequired[str]
    step_id: NotRequired[str]
    purpose: NotRequired[str]
    overwrite: NotRequired[bool]
    project: NotRequired[str]


class ChartCreated(TypedDict):
    """``create_chart``: the file, the Markdown that links it, and its ledger step."""

    chart: str
    markdown: str
    table: str | None
    rows_charted: int
    step_id: str
    data_step_id: NotRequired[str]  # the step whose result it draws
    notes: NotRequired[list[str]]


def _fields(value: Any) -> set[str]:
    """Plain ``field`` names of encodings anywhere in a spec (no transform in it)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "field" and isinstance(item, str):
                found.add(item)
            elif key not in ("data", "usermeta"):
                found |= _fields(item)
    elif isinstance(value, list):
        for item in value:
            found |= _fields(item)
    return found


def _has_key(value: Any, wanted: str) -> bool:
    if isinstance(value, dict):
        return wanted in value or any(_has_key(v, wanted) for v in value.values())
    if isinstance(value, list):
        return any(_has_key(v, wanted) for v in value)
    return False


def _unknown_fields(spec: dict[str, object], columns: list[str]) -> list[str]:
    """Encoded fields the table lacks; only checked when no transform makes new ones."""
    if _has_key(spec, "transform") or _has_key(spec, "repeat"):
        return []
    known = {c.casefold() for c in columns}
    return sorted(f for f in _fields(spec) if f.casefold() not in known and "." not in f)


def _spec_with_source(args: ChartArgs) -> tuple[dict[str, object], ToolError | None]:
    """The spec with its data source, or the refusal (apart: the spec is the model's own
    JSON and may hold any key, an ``error`` too)."""
    spec = dict(args["spec"])
    table, step = args.get("table"), args.get("step_id")
    if table and step:
        return spec, tool_error("BAD_ARGUMENTS", "pass table or step_id, not both")
    if table or step:
        if "data" in spec:
            return spec, tool_error(
                "BAD_ARGUMENTS",
                "the spec has its own data and table/step_id was passed too",
                "Leave data out of the spec; table or step_id says where the rows come from.",
            )
        spec["data"] = {"table": table} if table else {"step": step}
    elif "data" not in spec:
        return spec, tool_error(
            "BAD_ARGUMENTS",
            "the chart has no data",
            "Pass table (a cached table) or step_id (a step with a cached result).",
        )
    return spec, None


def create_chart(ctx: ToolContext, args: ChartArgs) -> ChartCreated | ToolError:
    from lantide import charts

    project = ctx.project(args.get("project"))
    spec, refusal = _spec_with_source(args)
    if refusal is not None:
        return refusal
    name = charts.validate_chart_name(args["name"])
    shown = layout.project_relpath(project.dirname, layout.chart_project_relpath(name))
    query = ctx.services.query()
    chart = charts.check_spec(spec, shown)
    from lantide.charts.data import resolve_data

    resolved = resolve_data(query, chart)
    table = resolved.tables[0] if resolved.tables else None
    if table:
        columns = [c["name"] for c in query.relation_info(table)["columns"]]
        unknown = _unknown_fields(spec, columns)
        if unknown:
            return tool_error(
                "UNKNOWN_FIELD",
                f"{shown}: {', '.join(map(repr, unknown))} not a column of {table!r}",
                f"Its columns: {', '.join(columns)}.",
            )
    try:
        charts.render_svg(resolved.spec)
    except LantideError as exc:
        return tool_error(exc.code, f"{shown}: {exc.message}", exc.hint)
    ref = chart.references[0] if chart.references else None
    step_id = ref.name if ref is not None and ref.kind == "step" else None
    if step_id is None and table is not None:
        cached = query.catalog.cached(table)
        step_id = cached.step_id if cached is not None else None
    meta = {"table": table, "step_id": step_id} if step_id else {"table": table}
    path = charts.write_chart(
        project, name, spec, by=charts.AGENT, overwrite=bool(args.get("overwrite")), **meta
    )
    relpath = ctx.relpath(path)
    rows = resolved.row_counts.get(table or "", 0)
    step = ctx.ledger.append(
        {
            "tool": "create_chart",
            "project": project.dirname,
            "purpose": args.get("purpose") or chart_title(spec) or name,
            "result_label": name,
            "cached_table_name": table,
            "row_count": rows,
            "chart": relpath,
            "source_step_id": step_id,
            "summary": f"Chart {relpath} of {table} ({rows:,} rows)",
            "summary_status": CHART_SUMMARY_STATUS,
        }
    )
    ctx.emit(StepRecorded(step))
    ctx.emit(DocumentChanged(relpath, project.dirname))
    out: ChartCreated = {
        "chart": relpath,
        "markdown": f"![{chart_title(spec) or name}]({layout.chart_link(name)})",
        "table": table,
        "rows_charted": len(_values(resolved.spec)),
        "step_id": step["step_id"],
    }
    if step_id:
        out["data_step_id"] = step_id
    if resolved.notes:
        out["notes"] = resolved.notes
    return out


def _values(spec: dict[str, object]) -> list[object]:
    data = spec.get("data")
    values = data.get("values") if isinstance(data, dict) else None
    return values if isinstance(values, list) else []


def chart_title(spec: dict[str, object]) -> str | None:
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    return title if isinstance(title, str) and title.strip() else None


TOOLS = [
    Tool(
        "create_chart",
        params(
            {
                "name": {"type": "string", "minLength": 1, "maxLength": 80},
                "spec": {"type": "object"},
                "table": {"type": "string", "minLength": 1},
                "step_id": {"type": "string", "minLength": 1},
                "purpose": {"type": "string", "maxLength": 200},
                "overwrite": {"type": "boolean"},
                **PROJECT_ARG,
            },
            ("name", "spec"),
        ),
        create_chart,
        frozenset({EXECUTING}),
        on_demand=frozenset({"overwrite"}),
        touches=frozenset({TOUCHES_DOCUMENTS}),
    ),
]
