"""The evidence strip of a Plan or Report tab (issue 16).

- Plan tab: the project's status and the Plan approval ("Approved … by …", "Not approved",
  or "Changed since approval"), and **Approve Plan**: the analyst's approval, which moves
  the project to executing (:meth:`lantide.workspace.model.Project.approve_plan`); it asks
  first while annotations are open or edits unsaved, and **Withdraw approval** undoes it
  (:mod:`lantide.ui.documents.plan_approval`).
- Report tab: **Check evidence** runs ``lantide report check`` on the Report on disk and
  lists the counts and each problem (a click goes to its line); the kinds of the ledger
  steps label the preview's citations, and a citation's link opens its step in the ledger.
  **Publish HTML** writes ``report.html`` (``lantide report html``) and opens it in its tab;
  when it would overwrite edited sections it names them and offers to overwrite.

Every read runs in a worker; the widgets only show results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.documents import plan_approval
from lantide.ui.documents.plan_approval import ProjectState
from lantide.ui.sql.query_history_view import local_time
from lantide.ui.theme import colors
from lantide.ui.themed import mark_theme, theme_switched

if TYPE_CHECKING:
    from lantide.agent.report_check import CheckSummary

LINE_ROLE = Qt.ItemDataRole.UserRole + 1
# the evidence classes in the order the strip lists them (lantide.agent.report_check)
STATUSES = (
    "matching",
    "check_failed",
    "not_matching",
    "exploratory",
    "missing",
    "uncited",
    "unreadable",
)
MAX_PROBLEM_ROWS = 4  # more scroll


def approval_text(project: ProjectState) -> tuple[str, str]:
    """(text, tone) of a project's status and Plan approval; tone: ok, warning, muted."""
    status = project.get("status", "planning")
    approval = project.get("approval") or {}
    if not approval.get("approved"):
        return f"Status: {status} · Plan not approved", "muted"
    at = approval.get("at")  # project.json may be hand-edited: a time is text
    when = local_time(at if isinstance(at, str) else None)
    who = approval.get("user") or approval.get("by") or "the analyst"
    if approval.get("changed_since_approval"):
        return (
            f"Status: {status} · Plan changed since approval ({when} by {who}): approve it again",
            "warning",
        )
    return f"Status: {status} · Plan approved {when} by {who}", "ok"


def read_project(context, root, project: str) -> ProjectState:
    from lantide.workspace.model import Project

    p = Project.load(root, project)
    return {"status": p.status, "approval": p.approval()}


def approve_plan(context, root, project: str, seen_text: str | None) -> ProjectState:
    from lantide.workspace.model import Project

    Project.load(root, project).approve_plan(seen_text=seen_text)
    return read_project(context, root, project)


def read_step_kinds(context, root, project: str) -> dict[str, tuple[str, str, str]]:
    """step id -> (badge, conversation id, tooltip note), over every ledger of the
    workspace; the badge (formal, exploratory, check_failed) and the note (the numbers
    cited to the step, their cells, failed checks and waivers) are the engine's."""
    from lantide.agent.report_check import StepIndex, check_text, citation_notes
    from lantide.errors import LantideError
    from lantide.workspace import layout
    from lantide.workspace.model import Project

    index = StepIndex.of_workspace(layout.ledger_dir(root), project)
    notes: dict[str, str] = {}
    try:
        report = Project.load(root, project).report_path
        notes = citation_notes(check_text(report.read_text(encoding="utf-8"), index))
    except (OSError, UnicodeDecodeError, LantideError):
        pass  # no Report yet, or malformed citations (Check evidence names them)
    out: dict[str, tuple[str, str, str]] = {}
    for step_id, badge in index.badges().items():
        indexed = index.get(step_id)  # there: badges() lists the index's own steps
        conversation = indexed.step.get("conversation_id") if indexed is not None else None
        out[step_id] = (badge, str(conversation or ""), notes.get(step_id, ""))
    return out


