"""Deciding the agent's pending edits (:mod:`lantide.docs.pending_edits`): accept or reject
hunks, write the accepted ones, and record every decision in the project's history.

:func:`decide` ``(project, edit_id, "accept" | "reject", hunks=None, by="analyst")``
(``hunks`` None: every pending hunk):

- **reject** marks the hunks rejected; no document changes (it never held them).
- **accept** applies the hunks to the document as it is now (:func:`lantide.docs.edit_hunks.merge`):
  unchanged since the edit (or since its last accepted hunk), they go in at their place;
  changed by the analyst meanwhile, the hunks that still apply cleanly go in and those that
  touch the analyst's changes are refused, with an :class:`EditConflictError` naming the
  file and the hunks, after the clean ones were written. A refused hunk stays pending (the
  analyst rejects it, or edits by hand). A Plan or Report is saved through
  :class:`lantide.docs.document.Document` (text and sidecar together, marks kept
  consistent); a ``resolve_annotations`` edit is decided whole and applied by resolving its
  annotations on the document as it is then; an HTML Report is checked to still parse.

Each decision is one history entry of ``project.json`` (``action`` ``accept_edit`` /
``reject_edit`` / ``supersede_edit``, ``at``, ``by``, ``user`` for the analyst, ``edit``,
``document``, ``tool``, ``hunks``, ``seq``); these entries are not lifecycle moves
(:func:`lantide.workspace.lifecycle.last_move` skips them). An edit with nothing left
pending is removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lantide.docs.edit_hunks import ACCEPTED, REJECTED, SUPERSEDED, Hunk, compute_hunks, merge
from lantide.docs.pending_edits import (
    SETTING_BY,
    EditError,
    PendingEdit,
    check_edit_id,
    document_file,
    load_edit,
    pending_for,
    relative_path,
    write_edit,
)
from lantide.errors import CorruptFileError, LantideError, MissingFileError
from lantide.workspace.atomic import atomic_write_text
from lantide.workspace.filelock import file_lock
from lantide.workspace.lifecycle import ANALYST, record_edit_decision

if TYPE_CHECKING:
    from lantide.workspace.model import Project

ACCEPT, REJECT = "accept", "reject"
ACTIONS = (ACCEPT, REJECT)


class EditConflictError(EditError):
    code = "EDIT_CONFLICT"


@dataclass
class Decision:
    edit_id: str
    document: str
    action: str
    hunks: list[int]  # decided now (accepted or rejected)
    conflicts: list[int] = field(default_factory=list)  # asked to accept, refused
    closed: bool = False  # nothing left pending: the edit file is gone
    seq: int | None = None  # of the history entry

    def to_dict(self) -> dict[str, Any]:
        return {
            "edit_id": self.edit_id,
            "document": self.document,
            "action": self.action,
            "hunks": self.hunks,
            "conflicts": self.conflicts,
            "closed": self.closed,
            "seq": self.seq,
        }


def decide(
    project: Project,
    edit_id: str,
    action: str,
    hunks: Sequence[int] | None = None,
    by: str = ANALYST,
) -> Decision:
    """Accept or reject ``hunks`` of the edit (all pending ones when None); see the module."""
    if action not in ACTIONS:
        raise EditError(f"unknown decision {action!r}", hint="Use 'accept' or 'reject'.")
    path = check_edit_id(project, edit_id)
    with file_lock(path):
        edit = load_edit(project, edit_id)
        project.reload()  # its history is written below: refuse now if project.json is broken
        chosen = choose(edit, hunks)
        conflicts: list[int] = []
        if action == REJECT:
            decided = [h.index for h in chosen]
            for hunk in chosen:
                hunk.status = REJECTED
        else:
            decided, conflicts = _apply(project, edit, chosen)
            for hunk in chosen:
                if hunk.index in decided:
                    hunk.status = ACCEPTED
        decision = Decision(edit.id, edit.document, action, decided, conflicts)
        if decided or not conflicts:
            decision.seq = _record(project, edit, f"{action}_edit", decided, by)
        decision.closed = _store(project, edit)
    if conflicts:
        applied = (
            f"hunk{'s' if len(decided) != 1 else ''} {_list(decided)} went in; " if decided else ""
        )
        raise EditConflictError(
            f"{edit.document}: hunk{'s' if len(conflicts) != 1 else ''} {_list(conflicts)} of "
            f"edit {edit.id} conflict with changes made to the file since the agent proposed "
            f"it; {applied}nothing you wrote was changed",
            hint=f"Reject the conflicting hunks (lantide edits WORKSPACE {project.dirname} "
            f"reject {edit.id} {' '.join(map(str, conflicts))}) and make the change by hand if "
            "you still want it.",
        )
    return decision


def choose(edit: PendingEdit, hunks: Sequence[int] | None) -> list[Hunk]:
    """The hunks a decision names, checked: each exists and is pending; an edit decided
    whole is named whole."""
    pending = edit.pending
    if hunks is None:
        return pending
    by_index = {h.index: h for h in edit.hunks}
    chosen: list[Hunk] = []
    for raw in hunks:
        index = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
        hunk = by_index.get(index) if index is not None else None
        if hunk is None:
            known = f"hunks 0-{len(edit.hunks) - 1}" if edit.hunks else "no hunks"
            raise EditError(
                f"edit {edit.id} of {edit.document} has {known}; there is no hunk {raw!r}",
                hint="List the edit's hunks: lantide edits WORKSPACE PROJECT",
                code="EDIT_UNKNOWN_HUNK",
            )
        if hunk.status != "pending":
            raise EditError(
                f"hunk {hunk.index} of edit {edit.id} ({edit.document}) was {hunk.status} already",
                hint="Only pending hunks can be decided.",
                code="EDIT_HUNK_DECIDED",
            )
        if hunk not in chosen:
            chosen.append(hunk)
    if edit.whole_only and {h.index for h in chosen} != {h.index for h in pending}:
        raise EditError(
            f"edit {edit.id} resolves annotations of {edit.document}: its text and the "
            "annotations' status change together, so it is accepted or rejected whole",
            hint=f"Accept or reject it without naming hunks (accept {edit.id}).",
            code="EDIT_WHOLE_ONLY",
        )
    return chosen


def _apply(project: Project, edit: PendingEdit, chosen: list[Hunk]) -> tuple[list[int], list[int]]:
    """Write the chosen hunks that apply; ``(applied, conflicting)`` hunk indices."""
    if edit.kind == "html":
        return _apply_html(project, edit, chosen)
    from lantide.docs.document import open_document

    doc = open_document(project, edit.kind)
    result = merge(edit.base_text, edit.accepted, chosen, doc.disk_text)
    if edit.resolve is not None:  # whole: the resolution runs on the document as it is now
        if result.conflicts:
            return [], [h.index for h in chosen]
        try:
            doc.resolve_many(edit.resolve, by=edit.by)
        except LantideError as exc:
            raise EditError(
                f"{edit.document}: edit {edit.id} cannot be accepted: {exc.message}",
                hint="The annotations changed since the agent proposed it; reject the edit "
                "and ask the agent again.",
                code="EDIT_CONFLICT",
            ) from None
        return [h.index for h in chosen], []
    if result.applied:
        doc.save_text(result.text, by=edit.by)
    return result.applied, result.conflicts


def _apply_html(
    project: Project, edit: PendingEdit, chosen: list[Hunk]
) -> tuple[list[int], list[int]]:
    from lantide.docs.html_markup import parse_report_html

    path = document_file(project, edit.kind)
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingFileError(path, "HTML Report") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptFileError(path, f"cannot be read ({exc})") from None
    result = merge(edit.base_text, edit.accepted, chosen, current)
    if result.applied:
        parse_report_html(result.text, str(path))  # still one well-formed page
        atomic_write_text(path, result.text)
    return result.applied, result.conflicts


def supersede(project: Project, edit: PendingEdit, *, by: str, newer: str) -> None:
    """The agent replaced ``edit`` by a newer whole text: its pending hunks are closed."""
    path = check_edit_id(project, edit.id)
    with file_lock(path):
        hunks = [h.index for h in edit.pending]
        for hunk in edit.pending:
            hunk.status = SUPERSEDED
        _record(project, edit, "supersede_edit", hunks, by, newer=newer)
        _store(project, edit)


def record_applied(
    project: Project, kind: str, tool: str, before: str, after: str, edit_id: str
) -> int | None:
    """An edit written at once by the ``agent_edits: apply`` setting: recorded as accepted
    by the setting (every hunk); the history entry's seq, None when nothing changed."""
    hunks = compute_hunks(before, after)
    if not hunks:
        return None
    edit = PendingEdit(
        id=edit_id,
        project=project.dirname,
        kind=kind,
        document=relative_path(project, document_file(project, kind)),
        tool=tool,
        by="agent",
        at="",
        base_text=before,
        hunks=hunks,
    )
    return _record(project, edit, "accept_edit", [h.index for h in hunks], SETTING_BY)


