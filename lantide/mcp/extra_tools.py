"""The MCP tools the in-app agent does not have, and every MCP tool's schema.

``get_analysis_context`` (what a client calls first), ``list_workspaces`` /
``select_workspace`` (a scope of all workspaces), ``list_annotations``, the Observe
``run_query`` (a preview under the QEM's guard: nothing cached, no ledger step) and the
Admin ``set_project_status`` guard (a Plan is approved by the analyst only). The work is
done by the same layers as the agent's tools; descriptions are prompt files
(``prompts/mcp/tools/NAME.md.j2``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

from lantide.agent.tools.registry import (
    PROJECT_ARG,
    SHOW_TABLES_LIMIT,
    params,
    validate_arguments,
)
from lantide.errors import LantideError
from lantide.mcp import access
from lantide.query.qem import PURPOSE_MAX_CHARS

if TYPE_CHECKING:
    from lantide.agent.tools.context import ToolContext
    from lantide.docs.agent_view_types import ListedAnnotation
    from lantide.mcp.access import McpTool
    from lantide.mcp.clients import PairedClient
    from lantide.mcp.engine import CallResult, McpEngine

PLAYBOOK_URI = "lantide://playbook"


class ToolSchema(TypedDict):
    """An MCP tool as listed: its description (a prompt file) and its JSON input schema."""

    description: str
    input_schema: dict[str, object]


class WorkspaceListed(TypedDict):
    """One workspace in ``list_workspaces``."""

    name: str
    root: str
    selected: bool


class DocumentAnnotations(TypedDict):
    """One document in ``list_annotations``: its entries of the status asked for."""

    document: str  # plan or report
    path: str
    open_annotation_count: int
    annotations: list[ListedAnnotation]


# the arguments of the tools below, once _checked validated them against their schemas
class _SelectArgs(TypedDict):
    workspace: str


class _AnnotationArgs(TypedDict):
    document: NotRequired[str]
    status: NotRequired[str]
    project: NotRequired[str]


class _RunQueryArgs(TypedDict):
    sql: str
    purpose: NotRequired[str]
    project: NotRequired[str]


@cache
def description(name: str) -> str:
    from lantide.templates import render_prompt

    return render_prompt(
        f"mcp/tools/{name}.md.j2",
        purpose_max_chars=PURPOSE_MAX_CHARS,
        show_tables_limit=SHOW_TABLES_LIMIT,
    ).strip()


def playbook_text() -> str:
    from lantide.templates import render_prompt

    return render_prompt(
        "mcp/playbook.md.j2",
        purpose_max_chars=PURPOSE_MAX_CHARS,
        modes=[
            {"name": access.MODE_LABELS[m], "tools": [t.name for t in access.TOOLS if t.mode == m]}
            for m in access.MODES
        ],
    )


_OWN_SCHEMAS: dict[str, dict[str, object]] = {
    "get_analysis_context": params(),
    "list_workspaces": params(),
    "select_workspace": params({"workspace": {"type": "string", "minLength": 1}}, ("workspace",)),
    "list_annotations": params(
        {
            "document": {"type": "string", "enum": ["plan", "report"]},
            "status": {"type": "string", "enum": ["open", "resolved", "all"]},
            **PROJECT_ARG,
        }
    ),
}


def input_schema(entry: McpTool) -> dict[str, object]:
    return _input_schema(entry.name)


def schema_of(name: str) -> dict[str, object] | None:
    """The input schema of the MCP tool ``name`` (None for an unknown name)."""
    return _input_schema(name) if name in access.BY_NAME else None


@cache
def _input_schema(name: str) -> dict[str, object]:
    entry = access.BY_NAME[name]
    if entry.name in _OWN_SCHEMAS:
        return _OWN_SCHEMAS[entry.name]
    from lantide.agent.tools import default_registry

    tool = default_registry().get(entry.registry) if entry.registry else None
    if tool is None:  # every MCP tool has its own schema or an agent tool's
        raise LantideError(f"the MCP tool {name!r} has no schema", code="UNKNOWN_TOOL")
    schema: dict[str, object] = tool.parameters
    if entry.name in (
        "run_query",
        "read_step",
        "show_tables",
        "read_plan",
        "read_report",
        "profile_columns",
        "read_schema",
        "validate_query",
    ):
        # a client names the project it works on (the focused one is the analyst's)
        own = schema.get("properties")
        props = {**(own if isinstance(own, dict) else {}), **PROJECT_ARG}
        schema = {**schema, "properties": props}
    return schema


def tool_schema(entry: McpTool) -> ToolSchema:
    return {"description": description(entry.name), "input_schema": input_schema(entry)}


def _result(ok: bool, result: dict[str, Any], step_ids: list[str] | None = None) -> CallResult:
    from lantide.mcp.engine import CallResult

    return CallResult(ok, result, step_ids or [])


def _checked(name: str, args: dict[str, object]) -> None:
    from lantide.agent.tools.registry import Tool

    problem = validate_arguments(
        Tool(name, input_schema(access.BY_NAME[name]), lambda c, a: {}), args
    )
    if problem:
        raise LantideError(
            f"{name}: {problem}",
            code="BAD_ARGUMENTS",
            hint="Call it again with arguments matching its schema.",
        )


def get_analysis_context(
    engine: McpEngine, client: PairedClient, ctx: ToolContext, args: dict[str, object]
) -> CallResult:
    from lantide.agent.tools.workspace_tools import get_app_context

    _checked("get_analysis_context", args)
    app = get_app_context(ctx, {})
    allowed = access.tools_for(client.mode, client.all_workspaces)
    higher = {t.name: t.mode for t in access.TOOLS if not access.allows(client.mode, t.mode)}
    out: dict[str, Any] = {
        k: app[k]
        for k in ("workspace", "projects", "project_count", "focused_project", "external_databases")
        if k in app
    }
    out["cached_tables"] = ctx.services.cached_table_count()
    out["client"] = {
        "id": client.id,
        "name": client.name,
        "mode": client.mode,
        "scope": client.scope,
        "expires_at": client.expires_at,
    }
    out["allowed_tools"] = [t.name for t in allowed]
    out["needs_a_higher_mode"] = higher
    out["ledger_conversation"] = ctx.conversation.id
    out["steps_so_far"] = len(ctx.ledger.steps())
    out["playbook"] = PLAYBOOK_URI
    return _result(True, out)


def list_workspaces(engine: McpEngine, client: PairedClient, args: dict[str, object]) -> CallResult:
    from lantide.workspace.model import Workspace

    _checked("list_workspaces", args)
    selected = engine._selected.get(client.id) or engine.primary
    out: list[WorkspaceListed] = []
    for root in engine.known_workspaces(client):
        try:
            name = (
                Workspace(root, {}).name
                if root not in engine._handles
                else engine._handles[root].workspace.name
            )
        except LantideError:
            name = root.name
        out.append({"name": name, "root": str(root), "selected": root == selected})
    return _result(True, {"workspaces": out})


def select_workspace(
    engine: McpEngine, client: PairedClient, args: dict[str, object]
) -> CallResult:
    _checked("select_workspace", args)
    wanted = cast(_SelectArgs, args)["workspace"]
    known = engine.known_workspaces(client)
    match = [r for r in known if str(r) == wanted or r.name == wanted]
    root = match[0] if match else Path(wanted).expanduser().resolve()
    handle = engine.select_workspace(client, root)
    return _result(True, {"selected": {"name": handle.workspace.name, "root": str(handle.root)}})


def list_annotations(
    engine: McpEngine, client: PairedClient, ctx: ToolContext, args: dict[str, object]
) -> CallResult:
    from lantide.docs import document_listing, open_document

    _checked("list_annotations", args)
    checked = cast(_AnnotationArgs, args)
    project = ctx.project(checked.get("project"))
    status = checked.get("status") or "open"
    out: list[DocumentAnnotations] = []
    for kind in [checked["document"]] if checked.get("document") else ["plan", "report"]:
        listing = document_listing(open_document(project, kind))
        entries = [a for a in listing["annotations"] if status == "all" or a["status"] == status]
        out.append(
            {
                "document": kind,
                "path": listing["path"],
                "open_annotation_count": listing["open_annotation_count"],
                "annotations": entries,
            }
        )
    return _result(True, {"project": project.dirname, "status": status, "documents": out})


def observe_run_query(
    engine: McpEngine, client: PairedClient, ctx: ToolContext, args: dict[str, object]
) -> CallResult:
    """Observe: the preview of a read-only statement under the QEM's guard, nothing cached
    and no ledger step (the mode writes nothing)."""
    from lantide.agent.tools.query_tools import _run_guarded

    _checked("run_query", args)
    sql = cast(_RunQueryArgs, args)["sql"]
    refused = ctx.statistics_refusal(sql)  # the agent's gate, in every mode
    if refused is not None:
        return _result(False, dict(refused))
    rows = ctx.settings.query.preview_rows
    preview = _run_guarded(ctx, lambda q: q.preview_sql(sql, rows))
    return _result(
        True,
        {
            **preview,
            "materialized": False,
            "note": "Observe mode: a preview only; nothing was cached and no "
            "ledger step was written.",
        },
    )


def set_project_status(
    engine: McpEngine, client: PairedClient, ctx: ToolContext, args: dict[str, object]
) -> CallResult:
    from lantide.agent.tools import default_registry

    name = args.get("project")
    project = ctx.project(name if isinstance(name, str) else None)
    if args.get("status") == "executing" and project.status != "executing":
        raise LantideError(
            "only the analyst approves a Plan (moving a project to executing)",
            hint="Set the status to plan_review and ask the analyst to approve.",
            code="APPROVAL_IS_THE_ANALYSTS",
        )
    outcome = default_registry().call("set_project_status", args, ctx)
    return _result(outcome.ok, outcome.result)


# args: the client's arguments, not validated yet (each tool checks them first)
CustomTool = Callable[["McpEngine", "PairedClient", "ToolContext", dict[str, object]], "CallResult"]
WorkspaceTool = Callable[["McpEngine", "PairedClient", dict[str, object]], "CallResult"]

# the tools that choose a workspace run before there is one (so without a tool context)
WORKSPACE_TOOLS: dict[str, WorkspaceTool] = {
    "list_workspaces": list_workspaces,
    "select_workspace": select_workspace,
}
CUSTOM: dict[str, CustomTool] = {
    "get_analysis_context": get_analysis_context,
    "list_annotations": list_annotations,
    "run_query": observe_run_query,  # only in Observe (see McpEngine._run)
    "set_project_status": set_project_status,
}
