"""Approve Plan asks first, and an approval can be withdrawn: the Plan tab's side of
:mod:`lantide.workspace.lifecycle` (which decides what is asked and what a withdrawal does).

- Approving while annotations of the Plan are open, or with unsaved edits, asks: the
  concerns are listed; *Approve anyway* (or *Save and approve*: the approval is of the Plan
  on disk) or Cancel.
- *Withdraw approval* asks, then withdraws it in a worker; the history keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:
    from lantide.workspace.lifecycle import ApprovalState


class ProjectState(TypedDict):
    """What the Plan's evidence bar shows of a project: its status and its Plan approval."""

    status: str
    approval: ApprovalState


def ask_to_approve(parent: QWidget, project: str, concerns: list[str], unsaved: bool) -> bool:
    """True when the analyst confirms approving despite ``concerns`` (none: no question)."""
    if not concerns:
        return True
    box = approval_question(parent, project, concerns, unsaved)
    box.exec()
    return box.clickedButton() is box.property("approve_button")


def approval_question(
    parent: QWidget, project: str, concerns: list[str], unsaved: bool
) -> QMessageBox:
    """The question box of :func:`ask_to_approve` (not shown yet)."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Approve the Plan?")
    box.setText(f"Approve the Plan of {project}? " + "; ".join(concerns) + ".")
    box.setInformativeText(
        "Approving moves the project to executing: queries with a purpose then count as "
        "formal evidence. You can withdraw the approval later."
    )
    approve = box.addButton(
        "Save and approve" if unsaved else "Approve anyway", QMessageBox.ButtonRole.AcceptRole
    )
    box.setProperty("approve_button", approve)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box


def ask_to_withdraw(parent: QWidget, project: str, status: str) -> bool:
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Withdraw the approval?")
    back = (
        " The project goes back to plan_review." if status in ("executing", "report_review") else ""
    )
    box.setText(f"Withdraw the approval of the Plan of {project}?{back}")
    box.setInformativeText(
        "The withdrawal is kept in the project's history. Queries count as formal evidence "
        "again once the Plan is approved again."
    )
    withdraw = box.addButton("Withdraw approval", QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is withdraw


def withdraw_approval(context, root, project: str) -> ProjectState:
    """In a worker: the analyst withdraws the approval; the project as the bar shows it."""
    from lantide.workspace.model import Project

    p = Project.load(root, project)
    p.withdraw_approval()
    return {"status": p.status, "approval": p.approval()}
