"""The agent's pending edits of an open Plan or Report, reviewed hunk by hunk, as editors
with AI assistants do (issue 32; the rules are :mod:`lantide.docs.edit_review`'s).

The bar above the editor shows one hunk of the oldest pending edit as a line diff, with
Accept / Reject for it, Accept all / Reject all for the edit, and previous / next. Keys
(:mod:`lantide.ui.shortcuts`): Alt+N / Alt+P anywhere in the tab show the next / previous
hunk and put the focus in the bar; there Ctrl+Return accepts and Ctrl+Backspace rejects
the hunk shown (in the editor Ctrl+Backspace keeps deleting a word). A resolution of
annotations is decided whole (its per-hunk buttons are off).

:class:`PendingEditReview` loads the edits and sends decisions through its tab (a
:class:`ReviewHost`: the Plan/Report tab runs them in its serial queue and reloads its
document in the same step; the HTML Report tab reloads the page after); the bar only
renders.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.documents import document_session as session
from lantide.ui.icons import icon
from lantide.ui.shortcuts import shortcut
from lantide.ui.theme import colors
from lantide.ui.themed import mark_theme, theme_switched

if TYPE_CHECKING:
    from lantide.ui.services import AppServices

ACCEPT, REJECT = "accept", "reject"


def diff_html(diff: str) -> str:
    """A unified diff's lines coloured: added green, removed red (struck), context grey."""
    theme = colors()
    rows = []
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            continue
        text = html.escape(line[1:]) or "&nbsp;"
        if line.startswith("@@"):  # the line numbers; the bar's title names the hunk
            head = line.split(" @@", 1)[0] + " @@"
            rows.append(f"<div style='color:{theme.muted.name()}'>{html.escape(head)}</div>")
        elif line.startswith("+"):
            rows.append(f"<div style='color:{theme.success.name()}'>+ {text}</div>")
        elif line.startswith("-"):
            rows.append(
                f"<div style='color:{theme.danger.name()}; text-decoration:line-through'>"
                f"- {text}</div>"
            )
        elif line.startswith("\\"):
            continue  # "No newline at end of file"
        else:
            rows.append(f"<div style='color:{theme.muted.name()}'>&nbsp; {text}</div>")
    return "<div style='font-family:monospace; white-space:pre-wrap'>" + "".join(rows) + "</div>"


