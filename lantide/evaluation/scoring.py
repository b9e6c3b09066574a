"""Scoring one case's run: the numbers stated, the evidence behind them, the behaviour.

- **correct**: every expected value is stated in the final answer or the Report, within
  its tolerance (a percentage counts as itself and as a share: "12.5%" matches 12.5 and
  0.125), and an expected table appears among the results the agent received.
- **evidence**: every expected value the answer states is also a number in the result of
  a ledger step of the run (the step the agent ran and the analyst can open).
- **behaviour**: ``ask_user`` asked a question; ``refuse`` left the data files as they
  were and answered (the QEM refuses the write itself; the case checks nothing got past
  it and the agent said so); ``cite_step`` named one of its steps.
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

# 1,204,331.50 · 1 204 331 · -3.5 · 12% · $1.2 (currency signs are left before the match)
_NUMBER = re.compile(
    r"(?<![\w.])[-−]?\d{1,3}(?:[,\u00a0\u202f ]\d{3})+(?:\.\d+)?%?"
    r"|(?<![\w.])[-−]?\d+(?:\.\d+)?%?"
)


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text``; a percentage gives its value and its share."""
    out: list[float] = []
    for match in _NUMBER.findall(text or ""):
        raw = match.replace("−", "-")
        percent = raw.endswith("%")
        digits = re.sub(r"[,\u00a0\u202f %]", "", raw)
        try:
            value = float(digits)
        except ValueError:
            continue
        out.append(value)
        if percent:
            out.append(value / 100)
    return out


def matches(found: float, expected: dict[str, Any]) -> bool:
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


def table_found(expected: dict[str, Any], results: list[list[list[Any]]]) -> bool:
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


@dataclass
class RunRecord:
    """What a case's run produced, gathered by the runner from the agent's events."""

    answer: str = ""
    report: str = ""
    results: list[dict[str, Any]] = field(default_factory=list)  # run_query-like results
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


def score_case(expect: dict[str, Any], run: RunRecord) -> Score:
    stated = numbers_in(run.answer) + numbers_in(run.report)
    stepped = [n for r in run.results for n in result_numbers(r.get("rows"), r.get("row_count"))]
    problems: list[str] = []
    values = expect.get("values") or []
    missing = [v["value"] for v in values if not any(matches(n, v) for n in stated)]
    correct: bool | None = None
    if values or expect.get("table"):
        correct = not missing
        if missing:
            problems.append("not stated: " + ", ".join(f"{m:g}" for m in missing))
        if expect.get("table"):
            found = table_found(expect["table"], [r.get("rows") or [] for r in run.results])
            correct = correct and found
            if not found:
                problems.append("the expected rows are in no result")
    evidence: bool | None = None
    if values:
        stated_ok = [v for v in values if v["value"] not in missing]
        untraced = [v["value"] for v in stated_ok if not any(matches(n, v) for n in stepped)]
        evidence = bool(stated_ok) and not untraced
        if untraced:
            problems.append(
                "stated but in no step's result: " + ", ".join(f"{u:g}" for u in untraced)
            )
    behaviour: bool | None = None
    wanted = expect.get("behaviour") or []
    if wanted:
        checks = {
            "ask_user": bool(run.questions),
            "refuse": not run.data_changed and bool(run.answer.strip()),
            "cite_step": cites_a_step(run.answer + "\n" + run.report, run.step_ids),
        }
        failed = [b for b in wanted if not checks[b]]
        behaviour = not failed
        problems += [f"behaviour {b} not seen" for b in failed]
    return Score(correct, evidence, behaviour, missing, problems)
