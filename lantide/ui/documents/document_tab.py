"""A Plan or Report tab: Markdown editor, live preview, annotations.

Layout: a toolbar (Save, Annotate, Find, Preview, *Resolve (N)*), the review bar of the
agent's pending edits (:mod:`lantide.ui.documents.edit_review_bar`), then the editor (with
its find bar and inline comment box), the preview (or, after an external change, the
version on disk side by side) and the annotations list.

Every read and write of the document runs in a worker, one at a time per tab
(:mod:`lantide.ui.documents.document_session`); the widgets only show snapshots. Ctrl+S saves
atomically through the docs layer. A change on disk reloads a clean tab; a dirty tab asks
keep mine / take theirs / show both. Annotation operations that rewrite the text save
pending edits first, in the same step, so marks and text never disagree on disk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QLabel,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.adaptive_layout import StackWhenNarrow
from lantide.ui.documents import document_session as session
from lantide.ui.documents.annotation_list import AnnotationListWidget
from lantide.ui.documents.chart_images import ChartImages
from lantide.ui.documents.document_preview import DocumentPreviewWidget
from lantide.ui.documents.edit_review_bar import PendingEditReview
from lantide.ui.documents.evidence_bar import EvidenceBar
from lantide.ui.documents.external_change import (
    KEEP_MINE,
    SHOW_BOTH,
    TAKE_THEIRS,
    CompareVersionsWidget,
    ExternalChangeDialog,
)
from lantide.ui.documents.inline_comment import InlineCommentWidget
from lantide.ui.documents.markdown_editor import MarkdownEditorWidget
from lantide.ui.find_replace import FindReplaceBarWidget
from lantide.ui.icons import icon
from lantide.ui.services import AppServices
from lantide.ui.shortcuts import shortcut

log = logging.getLogger(__name__)
LIVE_RENDER_MS = 250
PREVIEW_BESIDE_MIN_WIDTH = 640  # narrower: the preview goes below the editor


class DocumentTabWidget(QWidget):
    sig_title_changed = Signal(str)
    sig_dirty_changed = Signal(bool)
    sig_snapshot_applied = Signal()  # after load, save, an operation or a reload
    sig_operation_failed = Signal(object)  # the exception
    # made by _build(), which __init__ calls before it uses them
    editor: MarkdownEditorWidget
    right_stack: QStackedWidget

    def __init__(
        self, services: AppServices, project: str, kind: str, parent: QWidget | None = None
    ):
        from lantide.docs import DocumentMonitor

        super().__init__(parent)
        self.services = services
        self.project = project
        self.kind = kind
        self.setObjectName(f"DocumentTab-{project}-{kind}")
        self.snapshot: session.DocumentSnapshot | None = None
        self.load_error: BaseException | None = None
        self.file_name = f"{kind}.md"
        self.monitor = DocumentMonitor(services.workspace.root)
        self._queue: list[tuple] = []
        self._busy = False
        self._render_pending = False
        self._closed = False
        self._build()
        self.editor.document().setModified(False)  # setting margins counts as a change
        self._render_timer = QTimer(self, singleShot=True, interval=LIVE_RENDER_MS)
        self._render_timer.timeout.connect(self._render_live)
        self.editor.document().modificationChanged.connect(self._modification_changed)
        self.editor.textChanged.connect(self._text_changed)
        services.sig_files_changed.connect(self._files_changed)
        self._enqueue(
            session.load_document,
            (services.workspace.root, project, kind),
            self._loaded,
            "Opening the document",
            on_error=self._load_failed,
        )

    # -- building --------------------------------------------------------------------------
    def _build(self) -> None:
        self.toolbar = QToolBar(self)
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.act_save = self.toolbar.addAction(icon("save"), "Save", self.save)
        self.act_save.setToolTip(f"Save ({shortcut('save').toString()})")
        self.act_annotate = self.toolbar.addAction(
            icon("annotate"), "Annotate", self.annotate_selection
        )
        self.act_annotate.setToolTip(
            f"Annotate the selected text ({shortcut('annotate').toString()})"
        )
        self.act_find = self.toolbar.addAction(icon("find"), "Find", self.show_find)
        self.act_preview = self.toolbar.addAction(icon("preview"), "Preview")
        self.act_preview.setCheckable(True)
        self.act_preview.setChecked(True)
        self.act_preview.setShortcut(shortcut("toggle_preview"))
        self.act_preview.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.act_preview.toggled.connect(lambda on: self.right_stack.setVisible(on))
        self.addAction(self.act_preview)
        self.state_label = QLabel(self)
        self.state_label.setContentsMargins(12, 0, 0, 0)
        self.toolbar.addWidget(self.state_label)
        spacer = QWidget(self)
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.toolbar.addWidget(spacer)
        self.resolve_button = QToolButton(self)
        self.resolve_button.setObjectName("ResolveButton")
        self.resolve_button.setIcon(icon("resolve", "accent"))
        self.resolve_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.resolve_button.setToolTip("Ask the agent to resolve the open annotations")
        self.resolve_button.clicked.connect(self.ask_agent_to_resolve)
        self.toolbar.addWidget(self.resolve_button)

        self.editor = MarkdownEditorWidget(self)
        self.editor.setReadOnly(True)  # until loaded
        self.editor.sig_annotate_requested.connect(self.annotate_selection)
        self.editor.sig_mark_activated.connect(self.select_annotation)
        self.editor.verticalScrollBar().valueChanged.connect(self._editor_scrolled)
        self.find_bar = FindReplaceBarWidget(self.editor, self)
        for key, backwards in (("find_next", False), ("find_previous", True)):
            QShortcut(
                shortcut(key),
                self,
                lambda b=backwards: self.find_bar.find_next(b),
                context=Qt.ShortcutContext.WidgetWithChildrenShortcut,
            )
        self.comment_box = InlineCommentWidget(self)  # not the editor: it may be narrow
        self.comment_box.sig_comment_submitted.connect(self._comment_submitted)
        editor_column = QWidget(self)
        col = QVBoxLayout(editor_column)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.editor, 1)
        col.addWidget(self.find_bar)

        self.preview = DocumentPreviewWidget(self)
        self.preview.set_chart_images(ChartImages(self.services, self.project, self))
        self.preview.sig_annotation_clicked.connect(self.select_annotation)
        self.compare = CompareVersionsWidget(self)
        self.compare.sig_choice_made.connect(self._compare_choice)
        self.right_stack = QStackedWidget(self)
        self.right_stack.addWidget(self.preview)
        self.right_stack.addWidget(self.compare)

        self.annotation_list = AnnotationListWidget(self)
        al = self.annotation_list
        al.sig_annotation_selected.connect(self.select_annotation)
        al.sig_reply_requested.connect(lambda i, t: self.run_operation("reply", id=i, text=t))
        al.sig_resolve_requested.connect(lambda i, v: self.run_operation("resolve", id=i, **v))
        al.sig_reopen_requested.connect(lambda i: self.run_operation("reopen", id=i))
        al.sig_delete_requested.connect(lambda i: self.run_operation("delete", id=i))
        al.sig_reattach_requested.connect(self._reattach)
        al.sig_restore_requested.connect(lambda i: self.run_operation("undelete", id=i))

        # The preview sits beside the editor, or below it when the tab is narrow.
        self.text_splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.text_splitter.addWidget(editor_column)
        self.text_splitter.addWidget(self.right_stack)
        self.text_splitter.setSizes([520, 420])
        self.preview_placement = StackWhenNarrow(self.text_splitter, PREVIEW_BESIDE_MIN_WIDTH)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.text_splitter)
        self.splitter.addWidget(al)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([940, 300])
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        self.edit_review = PendingEditReview(self, self)  # the agent's pending edits
        layout.addWidget(self.edit_review.bar)
        self.evidence = EvidenceBar(self.services, self.project, self.kind, self)
        layout.addWidget(self.evidence)  # Plan approval / Report evidence (issue 16)
        self.evidence.sig_go_to_line.connect(self.go_to_line)
        self.sig_snapshot_applied.connect(self.evidence.refresh)  # saved, reloaded: changed?
        self.evidence.seen_plan = lambda: (
            False if self.is_dirty() else self.snapshot.disk_text if self.snapshot else None
        )
        self.evidence.open_annotations = self.open_count
        self.evidence.save_plan = self.save_and_wait
        if self.kind == "report":
            self.preview.sig_step_clicked.connect(self.evidence.open_step)
            self.evidence.sig_chart_marks.connect(self.preview.set_chart_marks)
            self.evidence.sig_kinds_changed.connect(
                lambda: self.preview.set_step_kinds(self.evidence.kind_of(), self.evidence.notes())
            )
        layout.addWidget(self.splitter, 1)
        self._update_resolve_button(0)

    # -- the tab contract ------------------------------------------------------------------
    def title(self) -> str:
        pending = getattr(self, "edit_review", None)
        return f"{self.file_name} (pending)" if pending and pending.has_pending else self.file_name

    def is_dirty(self) -> bool:
        return self.snapshot is not None and self.editor.document().isModified()

    def is_busy(self) -> bool:
        return self._busy

    def unsaved_text(self) -> str | None:
        """The editor's text (marks included, as the file will be) while it is not saved."""
        return self.editor.toPlainText() if self.is_dirty() else None

    def _modification_changed(self, dirty: bool) -> None:
        self.sig_dirty_changed.emit(dirty)
        self.sig_title_changed.emit(self.title())

    # -- the serial worker queue -------------------------------------------------------------
    def _enqueue(
        self,
        fn: Callable,
        args: tuple,
        on_result: Callable,
        what: str,
        on_error: Callable | None = None,
    ) -> None:
        self._queue.append((fn, args, on_result, what, on_error))
        self._next()

    def _next(self) -> None:
        if self._busy or not self._queue or self._closed:
            return
        fn, args, on_result, what, on_error = self._queue.pop(0)
        self._busy = True

        def done(result):
            self._busy = False
            if not self._closed:
                on_result(result)
            self._next()

        def failed(exc):
            self._busy = False
            if not self._closed:
                (on_error or (lambda e: self._report(e, what)))(exc)
            self._next()

        self.services.workers.submit(fn, *args, on_result=done, on_error=failed, name=what)

    # what the tab's parts use
    def report(self, exc: BaseException, what: str) -> None:
        self._report(exc, what)

    # the review of the agent's pending edits (edit_review_bar.ReviewHost)
    def review_kind(self) -> str:
        return self.kind

    def review_path(self) -> Path:
        return self.services.workspace.project(self.project).document_path(self.kind)

    def run_review_job(
        self, fn: Callable, args: tuple, done: Callable, what: str, on_error: Callable
    ) -> None:
        self._enqueue(fn, args, done, what, on_error)

    def review_decision(
        self, edit_id: str, action: str, hunks: list[int] | None
    ) -> tuple[Callable, tuple] | None:
        if self.snapshot is None:
            return None
        return session.decide_edit, (self.snapshot.document, edit_id, action, hunks)

    def after_review(self, state: session.ReviewState) -> None:
        if state.snapshot is not None and not self.is_dirty():
            self._apply(state.snapshot, replace_text=True)

    def _report(self, exc: BaseException, what: str) -> None:
        self.services.report_error(exc, f"{what} ({self.file_name})")
        self.sig_operation_failed.emit(exc)

    # -- snapshots -------------------------------------------------------------------------
    def _loaded(self, snap: session.DocumentSnapshot) -> None:
        self.file_name = snap.document.path.name
        self._apply(snap, replace_text=True, undoable=False)
        self.edit_review.refresh()
        if snap.note:
            self.services.post_message(f"{self.file_name}: {snap.note}", "warning")

    def _load_failed(self, exc: BaseException) -> None:
        """The document cannot be read (missing, not UTF-8): say so in the tab, change nothing."""
        message = getattr(exc, "message", None) or str(exc)
        hint = getattr(exc, "hint", None)
        self.state_label.setText(f"Cannot open: {message}")
        self.editor.setPlainText(f"{message}\n\n{hint or ''}".strip())
        self.editor.document().setModified(False)
        self.editor.setReadOnly(True)
        for action in (self.act_save, self.act_annotate, self.act_find):
            action.setEnabled(False)
        self.load_error = exc
        self._report(exc, "Opening the document")

    def _apply(
        self, snap: session.DocumentSnapshot, *, replace_text: bool, undoable: bool = True
    ) -> None:
        """Show a snapshot. ``replace_text``: the editor takes the snapshot's text."""
        self.snapshot = snap
        self.monitor.remember(snap.document)
        if replace_text:
            self.editor.blockSignals(True)
            self.editor.replace_text(snap.editor_text, undoable=undoable)
            self.editor.blockSignals(False)
        clean = self.editor.toPlainText() == snap.editor_text
        self.editor.document().setModified(not clean)
        self.editor.setReadOnly(False)
        self.editor.set_marks(
            snap.marks if clean else self.editor_marks_fallback(),
            self.annotation_list.selected_id(),
        )
        self.preview.set_preview_html(snap.html)
        self.annotation_list.set_annotations(
            snap.annotations, bool(snap.read_only_reason), snap.deleted
        )
        self._update_resolve_button(snap.open_count)
        self.act_annotate.setEnabled(not snap.read_only_reason)
        if snap.read_only_reason:
            self.state_label.setText(f"Annotations read-only: {snap.read_only_reason}")
        else:
            self.state_label.setText("")
        if not clean:
            self._render_timer.start()
        self.sig_title_changed.emit(self.title())
        self.sig_snapshot_applied.emit()

    def editor_marks_fallback(self):
        return []  # the live render that follows paints the marks of the edited text

    def _update_resolve_button(self, open_count: int) -> None:
        self.resolve_button.setText(f"Resolve ({open_count})")
        self.resolve_button.setEnabled(open_count > 0)

    def open_count(self) -> int:
        return self.snapshot.open_count if self.snapshot else 0

    # -- live preview while typing ---------------------------------------------------------
    def _text_changed(self) -> None:
        if self.snapshot is not None:
            self._render_timer.start()

    def _render_live(self) -> None:
        if self.snapshot is None or self._render_pending:
            return
        self._render_pending = True
        text = self.editor.toPlainText()

        def done(result, sent=text):
            self._render_pending = False
            if self._closed:
                return
            html, marks = result
            self.preview.set_preview_html(html)
            if self.editor.toPlainText() == sent:
                self.editor.set_marks(marks, self.annotation_list.selected_id())
            else:
                self._render_timer.start()  # typed meanwhile: once more

        def failed(exc):
            self._render_pending = False
            log.debug("live preview: %s", exc)

        self.services.workers.submit(
            session.render_live,
            text,
            self.snapshot.newline,
            self.snapshot.annotations,
            on_result=done,
            on_error=failed,
            name="render preview",
        )

    def _editor_scrolled(self, value: int) -> None:
        bar = self.editor.verticalScrollBar()
        if bar.maximum() and self.right_stack.currentWidget() is self.preview:
            self.preview.follow(value / bar.maximum())

    # -- saving ----------------------------------------------------------------------------
    def save(self) -> bool:
        """Save atomically (in a worker); True when a save was started or nothing to save."""
        if self.snapshot is None or not self.is_dirty():
            return True
        text = self.editor.toPlainText()
        self._enqueue(
            session.save_document,
            (self.snapshot.document, text, self.snapshot.newline),
            lambda snap: self._saved(snap, text),
            "Saving",
            on_error=self._save_failed,
        )
        return True

    def save_and_wait(self, timeout_ms: int = 30000) -> bool:
        """Save and wait for the result (the event loop keeps running); False on failure."""
        if self.snapshot is None or not self.is_dirty():
            return True
        loop = QEventLoop()
        outcome = {"ok": False}

        def finished_ok():
            outcome["ok"] = not self.is_dirty()
            loop.quit()

        self.sig_snapshot_applied.connect(finished_ok)
        self.sig_operation_failed.connect(loop.quit)
        QTimer.singleShot(timeout_ms, loop.quit)
        self.save()
        loop.exec()
        self.sig_snapshot_applied.disconnect(finished_ok)
        self.sig_operation_failed.disconnect(loop.quit)
        return outcome["ok"]

    def _saved(self, snap: session.DocumentSnapshot, sent_text: str) -> None:
        typed_meanwhile = self.editor.toPlainText() != sent_text
        adjusted = bool(snap.saved and snap.saved.get("text_adjusted"))
        self._apply(snap, replace_text=adjusted and not typed_meanwhile)
        report = snap.saved
        notes: list[str] = []
        if report is not None:
            if report["detached"]:
                notes.append(
                    f"{len(report['detached'])} annotation(s) lost their text and are detached"
                )
            if report["reanchored"]:
                notes.append(f"{len(report['reanchored'])} mark(s) restored around their quote")
            notes += report["warnings"]
        if notes:
            self.services.post_message(f"Saved {self.file_name}: " + "; ".join(notes), "warning")
        else:
            self.services.post_message(f"Saved {self.file_name}")

    def _save_failed(self, exc: BaseException) -> None:
        if getattr(exc, "code", "") == "DOCUMENT_CHANGED_ON_DISK":
            self.services.post_message(
                f"{self.file_name} changed on disk; nothing was saved.", "warning"
            )
            self.check_disk()
        self._report(exc, "Saving")

    # -- annotations -------------------------------------------------------------------------
    def annotate_selection(self) -> None:
        """Open the inline comment box under the selected text."""
        selection = self.editor.selection_range()
        if selection is None or self.snapshot is None or self.snapshot.read_only_reason:
            if selection is None:
                self.services.post_message("Select the text to annotate first.", "warning")
            return
        self._pending_selection = selection
        cursor = self.editor.textCursor()
        rect = self.editor.cursorRect(cursor)
        first = QTextCursor(cursor)
        first.setPosition(cursor.selectionStart())
        top = self.editor.cursorRect(first).top()  # where the selection begins (may wrap)
        viewport = self.editor.viewport()
        self.comment_box.open_at(
            viewport.mapTo(self, rect.bottomLeft() + QPoint(0, 6)),
            self.editor.selected_text(),
            above=rect.bottom() - top + 12,
        )

    def _comment_submitted(self, comment: str) -> None:
        start, end = getattr(self, "_pending_selection", (None, None))
        if start is None:
            return
        self.run_operation("create", start=start, end=end, comment=comment)

    def _reattach(self, annotation_id: str) -> None:
        selection = self.editor.selection_range()
        if selection is None:
            self.services.post_message(
                "Select the text the annotation should mark, then reattach.", "warning"
            )
            return
        self.run_operation("reattach", id=annotation_id, start=selection[0], end=selection[1])

    def run_operation(self, operation: str, **args: Any) -> None:
        """Run an annotation operation through the docs layer (in a worker)."""
        if self.snapshot is None:
            return
        pending = self.editor.toPlainText() if self.is_dirty() else None

        def done(snap):
            self._apply(snap, replace_text=True)
            if operation == "reply":
                self.annotation_list.clear_reply()
            target = snap.result if isinstance(snap.result, str) else args.get("id")
            if target and snap.annotation(target):
                self.select_annotation(target)
            if snap.note:
                self.services.post_message(snap.note)

        self._enqueue(
            session.run_operation,
            (self.snapshot.document, operation, args, pending, self.snapshot.newline),
            done,
            {
                "create": "Annotating",
                "reply": "Replying",
                "resolve": "Resolving",
                "reopen": "Reopening",
                "delete": "Deleting the annotation",
                "undelete": "Restoring the annotation",
                "reattach": "Reattaching",
            }.get(operation, operation),
        )

    def select_annotation(self, annotation_id: str) -> None:
        """Select it in the list and scroll the editor and the preview to its mark."""
        if self.annotation_list.selected_id() != annotation_id:
            self.annotation_list.select(annotation_id)
        self.editor.set_active_mark(annotation_id)
        where = self.editor.mark_range(annotation_id)
        if where is None and self.snapshot is not None:
            ann = self.snapshot.annotation(annotation_id)
            anchor = ann.get("anchor") if ann is not None else None
            hint = anchor.get("span") if anchor else None
            if hint and not self.is_dirty():
                from lantide.ui.documents.text_offsets import TextOffsets

                offsets = TextOffsets(self.snapshot.editor_text, self.snapshot.newline)
                length = len(self.snapshot.disk_text)
                where = (
                    offsets.disk_to_qt(min(hint[0], length)),
                    offsets.disk_to_qt(min(hint[1], length)),
                )
        if where is not None:
            self.editor.reveal(where[0], where[1])
        self.preview.scroll_to_annotation(annotation_id)

    def ask_agent_to_resolve(self) -> None:
        from lantide.templates import render_prompt

        if self.snapshot is None or not self.snapshot.open_count:
            return
        if self.is_dirty():
            self.save()  # the agent reads the file on disk
        self.services.ask_agent(
            render_prompt(
                "requests/resolve_annotations.md.j2",
                count=self.snapshot.open_count,
                document=self.kind,
                document_label=self.kind.capitalize(),
                project=self.project,
                path=self.snapshot.document.relative_path(),
            )
        )

    # -- find ------------------------------------------------------------------------------
    def go_to_line(self, line: int) -> None:
        """Put the editor's cursor at the start of 1-based ``line`` (an evidence problem)."""
        block = self.editor.document().findBlockByNumber(max(0, line - 1))
        if block.isValid():
            cursor = QTextCursor(block)
            self.editor.setTextCursor(cursor)
            self.editor.centerCursor()
            self.editor.setFocus()

    def show_find(self) -> None:
        self.find_bar.open_find(replace=False)

    def show_replace(self) -> None:
        self.find_bar.open_find(replace=True)

    # -- changes on disk --------------------------------------------------------------------
    def _files_changed(self, changes: list) -> None:
        if any(getattr(c, "project", None) == self.project for c in changes):
            self.evidence.refresh()  # project.json (status, approval) or the Plan changed
        mine = [
            c
            for c in changes
            if getattr(c, "project", None) == self.project
            and getattr(c, "kind", None) in ("document", "annotations")
        ]
        if mine and self.snapshot is not None:
            self._enqueue(
                session.check_external_change,
                (self.monitor, mine),
                self._external_changes,
                "Reading the change on disk",
            )

    def check_disk(self) -> None:
        """Compare with the files on disk now (after a refused save)."""
        from lantide.workspace.watcher import ANNOTATIONS, DOCUMENT, FileChange

        if self.snapshot is None:
            return
        doc = self.snapshot.document
        batch = [
            FileChange(DOCUMENT, doc.path, "modified", self.project),
            FileChange(ANNOTATIONS, doc.sidecar_path, "modified", self.project),
        ]
        self._enqueue(
            session.check_external_change,
            (self.monitor, batch),
            self._external_changes,
            "Reading the change on disk",
        )

    def _external_changes(self, reports: list) -> None:
        for change in reports:
            if change.kind != self.kind:
                continue
            if change.error:
                self.services.post_message(
                    f"{self.file_name} changed on disk but cannot be read: {change.error}",
                    "warning",
                )
            elif change.document is None:
                self.services.post_message(
                    f"{self.file_name} was deleted on disk; the tab keeps its text.", "warning"
                )
                self.editor.document().setModified(True)
            else:
                self._enqueue(
                    lambda _ctx, d=change.document: session.snapshot(d),
                    (),
                    self._external_snapshot,
                    "Reading the change on disk",
                )

    def _external_snapshot(self, snap: session.DocumentSnapshot) -> None:
        if not self.is_dirty():
            self._apply(snap, replace_text=True)
            self.services.post_message(f"{self.file_name} was reloaded: it changed on disk.")
            return
        choice = ExternalChangeDialog(self.file_name, parent=self).ask()
        self.resolve_external(choice, snap)

    def resolve_external(self, choice: str, snap: session.DocumentSnapshot) -> None:
        """Apply the analyst's answer to an external change of a dirty tab."""
        if choice == TAKE_THEIRS:
            self._apply(snap, replace_text=True)
            return
        # Keep mine (or compare first): the disk version becomes the base the next save
        # replaces; the editor keeps the analyst's text and stays dirty.
        self._apply(snap, replace_text=False)
        self.editor.document().setModified(True)
        if choice == SHOW_BOTH:
            self.compare.show_versions(self.editor.toPlainText(), snap.editor_text, self.file_name)
            self.right_stack.setCurrentWidget(self.compare)
            self.right_stack.show()

    def _compare_choice(self, choice: str) -> None:
        self.right_stack.setCurrentWidget(self.preview)
        self.right_stack.setVisible(self.act_preview.isChecked())
        if choice == TAKE_THEIRS and self.snapshot is not None:
            self._apply(self.snapshot, replace_text=True)
        elif choice == KEEP_MINE:
            self.services.post_message(
                f"Keeping your version of {self.file_name}; save to replace the one on disk."
            )

    # -- closing ---------------------------------------------------------------------------
    def shutdown(self) -> None:
        self._closed = True
        self._render_timer.stop()
        self._queue.clear()
