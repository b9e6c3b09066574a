"""The HTML Report's tools, offered while ``report.html`` is the active tab.

``read_html_report(chunk?)`` lists the chunks of ``projects/P/report.html`` (id, title,
line, whether edited since published, a text preview) or returns one chunk's content;
``patch_html_chunk(chunk, content)`` replaces one chunk's content, refusing scripts,
event-handler attributes, external URLs and unbalanced markup
(:mod:`lantide.agent.report_html`, :mod:`lantide.docs.html_markup`). A tab holding unsaved
edits of the file is never overwritten.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from lantide.agent.app_state import is_html_report
from lantide.agent.events import TOUCHES_DOCUMENTS, DocumentChanged
from lantide.agent.report_html import html_path, patch_chunk, read_chunks
from lantide.agent.tools.context import ToolContext
from lantide.agent.tools.registry import (
    PROJECT_ARG,
    PROJECT_STATES,
    Tool,
    ToolError,
    params,
    tool_error,
)


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
    result = patch_chunk(project, args["chunk"], args["content"])
    ctx.emit(DocumentChanged(rel, project.dirname))
    return {**result, "path": rel, **ctx.app.tab_state(rel)}


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
