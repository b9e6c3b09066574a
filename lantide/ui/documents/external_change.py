"""A file changed on disk while its tab has unsaved edits: ask, and show both if wanted.

:class:`ExternalChangeDialog` offers *Keep mine*, *Take theirs* and *Show both*.
:class:`CompareVersionsWidget` puts the two versions side by side with the differing
lines coloured (difflib), so the analyst can copy what they need from the disk version
into their own before choosing.
"""

from __future__ import annotations

import difflib

from PySide6.QtCore import Signal
from PySide6.QtGui import QTextBlockFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.theme import blend, colors

KEEP_MINE = "keep_mine"
TAKE_THEIRS = "take_theirs"
SHOW_BOTH = "show_both"


class ExternalChangeDialog(QMessageBox):
    def __init__(self, file_name: str, detail: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ExternalChangeDialog")
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle("File changed on disk")
        self.setText(
            f"{file_name} was changed by another program, and this tab has "
            "changes that are not saved."
        )
        self.setInformativeText(detail or "Which version do you want to keep?")
        self.keep_button = self.addButton("Keep mine", QMessageBox.ButtonRole.RejectRole)
        self.theirs_button = self.addButton("Take theirs", QMessageBox.ButtonRole.DestructiveRole)
        self.both_button = self.addButton("Show both", QMessageBox.ButtonRole.ActionRole)
        self.setDefaultButton(self.both_button)
        self.choice = KEEP_MINE

    def ask(self) -> str:
        self.exec()
        clicked = self.clickedButton()
        self.choice = (
            TAKE_THEIRS
            if clicked is self.theirs_button
            else SHOW_BOTH
            if clicked is self.both_button
            else KEEP_MINE
        )
        return self.choice


def changed_lines(a: str, b: str) -> tuple[set[int], set[int]]:
    """0-based line numbers of ``a`` and of ``b`` that differ between them."""
    left, right = a.split("\n"), b.split("\n")
    only_a: set[int] = set()
    only_b: set[int] = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, left, right, autojunk=False
    ).get_opcodes():
        if tag != "equal":
            only_a.update(range(i1, i2))
            only_b.update(range(j1, j2))
    return only_a, only_b


class CompareVersionsWidget(QWidget):
    """Mine (still editable in the editor) against the version on disk, read-only here."""

    sig_choice_made = Signal(str)  # KEEP_MINE or TAKE_THEIRS

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("CompareVersions")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.theirs = QPlainTextEdit(self)
        self.theirs.setReadOnly(True)
        self.theirs.setObjectName("TheirVersion")
        keep = QPushButton("Keep mine", self)
        keep.setToolTip("Keep the editor's text; saving will replace the version on disk")
        take = QPushButton("Take theirs", self)
        take.setToolTip("Replace the editor's text with the version on disk")
        keep.clicked.connect(lambda: self.sig_choice_made.emit(KEEP_MINE))
        take.clicked.connect(lambda: self.sig_choice_made.emit(TAKE_THEIRS))
        row = QHBoxLayout()
        row.addWidget(self.label, 1)
        row.addWidget(keep)
        row.addWidget(take)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(row)
        layout.addWidget(self.theirs, 1)

    def show_versions(self, mine: str, theirs: str, file_name: str) -> set[int]:
        """Show ``theirs``, colouring its lines that differ from ``mine``."""
        _mine_lines, their_lines = changed_lines(mine, theirs)
        self.label.setText(
            f"<b>On disk</b> — {file_name}. Lines that differ from your "
            f"version are coloured ({len(their_lines)})."
        )
        self.theirs.setPlainText(theirs)
        fmt = QTextBlockFormat()  # the whole line, also an empty one
        fmt.setBackground(blend(colors().warning, self.palette().base().color(), 0.22))
        doc = self.theirs.document()
        for line in sorted(their_lines):
            block = doc.findBlockByNumber(line)
            if block.isValid():
                QTextCursor(block).mergeBlockFormat(fmt)
        return their_lines

    def their_text(self) -> str:
        return self.theirs.toPlainText()
