"""``lantide report check WS PROJECT [--json]``: the Report's numbers against the ledger.

Prints the counts per class and each problem with its line; exits 0 when every number is
cited and matching, 1 when there are problems (or the Report has malformed citations: a
clear error naming the file and lines; nothing is rewritten).
"""

from __future__ import annotations

import argparse
import sys

from lantide.cli.common import Subparsers, add_command, open_workspace
from lantide.cli.output import print_json

REPORT_ACTIONS = ("check",)


def register(subparsers: Subparsers) -> None:
    p = add_command(
        subparsers,
        "report",
        "check the Report's numbers against the ledger steps they cite",
        run_report,
    )
    p.add_argument("action", choices=REPORT_ACTIONS)
    p.add_argument("workspace")
    p.add_argument("project", help="project folder or name")
    p.add_argument("--json", action="store_true", help="print JSON")


def run_report(args: argparse.Namespace) -> int:
    from lantide.agent.report_check import STATUSES, check_project

    ws = open_workspace(args.workspace, lock=False)  # reads only: beside the open app
    try:
        result = check_project(ws, ws.project(args.project))
    finally:
        ws.close()
    if args.json:
        print_json(result.to_dict())
    else:
        counts = ", ".join(f"{result.counts[s]} {s.replace('_', ' ')}" for s in STATUSES)
        print(
            f"{result.path}: {sum(result.counts.values())} numbers, "
            f"{result.citations} citations: {counts}"
        )
        for p in result.problems:
            steps = f" [{', '.join(p['steps'])}]" if p["steps"] else ""
            print(
                f"  line {p['line']}: {p['number']}: {p['status'].replace('_', ' ')}{steps}: "
                f"{p['message']}"
            )
        if result.ok:
            print("every number is cited to a formal step and matches it")
    if not result.ok:
        sys.stderr.write(f"lantide: {len(result.problems)} evidence problem(s) in the Report\n")
    return 0 if result.ok else 1
