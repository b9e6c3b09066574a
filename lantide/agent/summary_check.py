"""Whether a ``[[QUERY_STEP]]`` summary states numbers its step's result holds (DESIGN.md
section 9, step summaries), and what the model is told about its summary lines.

A summary is ``purpose — what it showed``; the numbers of *what it showed* (the text after
the first dash set in spaces, or the whole summary when it has none) are findings and are
checked. The purpose says what was asked ("orders of the last 30 days", "top 10
regions"), not what came back, so its numbers are not. Each number must be held by the
step's result as the ledger keeps it (``result_values``, the distinct numbers of its
preview rows) or be its row count, after the rounding a reader assumes: to the decimals
written, a percentage read as a percentage or a fraction, a scale word (``k``, ``M``,
``million``) applied; without a written sign the sign is not compared. Dates, a year on
its own, a number glued to a word (``Q2``, ``s3``) and a number that labels a part or a
period ("week 12", "step 4") are not numbers of a finding.

A summary with a number no value rounds to is stored with ``summary_status: "mismatch"``
and the numbers under ``summary_unmatched``. A step whose values the ledger does not hold
(a line written before values were kept) or holds only in part (``result_values_cut``)
cannot be judged: its summary is ``parsed``.

The reader here is this module's own, small on purpose: the Report's number scanner
(:mod:`lantide.docs.citations`) reads Markdown blocks and citations, a summary is one line
of plain text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from lantide.templates import render_prompt

if TYPE_CHECKING:
    from lantide.agent.ledger_types import LedgerStep, StepChanges

PARSED, MISMATCH = "parsed", "mismatch"
# conversation events: a notice waiting for the next tool result, and its delivery (so a
# notice survives the end of the session, as `lantide chat` runs one turn per process)
NOTICE_EVENT, TOLD_EVENT = "step_summary_problems", "step_summary_problems_told"
STEP_LINES_EVENT = "step_lines_read"  # per answer: what each of its lines became (events.py)
MAX_SHOWN_VALUES = 8  # values of the step named in a mismatch notice
MAX_NOTICE_LINE_CHARS = 160

_SCALES = {
    "k": 1e3,
    "K": 1e3,
    "thousand": 1e3,
    "M": 1e6,
    "million": 1e6,
    "bn": 1e9,
    "B": 1e9,
    "billion": 1e9,
}
_NUMBER = re.compile(
    r"(?<![\w.,/:\-−+])"
    r"(?P<sign>[-−+])?[$€£¥]?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<pct>\s?%)?"
    r"(?:(?<!%)\s?(?P<scale>k|K|M|bn|B|thousand|million|billion)\b)?"
    r"(?![\w%]|[-/.:,]\d)"
)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_NOT_FINDINGS = re.compile(
    r"\b\d{4}-\d{1,2}(?:-\d{1,2})?(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?\b"
    r"|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}(?:\s+\d{{4}})?\b"
    r"|\b(?:section|chapter|figure|table|step|page|phase|item|line|version|week|wave|"
    r"round|quarter|month|day)\s+\d+(?:\.\d+)*\b(?!,\d)",
    re.I,
)
_YEAR = re.compile(r"(?:19|20)\d\d")
_FINDING_SEPARATOR = re.compile(r"\s[—–-]\s")


class ProblemEntry(TypedDict):
    """One problem of a notice, as the model reads it."""

    problem: str  # a SummaryProblem kind
    line: str
    step_id: NotRequired[str]
    numbers: NotRequired[list[str]]


class SummaryNotice(TypedDict):
    """What a tool result carries under ``step_summaries``: the problems and one message."""

    problems: list[ProblemEntry]
    message: str


@dataclass(frozen=True)
class SummaryNumber:
    text: str
    value: float  # as written, scale word not applied
    decimals: int
    percent: bool
    scale: float
    signed: bool


def findings_part(summary: str) -> str:
    """The *what it showed* part of ``purpose — what it showed`` (all of it without a dash)."""
    parts = _FINDING_SEPARATOR.split(summary, maxsplit=1)
    return parts[1] if len(parts) == 2 else summary


def summary_numbers(text: str) -> list[SummaryNumber]:
    """The numbers of a finding written in ``text`` (see the module docstring)."""
    blocked = [(m.start(), m.end()) for m in _NOT_FINDINGS.finditer(text)]
    out = []
    for match in _NUMBER.finditer(text):
        if any(a <= match.start() < b for a, b in blocked):
            continue
        digits = match.group("num").replace(",", "")
        bare = not (match.group("pct") or match.group("scale") or match.group("sign"))
        if bare and _YEAR.fullmatch(match.group("num")):
            continue  # a year on its own ("2,000" is written as a quantity)
        value = float(digits)
        if match.group("sign") in ("-", "−"):
            value = -value
        out.append(
            SummaryNumber(
                text=match.group(0).strip(),
                value=value,
                decimals=len(digits.split(".")[1]) if "." in digits else 0,
                percent=bool(match.group("pct")),
                scale=_SCALES.get(match.group("scale") or "", 1.0),
                signed=bool(match.group("sign")),
            )
        )
    return out


def number_in_values(number: SummaryNumber, values: list[float]) -> bool:
    """Whether some value of ``values`` is shown as ``number`` after rounding."""
    tolerance = 0.5 * 10**-number.decimals + 1e-12 * max(1.0, abs(number.value))
    targets = [number.value] if number.signed else [abs(number.value), -abs(number.value)]
    factors = [number.scale] + ([number.scale / 100] if number.percent else [])
    for target in targets:
        for factor in factors:  # the value as stored = shown × factor
            low, high = sorted(((target - tolerance) * factor, (target + tolerance) * factor))
            if any(low <= v <= high for v in values):
                return True
    return False


def step_values(step: LedgerStep | None) -> list[float] | None:
    """The numbers a step's result holds (its row count included), or None when the ledger
    does not hold them all."""
    if step is None:
        return None
    raw = step.get("result_values")
    if not isinstance(raw, list) or step.get("result_values_cut"):
        return None
    values = [_finite(v) for v in raw]
    row_count = _finite(step.get("row_count"))
    return [v for v in [*values, row_count] if v is not None]


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def unmatched_numbers(summary: str, step: LedgerStep | None) -> list[str]:
    """The numbers of the summary's findings that the step's result does not hold
    (empty when all are held, or when the step's values are not known)."""
    values = step_values(step)
    if values is None:
        return []
    return [
        n.text for n in summary_numbers(findings_part(summary)) if not number_in_values(n, values)
    ]


def summary_changes(summary: str, step: LedgerStep | None) -> StepChanges:
    """The ledger fields of a readable summary line for ``step``."""
    unmatched = unmatched_numbers(summary, step)
    changes: StepChanges = {"summary": summary, "summary_status": PARSED}
    if unmatched:
        changes["summary_status"] = MISMATCH
        changes["summary_unmatched"] = unmatched
    return changes


def shown_values(step: LedgerStep | None) -> list[str]:
    """A few of the step's values, as a notice names them."""
    values = step_values(step) or []
    shown = [f"{int(v):,}" if v.is_integer() else f"{v:g}" for v in values[:MAX_SHOWN_VALUES]]
    return shown + (["…"] if len(values) > MAX_SHOWN_VALUES else [])


@dataclass(frozen=True)
class SummaryProblem:
    """One thing wrong with the ``[[QUERY_STEP]]`` lines of an assistant message."""

    kind: str  # "mismatch", "unknown_step", "duplicate", "not_waiting", "unpaired"
    line: str
    step_id: str | None = None
    numbers: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    why: str = ""

    def to_dict(self) -> ProblemEntry:
        out: ProblemEntry = {"problem": self.kind, "line": _cap(self.line)}
        if self.step_id:
            out["step_id"] = self.step_id
        if self.numbers:
            out["numbers"] = list(self.numbers)
        return out


def _cap(text: str) -> str:
    return text if len(text) <= MAX_NOTICE_LINE_CHARS else text[: MAX_NOTICE_LINE_CHARS - 1] + "…"


def notice(problems: list[SummaryProblem]) -> SummaryNotice:
    """What the next tool result carries about the problems (``step_summaries``)."""
    return {
        "problems": [p.to_dict() for p in problems],
        "message": render_prompt(
            "notes/step_summaries.md.j2",
            problems=[
                {**p.to_dict(), "values": list(p.values), "why": p.why, "line": _cap(p.line)}
                for p in problems
            ],
        ),
    }


def merged(notices: list[SummaryNotice]) -> SummaryNotice:
    """Several waiting notices as one ``step_summaries`` entry."""
    return {
        "problems": [p for n in notices for p in n.get("problems") or []],
        "message": "\n".join(str(n.get("message") or "") for n in notices).strip(),
    }


def pending_notices(events: Sequence[Mapping[str, object]]) -> list[SummaryNotice]:
    """The notices a conversation's events hold that no tool result has carried yet."""
    pending: list[SummaryNotice] = []
    for event in events:
        notice = event.get("notice")
        if event.get("kind") == TOLD_EVENT:
            pending = []
        elif event.get("kind") == NOTICE_EVENT and isinstance(notice, dict):
            # a notice event of our own conversation file, written by notice() above
            pending.append(cast("SummaryNotice", notice))
    return pending
