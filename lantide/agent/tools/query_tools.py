"""Tools over the query layer (the QEM of DESIGN.md section 4) and the step ledger.

The QEM decides what may run; these handlers add what belongs to the agent: analysis
consent, the ledger step of every successful run (with the conversation id and a pending
summary), the running query interrupted on cancel, and a preview cut to what the model
needs (the full result stays in DuckDB and, when materialized, in its cached table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, NotRequired, TypedDict, TypeVar, cast

from lantide.agent.events import TOUCHES_DOCUMENTS, TOUCHES_TABLES, DocumentChanged, StepRecorded
from lantide.agent.evidence import evidence_fields
from lantide.agent.ledger_types import LedgerStep, StepFields
from lantide.agent.services import AgentQuery
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import (
    EXECUTING,
    PROJECT_ARG,
    PROJECT_STATES,
    PURPOSE_MAX_CHARS,
    SHOW_TABLES_LIMIT,
    Tool,
    ToolError,
    params,
    tool_error,
)
from lantide.errors import LantideError
from lantide.tokens import count_tokens
from lantide.workspace.layout import sql_tab_relpath
from lantide.workspace.names import MAX_NAME

MODEL_PREVIEW_TOKENS = 2_000  # rows beyond this are left out, and the result says so
SHOW_TABLES_MAX = 500
MODEL_CELL_CHARS = 2_000  # a preview cell for the model, unless max_cell_chars asks more
MAX_CELL_CHARS = 100_000
STEP_LINE_REMINDER = "[[QUERY_STEP]] {step_id}: <purpose> — <what it showed>"  # core says when
QUIET_WHEN_EMPTY = (
    "warnings",
    "hints",
    "checks",
    "cells_cut",
    "cached_table_name",
    "truncated",
    "materialized",
)

T = TypeVar("T")  # what a guarded query-layer call returns


# -- arguments (each as its tool's schema below admits it)
class ShowTablesArgs(TypedDict):
    name: NotRequired[str]
    limit: NotRequired[int]


class TableArgs(TypedDict):
    table: str


class ProfileArgs(TypedDict):
    table: str
    columns: NotRequired[list[str]]


class SqlArgs(TypedDict):
    sql: str


class RunQueryArgs(TypedDict):
    sql: str
    result_label: NotRequired[str]
    purpose: NotRequired[str]
    project: NotRequired[str]  # not in the schema: always the focused project
    large_remote_warning_id: NotRequired[str]
    max_cell_chars: NotRequired[int]


class TabArgs(TypedDict):
    tab: str
    purpose: NotRequired[str]
    project: NotRequired[str]
    large_remote_warning_id: NotRequired[str]
    max_cell_chars: NotRequired[int]


class SourceRunArgs(TypedDict):
    tab: str
    purpose: NotRequired[str]
    project: NotRequired[str]
    large_remote_warning_ids: NotRequired[list[str]]


class CreateTabArgs(TypedDict):
    name: str
    sql: str
    project: NotRequired[str]


class ReadTabArgs(TypedDict):
    tab: str
    project: NotRequired[str]


class SqlTab(TypedDict):
    """``read_sql_tab``: the tab's text as it is on disk."""

    project: str
    tab: str
    path: str
    sql: str


class Profile(TypedDict):
    """``profile_columns``: the table browser's profile, histograms as triples."""

    table: str
    row_count: int
    columns: list[dict[str, object]]