def read_chart_marks(context, root, project: str) -> dict[str, str]:
    """Chart src -> the note its preview shows (its steps' failed checks, waivers): the
    engine's rule (lantide.agent.report_charts.chart_check_notes)."""
    from lantide.agent.report_charts import chart_check_notes
    from lantide.agent.report_check import StepIndex
    from lantide.workspace import layout
    from lantide.workspace.model import Project

    p = Project.load(root, project)
    try:
        text = p.report_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return chart_check_notes(p, text, StepIndex.of_workspace(layout.ledger_dir(root), project))


def check_report(context, root, project: str) -> CheckSummary:
    from lantide.agent.report_check import check_project
    from lantide.workspace.model import Project, Workspace

    ws = Workspace.open(root, lock=False)
    try:
        return check_project(ws, Project.load(ws.root, project)).to_dict()
    finally:
        ws.close()


class EvidenceBar(QWidget):
    """Above the editor of a Plan or Report tab."""

    sig_go_to_line = Signal(int)  # 1-based
    sig_kinds_changed = Signal()
    sig_chart_marks = Signal(dict)  # chart src -> note (its steps' failed checks)

    def __init__(self, services, project: str, kind: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName(f"EvidenceBar-{kind}")
        self.services = services
        self.project = project
        self.kind = kind
        self.kinds: dict[str, tuple[str, str, str]] = {}
        # the Plan text the tab shows (None: not loaded; False: unsaved edits), set by the tab
        self.seen_plan: Callable[[], str | bool | None] | None = None
        # the Plan tab's open annotations and its save (waiting for the write), set by the tab
        self.open_annotations: Callable[[], int] | None = None
        self.save_plan: Callable[[], bool] | None = None
        self._status = "planning"
        self._tone_name = "muted"
        mark_theme(self)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.button = QPushButton("Approve Plan" if kind == "plan" else "Check evidence", self)
        self.button.setObjectName("ApprovePlanButton" if kind == "plan" else "CheckEvidenceButton")
        self.button.setToolTip(
            "Approve the Plan as it is now: the project moves to executing (only the analyst "
            "approves; the agent can only propose a review)"
            if kind == "plan"
            else "Check every number of the Report against the ledger step it cites"
        )
        self.button.clicked.connect(self.approve if kind == "plan" else self.check)
        self.withdraw_button = QPushButton("Withdraw approval", self)
        self.withdraw_button.setObjectName("WithdrawApprovalButton")
        self.withdraw_button.setToolTip(
            "Withdraw the Plan approval: the project goes back to plan_review (kept in the "
            "project's history)"
        )
        self.withdraw_button.clicked.connect(self.withdraw)
        self.withdraw_button.setVisible(False)
        self.publish_button = QPushButton("Publish HTML", self)
        self.publish_button.setObjectName("PublishHtmlButton")
        self.publish_button.setToolTip(
            "Write report.html, the self-contained HTML Report, from this Report on disk"
        )
        self.publish_button.clicked.connect(lambda: self.publish_html())
        self.publish_button.setVisible(kind == "report")
        self._overwrite_next = False
        self.problems = QListWidget(self)
        self.problems.setObjectName("EvidenceProblems")
        self.problems.setVisible(False)
        self.problems.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.problems.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.problems.setUniformItemSizes(True)
        self.problems.itemActivated.connect(self._problem_activated)
        self.problems.itemClicked.connect(self._problem_activated)
        row = QHBoxLayout()
        row.setContentsMargins(8, 3, 8, 3)
        row.addWidget(self.label, 1)
        row.addWidget(self.button)
        row.addWidget(self.withdraw_button)
        row.addWidget(self.publish_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.problems)
        services.sig_step_recorded.connect(lambda _step: self.refresh())
        self.refresh()

    # -- reading --------------------------------------------------------------------------
    def refresh(self) -> None:
        if self.kind == "plan":
            self._submit(read_project, self._show_project, "Reading the project")
            return
        self.refresh_kinds_only()
        if not self.problems.isVisible() and not self.label.text():
            self.label.setText("Each number cites its ledger step: 4.3% [^s:STEP_ID]")
            self._tone("muted")

    def _submit(self, fn, on_result, what: str) -> None:
        self.services.workers.submit(
            fn,
            self.services.workspace.root,
            self.project,
            on_result=on_result,
            on_error=lambda exc: self.services.report_error(exc, what),
            name=what,
        )

    def _show_project(self, project: ProjectState) -> None:
        text, tone = approval_text(project)
        self.label.setText(text)
        self._tone(tone)
        approval = project.get("approval") or {}
        fresh = approval.get("approved") and not approval.get("changed_since_approval")
        self.button.setEnabled(not fresh)
        self.button.setText(
            "Approve Plan again" if approval.get("changed_since_approval") else "Approve Plan"
        )
        self._status = str(project.get("status", "planning"))
        self.withdraw_button.setVisible(
            bool(approval.get("approved")) and self._status not in ("delivered", "archived")
        )
        self.withdraw_button.setEnabled(True)

    def _show_kinds(self, kinds: dict[str, tuple[str, str, str]]) -> None:
        if kinds != self.kinds:
            self.kinds = kinds
            self.sig_kinds_changed.emit()

    def kind_of(self) -> dict[str, str]:
        return {step_id: kind for step_id, (kind, _conv, _note) in self.kinds.items()}

    def notes(self) -> dict[str, str]:
        """step id -> the tooltip of its citations (numbers, matched cells, checks)."""
        return {step_id: note for step_id, (_kind, _conv, note) in self.kinds.items() if note}

    def open_step(self, step_id: str) -> None:
        """A citation was clicked: its step in the ledger panel."""
        kind, conversation, _note = self.kinds.get(step_id, (None, "", ""))
        if kind is None:
            self.services.post_message(f"Step {step_id} is in no ledger of this workspace")
            return
        self.services.sig_step_selected.emit(conversation, step_id)

    # -- acting ---------------------------------------------------------------------------
    def approve(self) -> None:
        """Approve the Plan the analyst sees, after asking while annotations are open or
        edits unsaved (saved first then); refused in the worker when the file changed
        since the tab read it."""
        from lantide.workspace.lifecycle import approval_concerns

        seen = self.seen_plan() if self.seen_plan is not None else None
        unsaved = seen is False
        open_count = self.open_annotations() if self.open_annotations is not None else 0
        concerns = approval_concerns(open_count, unsaved)
        if not plan_approval.ask_to_approve(self, self.project, concerns, unsaved):
            return
        if unsaved:
            if self.save_plan is None or not self.save_plan():
                self.services.post_message(
                    "The Plan was not saved, so nothing was approved.", "warning"
                )
                return
            seen = self.seen_plan() if self.seen_plan is not None else None
            if not isinstance(seen, str):
                return
        self.button.setEnabled(False)

        def done(project):
            self._show_project(project)
            self.services.post_message(f"Plan of {self.project} approved: executing")

        def failed(exc: BaseException) -> None:
            self.services.report_error(exc, "Approving the Plan")
            self.refresh()

        self.services.workers.submit(
            approve_plan,
            self.services.workspace.root,
            self.project,
            seen,
            on_result=done,
            on_error=failed,
            name="Approving the Plan",
        )

    def withdraw(self) -> None:
        """Withdraw the approval after asking; the history keeps it."""
        if not plan_approval.ask_to_withdraw(self, self.project, self._status):
            return
        self.withdraw_button.setEnabled(False)

        def done(project: ProjectState) -> None:
            self._show_project(project)
            self.services.post_message(
                f"Approval of the Plan of {self.project} withdrawn: {project['status']}"
            )

        def failed(exc: BaseException) -> None:
            self.services.report_error(exc, "Withdrawing the approval")
            self.refresh()

        self.services.workers.submit(
            plan_approval.withdraw_approval,
            self.services.workspace.root,
            self.project,
            on_result=done,
            on_error=failed,
            name="Withdrawing the approval",
        )

    def check(self) -> None:
        self.button.setEnabled(False)
        self.label.setText("Checking the Report's numbers…")

        def failed(exc):
            self.button.setEnabled(True)
            self.problems.setVisible(False)
            self.label.setText(f"Check failed: {getattr(exc, 'message', exc)}")
            self._tone("warning")

        self.services.workers.submit(
            check_report,
            self.services.workspace.root,
            self.project,
            on_result=self._show_check,
            on_error=failed,
            name="Checking evidence",
        )
        self.refresh_kinds_only()

    def publish_html(self) -> None:
        """Publish the HTML Report; an edit-keeping refusal turns the button into
        "Publish, overwriting edits" for the next click."""
        from lantide.ui.documents.html_report_tab import charts_not_drawn, submit_publish

        overwrite, self._overwrite_next = self._overwrite_next, False
        self.publish_button.setEnabled(False)
        self.publish_button.setText("Publish HTML")

        def done(result: dict[str, Any]) -> None:
            from lantide.ui.services import TAB_REPORT
            from lantide.workspace.layout import REPORT_HTML_NAME

            self.publish_button.setEnabled(True)
            kept = result.get("kept_edits") or []
            self.services.post_message(
                f"Published {self.project}/report.html"
                + (f" (kept edited sections: {', '.join(kept)})" if kept else "")
                + charts_not_drawn(result)
            )
            self.services.notify_paths_changed([result["path"]])
            self.services.request_open(TAB_REPORT, self.project, REPORT_HTML_NAME)

        def refused(message: str, edits_would_be_lost: bool) -> None:
            self.publish_button.setEnabled(True)
            if edits_would_be_lost:  # the next click overwrites them
                self._overwrite_next = True
                self.publish_button.setText("Publish, overwriting edits")
            self.label.setText(f"Not published: {message}")
            self._tone("warning")

        submit_publish(
            self.services,
            self.project,
            overwrite,
            owner=self,
            on_published=done,
            on_refused=refused,
        )

    def refresh_kinds_only(self) -> None:
        self._submit(read_step_kinds, self._show_kinds, "Reading the ledger")
        self._submit(read_chart_marks, self.sig_chart_marks.emit, "Reading the charts' steps")

    def _show_check(self, result: dict[str, Any]) -> None:
        self.button.setEnabled(True)
        counts = result["counts"]
        parts = [f"{counts[k]} {k.replace('_', ' ')}" for k in STATUSES if counts.get(k)]
        summary = f"{result['numbers']} numbers: " + (", ".join(parts) or "none")
        self.label.setText(("✓ Evidence checks clean · " if result["ok"] else "✗ ") + summary)
        self._tone("ok" if result["ok"] else "warning")
        self.problems.clear()
        for problem in result["problems"]:
            steps = f" [{', '.join(problem['steps'])}]" if problem["steps"] else ""
            item = QListWidgetItem(
                f"line {problem['line']}: {problem['number']} — "
                f"{problem['status'].replace('_', ' ')}{steps}: "
                f"{problem['message']}"
            )
            item.setData(LINE_ROLE, problem["line"])
            item.setToolTip(item.text())
            self.problems.addItem(item)
        self.problems.setVisible(bool(result["problems"]))
        if result["problems"]:  # as tall as its rows, at most MAX_PROBLEM_ROWS: the editor stays
            rows = min(self.problems.count(), MAX_PROBLEM_ROWS)
            self.problems.setFixedHeight(
                rows * self.problems.sizeHintForRow(0) + 2 * self.problems.frameWidth() + 2
            )

    def _problem_activated(self, item: QListWidgetItem) -> None:
        self.sig_go_to_line.emit(int(item.data(LINE_ROLE)))

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if theme_switched(self, event):  # light/dark: the label's colour is in its sheet
            self._tone(self._tone_name)

    def _tone(self, tone: str) -> None:
        self._tone_name = tone
        c = colors()
        color = {"ok": c.success, "warning": c.warning, "muted": c.muted}[tone]
        self.label.setStyleSheet(f"color: {color.name()};")
