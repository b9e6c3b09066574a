"""Tools over the query layer (the QEM of DESIGN.md section 4) and the step ledger.

The QEM decides what may run; these handlers add what belongs to the agent: analysis
consent, the ledger step of every successful run (with the conversation id and a pending
summary), the running query interrupted on cancel, and a preview cut to what the model
needs (the full result stays in DuckDB and, when materialized, in its cached table).
"""

from __future__ import annotations

from typing import Any

from lantide.agent.consent import consent_refusal
from lantide.agent.events import StepRecorded
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import (
    EXECUTING, PROJECT_ARG, PROJECT_STATES, PURPOSE_MAX_CHARS, Tool, params, tool_error,
)
from lantide.tokens import count_tokens

MODEL_PREVIEW_ROWS = 30
MODEL_PREVIEW_TOKENS = 2_000
STEP_LINE_REMINDER = ("After reading this, write one line: [[QUERY_STEP]] {step_id}: "
                      "<purpose> — <what it showed>.")


def _rows_of(preview: Any) -> tuple[list[str] | None, list]:
    """(columns, rows) from a preview given as rows of dicts, rows of lists, or
    ``{"columns", "rows"}``."""
    if isinstance(preview, dict):
        return preview.get("columns"), list(preview.get("rows") or [])
    return None, list(preview or [])


