"""``lantide``, ``lantide gui``, ``lantide init`` and ``lantide project``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.cli.common import Subparsers, add_command, open_workspace
from lantide.cli.output import print_json

if TYPE_CHECKING:
    from lantide.workspace.model import Project


def register(subparsers: Subparsers) -> None:
    p = add_command(subparsers, "gui", "open the desktop app on WORKSPACE", run_gui)
    p.add_argument("workspace", nargs="?", help="workspace folder (default: the last one)")

    p = add_command(subparsers, "init", "create a workspace", run_init)
    p.add_argument("workspace", help="folder to create the workspace in")
    p.add_argument("--sample", action="store_true", help="add sample data and a sample project")
    p.add_argument("--name", help="workspace name (default: the folder name)")

    p = add_command(
        subparsers, "project", "list, create, rename, archive projects; set status", run_project
    )
    # WORKSPACE ACTION, or ACTION WORKSPACE as `lantide tab` and `lantide connection` read
    p.add_argument("workspace", metavar="WORKSPACE")
    p.add_argument("action", metavar="ACTION", help=" | ".join(PROJECT_ACTIONS))
    p.add_argument(
        "names", nargs="*", help="project name(s); for rename OLD NEW; for status NAME STATUS"
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def run_init(args: argparse.Namespace) -> int:
    if args.sample:
        from lantide.workspace.sample import create_sample

        ws = create_sample(Path(args.workspace))
        if args.name:
            ws.update_settings(lambda settings: settings.__setitem__("name", args.name))
    else:
        from lantide.workspace.model import Workspace

        ws = Workspace.create(Path(args.workspace), name=args.name)
    print(f"Created workspace {ws.name!r} in {ws.root}")
    if args.sample:
        print("  sample data in data/, sample project 'q3-churn' in projects/")
    return 0


def _launch(workspace: Path) -> int:
    from lantide.ui.app import run_app

    return run_app(workspace)


def run_gui(args: argparse.Namespace) -> int:
    if args.workspace:
        ws = open_workspace(args.workspace, lock=False)  # fail early with a clear error
        return _launch(ws.root)
    return run_default_gui(args)


def run_default_gui(args: argparse.Namespace) -> int:
    """No command: the last workspace, or the sample workspace (created on first run)."""
    from lantide.workspace import paths
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings_or_defaults

    settings, _problem = load_settings_or_defaults()  # the app reports a broken file
    for recent in settings.recent_workspaces:
        if Workspace.is_workspace(Path(recent)):
            return _launch(Path(recent))
    sample = paths.sample_workspace_dir()
    if not Workspace.is_workspace(sample):
        from lantide.workspace.sample import ensure_sample_workspace

        sys.stderr.write(f"lantide: creating the sample workspace in {sample}\n")
        ensure_sample_workspace(sample)
    return _launch(sample)


PROJECT_ACTIONS = (
    "list",
    "create",
    "rename",
    "archive",
    "unarchive",
    "status",
    "focus",
    "approve-plan",
    "withdraw-approval",
)


def _note_open_annotations(project: Project) -> None:
    """The app asks before approving with annotations open; the command says so after."""
    from lantide.docs.document import open_document
    from lantide.errors import LantideError
    from lantide.workspace.lifecycle import approval_concerns

    try:
        count = open_document(project, "plan").open_count
    except LantideError:  # a sidecar that does not read: approving did not need it
        return
    for concern in approval_concerns(count, unsaved_edits=False):
        sys.stderr.write(f"lantide: note: approved while {concern}\n")


def run_project(args: argparse.Namespace) -> int:
    from lantide.errors import LantideError, UsageError

    if args.action not in PROJECT_ACTIONS and args.workspace in PROJECT_ACTIONS:
        args.workspace, args.action = args.action, args.workspace
    if args.action not in PROJECT_ACTIONS:
        raise UsageError(
            f"unknown project action {args.action!r}",
            hint=f"Use one of: {', '.join(PROJECT_ACTIONS)}, e.g. "
            f"lantide project {args.workspace} list",
        )
    ws = open_workspace(args.workspace)
    try:
        names = args.names
        need = {
            "list": 0,
            "create": 1,
            "rename": 2,
            "archive": 1,
            "unarchive": 1,
            "status": 2,
            "focus": 1,
            "approve-plan": 1,
            "withdraw-approval": 1,
        }[args.action]
        if len(names) != need:
            raise UsageError(f"'project {args.action}' takes {need} name(s), got {len(names)}")
        if args.action == "create":
            ws.create_project(names[0])
        elif args.action == "rename":
            ws.rename_project(names[0], names[1])
        elif args.action in ("archive", "unarchive"):
            ws.archive_project(names[0], archived=args.action == "archive")
        elif args.action == "status":
            ws.project(names[0]).set_status(names[1])
        elif args.action == "focus":
            ws.focus_project(names[0])
        elif args.action == "approve-plan":  # the analyst's approval: only from here and the app
            project = ws.project(names[0])
            project.approve_plan()
            _note_open_annotations(project)
        elif args.action == "withdraw-approval":  # the analyst's too; kept in the history
            ws.project(names[0]).withdraw_approval()
        problems: list[tuple[str, LantideError]] = []
        projects = ws.list_projects(include_archived=True, problems=problems)
        focused = ws.focused_project_name
        if args.json:
            print_json(
                {
                    "projects": [p.to_dict() for p in projects],
                    "focused": focused,
                    "problems": [
                        {"dir": d, "code": e.code, "message": e.message, "hint": e.hint}
                        for d, e in problems
                    ],
                }
            )
        else:
            for p in projects:
                mark = "*" if p.dirname == focused else " "
                extra = " (archived)" if p.is_archived else ""
                approval = p.approval()
                if approval["approved"]:
                    extra += (
                        " (Plan changed since approval)"
                        if approval["changed_since_approval"]
                        else f" (Plan approved {approval.get('at')})"
                    )
                print(f"{mark} {p.dirname:<24} {p.status:<13} {p.name}{extra}")
            for dirname, exc in problems:  # each broken project alone, the list goes on
                sys.stderr.write(f"lantide: project {dirname!r} not listed: {exc.message}\n")
                if exc.hint:
                    sys.stderr.write(f"  {exc.hint}\n")
    finally:
        ws.close()
    return 0
