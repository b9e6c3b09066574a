"""What the agent's edit tools call (``update_plan``, ``update_report``,
``resolve_annotations``): the edit left pending for the analyst's review
(:mod:`lantide.docs.pending_edits`), or written at once when the workspace's
``agent_edits`` setting says ``apply`` (recorded in the history as accepted by the setting).
The result is the docs layer's usual one (:mod:`lantide.docs.agent_api`) with
``pending_review`` and, when pending, the edit's id and hunks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lantide.docs.pending_edits import (
    APPLY,
    PendingEdit,
    document_file,
    edit_mode,
    edit_summary,
    new_edit_id,
    propose,
)

if TYPE_CHECKING:
    from lantide.workspace.model import Project


def submit_update(
    project: Project, kind: str, content: str, *, by: str = "agent", conversation: str | None
) -> dict[str, Any]:
    """``update_plan`` / ``update_report``: pending (the default) or written at once
    (``agent_edits: apply``). The result is :func:`lantide.docs.agent_api.update_document`'s,
    with ``pending_review`` (and the edit's id and hunks) when it waits for the analyst."""
    from lantide.docs import agent_api
    from lantide.docs.document import open_document

    tool = f"update_{kind}"
    if edit_mode(project.workspace_root) == APPLY:
        before = open_document(project, kind).disk_text
        applied = agent_api.update_document(project, kind, content, by=by)
        _record_applied(project, kind, tool, before)
        return dict(applied)
    base, proposal, result = agent_api.preview_update(project, kind, content)
    edit = propose(project, kind, base, proposal, tool=tool, by=by, conversation=conversation)
    return _pending_result(dict(result), edit)


def submit_resolution(
    project: Project,
    kind: str,
    items: list[dict[str, Any]],
    *,
    by: str = "agent",
    conversation: str | None,
) -> dict[str, Any]:
    """``resolve_annotations``, pending or written at once (as :func:`submit_update`)."""
    from lantide.docs import agent_api
    from lantide.docs.document import open_document

    if edit_mode(project.workspace_root) == APPLY:
        before = open_document(project, kind).disk_text
        applied = agent_api.resolve_annotations(project, kind, items, by=by)
        _record_applied(project, kind, "resolve_annotations", before)
        return dict(applied)
    base, proposal, result = agent_api.preview_resolution(project, kind, items, by=by)
    edit = propose(
        project,
        kind,
        base,
        proposal,
        tool="resolve_annotations",
        by=by,
        conversation=conversation,
        resolve=items,
    )
    return _pending_result(result, edit)


def _record_applied(project: Project, kind: str, tool: str, before: str) -> None:
    from lantide.docs.edit_review import record_applied

    after = document_file(project, kind).read_text(encoding="utf-8")
    record_applied(project, kind, tool, before, after, new_edit_id(project))


def _pending_result(result: dict[str, Any], edit: PendingEdit | None) -> dict[str, Any]:
    if edit is None:  # the same text: nothing to review
        return {**result, "pending_review": False}
    return {**result, "pending_review": True, **edit_summary(edit)}
