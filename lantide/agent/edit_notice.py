"""What the model is told about the analyst's review of its edits (DESIGN.md section 9).

An edit tool's result says the edit is pending. On the model's next turn the ``state_notes``
layer (``prompts/sections/conditional.md.j2``) says which hunks of its edits the analyst
accepted or rejected since its last turn, and which of its edits still wait: the decisions
are read from the project's history (``accept_edit`` / ``reject_edit`` entries of edits
this conversation made), between two marks the conversation keeps: at the start of each
turn an ``edit_decisions_seen`` event records the history's last ``seq``. The notice of a
turn covers the decisions after the previous turn's mark up to this turn's, so it is the
same in every request of the turn (the start of the prompt stays cacheable) and each
decision is told once. A conversation reopened by ``lantide chat`` (one turn per process)
reads the same marks from its file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lantide.errors import LantideError

if TYPE_CHECKING:
    from lantide.agent.conversation import Conversation
    from lantide.workspace.model import Project

SEEN_EVENT = "edit_decisions_seen"
TOLD_ACTIONS = {"accept_edit": "accepted", "reject_edit": "rejected"}
MAX_TOLD = 8  # decisions named in one notice (the newest)


def _history(project: Project) -> list[dict[str, Any]]:
    from lantide.workspace.model import Project as ProjectType

    try:
        return ProjectType.load(project.workspace_root, project.dirname).history
    except LantideError:
        return []


def mark_turn(conversation: Conversation, turn: int, project: Project | None) -> None:
    """Record where the project's history stands as turn ``turn`` starts."""
    if project is None:
        return
    from lantide.workspace.lifecycle import last_seq

    seq = last_seq(_history(project))
    conversation.add_event(SEEN_EVENT, turn, project=project.dirname, seq=seq)


def review_notice(conversation: Conversation, project: Project | None) -> dict[str, Any]:
    """``{"decisions": [{edit, document, action, hunks}], "pending": [edit ids]}`` for the
    state notes: this conversation's edits decided since its last turn, and still pending."""
    if project is None:
        return {"decisions": [], "pending": []}
    from lantide.docs.pending_edits import pending_for

    marks = [
        seq
        for e in conversation.events((SEEN_EVENT,))
        if e.get("project") == project.dirname and isinstance(seq := e.get("seq"), int)
    ]
    decisions: list[dict[str, Any]] = []
    if len(marks) >= 2:
        low, high = marks[-2], marks[-1]
        for entry in _history(project):
            seq = entry.get("seq")
            if (
                isinstance(seq, int)
                and low < seq <= high
                and entry.get("action") in TOLD_ACTIONS
                and entry.get("conversation") == conversation.id
                and entry.get("hunks")
            ):
                decisions.append(
                    {
                        "edit": entry.get("edit"),
                        "document": entry.get("document"),
                        "action": TOLD_ACTIONS[entry["action"]],
                        "hunks": entry.get("hunks"),
                    }
                )
    pending = [e.id for e in pending_for(project) if e.conversation == conversation.id]
    return {"decisions": decisions[-MAX_TOLD:], "pending": pending}
