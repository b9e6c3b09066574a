"""A project's lifecycle: its statuses, who may move it where, and the Plan approval.

``planning`` → ``plan_review`` → ``executing`` → ``report_review`` → ``delivered`` (and
``archived``). Only the analyst approves a Plan, and approving is the way into
``executing``: the approval records a fingerprint of the Plan, and moving to (or back to)
``executing`` needs an approval whose fingerprint is the Plan's now. The agent may move a
project to ``planning``, ``plan_review``, ``report_review`` and, with a standing approval,
back to ``executing``; never ``delivered`` or ``archived``, and it never approves.

Every move is kept in ``project.json``'s ``history`` (``at``, ``by``, ``user`` for the
analyst, ``action``, ``from``, ``to``, and ``seq``, one more than the move before it, so a
move is told apart from the last even when the oldest entries are dropped; the analyst's
decisions on the agent's pending edits share the numbering but are no moves: see
:func:`record_edit_decision`); the approval in
``plan_approval``. :func:`last_move` is what the agent's consent to statistical analysis is
bound to: any move, by anyone (the app, the command line, the agent), ends that consent.

Approving asks first (:func:`approval_concerns`) while annotations of the Plan are open or
the tab holds unsaved edits. Only the analyst withdraws an approval
(:func:`check_withdrawal`): ``plan_approval`` goes, the history keeps what was approved
(``withdraw_approval`` with the approval's ``approved_at`` and ``plan_sha256``), and a
project past the approval (``executing``, ``report_review``) is back in ``plan_review``. A
``delivered`` or ``archived`` project keeps its approval on record.

Older files: ``done`` reads as ``delivered`` (the file keeps its word until the next
status change writes the new one); a project already ``executing`` without an approval
record stays there, and the approval is then reported as missing.
"""

from __future__ import annotations

import getpass
import hashlib
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import NotRequired, TypedDict

from lantide.errors import LantideError

PROJECT_STATUSES = (
    "planning",
    "plan_review",
    "executing",
    "report_review",
    "delivered",
    "archived",
)
LEGACY_STATUSES = {"done": "delivered"}
ANALYST, AGENT = "analyst", "agent"
AGENT_TARGETS = ("planning", "plan_review", "executing", "report_review")
# statuses past the approval: the agent works in its executing state there
AFTER_APPROVAL = ("executing", "report_review", "delivered", "archived")
MAX_HISTORY = 500  # older entries are dropped first; project.json stays small
# history entries that are decisions on the agent's pending edits, not moves
EDIT_ACTIONS = ("accept_edit", "reject_edit", "supersede_edit")

_MARK_TAG = re.compile(r"</?mark\b[^>]*>", re.I)


class StatusRefused(LantideError):
    code = "STATUS_REFUSED"


class Who(TypedDict):
    """Who did something and when (the start of an approval and of a history entry)."""

    at: str  # ISO 8601, UTC
    by: str  # analyst or agent
    user: NotRequired[str]  # the analyst's login name


class PlanApproval(Who):
    """``plan_approval`` in project.json, as :func:`apply_approval` writes it."""

    plan_sha256: str  # plan_fingerprint() of the approved Plan


_MoveFields = TypedDict(
    "_MoveFields",
    {
        "action": str,  # status, approve_plan, withdraw_approval
        "from": str | None,  # None: the file's status meant none
        "to": str | None,
        "approved_at": NotRequired[object],  # withdraw_approval: as the approval had them
        "plan_sha256": NotRequired[object],
    },
)


class StatusMove(Who, _MoveFields):
    """One entry of project.json's ``history``, as Lantide writes it (a hand-edited file
    may hold anything: readers check each entry)."""

    seq: int  # one more than the move before it


class ApprovalState(TypedDict):
    """:func:`approval_state`: the Plan approval as the app and the agent are told it."""

    approved: bool
    at: NotRequired[object]  # as recorded (Lantide writes ISO text); only when approved
    by: NotRequired[object]
    user: NotRequired[object]
    changed_since_approval: bool


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container without a passwd entry)
        return "unknown"


