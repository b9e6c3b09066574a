"""The agent's edit to an open Plan or Report, shown as a diff with Keep / Undo, as editors
with AI assistants do.

When the agent writes the document (``AppServices.sig_agent_edited``, sent before the tab
reloads), the tab's text at that moment is kept; once the reload is applied the bar shows
what changed, line by line. Keep closes the bar; Undo puts the earlier text back in the
editor (one undoable edit) and saves it through the tab's normal, atomic save, so the
analyst can still redo it. :func:`line_diff` is the comparison, without Qt.
"""

from __future__ import annotations

import difflib
import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from lantide.ui.icons import icon
from lantide.ui.theme import colors

if TYPE_CHECKING:
    from lantide.ui.documents.document_tab import DocumentTabWidget

CONTEXT_LINES = 2


def line_diff(old: str, new: str, context: int = CONTEXT_LINES) -> list[tuple[str, str]]:
    """``[(tag, line)]`` with tag "+" (added), "-" (removed), " " (context) or "…" (lines
    left out between changes)."""
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    a, b = old.splitlines(), new.splitlines()
    for group in matcher.get_grouped_opcodes(context):
        if out:
            out.append(("…", ""))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [(" ", line) for line in a[i1:i2]]
                continue
            out += [("-", line) for line in a[i1:i2]]
            out += [("+", line) for line in b[j1:j2]]
    return out


def counts(diff: list[tuple[str, str]]) -> tuple[int, int]:
    return sum(t == "+" for t, _ in diff), sum(t == "-" for t, _ in diff)


def diff_html(diff: list[tuple[str, str]]) -> str:
    theme = colors()
    added, removed = theme.success.name(), theme.danger.name()
    rows = []
    for tag, line in diff:
        text = html.escape(line) or "&nbsp;"
        if tag == "+":
            rows.append(f"<div style='color:{added}'>+ {text}</div>")
        elif tag == "-":
            rows.append(
                f"<div style='color:{removed}; text-decoration:line-through'>- {text}</div>"
            )
        elif tag == "…":
            rows.append("<div style='color:gray'>⋯</div>")
        else:
            rows.append(f"<div style='color:gray'>&nbsp; {text}</div>")
    return "<div style='font-family:monospace; white-space:pre-wrap'>" + "".join(rows) + "</div>"


class AgentEditBar(QWidget):
    sig_keep = Signal()
    sig_undo = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("AgentEditBar")
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.keep_button = QPushButton(icon("approve"), "Keep", self)
        self.keep_button.setToolTip("Keep the agent's change")
        self.undo_button = QPushButton(icon("reopen"), "Undo", self)
        self.undo_button.setToolTip(
            "Put the earlier text back and save it (Ctrl+Z redoes "
            "nothing lost: the change stays in the editor's history)"
        )
        self.keep_button.clicked.connect(self.sig_keep)
        self.undo_button.clicked.connect(self.sig_undo)
        self.view = QTextBrowser(self)
        self.view.setMaximumHeight(180)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.keep_button, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addLayout(head)
        layout.addWidget(self.view)
        self.hide()

    def show_diff(self, name: str, diff: list[tuple[str, str]]) -> None:
        plus, minus = counts(diff)
        self.title.setText(
            f"<b>The agent changed {html.escape(name)}</b>: {plus} line"
            f"{'s' if plus != 1 else ''} added, {minus} removed."
        )
        self.view.setHtml(diff_html(diff))
        self.show()


class AgentEditReview(QObject):
    """Connects a document tab to the agent's edits (see the module's doc)."""

    def __init__(self, tab: DocumentTabWidget) -> None:
        super().__init__(tab)
        self.tab = tab
        self.bar = AgentEditBar(tab)
        self.before: str | None = None  # the text before the agent's edit, while offered
        self._expecting: str | None = None  # the text kept at the edit, until the reload
        tab.services.sig_agent_edited.connect(self.agent_edited)
        tab.sig_snapshot_applied.connect(self._applied)
        self.bar.sig_keep.connect(self.keep)
        self.bar.sig_undo.connect(self.undo)

    def _my_path(self) -> Path | None:
        snap = self.tab.snapshot
        return snap.document.path if snap is not None else None

    def agent_edited(self, path: str) -> None:
        mine = self._my_path()
        if mine is None or Path(path).resolve() != Path(mine).resolve():
            return
        if self.tab.is_dirty():
            return  # the tab asks about the change itself; nothing to compare yet
        self._expecting = self.tab.editor.toPlainText()

    def _applied(self) -> None:
        if self._expecting is None:
            return
        before, self._expecting = self._expecting, None
        now = self.tab.editor.toPlainText()
        if now == before:
            return
        self.before = before
        self.bar.show_diff(self.tab.file_name, line_diff(before, now))

    def keep(self) -> None:
        self.before = None
        self.bar.hide()

    def undo(self) -> None:
        if self.before is None:
            return
        text, self.before = self.before, None
        self.bar.hide()
        self.tab.editor.replace_text(text, undoable=True)
        self.tab.save()
