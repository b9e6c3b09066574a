"""``lantide report check``: every number of a Report against the ledger step it cites.

Each number (:func:`lantide.docs.citations.scan_numbers`) is one of:

- ``matching``: cited, and a value of the cited step's result (its stored
  ``result_values``, row count included) rounds to the number as written: to its
  decimals, read as a fraction or as a percentage for ``%``, divided by its scale word
  (``k``, ``M``, ``million`` ...); without a written sign the sign is not compared (prose
  says "fell 4%" of -0.04);
- ``not_matching``: cited to a formal step whose result holds no such value;
- ``exploratory``: cited only to exploratory steps (:mod:`lantide.agent.evidence`);
- ``missing``: cited to a step no ledger of the workspace holds;
- ``uncited``: no citation follows it in its block.

With several citations side by side, the number matches when one formal step holds it;
otherwise the first problem in the order missing, exploratory, not_matching is reported.
A step id found in several conversations' ledgers is the one of this project, the latest.
A malformed citation stops the check with :class:`MalformedCitationError` (file and lines).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lantide.agent.evidence import FORMAL, as_number, step_kind
from lantide.agent.ledger import Ledger
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
STATUSES = (MATCHING, NOT_MATCHING, EXPLORATORY, MISSING, UNCITED)
_MESSAGES = {
    NOT_MATCHING: "no value of the cited step's result rounds to {text}",
    EXPLORATORY: "cited to an exploratory step; a Report cites formal steps "
    "(run in executing with a purpose)",
    MISSING: "cited to a step that is in no ledger of the workspace",
    UNCITED: "no step citation follows this number; add [^s:STEP_ID] after it",
}


@dataclass
class IndexedStep:
    step: dict[str, Any]
    kind: str
    values: list[float]  # sorted


class StepIndex:
    """The steps of every ledger of a workspace, by id."""

    def __init__(self, steps: list[dict[str, Any]], project: str | None = None):
        self._by_id: dict[str, IndexedStep] = {}
        for step in sorted(
            steps, key=lambda s: (s.get("project") == project, str(s.get("at") or ""))
        ):
            values = [as_number(v) for v in step.get("result_values") or []]
            self._by_id[step["step_id"]] = IndexedStep(
                step, step_kind(step), sorted(v for v in values if v is not None)
            )

    @classmethod
    def of_workspace(cls, ledger_dir: Path, project: str | None = None) -> StepIndex:
        steps: list[dict[str, Any]] = []
        for path in layout.log_paths(Path(ledger_dir)):
            steps.extend(Ledger(path.parent, path.stem).steps())
        return cls(steps, project)

    def get(self, step_id: str) -> IndexedStep | None:
        return self._by_id.get(step_id)

    def kinds(self) -> dict[str, str]:
        return {step_id: s.kind for step_id, s in self._by_id.items()}

    def drop(self, step_id: str) -> None:
        self._by_id.pop(step_id, None)


def _holds(values: list[float], low: float, high: float) -> bool:
    i = bisect.bisect_left(values, low)
    return i < len(values) and values[i] <= high


def value_matches(number: ReportNumber, values: list[float]) -> bool:
    """Whether some value of ``values`` (sorted) is shown as ``number`` after rounding."""
    # half a unit of the last shown digit, and float noise (relative, far below a digit)
    tolerance = 0.5 * 10**-number.decimals + 1e-12 * max(1.0, abs(number.value))
    targets = [number.value] if number.signed else [abs(number.value), -abs(number.value)]
    factors = [number.scale] + ([number.scale / 100] if number.percent else [])
    for target in targets:
        for factor in factors:  # the value as stored = shown × factor
            low, high = sorted(((target - tolerance) * factor, (target + tolerance) * factor))
            if _holds(values, low, high):
                return True
    return False


def classify(number: ReportNumber, index: StepIndex) -> tuple[str, list[str]]:
    if not number.cited:
        return UNCITED, []
    found = [index.get(step_id) for step_id in number.cited]
    if any(s is not None and s.kind == FORMAL and value_matches(number, s.values) for s in found):
        return MATCHING, []
    present = [s for s in found if s is not None]
    if len(present) < len(found):
        return MISSING, [i for i, s in zip(number.cited, found, strict=True) if s is None]
    # every cited step is present: ``present`` lines up with ``number.cited``
    if all(s.kind != FORMAL for s in present):
        return EXPLORATORY, list(number.cited)
    return NOT_MATCHING, [i for i, s in zip(number.cited, present, strict=True) if s.kind == FORMAL]


@dataclass
class CheckResult:
    path: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    problems: list[dict[str, Any]] = field(default_factory=list)
    citations: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "report": self.path,
            "ok": self.ok,
            "numbers": sum(self.counts.values()),
            "citations": self.citations,
            "counts": self.counts,
            "problems": self.problems,
        }


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
        status, steps = classify(number, index)
        result.counts[status] += 1
        if status != MATCHING and (only_lines is None or number.line in only_lines):
            result.problems.append(
                {
                    "line": number.line,
                    "number": number.text,
                    "status": status,
                    "steps": steps,
                    "message": _MESSAGES[status].format(text=number.text),
                }
            )
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


def format_problems(result: CheckResult, limit: int = 10) -> str:
    shown = [
        f"line {p['line']}: {p['number']} {p['status']}"
        + (f" ({', '.join(p['steps'])})" if p["steps"] else "")
        for p in result.problems[:limit]
    ]
    more = len(result.problems) - limit
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
