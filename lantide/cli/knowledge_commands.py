"""``lantide knowledge``: list, approve, reject, edit, add and remove knowledge entries.

Project entries are numbered 1, 2, 3 … and user entries u1, u2 …, in file order, so
``--approve 3`` acts on the focused (or ``--project``) project's knowledge and
``--approve u2`` on the user's; with ``--user`` plain numbers mean user entries.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from lantide.cli.common import Subparsers, add_command, open_workspace, pick_project
from lantide.cli.output import print_json

if TYPE_CHECKING:
    from pathlib import Path

    from lantide.knowledge import KnowledgeBase
    from lantide.knowledge.base import KnowledgeOverview
    from lantide.knowledge.layer import Expansion
    from lantide.workspace.model import Project, Workspace


def register(subparsers: Subparsers) -> None:
    p = add_command(
        subparsers,
        "knowledge",
        "list the knowledge entries with their status; approve, reject, edit them",
        run_knowledge,
    )
    p.add_argument("workspace")
    p.add_argument("--project", help="project (default: the focused one)")
    p.add_argument(
        "--user", action="store_true", help="user knowledge only; plain numbers mean user entries"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    act = p.add_mutually_exclusive_group()
    act.add_argument("--approve", nargs="+", metavar="N", help="enable Queued entries")
    act.add_argument(
        "--reject",
        nargs="+",
        metavar="N",
        help="delete Queued entries (they are not proposed again)",
    )
    act.add_argument("--remove", nargs="+", metavar="N", help="delete entries, even Enabled ones")
    act.add_argument("--edit", nargs=2, metavar=("N", "TEXT"), help="replace an entry's text")
    act.add_argument("--add", metavar="TEXT", help="add an Enabled entry")
    act.add_argument(
        "--layer", action="store_true", help="print the knowledge layer the agent sees now"
    )
    act.add_argument(
        "--expand",
        metavar="HEADING",
        help="print what expand_knowledge_catalog returns for HEADING",
    )
    p.add_argument(
        "--section",
        default="Rules",
        type=str.title,
        choices=["Rules", "Info"],
        help="section for --add (default: Rules)",
    )
    p.add_argument("--heading", help="### heading for --add (an existing one)")
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        help="token budget for --layer (default: the agent's default)",
    )


def _knowledge_base(
    ws: Workspace, args: argparse.Namespace
) -> tuple[KnowledgeBase, Project | None]:
    from lantide.knowledge import KnowledgeBase

    project = None if args.user else pick_project(ws, args.project, required=False)
    return KnowledgeBase.for_project(project), project


def _apply(kb: KnowledgeBase, args: argparse.Namespace) -> dict[str, Any] | None:
    scope = "user" if args.user else None
    if args.approve:
        return {
            "action": "approve",
            "entries": [e.to_dict() for e in kb.approve_many(args.approve, scope=scope)],
        }
    if args.reject:
        return {
            "action": "reject",
            "entries": [e.to_dict() for e in kb.reject_many(args.reject, scope=scope)],
        }
    if args.remove:
        return {
            "action": "remove",
            "entries": [e.to_dict() for e in kb.remove_many(args.remove, scope=scope)],
        }
    if args.edit:
        ref, text = args.edit
        return {"action": "edit", "entries": [kb.edit(ref, text, scope=scope).to_dict()]}
    if args.add is not None:
        entry = kb.add(args.add, section=args.section, heading=args.heading, scope=scope)
        return {"action": "add", "entries": [entry.to_dict()]}
    return None


_DONE = {
    "approve": "Approved",
    "reject": "Rejected",
    "remove": "Removed",
    "edit": "Edited",
    "add": "Added",
}


def run_knowledge(args: argparse.Namespace) -> int:
    from lantide.knowledge.layer import DEFAULT_BUDGET_TOKENS

    # beside the open app: each edit holds the knowledge file's own lock (compare-and-swap)
    ws = open_workspace(args.workspace, lock=False)
    kb, project = _knowledge_base(ws, args)
    if args.layer:
        layer = kb.layer(args.budget if args.budget is not None else DEFAULT_BUDGET_TOKENS)
        if args.json:
            print_json({"layer": layer.to_dict()})
        else:
            cut = f", {layer.cut_entries} entries cut" if layer.cut_entries else ""
            print(
                f"# knowledge layer: {layer.mode} mode, {layer.tokens} tokens "
                f"(budget {layer.budget_tokens}){cut}"
                f"{', offers expand_knowledge_catalog' if layer.offers_tool else ''}"
            )
            print(layer.text, end="" if layer.text.endswith("\n") else "\n")
        return 0
    if args.expand is not None:
        print_json(kb.expand(args.expand)) if args.json else _print_expand(kb.expand(args.expand))
        return 0
    action = _apply(kb, args)
    state = kb.to_dict()
    if args.json:
        print_json(
            {
                "workspace": str(ws.root),
                "project": project.name if project else None,
                **state,
                "action": action,
            }
        )
        return 0
    if action:
        for e in action["entries"]:
            print(f"{_DONE[action['action']]} {e['ref']}: {_one_line(e['text'])}")
        print()
    _print_listing(state, ws.root)
    return 0


def _one_line(text: str) -> str:
    return " / ".join(line.strip() for line in text.splitlines() if line.strip())


def _where(path: str, root: Path) -> str:
    try:
        from pathlib import Path

        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def _print_listing(state: KnowledgeOverview, root: Path) -> None:
    files = sorted(state["files"], key=lambda f: f["scope"] != "project")
    for i, f in enumerate(files):
        title = "Project knowledge" if f["scope"] == "project" else "User knowledge"
        if not f["exists"]:
            size = "no file yet"
        else:
            size = f"{f['mode']} mode: {f['size_chars']:,} of {f['limit_chars']:,} characters"
        print(f"{title}  {_where(f['path'] or '', root)}  ({size})")
        if f.get("needs_reorganize"):
            print(
                "  too large for flat mode and has no ### headings: it will be grouped "
                "under headings before a new conversation uses it"
            )
        if not f["writable"]:
            print("  read-only: Lantide will not change this file until it is fixed")
        if not f["entries"]:
            print("  (no entries)")
        width = max((len(e["ref"]) for e in f["entries"]), default=1)
        for e in f["entries"]:
            where = e["section"] + (f" › {e['heading']}" if e["heading"] else "")
            status = "QUEUED " if e["status"] == "queued" else "enabled"
            line = f"  {e['ref']:>{width}}  {status}  {where}: {_one_line(e['text'])}"
            src = e.get("source") or {}
            if e["status"] == "queued" and src.get("conversation"):
                line += f"  (proposed in conversation {src['conversation']}"
                line += f", turn {src['turn']})" if src.get("turn") is not None else ")"
            print(line)
        for p in f["problems"]:
            print(f"  {p['severity']}: line {p['line']}: {p['message']}")
        if i < len(files) - 1:
            print()
    queued = sum(1 for f in files for e in f["entries"] if e["status"] == "queued")
    if queued:
        print(f"\n{queued} queued: approve with --approve N, reject with --reject N.")


def _print_expand(result: Expansion) -> None:
    if not result["found"]:
        print(
            f"no heading {result['heading']!r}; headings: {', '.join(result['headings']) or 'none'}"
        )
        return
    for e in result["entries"]:
        where = e["section"] + (f" › {e['heading']}" if e["heading"] else "")
        print(f"[{e['scope']}] {where}: {_one_line(e['text'])}")
    if result["truncated"]:
        print(f"… {result['truncated']} more not shown (token cap)")
