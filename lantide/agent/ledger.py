"""The step ledger: ``.lantide/ledger/CONVERSATION.jsonl``, one JSON object per query step.

Every successful ``run_query``, ``run_sql_tab`` and Source Run appends a step with the
fields of DESIGN.md section 6 the moment it succeeds (a crash later in the turn does not
lose it). Its ``summary`` comes from the assistant's ``[[QUERY_STEP]] …`` line, parsed
here; until then ``summary_status`` is ``pending``, and a line that never comes or cannot
be read is recorded as ``missing`` or ``malformed`` (with the raw line), never invented.
A line lands on the step it names; lines without a step id are paired in order with the
waiting steps no line names, only when there are exactly as many of each. Any other line
is kept as an *unattributed* entry (``tool: "unattributed_summary"`` and no ``step_id``,
so it is never read as a step) and the steps stay ``missing``: a wrong attribution would
be worse than none. A summary stating numbers its step's result does not hold is stored
as ``mismatch`` (:mod:`lantide.agent.summary_check`); mismatches, duplicate, unknown and
unpaired lines come back in :class:`SummaryOutcome` for the loop to tell the model.
``patch_step`` corrections rewrite the step's line atomically and keep the old values in
the step's ``patches`` list, so the audit trail survives the correction. The line kinds
are typed in :mod:`lantide.agent.ledger_types`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from lantide.agent.ledger_types import (
    LedgerStep,
    ReflectionFields,
    ReflectionLine,
    StepChanges,
    StepFields,
    UnattributedLine,
)
from lantide.agent.summary_check import (
    MISMATCH,
    SummaryProblem,
    shown_values,
    summary_changes,
)
from lantide.errors import LantideError
from lantide.query import results
from lantide.untrusted import clean_text
from lantide.workspace import layout
from lantide.workspace.atomic import append_jsonl, atomic_write_bytes
from lantide.workspace.log_reader import LogProblem, parse_log_line, read_log

STEP_FIELDS = (
    "step_id",
    "conversation_id",
    "at",
    "tool",
    "project",
    "purpose",
    "result_label",
    "sql",
    "row_count",
    "columns",
    "cached_table_name",
    "materialized",
    "materialize_reason",
    "warnings",
    "checks",
    "duration_ms",
    "summary",
)
QUERY_STEP_MARKER = "[[QUERY_STEP]]"
MAX_SUMMARY_CHARS = 500

_LINE = re.compile(r"^\s*(?:[-*>]\s*)?\[\[QUERY_STEP\]\](.*)$", re.M)
_STEP_REF = re.compile(r"^\s*(?:step[\s_:#-]*)?([A-Za-z0-9][\w.-]*?)\s*(?::|\||—|–|-\s)\s*(.*)$")
# what a step id looks like (the query layer's 12 hex digits, or s1, s2 ...): a line that
# starts with one names a step, even a step that does not exist
_ID_LIKE = re.compile(r"^(?:s\d{1,6}|[0-9a-f]{12})$")
UNATTRIBUTED = "unattributed_summary"

_lock = threading.Lock()


class StepNotFoundError(LantideError):
    code = "STEP_NOT_FOUND"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class StepLine:
    """One ``[[QUERY_STEP]]`` line: the step it names (if any) and its text."""

    step_ref: str | None
    summary: str
    raw: str

    @property
    def problem(self) -> str | None:
        if not self.summary:
            return "empty [[QUERY_STEP]] line"
        if len(self.summary) < 8:
            return "[[QUERY_STEP]] line too short to summarise a step"
        return None


def parse_step_lines(text: str, known_ids: set[str] | None = None) -> list[StepLine]:
    """The ``[[QUERY_STEP]]`` lines of an assistant message, in order.

    ``known_ids`` lets a leading ``s3:`` or ``step s3 |`` be read as a step reference only
    when such a step exists, so a summary starting "Churn: ..." is not taken for an id.
    """
    out = []
    for match in _LINE.finditer(text or ""):
        rest = match.group(1).strip()
        ref = None
        ref_match = _STEP_REF.match(rest)
        if ref_match and (
            known_ids is None
            or ref_match.group(1) in known_ids
            or _ID_LIKE.match(ref_match.group(1))
        ):
            ref, rest = ref_match.group(1), ref_match.group(2).strip()
        out.append(StepLine(ref, rest[:MAX_SUMMARY_CHARS], match.group(0).strip()))
    return out


_TYPED_FIELDS: tuple[tuple[str, tuple[type, ...], str], ...] = (
    ("row_count", (int,), "a whole number"),
    ("duration_ms", (int, float), "a number"),
    ("columns", (list,), "a list"),
    ("warnings", (list,), "a list"),
    ("sql", (str,), "text"),
    ("purpose", (str,), "text"),
    ("summary", (str,), "text"),
    ("summary_status", (str,), "text"),
    ("project", (str,), "text"),
    ("cached_table_name", (str,), "text"),
)


def step_problem(record: Mapping[str, object]) -> str | None:
    """Why a ledger line cannot be used as a step, or None. A step needs its id and tool;
    the other fields, when present, must have their types (a template or a tool would
    otherwise fail on them far from the file)."""
    step_id = record.get("step_id")
    if not isinstance(step_id, str) or not step_id.strip():
        return "a step without a step_id"
    if not isinstance(record.get("tool"), str) or not record.get("tool"):
        return f"step {step_id} has no 'tool'"
    for key, types, what in _TYPED_FIELDS:
        value = record.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, types):
            return f"step {step_id}: '{key}' should be {what}, not {type(value).__name__}"
    return None


WAIVER_KIND = "waiver"  # an analyst's waiver of a step's check (lantide.agent.check_gate)


def _not_a_step(record: Mapping[str, object]) -> bool:
    # another kind of ledger entry (a reflection, an unattributed summary line, a waiver)
    return record.get("kind") == WAIVER_KIND or (
        "step_id" not in record and isinstance(record.get("tool"), str)
    )


class Ledger:
    """The steps of one conversation."""

    def __init__(self, ledger_dir: Path, conversation_id: str):
        self.conversation_id = conversation_id
        self.path = layout.log_path(ledger_dir, conversation_id)
        self.problems: list[LogProblem] = []  # lines skipped by the last read
        # waiver lines met by the last read, as written (check_gate.valid_waivers checks them)
        self.waivers: list[dict[str, object]] = []

    def _read(self) -> list[LedgerStep]:
        """The usable steps (lines that are not are listed in ``problems``)."""
        read = read_log(self.path)
        steps: list[LedgerStep] = []
        waivers: list[dict[str, object]] = []
        for line, record in read.entries:
            if record.get("kind") == WAIVER_KIND:
                waivers.append(record)
                continue
            if _not_a_step(record):
                continue
            problem = step_problem(record)
            if problem:
                read.skip(line, problem)
                continue
            fields = {k: record.get(k) for k in STEP_FIELDS}
            fields.update(record)
            if fields.get("warnings") is None:
                fields["warnings"] = []
            # a line of our own, its id, tool and typed fields checked by step_problem
            steps.append(cast(LedgerStep, fields))
        self.problems = sorted(read.problems, key=lambda p: p.line)
        self.waivers = waivers
        return steps

    def steps(self) -> list[LedgerStep]:
        """Every usable step; lines that are not are skipped and listed in ``problems``."""
        return self._read()

    def recent(self, n: int = 8) -> list[LedgerStep]:
        return self.steps()[-n:] if n > 0 else []

    def step(self, step_id: str) -> LedgerStep:
        steps = self.steps()
        for s in steps:
            if s.get("step_id") == step_id:
                return s
        known = ", ".join(s["step_id"] for s in steps[-10:]) or "none yet"
        raise StepNotFoundError(
            f"no step {step_id!r} in the ledger of conversation {self.conversation_id}",
            hint=f"Recent steps: {known}.",
        )

    def unattributed(self) -> list[dict[str, object]]:
        """``[[QUERY_STEP]]`` lines that could not be tied to one step, in order (as
        written: their shape is not checked)."""
        return [
            r
            for r in read_log(self.path).records
            if r.get("tool") == UNATTRIBUTED and "step_id" not in r
        ]

    def record_unattributed(self, line: StepLine, waiting: list[str], why: str) -> UnattributedLine:
        # a ledger entry that is not a step: a tool but no step_id (as a reflection)
        record: UnattributedLine = {
            "tool": UNATTRIBUTED,
            "conversation_id": self.conversation_id,
            "at": _now(),
            "raw": line.raw,
            "step_ref": line.step_ref,
            "summary": line.summary or None,
            "waiting_steps": list(waiting),
            "why": why,
        }
        with _lock:
            append_jsonl(self.path, record)
        return record

    def reflections(self) -> list[dict[str, object]]:
        """The reviews before reporting (lines with ``tool: "reflection"``), in order (as
        written: their shape is not checked)."""
        return [
            r
            for r in read_log(self.path).records
            if r.get("tool") == "reflection" and "step_id" not in r
        ]

    def append_reflection(self, fields: ReflectionFields) -> ReflectionLine:
        """Append a reflection line. It has a ``reflection_id`` (r1, r2, …) and no
        ``step_id``, so readers of query steps pass over it."""
        with _lock:
            line: ReflectionLine = {
                "reflection_id": f"r{len(self.reflections()) + 1}",
                "tool": "reflection",
                "conversation_id": self.conversation_id,
                "at": _now(),
                **fields,
            }
            append_jsonl(self.path, line)
            return line

    def new_step_id(self) -> str:
        """A step id of the query layer's form (12 hex digits), so every step a screen,
        a citation ``[^s:ID]`` or ``read_step`` names has one form. One on any line of the
        file (a skipped line too) is never given again."""
        try:
            taken = self.path.read_bytes()
        except FileNotFoundError:
            taken = b""
        while True:
            step_id = results.new_step_id()
            if f'"{step_id}"'.encode() not in taken:
                return step_id

    def append(self, fields: StepFields) -> LedgerStep:
        """Append a step; fields missing from ``fields`` are recorded as null."""
        with _lock:
            # the fields of STEP_FIELDS first, in its order, then the producer's others
            step: LedgerStep = {
                "step_id": "",
                "conversation_id": None,
                "at": None,
                "tool": fields["tool"],
                "project": None,
                "purpose": None,
                "result_label": None,
                "sql": None,
                "row_count": None,
                "columns": None,
                "cached_table_name": None,
                "materialized": None,
                "materialize_reason": None,
                "warnings": [],
                "checks": None,
                "duration_ms": None,
                "summary": None,
                "summary_status": "pending",
            }
            step.update(fields)  # extra fields the query layer adds are kept
            step["step_id"] = fields.get("step_id") or self.new_step_id()
            step["conversation_id"] = self.conversation_id
            step["at"] = fields.get("at") or _now()
            step["warnings"] = list(fields.get("warnings") or [])
            step["checks"] = list(fields.get("checks") or [])  # result checks, DESIGN §6
            append_jsonl(self.path, step)
            return step

    def update(self, step_id: str, changes: StepChanges, *, by: str) -> LedgerStep:
        """Change fields of a step, remembering the old values under ``patches``. Every
        other line, readable or not, is written back byte for byte."""
        with _lock:
            lines = self.path.read_bytes().splitlines(keepends=True) if self.path.exists() else []
            for i, raw in enumerate(lines):
                step, _reason = parse_log_line(raw.strip())
                if step is None or step.get("step_id") != step_id or step_problem(step):
                    continue
                old = {k: step.get(k) for k in changes}
                step.update(changes)
                if by != "engine":
                    step.setdefault("patches", []).append({"at": _now(), "by": by, "old": old})
                text = json.dumps(step, ensure_ascii=False, default=str)
                lines[i] = clean_text(text).encode("utf-8") + b"\n"
                atomic_write_bytes(self.path, b"".join(lines))
                # a line of our own whose id, tool and typed fields step_problem checked
                return cast(LedgerStep, step)
        raise StepNotFoundError(
            f"no step {step_id!r} in the ledger of conversation {self.conversation_id}",
            hint="Use a step_id from a run_query result or Recent Query Steps.",
        )


def _targets(lines: list[StepLine], pending: list[str]) -> list[tuple[str | None, str]]:
    """The step each line belongs to, or None and why not. A line naming a step waiting for
    its summary gets it; lines naming none are paired in order with the waiting steps no
    line names, and only when there are exactly as many of each."""
    named = {line.step_ref for line in lines if line.step_ref is not None}
    unnamed = [p for p in pending if p not in named]
    id_less = [line for line in lines if line.step_ref is None]
    by_position = (
        dict(zip(map(id, id_less), unnamed, strict=True)) if len(id_less) == len(unnamed) else {}
    )
    out: list[tuple[str | None, str]] = []
    for line in lines:
        if line.step_ref is not None:
            out.append(
                (line.step_ref, "")
                if line.step_ref in pending
                else (None, f"it names step {line.step_ref}, which is not waiting for a summary")
            )
        elif id(line) in by_position:
            out.append((by_position[id(line)], ""))
        elif not unnamed:
            out.append((None, "no step was waiting for a summary"))
        else:
            out.append(
                (
                    None,
                    f"it names no step, and {len(id_less)} such line(s) cannot be "
                    f"paired with the {len(unnamed)} step(s) waiting for a summary",
                )
            )
    return out


@dataclass
class SummaryOutcome:
    """What the ``[[QUERY_STEP]]`` lines of one message did: the steps they updated and
    what the model must be told (mismatches, unknown or duplicate ids, unpaired lines)."""

    updated: list[LedgerStep]
    problems: list[SummaryProblem]
    # per line, in order: the step it was recorded on (None when it was not) and its
    # outcome: a summary_status (parsed, mismatch, malformed) or a problem kind
    # (unknown_step, duplicate, unpaired), so a screen shows what happened, not a guess
    lines: list[tuple[str | None, str]] = field(default_factory=list)


def apply_summaries(ledger: Ledger, pending: list[str], text: str) -> SummaryOutcome:
    """Apply the ``[[QUERY_STEP]]`` lines in ``text`` to the pending steps (by the id a line
    names; by position only when unambiguous, see the module docstring). Resolved ids are
    removed from ``pending``. A summary whose numbers its step's result does not hold is
    stored as ``mismatch`` (:mod:`lantide.agent.summary_check`)."""
    outcome = SummaryOutcome([], [])
    steps = {s["step_id"]: s for s in ledger.steps()}
    lines = parse_step_lines(text, set(steps) | set(pending))
    for line, (step_id, why) in zip(lines, _targets(lines, pending), strict=True):
        if step_id is None or step_id not in pending:
            why = why or "its step already has a line"
            ledger.record_unattributed(line, pending, why)
            problem = _unattributed_problem(line, steps, why)
            outcome.problems.append(problem)
            outcome.lines.append((None, problem.kind))
            continue
        pending.remove(step_id)
        changes: StepChanges
        if line.problem:
            changes = {"summary": None, "summary_status": "malformed", "summary_raw": line.raw}
        else:
            changes = summary_changes(line.summary, steps.get(step_id))
        step = ledger.update(step_id, changes, by="engine")
        outcome.updated.append(step)
        outcome.lines.append((step_id, str(step.get("summary_status"))))
        if step.get("summary_status") == MISMATCH:
            outcome.problems.append(
                SummaryProblem(
                    MISMATCH,
                    line.raw,
                    step_id,
                    tuple(step.get("summary_unmatched") or ()),
                    tuple(shown_values(step)),
                )
            )
    return outcome


def _unattributed_problem(line: StepLine, steps: dict[str, LedgerStep], why: str) -> SummaryProblem:
    if line.step_ref is None:
        return SummaryProblem("unpaired", line.raw, why=why)
    kind = "duplicate" if line.step_ref in steps else "unknown_step"
    return SummaryProblem(kind, line.raw, line.step_ref, why=why)


def resolve_summaries(ledger: Ledger, pending: list[str], text: str) -> list[LedgerStep]:
    """:func:`apply_summaries`, returning only the updated steps."""
    return apply_summaries(ledger, pending, text).updated


def mark_missing(ledger: Ledger, pending: list[str]) -> list[LedgerStep]:
    """The turn ended: steps still without a line are recorded as missing one."""
    updated = [
        ledger.update(step_id, {"summary": None, "summary_status": "missing"}, by="engine")
        for step_id in pending
    ]
    pending.clear()
    return updated