def read_status(raw: object) -> str | None:
    """The status a project.json value means, or None when it means none."""
    if not isinstance(raw, str):
        return None
    raw = LEGACY_STATUSES.get(raw, raw)
    return raw if raw in PROJECT_STATUSES else None


def plan_fingerprint(text: str) -> str:
    """What an approval is of: the Plan's text without annotation marks (marking a passage
    to comment on it is not a change of the Plan) and with uniform line ends."""
    clean = _MARK_TAG.sub("", text.replace("\r\n", "\n"))
    return hashlib.sha256(clean.encode("utf-8")).hexdigest()


def approval_of(data: Mapping[str, object]) -> dict[str, object] | None:
    """The recorded approval (a hand edit may change any field but ``plan_sha256``)."""
    value = data.get("plan_approval")
    return value if isinstance(value, dict) and isinstance(value.get("plan_sha256"), str) else None


def approval_state(data: Mapping[str, object], plan_text: str | None) -> ApprovalState:
    """``approved`` (there is an approval), ``at``/``by``/``user`` of it, and
    ``changed_since_approval`` (the Plan on disk differs from what was approved)."""
    approval = approval_of(data)
    if approval is None:
        return {"approved": False, "changed_since_approval": False}
    changed = plan_text is None or plan_fingerprint(plan_text) != approval["plan_sha256"]
    return {
        "approved": True,
        "at": approval.get("at"),
        "by": approval.get("by"),
        "user": approval.get("user"),
        "changed_since_approval": changed,
    }


def check_move(data: Mapping[str, object], new: str, by: str, plan_text: str | None) -> None:
    """Refuse a status change the rules above do not allow (nothing is written then)."""
    if new not in PROJECT_STATUSES:
        raise StatusRefused(
            f"invalid project status {new!r}",
            hint=f"Use one of: {', '.join(PROJECT_STATUSES)}.",
            code="BAD_STATUS",
        )
    if by != ANALYST and new not in AGENT_TARGETS:
        raise StatusRefused(
            f"only the analyst can set a project to {new!r}",
            hint="Tell the analyst it is ready; they decide.",
        )
    current = read_status(data.get("status", "planning"))
    if new != "executing" or current == "executing":
        return
    state = approval_state(data, plan_text)
    if not state["approved"]:
        raise StatusRefused(
            "the Plan is not approved: a project moves to executing only when the analyst "
            "approves its Plan",
            hint=(
                "Set the project to plan_review and ask the analyst to approve the Plan."
                if by != ANALYST
                else "Approve the Plan: the Approve Plan button in the Plan tab, or "
                "lantide project approve-plan WORKSPACE PROJECT."
            ),
        )
    if state["changed_since_approval"]:
        raise StatusRefused(
            "the Plan changed since it was approved; it needs the analyst's approval again",
            hint=(
                "Ask the analyst to review and approve the changed Plan."
                if by != ANALYST
                else "Approve the Plan again (Approve Plan in the Plan tab, or lantide project "
                "approve-plan WORKSPACE PROJECT)."
            ),
        )


def _last_seq(entries: list[dict[str, object]]) -> int:
    numbered = [
        seq for h in entries if isinstance(seq := h.get("seq"), int) and not isinstance(seq, bool)
    ]
    return max(numbered + [len(entries)]) if entries else 0


def _entries(history: object) -> list[dict[str, object]]:
    return [h for h in history if isinstance(h, dict)] if isinstance(history, list) else []


def last_move(history: object) -> int:
    """The number of the last move in ``history`` (0 for none): its ``seq``, or, in a file
    written before moves were numbered, how many entries it holds. Entries that are not
    moves (the analyst's decisions on the agent's edits, :data:`EDIT_ACTIONS`) do not
    count: accepting a hunk is no status change and ends no consent."""
    return _last_seq([h for h in _entries(history) if h.get("action") not in EDIT_ACTIONS])


