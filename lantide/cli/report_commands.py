"""``lantide report check|html WS PROJECT``: the Report's evidence, and the HTML Report.

``check [--json]`` prints the counts per class and each problem with its line; exits 0
when every number is cited and matching, 1 when there are problems (or the Report has
malformed citations: a clear error naming the file and lines; nothing is rewritten).

``waive STEP CHECK --reason TEXT [--by NAME] [--json]`` records the analyst's waiver of an
error-severity result check of a step (:func:`lantide.agent.check_gate.write_waiver`): the
numbers cited to it match again, with the waiver shown. An unknown step or check is refused.

``html [--overwrite-edits] [--json]`` writes ``projects/P/report.html``
(:mod:`lantide.agent.report_html`): chunks edited since the last publish are kept when their
Markdown is unchanged; otherwise they are named, nothing is written and the exit code is 1,
unless ``--overwrite-edits``.
"""

from __future__ import annotations

import argparse
import sys

from lantide.cli.common import Subparsers, add_command, open_workspace
from lantide.cli.output import print_json

REPORT_ACTIONS = ("check", "html", "waive")


def register(subparsers: Subparsers) -> None:
    p = add_command(
        subparsers,
        "report",
        "check the Report's numbers against the ledger steps they cite (check), write "
        "the self-contained HTML Report (html), or waive a step's check (waive)",
        run_report,
    )
    p.add_argument("action", choices=REPORT_ACTIONS)
    p.add_argument("workspace")
    p.add_argument("project", help="project folder or name")
    p.add_argument("step", nargs="?", help="waive: the step id whose check is waived")
    p.add_argument("check", nargs="?", help="waive: the check's code, e.g. JOIN_FAN_OUT")
    p.add_argument("--reason", help="waive: why the check does not apply (kept in the ledger)")
    p.add_argument("--by", help="waive: who waives it (default: the user name)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--overwrite-edits",
        action="store_true",
        help="html: regenerate chunks edited in report.html even when their Markdown changed",
    )


def run_report(args: argparse.Namespace) -> int:
    if args.action != "waive" and (args.step or args.check or args.reason or args.by):
        from lantide.errors import UsageError

        raise UsageError(
            f"report {args.action} takes WORKSPACE and PROJECT only",
            hint="STEP, CHECK, --reason and --by belong to lantide report waive.",
        )
    if args.action == "html":
        return run_report_html(args)
    if args.action == "waive":
        return run_report_waive(args)
    from lantide.agent.cell_match import describe_cell
    from lantide.agent.check_gate import describe_waiver
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
        for r in result.results:
            if r["status"] != "matching":
                continue
            for waiver in r.get("waivers") or []:
                print(f"  line {r['line']}: {r['number']}: matching, {describe_waiver(waiver)}")
            if r.get("resolved_by"):
                print(
                    f"  line {r['line']}: {r['number']}: matching, recomputed without the "
                    f"error by step {r['resolved_by']}"
                )
            if r.get("several_cells"):
                cells = "; ".join(describe_cell(c) for c in r["cells"][:5])
                more = f" and {len(r['cells']) - 5} more" if len(r["cells"]) > 5 else ""
                print(
                    f"  line {r['line']}: {r['number']}: matches {len(r['cells'])} cells "
                    f"({cells}{more})"
                )
        if result.ok:
            print("every number is cited to a formal step and matches it")
    if not result.ok:
        sys.stderr.write(f"lantide: {len(result.problems)} evidence problem(s) in the Report\n")
    return 0 if result.ok else 1


def run_report_waive(args: argparse.Namespace) -> int:
    from lantide.agent.check_gate import describe_waiver, write_waiver
    from lantide.errors import UsageError

    if not args.step or not args.check or not args.reason:
        raise UsageError(
            "report waive needs STEP, CHECK and --reason",
            hint="lantide report waive WORKSPACE PROJECT STEP CHECK --reason 'why it does not "
            "apply'",
        )
    ws = open_workspace(args.workspace, lock=False)  # appends one ledger line: beside the app
    try:
        waiver = write_waiver(
            ws, ws.project(args.project), args.step, args.check, args.reason, args.by
        )
    finally:
        ws.close()
    if args.json:
        print_json({"waiver": waiver})
    else:
        print(describe_waiver(waiver))
    return 0


def run_report_html(args: argparse.Namespace) -> int:
    from lantide.agent.report_html import publish_html

    ws = open_workspace(args.workspace)  # it writes a project file: not beside the app
    try:
        result = publish_html(ws, ws.project(args.project), overwrite=args.overwrite_edits)
    finally:
        ws.close()
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"{result.path}: {result.chunks} chunks, {result.bytes:,} bytes")
    if result.kept_edits:
        print(f"  kept edited chunk(s): {', '.join(result.kept_edits)}")
    if result.overwritten_edits:
        print(f"  overwrote edited chunk(s): {', '.join(result.overwritten_edits)}")
    if not result.check_ok:
        print("  the evidence check has problems (see the header; lantide report check)")
    for failed in result.chart_errors:  # published; the chart's place shows the error
        sys.stderr.write(f"lantide: chart not drawn ({failed['code']}): {failed['message']}\n")
    return 0