def shape_preview(result: dict[str, Any]) -> dict[str, Any]:
    """The result for the model: at most MODEL_PREVIEW_ROWS rows and about
    MODEL_PREVIEW_TOKENS tokens of them, with what was left out stated."""
    columns, rows = _rows_of(result.get("preview"))
    shown = rows[:MODEL_PREVIEW_ROWS]
    import json

    while len(shown) > 1 and count_tokens(json.dumps(shown, default=str)) > MODEL_PREVIEW_TOKENS:
        shown = shown[: max(1, len(shown) * 2 // 3)]
    # the SQL was just written by the model and the step is in the ledger: not repeated;
    # reason_code says why it was materialized (the sentence says it again), the ledger
    # keeps the timing
    out = {k: v for k, v in result.items() if k not in ("preview", "step", "sql", "duration_ms")
           and not (k == "materialize_reason" and result.get("reason_code"))}
    out["preview"] = {"columns": columns, "rows": shown} if columns is not None else shown
    if len(shown) < len(rows):
        out["preview_note"] = (f"{len(shown)} of the {len(rows)} preview rows shown; the full "
                               "result is in its cached table or can be aggregated with SQL.")
    return out


def record_step(ctx: ToolContext, tool: str, result: dict[str, Any], project: str | None,
                purpose: str | None = None, result_label: str | None = None) -> dict[str, Any] | None:
    """Append the step of a successful run to the ledger; returns the stored step."""
    raw = result.get("step")
    if not isinstance(raw, dict):
        return None
    fields = dict(raw)
    fields.setdefault("tool", tool)
    fields.setdefault("project", project)
    if purpose and not fields.get("purpose"):
        fields["purpose"] = purpose
    if result_label and not fields.get("result_label"):
        fields["result_label"] = result_label
    if not fields.get("materialize_reason") and result.get("reason_code"):
        fields["materialize_reason"] = result.get("reason_code")
    fields["summary"] = None
    if fields.get("step_id") in {s.get("step_id") for s in ctx.ledger.steps()}:
        fields.pop("step_id")  # ids are unique within a conversation's ledger
    step = ctx.ledger.append(fields)
    ctx.pending_steps.append(step["step_id"])
    ctx.emit(StepRecorded(step))
    return step


def _run_guarded(ctx: ToolContext, call):
    """Run a query-layer call so that cancel interrupts its DuckDB work at once.

    The call runs under its own cancel scope: the analyst's Stop ends this turn's queries
    and never the analyst's own SQL tabs or the grid, which share the engine."""
    service = ctx.services.query()
    scope = service.cancel_scope("agent turn")
    try:
        with scope, ctx.cancel.on_cancel(scope.cancel):
            result = call(service)
    finally:
        ctx.services.forget_counts()  # a run may have materialized a cached table
    ctx.cancel.raise_if_cancelled()
    return result


def _project_dir(ctx: ToolContext, name: str | None) -> str | None:
    if name:
        return ctx.project(name).dirname
    focused = ctx.focused_project()
    return focused.dirname if focused else None


def _model_result(ctx: ToolContext, tool: str, result: dict[str, Any], project: str | None,
                  purpose: str | None = None, label: str | None = None) -> dict[str, Any]:
    step = record_step(ctx, tool, result, project, purpose, label)
    out = shape_preview(result)
    if step is not None:
        out["step_id"] = step["step_id"]
        out["next"] = STEP_LINE_REMINDER.format(step_id=step["step_id"])
    return out


def show_tables(ctx: ToolContext, args: dict) -> dict[str, Any]:
    tables = _run_guarded(ctx, lambda q: q.show_tables())
    return tables if isinstance(tables, dict) else {"tables": tables}


def read_schema(ctx: ToolContext, args: dict) -> dict[str, Any]:
    ddl = _run_guarded(ctx, lambda q: q.read_schema(args["table"]))
    return ddl if isinstance(ddl, dict) else {"table": args["table"], "ddl": ddl}


def validate_query(ctx: ToolContext, args: dict) -> dict[str, Any]:
    result = _run_guarded(ctx, lambda q: q.validate_query(args["sql"]))
    return result if isinstance(result, dict) else {"ok": bool(result)}


def run_query(ctx: ToolContext, args: dict) -> dict[str, Any]:
    refusal = consent_refusal(args["sql"], ctx.state, ctx.analysis_active())
    if refusal:
        return refusal
    project = _project_dir(ctx, args.get("project"))
    result = _run_guarded(ctx, lambda q: q.run_query(
        args["sql"], result_label=args.get("result_label"), purpose=args.get("purpose"),
        project=project, large_remote_warning_id=args.get("large_remote_warning_id")))
    return _model_result(ctx, "run_query", result, project, args.get("purpose"),
                         args.get("result_label"))


def _tab_refusal(ctx: ToolContext, project_dir: str, tab: str) -> dict[str, Any] | None:
    path = ctx.workspace.project(project_dir).sql_dir / f"{tab}.sql"
    if not path.is_file():
        return None  # the query layer reports the missing tab
    return consent_refusal(path.read_text(encoding="utf-8", errors="replace"), ctx.state,
                           ctx.analysis_active())


def run_sql_tab(ctx: ToolContext, args: dict) -> dict[str, Any]:
    project = ctx.project(args.get("project")).dirname
    refusal = _tab_refusal(ctx, project, args["tab"])
    if refusal:
        return refusal
    result = _run_guarded(ctx, lambda q: q.run_sql_tab(
        project, args["tab"], purpose=args.get("purpose"),
        large_remote_warning_id=args.get("large_remote_warning_id")))
    return _model_result(ctx, "run_sql_tab", result, project, args.get("purpose"))


def source_run_sql_tab(ctx: ToolContext, args: dict) -> dict[str, Any]:
    """One ledger step per recomputed tab; tabs skipped as up to date add none."""
    project = ctx.project(args.get("project")).dirname
    refusal = _tab_refusal(ctx, project, args["tab"])
    if refusal:
        return refusal
    report = _run_guarded(ctx, lambda q: q.source_run_sql_tab(
        project, args["tab"], purpose=args.get("purpose"),
        large_remote_warning_id=args.get("large_remote_warning_ids")))
    recorded = []
    tabs = []
    for entry in report.get("tabs") or []:
        step = record_step(ctx, "source_run_sql_tab", entry, project, args.get("purpose")) \
            if isinstance(entry.get("step"), dict) else None
        tabs.append({**{k: v for k, v in entry.items() if k != "step"},
                     **({"step_id": step["step_id"]} if step else {})})
        if step:
            recorded.append(step["step_id"])
    out = {k: v for k, v in report.items() if k not in ("steps", "tabs")}
    out["tabs"] = tabs
    if recorded:
        out["step_ids"] = recorded
        out["next"] = ("After reading this, write one [[QUERY_STEP]] line per step: "
                       + ", ".join(recorded) + ".")
    return out


def create_sql_tab(ctx: ToolContext, args: dict) -> dict[str, Any]:
    project = ctx.project(args.get("project")).dirname
    result = ctx.services.query().create_sql_tab(project, args["name"], args["sql"])
    out = result if isinstance(result, dict) else {"created": str(result)}
    path = f"projects/{project}/sql/{args['name']}.sql"
    from lantide.agent.events import DocumentChanged

    ctx.emit(DocumentChanged(path, project))
    return out


def read_sql_tab(ctx: ToolContext, args: dict) -> dict[str, Any]:
    project = ctx.project(args.get("project"))
    path = project.sql_dir / f"{args['tab']}.sql"
    if not path.is_file() or "/" in args["tab"] or "\\" in args["tab"]:
        return tool_error("TAB_NOT_FOUND", f"no SQL tab {args['tab']!r} in {project.dirname}",
                          f"Tabs: {', '.join(project.sql_tab_names()) or 'none yet'}.")
    return {"project": project.dirname, "tab": args["tab"],
            "path": ctx.relpath(path), "sql": path.read_text(encoding="utf-8", errors="replace")}


_SQL = {"sql": {"type": "string", "minLength": 1}}
_PURPOSE = {"purpose": {"type": "string", "maxLength": PURPOSE_MAX_CHARS}}  # core.md.j2 says when

TOOLS = [
    Tool("show_tables", params(), show_tables),
    Tool("read_schema",
         params({"table": {"type": "string", "minLength": 1}}, ("table",)), read_schema),
    Tool("validate_query",
         params(_SQL, ("sql",)), validate_query),
    Tool("run_query",
         params({**_SQL, "result_label": {"type": "string", "maxLength": 80}, **_PURPOSE,
                 "large_remote_warning_id": {"type": "string"}}, ("sql",)), run_query),
    Tool("run_sql_tab",
         params({"tab": {"type": "string", "minLength": 1}, **_PURPOSE, **PROJECT_ARG,
                 "large_remote_warning_id": {"type": "string"}}, ("tab",)),
         run_sql_tab, PROJECT_STATES),
    Tool("source_run_sql_tab",
         params({"tab": {"type": "string", "minLength": 1}, **_PURPOSE, **PROJECT_ARG,
                 "large_remote_warning_ids": {"type": "array", "items": {"type": "string"}}},
                ("tab",)),
         source_run_sql_tab, frozenset({EXECUTING})),
    Tool("create_sql_tab",
         params({"name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,62}$"}, **_SQL,
                 **PROJECT_ARG}, ("name", "sql")), create_sql_tab, PROJECT_STATES),
    Tool("read_sql_tab",
         params({"tab": {"type": "string", "minLength": 1}, **PROJECT_ARG}, ("tab",)),
         read_sql_tab, PROJECT_STATES),
]
