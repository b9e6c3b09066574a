"""Tools over the docs layer (Plan and Report, annotations) and the knowledge layer.

The docs layer owns the text, the marks and the sidecars (written together, atomically)
and the rule that the agent's edits wait for the analyst's review
(:mod:`lantide.docs.edit_submit`); these handlers pick the project, announce the edit
(pending, or written by the ``agent_edits: apply`` setting) and let the model fetch a
knowledge catalog section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from lantide.agent.events import TOUCHES_DOCUMENTS, DocumentChanged, EditProposed
from lantide.agent.report_evidence import report_evidence_refusal
from lantide.agent.report_html import raw_html_left_out
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import (
    ALL_STATES,
    EXECUTING,
    PROJECT_ARG,
    PROJECT_STATES,
    Handler,
    Tool,
    ToolError,
    params,
    tool_error,
)
from lantide.workspace.model import Project


class ProjectArgs(TypedDict):
    project: NotRequired[str]


class UpdateArgs(TypedDict):
    content: str
    project: NotRequired[str]


class ResolveArgs(TypedDict):
    document: str  # plan or report
    items: list[dict[str, Any]]  # {id, mode, replacement?, answer?} as the docs layer takes them
    project: NotRequired[str]


class HeadingArgs(TypedDict):
    heading: str


def announce_edit(
    ctx: ToolContext, project: Project, rel: str, result: dict[str, Any]
) -> dict[str, Any]:
    """The result of an edit tool as the model gets it, and the one announcement of the
    edit: pending the analyst's review (EditProposed, and a note saying the file keeps its
    text), written at once by the agent_edits setting (DocumentChanged), or no change."""
    from lantide.templates import render_prompt

    if result.get("pending_review"):
        ctx.emit(EditProposed(rel, project.dirname, str(result["edit_id"])))
        note = render_prompt("notes/edit_pending.md.j2", path=rel, reading=False).strip()
        return {**result, "review": note}
    if "pending_review" not in result:  # applied at once
        ctx.emit(DocumentChanged(rel, project.dirname))
    return result


def report_rules(ctx: ToolContext, kind: str) -> str | None:
    """The Report's rules (citations, review), sent with the Report while executing rather
    than in every request's state layer."""
    if kind != "report" or ctx.state != EXECUTING:
        return None
    from lantide.templates import render_prompt

    return render_prompt("notes/report_rules.md.j2").strip()


def _read(kind: str) -> Handler:
    def handler(ctx: ToolContext, args: ProjectArgs) -> Mapping[str, object]:
        project = ctx.project(args.get("project"))
        view: dict[str, object] = {**ctx.services.documents.agent_view(project, kind)}
        pending = ctx.services.documents.pending_edits(project, kind)
        if pending:  # the text is the file on disk: the agent's pending edits are not in it
            from lantide.templates import render_prompt

            view["pending_edits"] = pending
            view["pending_note"] = render_prompt(
                "notes/edit_pending.md.j2", path=view.get("path"), reading=True
            ).strip()
        rules = report_rules(ctx, kind)
        return {**view, "rules": rules} if rules else view

    return handler


def report_markup_refusal(ctx: ToolContext, project: Project, content: str) -> ToolError | None:
    """Raw HTML the edit adds that the HTML Report's sanitizer would leave out (a script, an
    event handler, a comment hiding one...): refused by the rule of ``patch_html_chunk``."""
    try:
        old = project.report_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        old = ""
    left_out = raw_html_left_out(old, content)
    if not left_out:
        return None
    return tool_error(
        "HTML_REFUSED",
        f"update_report refused, the Report was not changed: its raw HTML holds what the HTML "
        f"Report leaves out: {'; '.join(left_out[:5])}",
        "Write the Report in Markdown; raw HTML may hold text markup only (no scripts, "
        "styles, comments, on*= attributes, frames or forms, no URL but '#anchor' and "
        "http(s) links).",
    )


def _update(kind: str) -> Handler:
    def handler(ctx: ToolContext, args: UpdateArgs) -> Mapping[str, object]:
        project = ctx.project(args.get("project"))
        refusal: ToolError | None
        if kind == "report":  # every number the agent writes cites its step
            refusal = report_evidence_refusal(ctx, project, args["content"])
            if refusal is None:  # and no markup the HTML Report would leave out
                refusal = report_markup_refusal(ctx, project, args["content"])
            if refusal is not None:
                return refusal
        result = ctx.services.documents.submit_update(
            project, kind, args["content"], by="agent", conversation=ctx.conversation.id
        )
        return announce_edit(ctx, project, ctx.relpath(project.document_path(kind)), result)

    return handler


def resolve_annotations(ctx: ToolContext, args: ResolveArgs) -> Mapping[str, object]:
    project = ctx.project(args.get("project"))
    kind = args["document"]
    result = ctx.services.documents.submit_resolution(
        project, kind, args["items"], by="agent", conversation=ctx.conversation.id
    )
    return announce_edit(ctx, project, ctx.relpath(project.document_path(kind)), result)


def expand_knowledge_catalog(ctx: ToolContext, args: HeadingArgs) -> Mapping[str, object]:
    return ctx.services.knowledge(ctx.focused_project()).expand(args["heading"])


def _catalog_offered(ctx: ToolContext) -> bool:
    """Offered when the knowledge layer is in catalog mode or had to cut entries."""
    return ctx.knowledge_offers_tool


_DOCUMENTS = frozenset({TOUCHES_DOCUMENTS})
_CONTENT = {"content": {"type": "string"}}  # the tool's description says what it holds
_ITEMS = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "mode"],
        "properties": {
            "id": {"type": "string"},
            "mode": {"type": "string", "enum": ["A", "B"]},
            "replacement": {"type": "string"},
            "answer": {"type": "string"},
        },
    },
}

TOOLS = [
    Tool("read_plan", params(PROJECT_ARG), _read("plan"), PROJECT_STATES),
    Tool("read_report", params(PROJECT_ARG), _read("report"), PROJECT_STATES),
    Tool(
        "update_plan",
        params({**_CONTENT, **PROJECT_ARG}, ("content",)),
        _update("plan"),
        PROJECT_STATES,
        touches=_DOCUMENTS,
    ),
    Tool(
        "update_report",
        params({**_CONTENT, **PROJECT_ARG}, ("content",)),
        _update("report"),
        frozenset({EXECUTING}),
        touches=_DOCUMENTS,
    ),
    Tool(
        "resolve_annotations",
        params(
            {
                "document": {"type": "string", "enum": ["plan", "report"]},
                "items": _ITEMS,
                **PROJECT_ARG,
            },
            ("document", "items"),
        ),
        resolve_annotations,
        PROJECT_STATES,
        touches=_DOCUMENTS,
    ),
    Tool(
        "expand_knowledge_catalog",
        params({"heading": {"type": "string", "minLength": 1}}, ("heading",)),
        expand_knowledge_catalog,
        ALL_STATES,
        available=_catalog_offered,
    ),
]