def shape_preview(result: Mapping[str, Any], max_rows: int) -> dict[str, object]:
    """The result for the model: at most ``max_rows`` rows (the preview rows setting, the
    number the core prompt states) and about MODEL_PREVIEW_TOKENS tokens of them, with what
    was left out stated."""
    rows = list(result.get("preview") or [])
    shown = rows[: max(1, int(max_rows))]
    import json

    while len(shown) > 1 and count_tokens(json.dumps(shown, default=str)) > MODEL_PREVIEW_TOKENS:
        shown = shown[: max(1, len(shown) * 2 // 3)]
    # the SQL was just written by the model and the step is in the ledger: not repeated;
    # reason_code says why it was materialized (the sentence says it again), the ledger
    # keeps the timing; the warnings' codes are for apps (the model reads the sentences)
    # the query result less what the model need not read again: its keys vary with the
    # result (a large remote warning, a tab, a cut cell), so it is read key by key
    out: dict[str, object] = {
        k: v
        for k, v in result.items()
        if k not in ("preview", "step", "sql", "duration_ms", "warning_codes")
        and not (k == "materialize_reason" and result.get("reason_code"))
    }
    out["preview"] = shown
    if len(shown) < len(rows):
        out["preview_note"] = (
            f"{len(shown)} of the {len(rows)} preview rows shown; the full "
            "result is in its cached table or can be aggregated with SQL."
        )
    if result.get("cells_cut"):
        out["cell_note"] = (
            f"{result['cells_cut']} cell(s) were cut at "
            f"{result.get('cell_chars'):,} characters (marked '…[cut at ...]'). "
            f"For more, run again with max_cell_chars (at most {MAX_CELL_CHARS:,}) "
            "or read a part with substr(column, start, length)."
        )
    return out


def _cell_chars(args: RunQueryArgs | TabArgs) -> int:
    value = args.get("max_cell_chars")
    return MODEL_CELL_CHARS if value is None else max(1, min(int(value), MAX_CELL_CHARS))


@cache
def check_advice(code: str) -> str:
    """One sentence for the model on what to do about a result check (a prompt file)."""
    from lantide.templates import render_prompt

    return render_prompt("notes/result_check.md.j2", code=code).strip()


def advised(checks: object) -> list[dict[str, object]]:
    """The result's checks, each with its advice sentence."""
    if not isinstance(checks, list):
        return []
    return [
        {**c, "advice": check_advice(str(c.get("code")))} for c in checks if isinstance(c, dict)
    ]


def record_step(
    ctx: ToolContext,
    tool: str,
    result: Mapping[str, Any],
    project: str | None,
    purpose: str | None = None,
    result_label: str | None = None,
) -> LedgerStep | None:
    """Append the step of a successful run to the ledger; returns the stored step."""
    raw = result.get("step")
    if not isinstance(raw, dict):
        return None
    # the query layer's step (DESIGN.md section 6, lantide.query.runner): the fields of a
    # ledger step it knows, each of the ledger's type
    fields = cast(StepFields, dict(raw))
    fields.setdefault("tool", tool)
    fields.setdefault("project", project)
    if purpose and not fields.get("purpose"):
        fields["purpose"] = purpose
    if result_label and not fields.get("result_label"):
        fields["result_label"] = result_label
    if not fields.get("materialize_reason") and result.get("reason_code"):
        fields["materialize_reason"] = result.get("reason_code")
    fields["summary"] = None
    fields = {
        **fields,
        **evidence_fields(tool, result, fields.get("purpose"), _status_of(ctx, project)),
    }
    if fields.get("step_id") in {s.get("step_id") for s in ctx.ledger.steps()}:
        fields.pop("step_id")  # ids are unique within a conversation's ledger
    step = ctx.ledger.append(fields)
    ctx.pending_steps.append(step["step_id"])
    ctx.emit(StepRecorded(step))
    return step


def _status_of(ctx: ToolContext, project: str | None) -> str | None:
    try:
        return ctx.workspace.project(project).status if project else None
    except LantideError:
        return None


def _run_guarded(ctx: ToolContext, call: Callable[[AgentQuery], T]) -> T:
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


def _model_result(
    ctx: ToolContext,
    tool: str,
    result: Mapping[str, Any],
    project: str | None,
    purpose: str | None = None,
    label: str | None = None,
) -> dict[str, object]:
    step = record_step(ctx, tool, result, project, purpose, label)
    out = shape_preview(result, ctx.settings.query.preview_rows)
    if "checks" in result:
        out["checks"] = advised(result["checks"])
    # what says nothing is not sent (the ledger keeps every field): empty lists, no cut
    # cells, no cached table, the focused project the summary already names
    for key in QUIET_WHEN_EMPTY:
        if key in out and not out[key]:
            del out[key]
    if not out.get("cells_cut"):
        out.pop("cell_chars", None)
    if out.get("status") == "ok":  # an error says so; success is the default
        out.pop("status")
    if out.get("project") == ctx.app.focused_project_name():
        out.pop("project", None)
    if step is not None:
        out["step_id"] = step["step_id"]
        out["next"] = STEP_LINE_REMINDER.format(step_id=step["step_id"])
    return out


def _matches(table: Mapping[str, object], pattern: str) -> bool:
    from fnmatch import fnmatchcase

    names = [str(table.get(k) or "") for k in ("name", "qualified_name", "schema")]
    names = [n.casefold() for n in names if n]
    if any(c in pattern for c in "*?["):
        return any(fnmatchcase(n, pattern) for n in names)
    return any(pattern in n for n in names)


def _brief(table: Mapping[str, object]) -> dict[str, object]:
    """A listing entry without the empty fields and without a qualified name that only
    quotes the name (they cost tokens and say nothing)."""
    out = {k: v for k, v in table.items() if not _empty(v)}
    if out.get("qualified_name") == '"{}"'.format(str(out.get("name", "")).replace('"', '""')):
        del out["qualified_name"]
    elif out.get("qualified_name"):  # "book"."Sheet1" says the schema and the name
        out.pop("name", None)
        out.pop("schema", None)
    if out.get("format") and str(out.get("source", "")).startswith("data/"):
        out.pop("format")  # the file's name says it
    return out


def _empty(value: Any) -> bool:
    return value is None or value is False or isinstance(value, (str, list, dict)) and not value


def show_tables(ctx: ToolContext, args: ShowTablesArgs) -> dict[str, object]:
    listing = _run_guarded(ctx, lambda q: q.show_tables())
    tables = list(listing.get("tables") or [])
    pattern = (args.get("name") or "").strip().casefold()
    if pattern:
        tables = [t for t in tables if _matches(t, pattern)]
    limit = int(args.get("limit") or SHOW_TABLES_LIMIT)
    # the per-kind counts repeat what the list shows
    out: dict[str, object] = {
        k: v for k, v in listing.items() if k not in ("tables", "counts") and not _empty(v)
    }
    out["tables"] = [_brief(t) for t in tables[:limit]]
    if pattern:
        out["matching"] = len(tables)
    if len(tables) > limit:
        out["more"] = (
            f"{len(tables) - limit} more tables not shown"
            f"{' matching ' + repr(args.get('name')) if pattern else ''}: pass name to "
            "filter (part of a name, or a pattern with *) or a larger limit"
        )
    return out


def read_schema(ctx: ToolContext, args: TableArgs) -> dict[str, object]:
    """The DDL once (the query layer also lists the columns as JSON, for the app)."""
    schema = _run_guarded(ctx, lambda q: q.read_schema(args["table"]))
    # the DDL once; the kind and source are in show_tables' listing
    out: dict[str, object] = {
        k: v for k, v in schema.items() if k not in ("columns", "kind", "source")
    }
    if out.get("qualified_name") == '"{}"'.format(str(out.get("table", "")).replace('"', '""')):
        del out["qualified_name"]
    not_null = [
        c["name"]
        for c in schema.get("columns") or []
        if isinstance(c, dict) and c.get("nullable") is False
    ]
    if not_null:
        out["not_null"] = not_null
    return out


PROFILE_TOP_VALUES = 8
PROFILE_BINS = 6


def profile_columns(ctx: ToolContext, args: ProfileArgs) -> Profile:
    """The table browser's column profile, compacted for the model (histograms as
    ``[low, high, count]`` triples)."""
    profile = _run_guarded(
        ctx,
        lambda q: q.profile_table(
            args["table"], bins=PROFILE_BINS, top=PROFILE_TOP_VALUES, columns=args.get("columns")
        ),
    )
    columns: list[dict[str, object]] = []
    for col in profile["columns"]:
        entry: dict[str, object] = {k: v for k, v in col.items() if k != "histogram"}
        hist = col["histogram"]
        if hist.get("kind") == "top_values":
            entry["top_values"] = [[v["value"], v["count"]] for v in hist["values"]]
            entry["other_count"] = hist["other_count"]
        elif hist.get("kind") == "numeric":
            entry["histogram"] = [[b["low"], b["high"], b["count"]] for b in hist["bins"]]
        columns.append(entry)
    return {"table": args["table"], "row_count": profile["row_count"], "columns": columns}


def validate_query(ctx: ToolContext, args: SqlArgs) -> Mapping[str, object]:
    return _run_guarded(ctx, lambda q: q.validate_query(args["sql"]))


def run_query(ctx: ToolContext, args: RunQueryArgs) -> dict[str, object] | ToolError:
    refusal = ctx.statistics_refusal(args["sql"])
    if refusal:
        return refusal
    project = _project_dir(ctx, args.get("project"))
    result = _run_guarded(
        ctx,
        lambda q: q.run_query(
            args["sql"],
            result_label=args.get("result_label"),
            purpose=args.get("purpose"),
            project=project,
            large_remote_warning_id=args.get("large_remote_warning_id"),
            max_cell_chars=_cell_chars(args),
        ),
    )
    return _model_result(
        ctx, "run_query", result, project, args.get("purpose"), args.get("result_label")
    )


def _tab_refusal(ctx: ToolContext, project_dir: str, tab: str) -> ToolError | None:
    path = ctx.workspace.project(project_dir).sql_tab_path(tab)
    if not path.is_file():
        return None  # the query layer reports the missing tab
    return ctx.statistics_refusal(path.read_text(encoding="utf-8", errors="replace"))


class StatisticsRefused(LantideError):
    """A tab of a Source Run refused by the consent gate (its error is the refusal's)."""


def _gate(ctx: ToolContext, tab: str, sql: str) -> None:
    """Source Run's gate: every tab it recomputes is inspected, the upstream ones too."""
    refusal = ctx.statistics_refusal(sql)
    if refusal is not None:
        raise StatisticsRefused(
            f"SQL tab {tab!r}: {refusal['message']}",
            hint=refusal.get("hint"),
            code=refusal["error"],
        )


def run_sql_tab(ctx: ToolContext, args: TabArgs) -> dict[str, object] | ToolError:
    project = ctx.project(args.get("project")).dirname
    refusal = _tab_refusal(ctx, project, args["tab"])
    if refusal:
        return refusal
    result = _run_guarded(
        ctx,
        lambda q: q.run_sql_tab(
            project,
            args["tab"],
            purpose=args.get("purpose"),
            large_remote_warning_id=args.get("large_remote_warning_id"),
            max_cell_chars=_cell_chars(args),
        ),
    )
    return _model_result(ctx, "run_sql_tab", result, project, args.get("purpose"))


def _with_table_rows(ctx: ToolContext, entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """A Source Run reads no preview rows; the values its ledger step keeps (what a Report
    number is checked against) come from the first rows of the tab's cached table."""
    from lantide.query.results import json_rows

    step = entry.get("step") or {}
    table = step.get("cached_table_name")
    if not table or not step.get("materialized") or entry.get("preview"):
        return entry
    try:
        rows = _run_guarded(ctx, lambda q: q.fetch_rows(table, 0, ctx.settings.query.preview_rows))
    except LantideError:
        return entry  # the step is still recorded, without values
    return {**entry, "preview": json_rows(rows)}


def source_run_sql_tab(ctx: ToolContext, args: SourceRunArgs) -> dict[str, object] | ToolError:
    """One ledger step per recomputed tab; tabs skipped as up to date add none."""
    project = ctx.project(args.get("project")).dirname
    refusal = _tab_refusal(ctx, project, args["tab"])
    if refusal:
        return refusal
    report = _run_guarded(
        ctx,
        lambda q: q.source_run_sql_tab(
            project,
            args["tab"],
            purpose=args.get("purpose"),
            large_remote_warning_id=args.get("large_remote_warning_ids"),
            statement_gate=lambda tab, sql: _gate(ctx, tab, sql),
        ),
    )
    recorded: list[str] = []
    tabs: list[dict[str, object]] = []
    for entry in report.get("tabs") or []:
        step = (
            record_step(
                ctx,
                "source_run_sql_tab",
                _with_table_rows(ctx, entry),
                project,
                args.get("purpose"),
            )
            if isinstance(entry.get("step"), dict)
            else None
        )
        tabs.append(
            {
                **{k: v for k, v in entry.items() if k != "step"},
                **({"checks": advised(entry["checks"])} if "checks" in entry else {}),
                **({"step_id": step["step_id"]} if step else {}),
            }
        )
        if step:
            recorded.append(step["step_id"])
    out: dict[str, object] = {k: v for k, v in report.items() if k not in ("steps", "tabs")}
    out["tabs"] = tabs
    if recorded:
        out["step_ids"] = recorded
        out["next"] = (
            "After reading this, write one [[QUERY_STEP]] line per step: "
            + ", ".join(recorded)
            + "."
        )
    return out


def create_sql_tab(ctx: ToolContext, args: CreateTabArgs) -> Mapping[str, object]:
    project = ctx.project(args.get("project")).dirname
    result = ctx.services.query().create_sql_tab(project, args["name"], args["sql"])
    ctx.emit(DocumentChanged(sql_tab_relpath(project, result["tab"]), project))
    return dict(result)


def read_sql_tab(ctx: ToolContext, args: ReadTabArgs) -> SqlTab | ToolError:
    project = ctx.project(args.get("project"))
    path = project.sql_tab_path(args["tab"])
    if not path.is_file() or "/" in args["tab"] or "\\" in args["tab"]:
        return tool_error(
            "TAB_NOT_FOUND",
            f"no SQL tab {args['tab']!r} in {project.dirname}",
            f"Tabs: {', '.join(project.sql_tab_names()) or 'none yet'}.",
        )
    return {
        "project": project.dirname,
        "tab": args["tab"],
        "path": ctx.relpath(path),
        "sql": path.read_text(encoding="utf-8", errors="replace"),
    }


_SQL = {"sql": {"type": "string", "minLength": 1}}
_TABLES = frozenset({TOUCHES_TABLES})
_PURPOSE = {"purpose": {"type": "string", "maxLength": PURPOSE_MAX_CHARS}}  # core.md.j2 says when
_CELLS = {
    "max_cell_chars": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_CELL_CHARS,
        "description": f"Preview cell cap (default {MODEL_CELL_CHARS:,}).",
    }
}

TOOLS = [
    Tool(
        "show_tables",
        params(
            {
                "name": {
                    "type": "string",
                    "description": "Only tables whose name contains "
                    "this (or matches a pattern with *).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": SHOW_TABLES_MAX,
                    "description": f"At most this many tables (default {SHOW_TABLES_LIMIT}).",
                },
            }
        ),
        show_tables,
        on_demand=frozenset({"name", "limit"}),
    ),
    Tool(
        "read_schema",
        params({"table": {"type": "string", "minLength": 1}}, ("table",)),
        read_schema,
    ),
    Tool("validate_query", params(_SQL, ("sql",)), validate_query),
    Tool(
        "profile_columns",
        params(
            {
                "table": {"type": "string", "minLength": 1},
                "columns": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "minItems": 1,
                    "maxItems": 50,
                },
            },
            ("table",),
        ),
        profile_columns,
    ),
    Tool(
        "run_query",
        params(
            {
                **_SQL,
                "result_label": {"type": "string", "maxLength": 80},
                **_PURPOSE,
                "large_remote_warning_id": {"type": "string"},
                **_CELLS,
            },
            ("sql",),
        ),
        run_query,
        on_demand=frozenset(_CELLS),
        touches=_TABLES,
    ),
    Tool(
        "run_sql_tab",
        params(
            {
                "tab": {"type": "string", "minLength": 1},
                **_PURPOSE,
                **PROJECT_ARG,
                "large_remote_warning_id": {"type": "string"},
                **_CELLS,
            },
            ("tab",),
        ),
        run_sql_tab,
        PROJECT_STATES,
        on_demand=frozenset(_CELLS),
        touches=_TABLES,
    ),
    Tool(
        "source_run_sql_tab",
        params(
            {
                "tab": {"type": "string", "minLength": 1},
                **_PURPOSE,
                **PROJECT_ARG,
                "large_remote_warning_ids": {"type": "array", "items": {"type": "string"}},
            },
            ("tab",),
        ),
        source_run_sql_tab,
        frozenset({EXECUTING}),
        touches=_TABLES,
    ),
    Tool(
        "create_sql_tab",
        params(
            {
                # the names' rule is the engine's (lantide.workspace.names); a refused name's
                # error carries its hint, so the schema sent every request does not
                "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME},
                **_SQL,
                **PROJECT_ARG,
            },
            ("name", "sql"),
        ),
        create_sql_tab,
        PROJECT_STATES,
        touches=_TABLES | {TOUCHES_DOCUMENTS},
    ),
    Tool(
        "read_sql_tab",
        params({"tab": {"type": "string", "minLength": 1}, **PROJECT_ARG}, ("tab",)),
        read_sql_tab,
        PROJECT_STATES,
    ),
]
