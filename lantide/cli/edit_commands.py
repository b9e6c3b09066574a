"""``lantide edits``: the agent's pending edits of a project's Plan and Report, reviewed
without the app (DESIGN.md section 9; the rules are :mod:`lantide.docs.edit_review`'s).

```
lantide edits WS PROJECT [--json]                   list them, each hunk as a unified diff
lantide edits WS PROJECT accept ID [HUNK ...]       accept hunks (none named: every pending one)
lantide edits WS PROJECT reject ID [HUNK ...]       reject hunks (none named: every pending one)
```

A headless ``lantide chat`` has nobody to review its edits: they wait here (or in the app)
unless the workspace sets ``"agent_edits": "apply"`` in ``.lantide/workspace.json``. A
pending edit file that cannot be read is named on stderr and left as it is (exit 1 after
the listing).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from lantide.cli.common import Subparsers, add_command, open_workspace
from lantide.cli.output import print_json
from lantide.errors import UsageError
from lantide.untrusted import clean_text

if TYPE_CHECKING:
    from lantide.workspace.model import Project


def register(subparsers: Subparsers) -> None:
    p = add_command(
        subparsers,
        "edits",
        "list, accept or reject the agent's pending edits of a project's Plan and Report",
        run_edits,
    )
    p.add_argument("workspace")
    p.add_argument("project", help="project folder or name")
    p.add_argument("action", nargs="?", choices=["accept", "reject"], help="decide an edit's hunks")
    p.add_argument("edit_id", nargs="?", metavar="ID", help="the edit (as listed)")
    p.add_argument(
        "hunks",
        nargs="*",
        type=int,
        metavar="HUNK",
        help="hunk numbers of the edit (none: every pending hunk)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def run_edits(args: argparse.Namespace) -> int:
    if args.action is None and (args.edit_id is not None or args.hunks):
        raise UsageError("name the decision first: accept ID [HUNK ...] or reject ID [HUNK ...]")
    if args.action is not None and args.edit_id is None:
        raise UsageError(
            f"{args.action} needs the edit's id",
            hint=f"List the pending edits: lantide edits {args.workspace} {args.project}",
        )
    ws = open_workspace(args.workspace)
    try:
        project = ws.project(args.project)
        if args.action is not None:
            return _decide(project, args)
        return _list(project, args.json)
    finally:
        ws.close()


def _decide(project: Project, args: argparse.Namespace) -> int:
    from lantide.docs.edit_review import decide

    decision = decide(project, args.edit_id, args.action, args.hunks or None)
    if args.json:
        print_json(decision.to_dict())
        return 0
    verb = "accepted" if args.action == "accept" else "rejected"
    hunks = ", ".join(map(str, decision.hunks)) or "no hunks"
    rest = "closed" if decision.closed else "other hunks still pending"
    print(f"{verb} {hunks} of edit {decision.edit_id} ({decision.document}); {rest}")
    return 0


def _list(project: Project, as_json: bool) -> int:
    from lantide.docs.pending_edits import describe, list_edits

    edits, problems = list_edits(project)
    listed = [describe(e) for e in edits]
    if as_json:
        out: dict[str, Any] = {
            "project": project.dirname,
            "edits": listed,
            "problems": [
                {"code": p.code, "message": p.message, "hint": p.hint, "path": str(p.path)}
                for p in problems
            ],
        }
        print_json(out)
    else:
        if not listed:
            print(f"no pending edits in {project.dirname}")
        for edit in listed:
            _print_edit(edit)
        for problem in problems:
            sys.stderr.write(f"lantide: {problem.message}\n  {problem.hint}\n")
    return 1 if problems else 0


def _print_edit(edit: dict[str, Any]) -> None:
    pending = [h for h in edit["hunks"] if h["status"] == "pending"]
    whole = " (decided whole: it resolves annotations)" if edit["whole_only"] else ""
    count = f"{len(pending)} of {len(edit['hunks'])} hunks pending" if edit["hunks"] else "no text"
    print(
        f"edit {edit['id']}  {edit['document']}  {edit['tool']} by {edit['by']} at "
        f"{edit['at']}: {count}{whole}"
    )
    if edit["resolve"]:
        print(f"  resolves annotations {', '.join(map(str, edit['resolve']))}")
    sys.stdout.write(clean_text(edit["diff"]))
    print()
