"""``lantide report check``: every number of a Report against the ledger step it cites.

Each number (:func:`lantide.docs.citations.scan_numbers`) is one of:

- ``matching``: cited, and a cell of a cited formal step's result is shown as the number
  (:mod:`lantide.agent.cell_match`: which cell, the column the word after it names, the
  row-count rule), and that step has no unresolved error-severity check (or the analyst
  waived it: the waiver is listed with the number); or the cited step's check is
  unresolved but a later clean formal step of the project recomputes the number
  (``resolved_by``);
- ``check_failed``: cited to a formal step with an unresolved error-severity check
  (:mod:`lantide.agent.check_gate`), with the check's code and message;
- ``not_matching``: cited to a formal step whose result holds no such cell;
- ``exploratory``: cited only to exploratory steps (:mod:`lantide.agent.evidence`);
- ``missing``: cited to a step no ledger of the workspace holds;
- ``uncited``: no citation follows it in its block;
- ``unreadable``: digits or number words the reader could not classify.

With several citations side by side, the number matches when one clean formal step holds
it; otherwise the first problem in the order check_failed, missing, exploratory,
not_matching is reported. A step id found in several conversations' ledgers is the one of
this project, the latest. A malformed citation stops the check with
:class:`MalformedCitationError` (file and lines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from lantide.agent.cell_match import Cell, IndexedStep, index_step, matched_cells
from lantide.agent.check_gate import ledger_steps
from lantide.agent.evidence import FORMAL
from lantide.agent.ledger import Ledger
from lantide.agent.ledger_types import LedgerStep, Waiver
from lantide.docs.citations import ReportNumber, raise_for_malformed, scan_numbers
from lantide.workspace import layout
from lantide.workspace.model import Project, Workspace

MATCHING, NOT_MATCHING, EXPLORATORY, MISSING, UNCITED = (
    "matching",
    "not_matching",
    "exploratory",
    "missing",
    "uncited",
)
CHECK_FAILED, UNREADABLE = "check_failed", "unreadable"
STATUSES = (MATCHING, CHECK_FAILED, NOT_MATCHING, EXPLORATORY, MISSING, UNCITED, UNREADABLE)
_MESSAGES = {
    NOT_MATCHING: "no cell of the cited step's result rounds to {text}",
    EXPLORATORY: "cited to an exploratory step; a Report cites formal steps "
    "(run in executing with a purpose)",
    MISSING: "cited to a step that is in no ledger of the workspace",
    UNCITED: "no step citation follows this number; add [^s:STEP_ID] after it",
    UNREADABLE: "{text} could not be read as a number: write it in digits (e.g. 12%, "
    "1,204) and cite its step",
}


class StepIndex:
    """The steps of every ledger of a workspace, by id (waivers attached)."""

    def __init__(self, steps: list[LedgerStep], project: str | None = None):
        self._by_id: dict[str, IndexedStep] = {}
        ordered = sorted(steps, key=lambda s: (s.get("project") == project, str(s.get("at") or "")))
        for step in ordered:
            self._by_id[step["step_id"]] = index_step(step)
        # formal steps of each project, oldest first: a later clean one may recompute a number
        self._formal: dict[Any, list[IndexedStep]] = {}
        for step in sorted(steps, key=lambda s: str(s.get("at") or "")):
            indexed = self._by_id.get(step["step_id"])
            if indexed is not None and indexed.step is step and indexed.kind == FORMAL:
                self._formal.setdefault(step.get("project"), []).append(indexed)

    @classmethod
    def of_workspace(cls, ledger_dir: Path, project: str | None = None) -> StepIndex:
        steps: list[LedgerStep] = []
        for path in layout.log_paths(Path(ledger_dir)):
            steps.extend(ledger_steps(Ledger(path.parent, path.stem)))
        return cls(steps, project)

    def get(self, step_id: str) -> IndexedStep | None:
        return self._by_id.get(step_id)

    def kinds(self) -> dict[str, str]:
        return {step_id: s.kind for step_id, s in self._by_id.items()}

    def badges(self) -> dict[str, str]:
        """step id -> what its citations show: ``check_failed`` for a formal step with an
        unresolved error check, else its kind."""
        return {
            step_id: CHECK_FAILED if s.kind == FORMAL and s.failed else s.kind
            for step_id, s in self._by_id.items()
        }

    def drop(self, step_id: str) -> None:
        self._by_id.pop(step_id, None)

    def recomputed(
        self, number: ReportNumber, failed: IndexedStep, cells: list[Cell]
    ) -> tuple[IndexedStep, list[Cell]] | None:
        """A later formal step of the same project without an unresolved error check whose
        result holds ``number`` (in a column of the same name, when the failed step's
        cell is known): it recomputed the number without the error."""
        columns = {c.get("column") for c in cells if c.get("column")}
        after = str(failed.step.get("at") or "")
        for later in self._formal.get(failed.step.get("project"), []):
            if later is failed or later.failed or str(later.step.get("at") or "") < after:
                continue
            if self._by_id.get(later.step_id) is not later:
                continue  # an older step that shares its id with a newer one
            found = matched_cells(number, later)
            if columns:
                found = [c for c in found if c.get("column") in columns]
            if found:
                return later, found
        return None


@dataclass
class Verdict:
    """What one number is, and why."""

    status: str
    steps: list[str] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    checks: list[FailedCheck] = field(default_factory=list)  # check_failed: the checks
    waivers: list[Waiver] = field(default_factory=list)  # waivers the match rests on
    resolved_by: str | None = None


class FailedCheck(TypedDict):
    """An unresolved error check a number rests on, and its step."""

    step: str
    code: str
    message: str


def _failed_checks(step: IndexedStep) -> list[FailedCheck]:
    return [
        {"step": step.step_id, "code": str(c.get("code")), "message": str(c.get("message") or "")}
        for c in step.failed
    ]


def classify_number(number: ReportNumber, index: StepIndex) -> Verdict:
    if number.unreadable:
        return Verdict(UNREADABLE)
    if not number.cited:
        return Verdict(UNCITED)
    found = [(step_id, index.get(step_id)) for step_id in number.cited]
    formal = [(i, s) for i, s in found if s is not None and s.kind == FORMAL]
    cells = {i: matched_cells(number, s) for i, s in formal}
    clean = [(i, s) for i, s in formal if cells[i] and not s.failed]
    if clean:
        return Verdict(
            MATCHING,
            [i for i, _s in clean],
            [c for i, _s in clean for c in cells[i]],
            waivers=[w for _i, s in clean for w in s.waivers],
        )
    failed = [(i, s) for i, s in formal if s.failed]
    for i, s in failed:
        later = index.recomputed(number, s, cells[i]) if cells[i] else None
        if later is not None:
            step, recomputed = later
            return Verdict(MATCHING, [step.step_id], recomputed, resolved_by=step.step_id)
    if failed:
        return Verdict(
            CHECK_FAILED,
            [i for i, _s in failed],
            [c for i, _s in failed for c in cells[i]],
            [c for _i, s in failed for c in _failed_checks(s)],
        )
    if any(s is None for _i, s in found):
        return Verdict(MISSING, [i for i, s in found if s is None])
    if not formal:
        return Verdict(EXPLORATORY, list(number.cited))
    return Verdict(NOT_MATCHING, [i for i, _s in formal])


def classify(number: ReportNumber, index: StepIndex) -> tuple[str, list[str]]:
    """(status, steps) of one number (see :func:`classify_number` for the whole verdict)."""
    verdict = classify_number(number, index)
    return verdict.status, verdict.steps


def _message(number: ReportNumber, verdict: Verdict) -> str:
    if verdict.status == CHECK_FAILED:
        checks = "; ".join(f"{c['code']} on {c['step']}: {c['message']}" for c in verdict.checks)
        return (
            f"cited to a step with an unresolved error check ({checks}); the number is no "
            "finding until a corrected query recomputes it or the analyst waives the check"
        )
    return _MESSAGES[verdict.status].format(text=number.text)


@dataclass
class CheckResult:
    path: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    problems: list[NumberEntry] = field(default_factory=list)
    results: list[NumberEntry] = field(default_factory=list)  # every number
    citations: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def waived(self) -> list[NumberEntry]:
        """The numbers that match only because the analyst waived a check."""
        return [r for r in self.results if r.get("waivers")]

    def to_dict(self) -> CheckSummary:
        return {
            "report": self.path,
            "ok": self.ok,
            "numbers": sum(self.counts.values()),
            "citations": self.citations,
            "counts": self.counts,
            "problems": self.problems,
            "results": self.results,
        }


class NumberEntry(TypedDict):
    """One number of a Report and its class (``lantide report check``, a refusal)."""

    line: int
    number: str  # as written
    status: str  # one of STATUSES
    steps: list[str]  # the steps it cites (a match: the ones that hold it)
    cells: list[Cell]
    several_cells: NotRequired[bool]
    checks: NotRequired[list[FailedCheck]]  # check_failed: the checks
    waivers: NotRequired[list[Waiver]]  # waivers the match rests on
    resolved_by: NotRequired[str]  # the later step that recomputed it
    message: NotRequired[str]  # what is wrong and what to do


class CheckSummary(TypedDict):
    """:meth:`CheckResult.to_dict`."""

    report: str
    ok: bool
    numbers: int
    citations: int
    counts: dict[str, int]
    problems: list[NumberEntry]
    results: list[NumberEntry]


def _entry(number: ReportNumber, verdict: Verdict) -> NumberEntry:
    entry: NumberEntry = {
        "line": number.line,
        "number": number.text,
        "status": verdict.status,
        "steps": verdict.steps,
        "cells": verdict.cells,
    }
    if len(verdict.cells) > 1:
        entry["several_cells"] = True
    if verdict.checks:
        entry["checks"] = verdict.checks
    if verdict.waivers:
        entry["waivers"] = verdict.waivers
    if verdict.resolved_by:
        entry["resolved_by"] = verdict.resolved_by
    if verdict.status != MATCHING:
        entry["message"] = _message(number, verdict)
    return entry


def check_text(
    text: str,
    index: StepIndex,
    path: str = "report.md",
    only_lines: set[int] | None = None,
    tokens: list[Any] | None = None,
) -> CheckResult:
    """Check a Report's text; ``only_lines`` (1-based) keeps the problems of those lines;
    ``tokens``: the text already parsed (the HTML Report parses once for both)."""
    scan = scan_numbers(text, tokens)
    raise_for_malformed(scan, path)
    result = CheckResult(path, citations=len(scan.citations))
    for number in scan.numbers:
        verdict = classify_number(number, index)
        result.counts[verdict.status] += 1
        entry = _entry(number, verdict)
        result.results.append(entry)
        if verdict.status != MATCHING and (only_lines is None or number.line in only_lines):
            result.problems.append(entry)
    return result


def read_report(project: Project) -> str:
    """The project's Report as it is on disk; a clear error when it does not exist."""
    from lantide.errors import MissingFileError

    path = project.report_path
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingFileError(path, "Report", hint="Write the Report first.") from None


