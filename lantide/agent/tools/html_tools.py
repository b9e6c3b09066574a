"""The HTML Report's tools, offered while ``report.html`` is the active tab.

``read_html_report(chunk?)`` lists the chunks of ``projects/P/report.html`` (id, title,
line, whether edited since published, a text preview) or returns one chunk's content;
``patch_html_chunk(chunk, content)`` replaces one chunk's content, refusing scripts,
event-handler attributes, external URLs and unbalanced markup
(:mod:`lantide.agent.report_html`, :mod:`lantide.docs.html_markup`). A tab holding unsaved
edits of the file is never overwritten. A patch waits for the analyst's review as a
pending edit (:mod:`lantide.docs.pending_edits`) unless the workspace's ``agent_edits`` is
``apply``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NotRequired, TypedDict

from lantide.agent.app_state import is_html_report
from lantide.agent.events import TOUCHES_DOCUMENTS
from lantide.agent.report_html import html_path, patch_chunk, preview_patch_chunk, read_chunks
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.doc_tools import announce_edit
from lantide.agent.tools.registry import (
    PROJECT_ARG,
    PROJECT_STATES,
    Tool,
    ToolError,
    params,
    tool_error,
)
from lantide.workspace.model import Project


class ReadArgs(TypedDict):
    chunk: NotRequired[str]
    project: NotRequired[str]


class PatchArgs(TypedDict):
    chunk: str
    content: str
    project: NotRequired[str]


def html_report_active(ctx: ToolContext) -> bool:
    """The analyst's active tab shows an HTML Report (the tools are offered then)."""
    return is_html_report(ctx.app.app_state().active)


def read_html_report(ctx: ToolContext, args: ReadArgs) -> dict[str, object]:
    project = ctx.project(args.get("project"))
    result = read_chunks(project, args.get("chunk"))
    return {**result, "path": ctx.relpath(result["path"])}


def patch_html_chunk(ctx: ToolContext, args: PatchArgs) -> dict[str, object] | ToolError:
    project = ctx.project(args.get("project"))
    rel = ctx.relpath(html_path(project))
    if ctx.app.tab_state(rel).get("dirty"):
        return tool_error(
            "TAB_DIRTY",
            f"{rel} has unsaved edits in the analyst's tab; nothing was changed",
            "Ask the analyst to save or discard their edits of the HTML Report first.",
        )
    result = submit_chunk_patch(ctx, project, args["chunk"], args["content"])
    return {**announce_edit(ctx, project, rel, {**result, "path": rel}), **ctx.app.tab_state(rel)}


def submit_chunk_patch(
    ctx: ToolContext, project: Project, chunk: str, content: str
) -> dict[str, Any]:
    """The patch pending the analyst's review, or written at once (``agent_edits: apply``,
    recorded as accepted by the setting): the rule of :mod:`lantide.docs.pending_edits`."""
    from lantide.docs.edit_review import record_applied
    from lantide.docs.pending_edits import (
        APPLY,
        edit_mode,
        edit_summary,
        new_edit_id,
        propose,
    )

    if edit_mode(project.workspace_root) == APPLY:
        before = _disk_text(html_path(project))
        applied = patch_chunk(project, chunk, content)
        after = _disk_text(html_path(project))
        record_applied(project, "html", "patch_html_chunk", before, after, new_edit_id(project))
        return dict(applied)
    _path, base, proposal, preview = preview_patch_chunk(project, chunk, content)
    result: dict[str, Any] = dict(preview)
    edit = propose(
        project,
        "html",
        base,
        proposal,
        tool="patch_html_chunk",
        by="agent",
        conversation=ctx.conversation.id,
    )
    if edit is None:
        return {**result, "pending_review": False}
    return {**result, "pending_review": True, **edit_summary(edit)}


def _disk_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


_CHUNK = {"chunk": {"type": "string", "minLength": 1, "maxLength": 200}}

TOOLS = [
    Tool(
        "read_html_report",
        params({**_CHUNK, **PROJECT_ARG}),
        read_html_report,
        PROJECT_STATES,
        available=html_report_active,
    ),
    Tool(
        "patch_html_chunk",
        params({**_CHUNK, "content": {"type": "string"}, **PROJECT_ARG}, ("chunk", "content")),
        patch_html_chunk,
        PROJECT_STATES,
        available=html_report_active,
        touches=frozenset({TOUCHES_DOCUMENTS}),
    ),
]
