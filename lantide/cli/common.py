"""Helpers every command shares: registering, opening the workspace, picking a project."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, overload

from lantide.errors import UsageError

if TYPE_CHECKING:
    from lantide.workspace.model import Project, Workspace

# What ``register(subparsers)`` of each command module receives (quoted: the class is not
# subscriptable at run time)
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

# A command's handler: the parsed arguments in, the exit code out (None reads as 0)
Handler = Callable[[argparse.Namespace], int | None]


def add_command(
    subparsers: Subparsers, name: str, help: str, handler: Handler | None, **kwargs: Any
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help, description=help, **kwargs
    )
    # --debug is accepted after the command too; SUPPRESS keeps the top-level value.
    parser.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks of errors"
    )
    if handler is not None:
        parser.set_defaults(handler=handler)
    return parser


def open_workspace(path: str | Path, *, lock: bool = True) -> Workspace:
    from lantide.workspace.model import Workspace

    return Workspace.open(Path(path), lock=lock)


@overload
def pick_project(ws: Workspace, name: str | None, *, required: Literal[True] = True) -> Project: ...


@overload
def pick_project(ws: Workspace, name: str | None, *, required: bool) -> Project | None: ...


def pick_project(ws: Workspace, name: str | None, *, required: bool = True) -> Project | None:
    """The named project, else the focused one; a clear usage error when neither exists."""
    if name:
        return ws.project(name)
    project = ws.focused_project()
    if project is None and required:
        names = ", ".join(p.dirname for p in ws.list_projects()) or "none yet"
        raise UsageError(
            "no project given and none is focused", hint=f"Pass --project NAME (projects: {names})."
        )
    return project