def check_project(workspace: Workspace, project: Project) -> CheckResult:
    """The check of a project's Report as it is on disk."""
    text = read_report(project)
    index = StepIndex.of_workspace(workspace.ledger_dir, project.dirname)
    return check_text(text, index, str(project.report_path))


def new_lines(old_text: str, new_text: str) -> set[int]:
    """1-based lines of ``new_text`` that are not lines of ``old_text`` (what an edit wrote)."""
    old = set(old_text.splitlines())
    return {i for i, line in enumerate(new_text.splitlines(), 1) if line not in old}


def citation_notes(result: CheckResult, limit: int = 8) -> dict[str, str]:
    """step id -> what hovering its citation in the preview says: each number cited to it,
    its class and the cell it matched (or the failed check, or the waiver)."""
    from lantide.agent.cell_match import describe_cell
    from lantide.agent.check_gate import describe_waiver

    notes: dict[str, list[str]] = {}
    for r in result.results:
        for step_id in r["steps"]:
            cells = [c for c in r["cells"] if c.get("step") == step_id]
            what = r["status"].replace("_", " ")
            if cells:
                what += ": " + "; ".join(describe_cell(c).split(": ", 1)[1] for c in cells[:3])
                what += f" (+{len(cells) - 3} more cells)" if len(cells) > 3 else ""
            what += "".join(
                f"; {c['code']}: {c['message']}"
                for c in r.get("checks") or []
                if c.get("step") == step_id
            )
            what += "".join(
                f"; {describe_waiver(w)}" for w in r.get("waivers") or [] if w["step_id"] == step_id
            )
            notes.setdefault(step_id, []).append(f"line {r['line']}: {r['number']} {what}")
    return {
        step_id: "\n".join(lines[:limit])
        + (f"\n… and {len(lines) - limit} more" if len(lines) > limit else "")
        for step_id, lines in notes.items()
    }


def format_problems(result: CheckResult, limit: int = 10) -> str:
    shown = [
        f"line {p['line']}: {p['number']} {p['status']}"
        + (f" ({', '.join(p['steps'])})" if p["steps"] else "")
        + "".join(f" [{c['code']}: {c['message']}]" for c in p.get("checks") or [])
        for p in result.problems[:limit]
    ]
    more = len(result.problems) - limit
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
