"""The project a query call is about: a :class:`Project`, its folder name, or the focused one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from lantide.errors import FileProblem
from lantide.query.errors import QueryError

if TYPE_CHECKING:
    from lantide.workspace.model import Project, Workspace

ProjectArg = Union["Project", str, None]


def find_project(workspace: Workspace, project: ProjectArg, *, required: bool) -> Project | None:
    """The project named (re-read from disk), else the focused one; ``required``: none
    focused is an error (``PROJECT_REQUIRED``) instead of None."""
    from lantide.workspace.model import Project

    if isinstance(project, Project):
        return workspace.project(project.dirname)
    if project:
        return workspace.project(str(project))
    focused = workspace.focused_project()
    if focused is None and required:
        raise QueryError(
            "no project given and none is focused",
            code="PROJECT_REQUIRED",
            hint="Name the project (or focus one first).",
        )
    return focused


def required_project(workspace: Workspace, project: ProjectArg) -> Project:
    """:func:`find_project` for an operation that needs a project (SQL tabs)."""
    found = find_project(workspace, project, required=True)
    assert found is not None  # required=True raised otherwise
    return found


def project_or_unreadable(
    workspace: Workspace, project: ProjectArg
) -> tuple[Project | None, str | None]:
    """(project, None), or (None, a warning) when no project was named and the focused
    one's project.json cannot be read: a query on the data does not need the project,
    so one broken file does not stop it; the query runs outside any project."""
    if project:
        return find_project(workspace, project, required=False), None
    try:
        return find_project(workspace, None, required=False), None
    except FileProblem as exc:
        return None, (
            f"the focused project cannot be read ({exc.message}); this query ran "
            "outside any project"
        )
