"""The annotations side list of a Plan/Report tab, and the resolve dialog.

Shows the open, resolved or deleted annotations (filter), each with its quote, comment and
latest reply; the selected one's thread below with Reply, Resolve (mode A: replace the
marked text; mode B: keep it and answer), Reopen, Reattach and Delete, or Restore for a
deleted one (deleting is never final). It only emits what the analyst asked for: the tab
runs it through the docs layer.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, TypedDict

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.analyst_words import author, resolution
from lantide.ui.icons import icon
from lantide.ui.theme import colors

if TYPE_CHECKING:
    from lantide.ui.documents.document_session import AnnotationRow

FILTER_OPEN, FILTER_RESOLVED, FILTER_ALL, FILTER_DELETED = 0, 1, 2, 3
ROLE_ID = Qt.ItemDataRole.UserRole + 1


def _short(text: str, limit: int = 90) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ResolveValues(TypedDict):
    """What the resolve dialog asks for (``sig_resolve_requested``)."""

    mode: str  # A or B
    replacement: str | None  # mode A only
    answer: str | None


def _when(stamp: str | None) -> str:
    return (stamp or "").replace("T", " ").replace("Z", " UTC")


class ResolveDialog(QDialog):
    """Mode A (replace the marked text) or B (keep it and answer)."""

    def __init__(self, annotation: AnnotationRow, mode: str = "B", parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ResolveDialog")
        self.setWindowTitle("Resolve annotation")
        self.setMinimumWidth(460)
        quote = annotation.get("quote", "")
        intro = QLabel(
            f"<b>“{html.escape(_short(quote, 160))}”</b><br>"
            f"{html.escape(annotation.get('comment', ''))}",
            self,
        )
        intro.setWordWrap(True)
        self.mode_a = QRadioButton("Replace the text", self)
        self.mode_b = QRadioButton("Keep the text and answer", self)
        group = QButtonGroup(self)
        group.addButton(self.mode_a)
        group.addButton(self.mode_b)
        self.replacement = QPlainTextEdit(self)
        self.replacement.setPlainText(quote)
        self.replacement.setMaximumHeight(90)
        self.answer = QPlainTextEdit(self)
        self.answer.setPlaceholderText("Your answer (recorded in the annotation's history)")
        self.answer.setMaximumHeight(90)
        self.replacement_label = QLabel("Replacement text:", self)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Resolve")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for w in (
            intro,
            self.mode_a,
            self.mode_b,
            self.replacement_label,
            self.replacement,
            QLabel("Answer:", self),
            self.answer,
            buttons,
        ):
            layout.addWidget(w)
        self.mode_a.toggled.connect(self._mode_changed)
        (self.mode_a if mode == "A" else self.mode_b).setChecked(True)
        self._mode_changed()

    def _mode_changed(self) -> None:
        a = self.mode_a.isChecked()
        self.replacement.setVisible(a)
        self.replacement_label.setVisible(a)

    def values(self) -> ResolveValues:
        mode = "A" if self.mode_a.isChecked() else "B"
        answer = self.answer.toPlainText().strip() or None
        return {
            "mode": mode,
            "replacement": self.replacement.toPlainText() if mode == "A" else None,
            "answer": answer,
        }


class AnnotationListWidget(QWidget):
    sig_annotation_selected = Signal(str)
    sig_reply_requested = Signal(str, str)  # id, text
    sig_resolve_requested = Signal(str, dict)  # id, {"mode", "replacement", "answer"}
    sig_reopen_requested = Signal(str)
    sig_delete_requested = Signal(str)
    sig_reattach_requested = Signal(str)
    sig_restore_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("AnnotationList")
        self.annotations: list[AnnotationRow] = []
        self.deleted: list[AnnotationRow] = []
        self.read_only = False
        self.filter_combo = QComboBox(self)
        self.filter_combo.addItems(["Open", "Resolved", "All", "Deleted"])
        # wide enough for "Resolved (12)": the counts change the labels after creation
        self.filter_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.filter_combo.currentIndexChanged.connect(lambda _i: self._fill())
        self.list = QListWidget(self)
        self.list.setWordWrap(True)
        self.list.setSpacing(2)
        self.list.setUniformItemSizes(False)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.itemClicked.connect(
            lambda item: (
                self.sig_annotation_selected.emit(item.data(ROLE_ID))
                if item.data(ROLE_ID)
                else None
            )
        )

        self.thread_view = QTextBrowser(self)
        self.thread_view.setOpenLinks(False)
        self.reply_box = QPlainTextEdit(self)
        self.reply_box.setPlaceholderText("Reply…")
        self.reply_box.setMaximumHeight(64)
        self.reply_button = QPushButton(icon("reply"), "Reply", self)
        self.resolve_button = QPushButton(icon("resolve"), "Resolve…", self)
        self.reopen_button = QPushButton(icon("reopen"), "Reopen", self)
        self.reattach_button = QPushButton("Reattach to selection", self)
        self.delete_button = QPushButton(icon("delete"), "", self)
        self.delete_button.setToolTip(
            "Delete the annotation (the text stays; the Deleted filter can restore it)"
        )
        self.restore_button = QPushButton(icon("reopen"), "Restore", self)
        self.restore_button.setToolTip(
            "Bring the deleted annotation back, marked on its text "
            "again where that text is still there"
        )
        self.restore_button.clicked.connect(lambda: self._emit_for(self.sig_restore_requested))
        self.reply_button.clicked.connect(self._reply)
        self.resolve_button.clicked.connect(self._resolve)
        self.reopen_button.clicked.connect(lambda: self._emit_for(self.sig_reopen_requested))
        self.reattach_button.clicked.connect(lambda: self._emit_for(self.sig_reattach_requested))
        self.delete_button.clicked.connect(lambda: self._emit_for(self.sig_delete_requested))

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("Annotations", self))
        top.addStretch(1)
        top.addWidget(self.filter_combo)
        detail = QWidget(self)
        d = QVBoxLayout(detail)
        d.setContentsMargins(0, 0, 0, 0)
        d.addWidget(self.thread_view, 1)
        d.addWidget(self.reply_box)
        row = QHBoxLayout()
        for b in (
            self.reply_button,
            self.resolve_button,
            self.reopen_button,
            self.reattach_button,
            self.restore_button,
        ):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(self.delete_button)
        d.addLayout(row)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.list)
        split.addWidget(detail)
        split.setSizes([300, 260])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        self._update_detail()
        # The buttons hidden just now still counted in the minimum width the layouts had
        # cached (538 px instead of 305): the first document widened the window by that.
        for box in (row, d, layout):
            box.invalidate()

    # -- content -------------------------------------------------------------------------
    def set_annotations(
        self,
        annotations: list[AnnotationRow],
        read_only: bool = False,
        deleted: list[AnnotationRow] | None = None,
    ) -> None:
        selected = self.selected_id()
        self.annotations = annotations
        self.deleted = list(deleted or [])
        self.read_only = read_only
        counts = (
            sum(a["status"] == "open" for a in annotations),
            sum(a["status"] == "resolved" for a in annotations),
        )
        self.filter_combo.setItemText(FILTER_OPEN, f"Open ({counts[0]})")
        self.filter_combo.setItemText(FILTER_RESOLVED, f"Resolved ({counts[1]})")
        self.filter_combo.setItemText(FILTER_ALL, f"All ({len(annotations)})")
        self.filter_combo.setItemText(FILTER_DELETED, f"Deleted ({len(self.deleted)})")
        self._fill(selected)

    def set_filter(self, which: int) -> None:
        self.filter_combo.setCurrentIndex(which)

    def _showing_deleted(self) -> bool:
        return self.filter_combo.currentIndex() == FILTER_DELETED

    def _rows(self) -> list[AnnotationRow]:
        return self.deleted if self._showing_deleted() else self.annotations

    def _visible(self, a: AnnotationRow) -> bool:
        which = self.filter_combo.currentIndex()
        return which in (FILTER_ALL, FILTER_DELETED) or (a["status"] == "open") == (
            which == FILTER_OPEN
        )

    def _fill(self, selected: str | None = None) -> None:
        selected = selected or self.selected_id()
        theme = colors()
        self.list.blockSignals(True)
        self.list.clear()
        deleted_view = self._showing_deleted()
        for a in self._rows():
            if not self._visible(a):
                continue
            lines = [f"“{_short(a.get('quote', ''), 70)}”", _short(a.get("comment", ""), 140)]
            latest = (a.get("replies") or [])[-1:] or []
            if latest:
                lines.append(
                    f"↳ {author(latest[0].get('by'))}: {_short(latest[0].get('text', ''), 90)}"
                )
            if deleted_view:
                lines.append(f"deleted while {a['status']}")
            elif a.get("detached"):
                lines.append("⚠ its text is gone: select new text and reattach")
            item = QListWidgetItem("\n".join(lines))
            item.setData(ROLE_ID, a["id"])
            resolved = a["status"] == "resolved"
            item.setIcon(
                icon(
                    "resolve" if resolved else "annotate",
                    theme.success if resolved else theme.warning,
                )
            )
            if resolved or deleted_view:
                item.setForeground(QBrush(theme.muted))
            if deleted_view:
                item.setIcon(icon("delete", theme.muted))
            item.setToolTip(f"{'deleted · ' if deleted_view else ''}{a['status']} · id {a['id']}")
            self.list.addItem(item)
            if a["id"] == selected:
                self.list.setCurrentItem(item)
        if self.list.count() == 0:
            empty = QListWidgetItem(
                "No open annotations. Select text and press Ctrl+Alt+M to add one."
                if self.filter_combo.currentIndex() == FILTER_OPEN
                else "Nothing here."
            )
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(empty)
        self.list.blockSignals(False)
        self._update_detail()

    def selected_id(self) -> str | None:
        item = self.list.currentItem()
        return item.data(ROLE_ID) if item is not None else None

    def selected(self) -> AnnotationRow | None:
        ann_id = self.selected_id()
        return next((a for a in self._rows() if a["id"] == ann_id), None)

    def select(self, annotation_id: str) -> bool:
        """Select ``annotation_id``, switching the filter when it is hidden by it."""
        found = next((a for a in self.annotations if a["id"] == annotation_id), None)
        if found is None:
            return False
        if self._showing_deleted() or not self._visible(found):
            self.filter_combo.setCurrentIndex(FILTER_ALL)
        for i in range(self.list.count()):
            if self.list.item(i).data(ROLE_ID) == annotation_id:
                self.list.setCurrentRow(i)
                return True
        return False

    def _current_changed(self, current, _previous) -> None:
        self._update_detail()
        if current is not None and current.data(ROLE_ID):
            self.sig_annotation_selected.emit(current.data(ROLE_ID))

    def _update_detail(self) -> None:
        a = self.selected()
        enabled = a is not None and not self.read_only
        status = a["status"] if a is not None else None
        deleted_view = self._showing_deleted()
        for w in (
            self.reply_box,
            self.reply_button,
            self.resolve_button,
            self.reopen_button,
            self.delete_button,
        ):
            w.setVisible(not deleted_view)
        self.restore_button.setVisible(deleted_view)
        self.restore_button.setEnabled(enabled and deleted_view)
        self.reply_box.setEnabled(enabled)
        self.reply_button.setEnabled(enabled)
        self.resolve_button.setEnabled(enabled and status == "open")
        self.reopen_button.setEnabled(enabled and status == "resolved")
        self.reattach_button.setVisible(
            bool(a and a.get("detached") and status == "open" and not deleted_view)
        )
        self.delete_button.setEnabled(enabled)
        if a is None:
            self.thread_view.setHtml(
                "<p style='color:gray'>Select an annotation to see its thread.</p>"
            )
            return
        parts = [f"<p><b>“{html.escape(a.get('quote', ''))}”</b></p>"]
        for event in a.get("history", []):
            action, who = event.get("action", ""), author(event.get("by"))
            body = html.escape(event.get("text") or "")
            extra = ""
            if action == "resolved":
                extra = f": {resolution(event.get('mode'))}"
                if event.get("replacement"):
                    body = (
                        body + "<br>" if body else ""
                    ) + f"replaced by: <i>{html.escape(event['replacement'])}</i>"
            parts.append(
                f"<p><span style='color:gray'>{html.escape(who)} · {action}{extra} · "
                f"{html.escape(_when(event.get('at')))}</span><br>{body}</p>"
            )
        self.thread_view.setHtml("".join(parts))
        # The newest reply is at the end: show it without the analyst scrolling.
        self.thread_view.verticalScrollBar().setValue(
            self.thread_view.verticalScrollBar().maximum()
        )

    # -- actions -------------------------------------------------------------------------
    def _emit_for(self, signal) -> None:
        ann_id = self.selected_id()
        if ann_id:
            signal.emit(ann_id)

    def _reply(self) -> None:
        ann_id, text = self.selected_id(), self.reply_box.toPlainText().strip()
        if ann_id and text:
            self.sig_reply_requested.emit(ann_id, text)

    def clear_reply(self) -> None:
        self.reply_box.clear()

    def _resolve(self) -> None:
        a = self.selected()
        if a is None:
            return
        dialog = ResolveDialog(a, parent=self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.sig_resolve_requested.emit(a["id"], dialog.values())
