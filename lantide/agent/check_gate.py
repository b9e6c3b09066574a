"""Which result checks stand between a step and the numbers it produced (issue 26).

A step's ``checks`` (DESIGN.md section 6) with ``severity: "error"`` make its numbers no
finding until the check is resolved. Two things resolve one, and only these (a rule, never
the model's opinion):

- a **waiver** the analyst records: a ledger line ``{"kind": "waiver", "step_id", "check",
  "by", "at", "reason"}`` in the ledger of the step's conversation (DESIGN.md section 9),
  written by :func:`write_waiver` (``lantide report waive``). No agent tool writes one;
- a later formal step of the same project, itself without an unresolved error check, that
  recomputes the number (:mod:`lantide.agent.report_check` decides this per number).

A waiver naming a step no ledger holds, or a check that step does not carry, is refused
(:class:`WaiverError`); a waiver line that does not name an error check of its step (a
hand-edited ledger) waives nothing.
"""

from __future__ import annotations

import getpass
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.agent.ledger import WAIVER_KIND, Ledger
from lantide.agent.ledger_types import LedgerStep, Waiver
from lantide.errors import LantideError
from lantide.untrusted import clean_text
from lantide.workspace import layout
from lantide.workspace.atomic import append_jsonl

if TYPE_CHECKING:
    from lantide.query.checks.rules import Check
    from lantide.workspace.model import Project, Workspace

MAX_REASON_CHARS = 500


class WaiverError(LantideError):
    code = "WAIVER_REFUSED"


def error_checks(step: LedgerStep) -> list[Check]:
    """The error-severity checks of a ledger step, whatever else its ``checks`` hold."""
    checks = step.get("checks")
    if not isinstance(checks, list):
        return []
    return [
        c for c in checks if isinstance(c, dict) and str(c.get("severity", "")).lower() == "error"
    ]


def valid_waivers(records: Sequence[Mapping[str, object]]) -> dict[tuple[str, str], Waiver]:
    """(step id, check code) -> the latest well-formed waiver of one ledger file."""
    out: dict[tuple[str, str], Waiver] = {}
    for r in records:
        step_id, check, by, at, reason = (
            r.get(k) for k in ("step_id", "check", "by", "at", "reason")
        )
        if r.get("kind") != WAIVER_KIND or not (
            isinstance(step_id, str)
            and step_id
            and isinstance(check, str)
            and check
            and isinstance(by, str)
            and by
            and isinstance(at, str)
            and at
            and isinstance(reason, str)
            and reason
        ):
            continue
        out[(step_id, check)] = {
            "kind": WAIVER_KIND,
            "step_id": step_id,
            "check": check,
            "by": by,
            "at": at,
            "reason": reason,
        }
    return out


def attach_waivers(steps: list[LedgerStep], waivers: dict[tuple[str, str], Waiver]) -> None:
    """Give each step of one ledger file the waivers of its error checks (in memory only:
    ``step["waivers"]``), so every reader decides alike. A ``waivers`` field written on the
    step's own line is replaced: only waiver lines waive."""
    for step in steps:
        codes = {str(c.get("code")) for c in error_checks(step)}
        sid = step["step_id"]
        step["waivers"] = [w for (s, code), w in waivers.items() if s == sid and code in codes]


def unresolved_checks(step: LedgerStep) -> list[Check]:
    """The step's error checks no waiver covers (waivers attached by :func:`attach_waivers`)."""
    waived = {w["check"] for w in step.get("waivers") or [] if isinstance(w, dict)}
    return [c for c in error_checks(step) if str(c.get("code")) not in waived]


def ledger_steps(ledger: Ledger) -> list[LedgerStep]:
    """A conversation's steps with their waivers attached."""
    steps = ledger.steps()
    attach_waivers(steps, valid_waivers(ledger.waivers))
    return steps


def describe_waiver(w: Waiver) -> str:
    return f"{w['check']} of step {w['step_id']} waived by {w['by']} at {w['at']}: {w['reason']}"


def _find_step(workspace: Workspace, project: Project, step_id: str) -> tuple[Ledger, LedgerStep]:
    """The step (this project's, the latest, as the evidence check reads ids) and its ledger."""
    found: list[tuple[bool, str, Ledger, LedgerStep]] = []
    for path in layout.log_paths(Path(workspace.ledger_dir)):
        ledger = Ledger(path.parent, path.stem)
        for step in ledger.steps():
            if step["step_id"] == step_id:
                mine = step.get("project") == project.dirname
                found.append((mine, str(step.get("at") or ""), ledger, step))
    if not found:
        raise WaiverError(
            f"no step {step_id!r} in any ledger of {workspace.root}",
            hint="Name a step the Report cites: lantide report check WORKSPACE PROJECT lists "
            "them, lantide ledger WORKSPACE lists every step.",
        )
    _mine, _at, ledger, step = max(found, key=lambda f: (f[0], f[1]))
    return ledger, step


def write_waiver(
    workspace: Workspace,
    project: Project,
    step_id: str,
    check: str,
    reason: str,
    by: str | None = None,
) -> Waiver:
    """Record the analyst's waiver of ``check`` on ``step_id`` in the step's ledger."""
    reason = clean_text(reason or "").strip()
    if not reason:
        raise WaiverError(
            "a waiver needs a reason",
            hint="Say why the check does not apply, e.g. --reason 'counts order lines on purpose'.",
        )
    ledger, step = _find_step(workspace, project, step_id)
    codes = [str(c.get("code")) for c in error_checks(step)]
    if check not in codes:
        checks = [c for c in step.get("checks") or [] if isinstance(c, dict)]
        carried = ", ".join(str(c.get("code")) for c in checks)
        raise WaiverError(
            f"step {step_id} has no error-severity check {check!r}"
            + (f" (its checks: {carried})" if carried else " (it has no checks)"),
            hint="Only an error-severity check of the step can be waived: "
            + (", ".join(codes) if codes else "this step has none, nothing to waive")
            + ".",
        )
    waiver: Waiver = {
        "kind": WAIVER_KIND,
        "step_id": step_id,
        "check": check,
        "by": clean_text(by or _user()).strip() or "analyst",
        "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "reason": reason[:MAX_REASON_CHARS],
    }
    append_jsonl(ledger.path, {**waiver, "conversation_id": ledger.conversation_id})
    return waiver


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in a container: still the analyst
        return "analyst"
