"""The step ledger: ``.lantide/ledger/CONVERSATION.jsonl``, one JSON object per query step.

Every successful ``run_query``, ``run_sql_tab`` and Source Run appends a step with the
fields of DESIGN.md section 6 the moment it succeeds (a crash later in the turn does not
lose it). Its ``summary`` comes from the assistant's ``[[QUERY_STEP]] …`` line, parsed
here; until then ``summary_status`` is ``pending``, and a line that never comes or cannot
be read is recorded as ``missing`` or ``malformed`` (with the raw line), never invented.
``patch_step`` corrections rewrite the step's line atomically and keep the old values in
the step's ``patches`` list, so the audit trail survives the correction.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from lantide.errors import LantideError
from lantide.workspace.atomic import append_jsonl, atomic_write_text, read_jsonl

STEP_FIELDS = ("step_id", "conversation_id", "at", "tool", "project", "purpose", "result_label",
               "sql", "row_count", "columns", "cached_table_name", "materialized",
               "materialize_reason", "warnings", "duration_ms", "summary")
QUERY_STEP_MARKER = "[[QUERY_STEP]]"
MAX_SUMMARY_CHARS = 500

_LINE = re.compile(r"^\s*(?:[-*>]\s*)?\[\[QUERY_STEP\]\](.*)$", re.M)
_STEP_REF = re.compile(r"^\s*(?:step[\s_:#-]*)?([A-Za-z0-9][\w.-]*?)\s*(?::|\||—|–|-\s)\s*(.*)$")

_lock = threading.Lock()


class StepNotFoundError(LantideError):
    code = "STEP_NOT_FOUND"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


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
        if ref_match and (known_ids is None or ref_match.group(1) in known_ids):
            ref, rest = ref_match.group(1), ref_match.group(2).strip()
        out.append(StepLine(ref, rest[:MAX_SUMMARY_CHARS], match.group(0).strip()))
    return out


class Ledger:
    """The steps of one conversation."""

    def __init__(self, ledger_dir: Path, conversation_id: str):
        self.conversation_id = conversation_id
        self.path = Path(ledger_dir) / f"{conversation_id}.jsonl"

    def steps(self) -> list[dict[str, Any]]:
        return [s for s in read_jsonl(self.path) if isinstance(s, dict) and "step_id" in s]

    def recent(self, n: int = 8) -> list[dict[str, Any]]:
        return self.steps()[-n:] if n > 0 else []

    def step(self, step_id: str) -> dict[str, Any]:
        for s in self.steps():
            if s.get("step_id") == step_id:
                return s
        known = ", ".join(s["step_id"] for s in self.steps()[-10:]) or "none yet"
        raise StepNotFoundError(f"no step {step_id!r} in the ledger of conversation "
                                f"{self.conversation_id}",
                                hint=f"Recent steps: {known}.")

    def reflections(self) -> list[dict[str, Any]]:
        """The reviews before reporting (lines with ``tool: "reflection"``), in order."""
        return [r for r in read_jsonl(self.path)
                if isinstance(r, dict) and r.get("tool") == "reflection" and "step_id" not in r]

    def append_reflection(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Append a reflection line. It has a ``reflection_id`` (r1, r2, …) and no
        ``step_id``, so readers of query steps pass over it."""
        with _lock:
            line = {"reflection_id": f"r{len(self.reflections()) + 1}", "tool": "reflection",
                    "conversation_id": self.conversation_id, "at": _now(), **fields}
            append_jsonl(self.path, line)
            return line

    def new_step_id(self) -> str:
        return f"s{len(self.steps()) + 1}"

    def append(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Append a step; fields missing from ``fields`` are recorded as null."""
        with _lock:
            step = {k: fields.get(k) for k in STEP_FIELDS}
            step["step_id"] = fields.get("step_id") or self.new_step_id()
            step["conversation_id"] = self.conversation_id
            step["at"] = fields.get("at") or _now()
            step["warnings"] = list(fields.get("warnings") or [])
            step["summary_status"] = fields.get("summary_status", "pending")
            for k, v in fields.items():  # extra fields the query layer adds are kept
                step.setdefault(k, v)
            append_jsonl(self.path, step)
            return step

    def update(self, step_id: str, changes: dict[str, Any], *, by: str) -> dict[str, Any]:
        """Change fields of a step, remembering the old values under ``patches``."""
        with _lock:
            lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True) \
                if self.path.exists() else []
            for i, line in enumerate(lines):
                try:
                    step = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn line stays as it is
                if not isinstance(step, dict) or step.get("step_id") != step_id:
                    continue
                old = {k: step.get(k) for k in changes}
                step.update(changes)
                if by != "engine":
                    step.setdefault("patches", []).append({"at": _now(), "by": by, "old": old})
                lines[i] = json.dumps(step, ensure_ascii=False, default=str) + "\n"
                atomic_write_text(self.path, "".join(lines))
                return step
        raise StepNotFoundError(f"no step {step_id!r} in the ledger of conversation "
                                f"{self.conversation_id}",
                                hint="Use a step_id from a run_query result or Recent Query Steps.")


def resolve_summaries(ledger: Ledger, pending: list[str], text: str) -> list[dict[str, Any]]:
    """Apply the ``[[QUERY_STEP]]`` lines in ``text`` to the pending steps (in order, or by
    the id a line names). Resolved ids are removed from ``pending``; returns the updated steps."""
    updated = []
    for line in parse_step_lines(text, set(pending)):
        if not pending:
            break
        step_id = line.step_ref if line.step_ref in pending else pending[0]
        pending.remove(step_id)
        if line.problem:
            changes = {"summary": None, "summary_status": "malformed", "summary_raw": line.raw}
        else:
            changes = {"summary": line.summary, "summary_status": "parsed"}
        updated.append(ledger.update(step_id, changes, by="engine"))
    return updated


def mark_missing(ledger: Ledger, pending: list[str]) -> list[dict[str, Any]]:
    """The turn ended: steps still without a line are recorded as missing one."""
    updated = [ledger.update(step_id, {"summary": None, "summary_status": "missing"}, by="engine")
               for step_id in pending]
    pending.clear()
    return updated