class EditReviewBar(QWidget):
    """Shows one hunk at a time; says what the analyst decided through ``sig_decided``."""

    sig_decided = Signal(str, str, object)  # edit id, "accept"/"reject", [hunk] or None (all)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("EditReviewBar")
        self.edits: list[dict[str, Any]] = []
        self.position = 0  # among the pending hunks of the first edit
        self.busy = False  # a decision is running: no other until it is done
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.previous_button = QToolButton(self)
        self.previous_button.setArrowType(Qt.ArrowType.LeftArrow)
        self.next_button = QToolButton(self)
        self.next_button.setArrowType(Qt.ArrowType.RightArrow)
        self.accept_button = QPushButton(icon("approve"), "Accept", self)
        self.reject_button = QPushButton(icon("reopen"), "Reject", self)
        self.accept_all_button = QPushButton("Accept all", self)
        self.reject_all_button = QPushButton("Reject all", self)
        self.previous_button.setToolTip(f"Previous hunk ({_keys('edit_previous_hunk')})")
        self.next_button.setToolTip(f"Next hunk ({_keys('edit_next_hunk')})")
        self.accept_button.setToolTip(f"Accept this hunk ({_keys('edit_accept_hunk')})")
        self.reject_button.setToolTip(f"Reject this hunk ({_keys('edit_reject_hunk')})")
        self.previous_button.clicked.connect(self.show_previous)
        self.next_button.clicked.connect(self.show_next)
        self.accept_button.clicked.connect(lambda: self.decide_shown(ACCEPT))
        self.reject_button.clicked.connect(lambda: self.decide_shown(REJECT))
        self.accept_all_button.clicked.connect(lambda: self.decide_all(ACCEPT))
        self.reject_all_button.clicked.connect(lambda: self.decide_all(REJECT))
        for key, action in (("edit_accept_hunk", ACCEPT), ("edit_reject_hunk", REJECT)):
            QShortcut(
                shortcut(key),
                self,
                lambda a=action: self.decide_shown(a),
                context=Qt.ShortcutContext.WidgetWithChildrenShortcut,
            )
        self.view = QTextBrowser(self)
        self.view.setMaximumHeight(150)
        # the title and the hunk's arrows above; the diff with the decisions in a column
        # beside it (a narrow tab keeps its height for the editor)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.previous_button, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(self.next_button, 0, Qt.AlignmentFlag.AlignTop)
        decisions = QVBoxLayout()
        decisions.setSpacing(4)
        for button in (
            self.accept_button,
            self.reject_button,
            self.accept_all_button,
            self.reject_all_button,
        ):
            decisions.addWidget(button)
        decisions.addStretch(1)
        body = QHBoxLayout()
        body.addWidget(self.view, 1)
        body.addLayout(decisions)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addLayout(head)
        layout.addLayout(body)
        self.hide()

    # -- what is shown
    @property
    def edit(self) -> dict[str, Any] | None:
        return self.edits[0] if self.edits else None

    def pending_hunks(self) -> list[dict[str, Any]]:
        edit = self.edit
        return [h for h in edit["hunks"] if h["status"] == "pending"] if edit else []

    def shown_hunk(self) -> dict[str, Any] | None:
        hunks = self.pending_hunks()
        return hunks[self.position] if hunks else None

    def set_edits(self, edits: list[dict[str, Any]]) -> None:
        first = self.edit["id"] if self.edit else None
        self.edits = list(edits)
        if not self.edit or self.edit["id"] != first:
            self.position = 0
        self.position = max(0, min(self.position, len(self.pending_hunks()) - 1))
        self._render()

    def _render(self) -> None:
        edit = self.edit
        if edit is None:
            self.hide()
            return
        hunks, shown = self.pending_hunks(), self.shown_hunk()
        name = html.escape(edit["document"].rsplit("/", 1)[-1])
        more = len(self.edits) - 1
        # hunks keep the numbers `lantide edits` and the agent use (from 0)
        where = (
            f"hunk {shown['index']} ({self.position + 1} of {len(hunks)} pending) · "
            f"{_lines(shown['lines'])}"
            if shown
            else "no text change"
        )
        whole = " · decided whole: it resolves annotations" if edit["whole_only"] else ""
        self.title.setText(
            f"<b>The agent's change to {name}, pending your review</b><br>{where}{whole}"
            + (f" · {more} more edit{'s' if more != 1 else ''} after it" if more else "")
        )
        self.view.setHtml(diff_html(shown["diff"]) if shown else "")
        mark_theme(self)
        self.view.setVisible(shown is not None)
        per_hunk = shown is not None and not edit["whole_only"] and not self.busy
        self.accept_button.setEnabled(per_hunk)
        self.reject_button.setEnabled(per_hunk)
        self.accept_all_button.setEnabled(not self.busy)
        self.reject_all_button.setEnabled(not self.busy)
        self.previous_button.setEnabled(len(hunks) > 1)
        self.next_button.setEnabled(len(hunks) > 1)
        self.show()

    def apply_theme(self) -> None:
        self._render()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if theme_switched(self, event) and self.edits:
            self._render()  # the diff's colours are the theme's

    def set_busy(self, busy: bool) -> None:
        """While a decision runs the buttons are off; the focus stays where it is (the keys
        go on working for the next hunk once it is done)."""
        self.busy = busy
        self._render()

    # -- moving and deciding
    def show_next(self) -> None:
        hunks = self.pending_hunks()
        if hunks:
            self.position = (self.position + 1) % len(hunks)
            self._render()

    def show_previous(self) -> None:
        hunks = self.pending_hunks()
        if hunks:
            self.position = (self.position - 1) % len(hunks)
            self._render()

    def decide_shown(self, action: str) -> None:
        edit, hunk = self.edit, self.shown_hunk()
        if edit is None or hunk is None or edit["whole_only"] or self.busy:
            return
        self.sig_decided.emit(edit["id"], action, [hunk["index"]])

    def decide_all(self, action: str) -> None:
        if self.edit is not None and not self.busy:
            self.sig_decided.emit(self.edit["id"], action, None)


def _lines(span: str) -> str:
    """``lines 3-5``, ``line 4``, ``after line 4``, from
    :func:`lantide.docs.edit_hunks.line_span`."""
    if span.startswith(("after", "at")):
        return span.replace("after ", "after line ")
    return f"lines {span}" if "-" in span else f"line {span}"


def _keys(key: str) -> str:
    return shortcut(key).toString()


