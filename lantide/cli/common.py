"""Helpers every command shares: registering, opening the workspace, picking a project."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from lantide.errors import UsageError


def add_command(
    subparsers, name: str, help: str, handler: Callable | None, **kwargs
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help, description=help, **kwargs)
    # --debug is accepted after the command too; SUPPRESS keeps the top-level value.
    parser.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks of errors"
    )
    if handler is not None:
        parser.set_defaults(handler=handler)
    return parser


def open_workspace(path: str | Path, *, lock: bool = True):
    from lantide.workspace.model import Workspace

    return Workspace.open(Path(path), lock=lock)


def pick_project(ws, name: str | None, *, required: bool = True):
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