def last_seq(history: object) -> int:
    """The number of the last entry of ``history``, move or not (0 for none)."""
    return _last_seq(_entries(history))


def _append_entry(data: dict[str, object], entry: Mapping[str, object]) -> dict[str, object]:
    history = _entries(data.get("history"))
    written = {**entry, "seq": last_seq(history) + 1}
    data["history"] = (history + [written])[-MAX_HISTORY:]
    return written


def _append_history(data: dict[str, object], who: Who, move: _MoveFields) -> None:
    _append_entry(data, {**who, **move})


def record_edit_decision(
    data: dict[str, object], by: str, fields: Mapping[str, object]
) -> dict[str, object]:
    """Append a decision on a pending edit (``action`` one of :data:`EDIT_ACTIONS`) to
    ``data``'s history, numbered after the last entry; returns the entry written."""
    if fields.get("action") not in EDIT_ACTIONS:
        raise ValueError(f"not an edit decision: {fields.get('action')!r}")
    return _append_entry(data, {**_who(by), **fields})


def _who(by: str) -> Who:
    who: Who = {"at": _now(), "by": by}
    if by == ANALYST:
        who["user"] = _login()
    return who


def apply_move(data: dict[str, object], new: str, by: str) -> None:
    """Set the status in ``data`` and record who moved it (after :func:`check_move`)."""
    old = read_status(data.get("status", "planning"))
    data["status"] = new
    _append_history(data, _who(by), {"action": "status", "from": old, "to": new})


def apply_approval(data: dict[str, object], plan_text: str, by: str = ANALYST) -> None:
    """Record the analyst's approval of ``plan_text`` and move the project to executing."""
    old = read_status(data.get("status", "planning"))
    who = _who(by)
    approval: PlanApproval = {**who, "plan_sha256": plan_fingerprint(plan_text)}
    data["plan_approval"] = approval
    data["status"] = "executing"
    _append_history(data, who, {"action": "approve_plan", "from": old, "to": "executing"})


def approval_concerns(open_annotations: int, unsaved_edits: bool) -> list[str]:
    """What the analyst is asked to confirm before approving: open annotations of the
    Plan, edits not saved yet (the approval is of the Plan on disk). Empty: approve."""
    concerns = []
    if open_annotations > 0:
        noun = "annotation is" if open_annotations == 1 else "annotations are"
        concerns.append(f"{open_annotations} {noun} still open on the Plan")
    if unsaved_edits:
        concerns.append("the Plan has unsaved edits: they are saved first, then approved")
    return concerns


def check_withdrawal(data: Mapping[str, object], by: str) -> None:
    """Refuse withdrawing the Plan approval unless the analyst does it, there is one, and
    the project is not delivered or archived (nothing is written then)."""
    if by != ANALYST:
        raise StatusRefused(
            "only the analyst can withdraw a Plan approval",
            hint="Tell the analyst why the Plan needs another review; they decide.",
        )
    if approval_of(data) is None:
        raise StatusRefused(
            "the Plan has no approval to withdraw",
            hint="Nothing to undo: the project is not executing on an approved Plan.",
            code="NO_APPROVAL",
        )
    status = read_status(data.get("status", "planning"))
    if status in ("delivered", "archived"):
        raise StatusRefused(
            f"the project is {status}: its Plan approval stays on record",
            hint="Set the project back to report_review first, then withdraw the approval.",
        )


def apply_withdrawal(data: dict[str, object], by: str = ANALYST) -> None:
    """Remove the approval (after :func:`check_withdrawal`); the history keeps what was
    approved, and a project past the approval goes back to plan_review."""
    old = read_status(data.get("status", "planning"))
    approval = approval_of(data) or {}
    data.pop("plan_approval", None)
    new = "plan_review" if old in ("executing", "report_review") else old
    data["status"] = new
    _append_history(
        data,
        _who(by),
        {
            "action": "withdraw_approval",
            "from": old,
            "to": new,
            "approved_at": approval.get("at"),
            "plan_sha256": approval.get("plan_sha256"),
        },
    )