def _record(
    project: Project, edit: PendingEdit, action: str, hunks: list[int], by: str, **extra: Any
) -> int:
    fields: dict[str, Any] = {
        "action": action,
        "edit": edit.id,
        "document": edit.document,
        "tool": edit.tool,
        "hunks": hunks,
        **extra,
    }
    if edit.conversation:
        fields["conversation"] = edit.conversation
    written: dict[str, Any] = {}
    project.update(lambda data: written.update(record_edit_decision(data, by, fields)))
    return int(written["seq"])


def _store(project: Project, edit: PendingEdit) -> bool:
    """Write the edit back, or remove it when nothing is left pending; True when removed."""
    if edit.pending:
        write_edit(project, edit)
        return False
    if edit.path is not None:
        edit.path.unlink(missing_ok=True)
    return True


def _list(indices: Sequence[int]) -> str:
    return ", ".join(str(i) for i in indices)


def edit_states(project: Project, conversation_id: str) -> dict[str, str]:
    """What became of each edit a conversation made in ``project`` (for its chat cards):
    ``pending`` (some hunks decided, some not), ``accepted``, ``rejected``, ``partly
    accepted`` or ``superseded``; an edit with nothing decided yet is left out."""
    decided: dict[str, dict[int, str]] = {}
    for entry in project.history:
        action, edit_id = entry.get("action"), entry.get("edit")
        if entry.get("conversation") != conversation_id or not isinstance(edit_id, str):
            continue
        word = {"accept_edit": ACCEPTED, "reject_edit": REJECTED}.get(str(action), SUPERSEDED)
        raw_hunks = entry.get("hunks")
        hunks: list[object] = raw_hunks if isinstance(raw_hunks, list) else []
        marks = decided.setdefault(edit_id, {})
        for index in hunks or [-1]:  # a resolution without text: the edit as a whole
            marks[index if isinstance(index, int) else -1] = word
    pending = {e.id for e in pending_for(project)}
    states: dict[str, str] = {}
    for edit_id, marks in decided.items():
        words = set(marks.values())
        if edit_id in pending:
            states[edit_id] = "pending"
        elif words == {ACCEPTED}:
            states[edit_id] = "accepted"
        elif ACCEPTED in words:
            states[edit_id] = "partly accepted"
        elif words == {SUPERSEDED}:
            states[edit_id] = "superseded"
        else:
            states[edit_id] = "rejected"
    return states
