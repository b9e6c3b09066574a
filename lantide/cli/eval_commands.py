"""``lantide eval``: run a question set against a model, or compare two runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.cli.common import Subparsers, add_command
from lantide.errors import UsageError

if TYPE_CHECKING:
    from lantide.evaluation.runner import CaseResult


def register(subparsers: Subparsers) -> None:
    p = add_command(
        subparsers,
        "eval",
        "score a model on a question set (`lantide eval sample`), or compare two "
        "runs (`lantide eval compare A.json B.json`)",
        run_eval,
    )
    p.add_argument(
        "set", help="a question set file, the name of a shipped set (sample), or 'compare'"
    )
    p.add_argument("runs", nargs="*", help="with compare: the two run files")
    p.add_argument("--model", help="the model profile to evaluate (default: the primary)")
    p.add_argument("--repeat", type=int, default=1, help="run every case N times")
    p.add_argument("--case", action="append", help="only this case (repeatable)")
    p.add_argument("--json", action="store_true", help="print the run as JSON")
    p.add_argument(
        "--no-usage",
        action="store_true",
        help="do not ask the server for token usage (for servers that refuse "
        "stream_options); tokens are then counted by Lantide",
    )
    p.add_argument("--html", type=Path, help="also write an HTML page of the run here")
    p.add_argument(
        "--strict",
        action="store_true",
        help="add the strict line (a run passes only when every score it has is full and "
        "it had no error) and exit 1 unless every run passed it",
    )


def run_eval(args: argparse.Namespace) -> int:
    from lantide.evaluation import report

    if args.set == "compare":
        if len(args.runs) != 2:
            raise UsageError(
                "compare needs two run files", hint="lantide eval compare A.json B.json"
            )
        print(report.compare(report.load(Path(args.runs[0])), report.load(Path(args.runs[1]))))
        return 0
    if args.runs:
        raise UsageError(
            f"unexpected arguments: {' '.join(args.runs)}",
            hint="lantide eval SET [--model PROFILE] [--repeat N] [--json]",
        )
    if args.repeat < 1:
        raise UsageError(f"--repeat {args.repeat}: must be at least 1", hint="--repeat 3")
    from lantide.agent.session import model_clients
    from lantide.evaluation.question_set import load_question_set
    from lantide.evaluation.runner import run_set
    from lantide.workspace.settings import load_settings, resolve_profile

    qs = load_question_set(args.set)
    unknown = sorted(set(args.case or []) - {c.id for c in qs.cases})
    if unknown:
        raise UsageError(
            f"no case {', '.join(unknown)} in {qs.name}",
            hint=f"Cases: {', '.join(c.id for c in qs.cases)}.",
        )
    settings = load_settings()
    settings.agent.stream_usage = not args.no_usage  # tokens outside the server's cache
    if args.model:
        if settings.profile(args.model) is None:
            raise UsageError(
                f"no model profile {args.model!r}",
                hint="Profiles: "
                + (
                    ", ".join(p.name for p in settings.profiles)
                    or "none (add one in Settings > Models)"
                ),
            )
        settings.primary_profile = args.model
    model_clients(settings)  # no model configured: a clear error before any case runs
    profile = resolve_profile(settings, "primary")
    label = f"{profile.model} ({profile.name})" if profile else "model"

    def progress(result: CaseResult) -> None:
        mark = {True: "ok", False: "WRONG", None: "-"}[result.correct]
        print(
            f"{result.case} [{result.repeat}]: {mark}"
            + (f" ({result.error})" if result.error else ""),
            file=sys.stderr,
            flush=True,
        )

    results = run_set(
        qs,
        lambda: model_clients(settings),
        repeat=args.repeat,
        settings=settings,
        cases=args.case,
        on_result=progress,
    )
    doc = report.document(qs.name, label, [r.to_dict() for r in results])
    if args.html:
        from lantide.workspace.atomic import atomic_write_text

        atomic_write_text(args.html, report.html_page(doc))
    if args.json:
        import json

        print(json.dumps(doc, indent=1))
    else:
        print(report.table(doc))
    if not args.strict:
        return 0
    line = report.strict_line(doc)
    print(line, file=sys.stderr if args.json else sys.stdout)  # JSON stays parseable
    return 0 if doc["summary"]["strict_passed"] == len(results) else 1