def review_state(edit: dict[str, Any], action: str, decided: list[int], closed: bool) -> str:
    """What the edit is after a decision, for the chat's card: accepted, rejected, partly
    accepted, or still pending."""
    if not closed:
        return "pending"
    statuses = {h["index"]: h["status"] for h in edit["hunks"]}
    for index in decided:
        statuses[index] = "accepted" if action == ACCEPT else "rejected"
    final = set(statuses.values()) or {"accepted" if action == ACCEPT else "rejected"}
    if final == {"accepted"}:
        return "accepted"
    if "accepted" in final:
        return "partly accepted"
    return "rejected"


class ReviewHost(Protocol):
    """What a tab gives its review of pending edits (the Plan/Report tab, the HTML Report
    tab): where its document is, how its jobs run, what to do after a decision."""

    services: AppServices
    project: str
    sig_title_changed: Any

    def review_kind(self) -> str: ...  # plan, report or html

    def review_path(self) -> Path: ...

    def run_review_job(
        self, fn: Callable, args: tuple, done: Callable, what: str, on_error: Callable
    ) -> None: ...

    def review_decision(
        self, edit_id: str, action: str, hunks: list[int] | None
    ) -> tuple[Callable, tuple] | None: ...

    def after_review(self, state: session.ReviewState) -> None: ...

    def is_dirty(self) -> bool: ...

    def title(self) -> str: ...

    def report(self, exc: BaseException, what: str) -> None: ...


class PendingEditReview(QObject):
    """Connects a tab to its pending edits (see the module's doc)."""

    def __init__(self, tab: QWidget, host: ReviewHost) -> None:
        super().__init__(tab)
        self.host = host
        self.bar = EditReviewBar(tab)
        self.bar.sig_decided.connect(self.decide)
        host.services.sig_edit_proposed.connect(self._proposed)
        host.services.sig_files_changed.connect(self._files_changed)
        for key, move in (("edit_next_hunk", self.bar.show_next), ("edit_previous_hunk", None)):
            QShortcut(
                shortcut(key),
                tab,
                lambda m=move: self._move(m),
                context=Qt.ShortcutContext.WidgetWithChildrenShortcut,
            )

    @property
    def has_pending(self) -> bool:
        return bool(self.bar.edits)

    def _move(self, move: Callable[[], None] | None) -> None:
        if not self.has_pending:
            return
        (move or self.bar.show_previous)()
        self.bar.view.setFocus() if self.bar.view.isVisible() else self.bar.setFocus()

    def _proposed(self, path: str, _edit_id: str) -> None:
        if Path(path).resolve() == self.host.review_path().resolve():
            self.refresh()

    def _files_changed(self, changes: list) -> None:
        if any(getattr(c, "project", None) == self.host.project for c in changes):
            self.refresh()  # `lantide edits` may have decided some meanwhile

    def refresh(self) -> None:
        host = self.host
        host.run_review_job(
            session.pending_edits,
            (host.services.workspace.root, host.project, host.review_kind()),
            self._show,
            "Reading the agent's pending edits",
            lambda exc: host.report(exc, "Reading the agent's pending edits"),
        )

    def _show(self, state: session.ReviewState) -> None:
        before = self.has_pending
        self.bar.set_edits(state.edits)
        for problem in state.problems:
            self.host.services.post_message(problem, "warning")
        if before != self.has_pending:
            self.host.sig_title_changed.emit(self.host.title())

    def decide(self, edit_id: str, action: str, hunks: list[int] | None) -> None:
        host = self.host
        if action == ACCEPT and host.is_dirty():
            name = host.review_path().name
            host.services.post_message(
                f"{name} has unsaved edits: save or discard them, then accept the agent's "
                "change (it is written to the file).",
                "warning",
            )
            return
        job = host.review_decision(edit_id, action, hunks)
        if job is None:
            return
        edit = next((e for e in self.bar.edits if e["id"] == edit_id), None)
        self.bar.set_busy(True)  # one decision at a time

        def done(state: session.ReviewState) -> None:
            self.bar.busy = False
            host.after_review(state)
            self._show(state)
            if state.error is not None:
                host.report(state.error, "Accepting the agent's edit")
            decision = state.decision or {}
            if edit is not None and decision:
                host.services.sig_edit_decided.emit(
                    edit_id,
                    review_state(edit, action, decision["hunks"], bool(decision["closed"])),
                )

        def failed(exc: BaseException) -> None:
            self.bar.set_busy(False)
            host.report(exc, "Deciding the agent's edit")
            self.refresh()

        fn, args = job
        host.run_review_job(fn, args, done, "Deciding the agent's edit", failed)
