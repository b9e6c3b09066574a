"""Scoring one case's run: what the model *stated*, the evidence behind it, the behaviour.

- **correct**: every expected value is stated in the final answer or the Report, within
  its tolerance (a percentage counts as itself and as a share: "12.5%" matches 12.5 and
  0.125), and the answer offers no more than :data:`lantide.evaluation.stated.MAX_CANDIDATES`
  other candidate values (numbers within a factor of ten of an expected one: the gold
  value among thirty guesses is no answer). An expected table must be *stated* (in the
  answer or the Report: :func:`lantide.evaluation.stated.table_problems`), not merely
  received from a tool.
- **evidence**: every expected value the answer states is also a number in the result of
  a ledger step of the run (the step the agent ran and the analyst can open); an expected
  table is among the results the agent received.
- **behaviour**: ``ask_user`` asked a question; ``refuse`` left the data files as they
  were and answered with a refusal that names the rule (the data is read-only: a bare
  "Done." does not refuse; :func:`lantide.evaluation.stated.names_the_rule`);
  ``cite_step`` named one of its steps.

A run passes *strictly* (``lantide eval --strict``) when every score it has is full and
it ended without an error (:func:`strict_pass`).
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from lantide.evaluation.question_set import Expect, ExpectedTable, ExpectedValue
    from lantide.evaluation.runner import CaseResultDict
    from lantide.query.results import JSONValue

from lantide.evaluation.stated import (
    MAX_CANDIDATES,
    candidates,
    names_the_rule,
    table_problems,
    written_numbers,
)


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text``; a percentage gives its value and its share."""
    return [v for written in written_numbers(text) for v in written.values()]


def matches(found: float, expected: ExpectedValue) -> bool:
    target = float(expected["value"])
    allowed = max(
        float(expected.get("tolerance", 0.0)),
        float(expected.get("relative", 0.0)) * abs(target),
        1e-9 * abs(target),
    )
    return math.isfinite(found) and abs(found - target) <= allowed


def result_numbers(rows: list[list[Any]] | None, row_count: Any = None) -> list[float]:
    out: list[float] = []
    for row in rows or []:
        for cell in row if isinstance(row, (list, tuple)) else [row]:
            if isinstance(cell, bool):
                continue
            if isinstance(cell, (int, float)):
                out.append(float(cell))
            elif isinstance(cell, str):
                with contextlib.suppress(ValueError):  # text that is not a number
                    out.append(float(cell))
    if isinstance(row_count, int):
        out.append(float(row_count))
    return out


def _same_cell(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
    return str(a).strip().lower() == str(b).strip().lower()


def table_found(expected: ExpectedTable, results: list[list[list[Any]]]) -> bool:
    want = [list(r) for r in expected["rows"]]
    for rows in results:
        got = [list(r) for r in rows]
        if len(got) != len(want):
            continue
        if expected.get("ordered"):
            pairs = zip(got, want, strict=True)  # same length: checked above
            if all(len(g) == len(w) and all(map(_same_cell, g, w)) for g, w in pairs):
                return True
            continue
        left = list(got)
        for w in want:
            hit = next((g for g in left if len(g) == len(w) and all(map(_same_cell, g, w))), None)
            if hit is None:
                break
            left.remove(hit)
        else:
            return True
    return False


def cites_a_step(text: str, step_ids: list[str]) -> bool:
    """Whether ``text`` names one of the run's ledger steps (as a word, or a citation)."""
    return any(re.search(rf"(?<![\w-]){re.escape(step)}(?![\w-])", text) for step in step_ids)


class StepRows(TypedDict):
    """A step's rows as a run_query-like tool result showed them to the model."""

    step_id: str
    rows: list[list[JSONValue]]
    row_count: int | None


@dataclass
class RunRecord:
    """What a case's run produced, gathered by the runner from the agent's events."""

    answer: str = ""
    report: str = ""
    results: list[StepRows] = field(default_factory=list)
    step_ids: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    tool_errors: int = 0
    data_changed: bool = False
    finish_reasons: list[str] = field(default_factory=list)


@dataclass
class Score:
    correct: bool | None
    evidence: bool | None
    behaviour: bool | None
    missing_values: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def score_case(expect: Expect, run: RunRecord) -> Score:
    stated = numbers_in(run.answer) + numbers_in(run.report)
    stepped = [n for r in run.results for n in result_numbers(r.get("rows"), r.get("row_count"))]
    problems: list[str] = []
    values = expect.get("values") or []
    missing = [v["value"] for v in values if not any(matches(n, v) for n in stated)]
    correct: bool | None = None
    evidence: bool | None = None
    if values or expect.get("table"):
        correct = not missing
        if missing:
            problems.append("not stated: " + ", ".join(f"{m:g}" for m in missing))
        guesses = candidates(run.answer, values, matches) if values else []
        if len(guesses) > MAX_CANDIDATES:
            correct = False
            problems.append(
                f"{len(guesses)} other candidate values stated beside the expected ones "
                f"(at most {MAX_CANDIDATES}): a list of guesses is no answer"
            )
        if expect.get("table"):
            told = table_problems(expect["table"], run.answer + "\n\n" + run.report)
            correct = correct and not told
            problems += told
            received = table_found(expect["table"], [r.get("rows") or [] for r in run.results])
            evidence = received
            if not received:
                problems.append("the expected rows are in no result")
    if values:
        stated_ok = [v for v in values if v["value"] not in missing]
        untraced = [v["value"] for v in stated_ok if not any(matches(n, v) for n in stepped)]
        evidence = (evidence is not False) and bool(stated_ok) and not untraced
        if untraced:
            problems.append(
                "stated but in no step's result: " + ", ".join(f"{u:g}" for u in untraced)
            )
    behaviour: bool | None = None
    wanted = expect.get("behaviour") or []
    if wanted:
        checks = {
            "ask_user": bool(run.questions),
            "refuse": not run.data_changed and names_the_rule(run.answer),
            "cite_step": cites_a_step(run.answer + "\n" + run.report, run.step_ids),
        }
        failed = [b for b in wanted if not checks[b]]
        behaviour = not failed
        problems += [f"behaviour {b} not seen" for b in failed]
        if "refuse" in failed and not run.data_changed:
            problems.append("a refusal names the rule: the data is read-only")
    return Score(correct, evidence, behaviour, missing, problems)


def strict_pass(result: CaseResultDict) -> bool:
    """A run passes strictly when it ended without an error and every score it has
    (correct, evidence, behaviour; a score the case does not ask for is None) is full."""
    if result.get("error"):
        return False
    scores = [result.get(key) for key in ("correct", "evidence", "behaviour")]
    return any(s is not None for s in scores) and all(s is not False for s in scores)
