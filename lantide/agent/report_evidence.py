"""The evidence rules the agent's Report edits and its move to ``report_review`` obey.

- ``update_report``: every number on a line the edit writes (a line not already in the
  Report on disk: the analyst's own lines are theirs) must be cited to a formal step whose
  result holds it (:mod:`lantide.agent.report_check`); a malformed citation anywhere is
  refused too. A refusal is a tool error listing the lines; nothing is written.
- ``set_project_status`` to ``report_review``: the whole Report must check clean; the
  reflection step runs this before the status moves (:mod:`lantide.agent.reflection`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lantide.agent.report_check import (
    CheckResult,
    NumberEntry,
    StepIndex,
    check_text,
    format_problems,
    new_lines,
)
from lantide.agent.tools.registry import ToolError, tool_error
from lantide.docs.citations import MalformedCitationError
from lantide.templates import render_prompt

if TYPE_CHECKING:
    from lantide.agent.tools.context import ToolContext
    from lantide.workspace.model import Project, Workspace


class EvidenceRefusal(ToolError):
    """``update_report`` refused by the evidence rule: the numbers that broke it."""

    problems: list[NumberEntry]


def _index(ctx: ToolContext, project: Project) -> StepIndex:
    return StepIndex.of_workspace(ctx.workspace.ledger_dir, project.dirname)


def report_evidence_refusal(
    ctx: ToolContext, project: Project, content: str
) -> EvidenceRefusal | ToolError | None:
    path = ctx.relpath(project.report_path)
    try:
        old = project.report_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        old = ""
    try:
        result = check_text(content, _index(ctx, project), path, only_lines=new_lines(old, content))
    except MalformedCitationError as exc:
        return tool_error(exc.code, exc.message, exc.hint)
    if result.ok:
        return None
    return {
        **tool_error(
            "REPORT_NUMBERS_UNCITED"
            if all(p["status"] == "uncited" for p in result.problems)
            else "REPORT_EVIDENCE",
            f"update_report refused, the Report was not changed: {format_problems(result)}",
            render_prompt("notes/report_evidence.md.j2").strip(),
        ),
        "problems": result.problems[:20],
    }


def report_review_check(workspace: Workspace, project: Project) -> CheckResult | str:
    """The whole Report's check, or the malformed-citation message."""
    try:
        text = project.report_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"the Report cannot be read: {exc}"
    try:
        return check_text(
            text,
            StepIndex.of_workspace(workspace.ledger_dir, project.dirname),
            str(project.report_path),
        )
    except MalformedCitationError as exc:
        return exc.message
