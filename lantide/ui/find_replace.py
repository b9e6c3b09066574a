"""Find and replace for a text editor: a bar under the editor, as in VS Code.

Matches are highlighted all at once with a count ("3 of 12"); Enter / F3 go to the
next match, Shift+Enter / Shift+F3 to the previous; case, whole word and regular
expression toggles; *Replace all* is one undo step. Searching uses Qt's own
``QTextDocument.find`` with a ``QRegularExpression``.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QRegularExpression, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.icons import icon
from lantide.ui.theme import colors

MAX_HIGHLIGHTS = 5000


class FindReplaceBarWidget(QWidget):
    sig_closed = Signal()

    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None):
        super().__init__(parent)
        self.editor = editor
        self.setObjectName("FindReplaceBar")
        self.find_edit = QLineEdit(self)
        self.find_edit.setPlaceholderText("Find")
        self.find_edit.setClearButtonEnabled(True)
        self.replace_edit = QLineEdit(self)
        self.replace_edit.setPlaceholderText("Replace")
        self.case_button = self._toggle("Aa", "Match case")
        self.word_button = self._toggle("W", "Whole word")
        self.regex_button = self._toggle(".*", "Regular expression")
        self.count_label = QLabel(self)
        self.count_label.setMinimumWidth(80)
        prev_button = self._tool("↑", "Previous match (Shift+Enter)", lambda: self.find_next(True))
        next_button = self._tool("↓", "Next match (Enter)", lambda: self.find_next(False))
        self.replace_button = self._tool("Replace", "Replace this match", self.replace_one)
        self.replace_all_button = self._tool("All", "Replace all matches", self.replace_all)
        close = QToolButton(self)
        close.setIcon(icon("close"))
        close.setAutoRaise(True)
        close.clicked.connect(self.close_bar)

        row1 = QHBoxLayout()
        row1.setContentsMargins(0, 0, 0, 0)
        row1.addWidget(self.find_edit, 1)
        for w in (
            self.case_button,
            self.word_button,
            self.regex_button,
            self.count_label,
            prev_button,
            next_button,
            close,
        ):
            row1.addWidget(w)
        self.replace_row = QWidget(self)
        row2 = QHBoxLayout(self.replace_row)
        row2.setContentsMargins(0, 0, 0, 0)
        row2.addWidget(self.replace_edit, 1)
        row2.addWidget(self.replace_button)
        row2.addWidget(self.replace_all_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.setSpacing(4)
        layout.addLayout(row1)
        layout.addWidget(self.replace_row)

        self.find_edit.textChanged.connect(lambda _t: self.update_matches())
        self.find_edit.returnPressed.connect(lambda: self.find_next(False))
        self.replace_edit.returnPressed.connect(self.replace_one)
        QShortcut(QKeySequence("Shift+Return"), self.find_edit, lambda: self.find_next(True))
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.close_bar)
        editor.textChanged.connect(self._text_changed)
        self._matches: list[tuple[int, int]] = []
        self.hide()

    def _toggle(self, text: str, tip: str) -> QToolButton:
        b = QToolButton(self)
        b.setText(text)
        b.setToolTip(tip)
        b.setCheckable(True)
        b.setAutoRaise(True)
        b.toggled.connect(lambda _c: self.update_matches())
        return b

    def _tool(self, text: str, tip: str, slot) -> QToolButton:
        b = QToolButton(self)
        b.setText(text)
        b.setToolTip(tip)
        b.setAutoRaise(True)
        b.clicked.connect(slot)
        return b

    # -- opening -------------------------------------------------------------------------
    def open_find(self, replace: bool = False) -> None:
        selected = self.editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.find_edit.setText(selected)
        self.replace_row.setVisible(replace and not self.editor.isReadOnly())
        self.show()
        self.find_edit.setFocus()
        self.find_edit.selectAll()
        self.update_matches()

    def close_bar(self) -> None:
        self.hide()
        self._matches = []
        self._highlight()
        self.editor.setFocus()
        self.sig_closed.emit()

    # -- matching ------------------------------------------------------------------------
    def pattern(self) -> QRegularExpression | None:
        needle = self.find_edit.text()
        if not needle:
            return None
        source = needle if self.regex_button.isChecked() else re.escape(needle)
        if self.word_button.isChecked():
            source = rf"\b{source}\b"
        options = QRegularExpression.PatternOption.NoPatternOption
        if not self.case_button.isChecked():
            options = QRegularExpression.PatternOption.CaseInsensitiveOption
        regex = QRegularExpression(source, options)
        return regex if regex.isValid() else None

    def _flags(self) -> QTextDocument.FindFlag:
        flags = QTextDocument.FindFlag(0)
        if self.case_button.isChecked():
            flags |= QTextDocument.FindFlag.FindCaseSensitively
        return flags

    def update_matches(self) -> None:
        self._matches = []
        regex = self.pattern()
        if self.isVisible() and regex is not None:
            doc = self.editor.document()
            cursor = doc.find(regex, 0, self._flags())
            while not cursor.isNull() and len(self._matches) < MAX_HIGHLIGHTS:
                if cursor.selectionEnd() == cursor.selectionStart():
                    break  # an empty match would loop forever
                self._matches.append((cursor.selectionStart(), cursor.selectionEnd()))
                cursor = doc.find(regex, cursor, self._flags())
        invalid = bool(self.find_edit.text()) and regex is None
        self.find_edit.setStyleSheet(f"color: {colors().danger.name()};" if invalid else "")
        self._highlight()
        self._update_count()

    def matches(self) -> list[tuple[int, int]]:
        return list(self._matches)

    def _text_changed(self) -> None:
        if self.isVisible():
            self.update_matches()

    def _highlight(self) -> None:
        selections = []
        theme = colors()
        for start, end in self._matches:
            sel = QTextEdit.ExtraSelection()
            cursor = QTextCursor(self.editor.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cursor
            sel.format.setBackground(
                theme.warning.lighter(150) if not theme.dark else theme.warning.darker(250)
            )
            selections.append(sel)
        setter = getattr(self.editor, "set_find_selections", None)
        if callable(setter):
            setter(selections)
        else:
            self.editor.setExtraSelections(selections)

    def _current_index(self) -> int:
        cursor = self.editor.textCursor()
        for i, (s, e) in enumerate(self._matches):
            if s == cursor.selectionStart() and e == cursor.selectionEnd():
                return i
        return -1

    def _update_count(self) -> None:
        if not self.find_edit.text():
            self.count_label.setText("")
        elif not self._matches:
            self.count_label.setText("No results")
        else:
            i = self._current_index()
            where = f"{i + 1} of " if i >= 0 else ""
            self.count_label.setText(f"{where}{len(self._matches)}")

    def find_next(self, backwards: bool = False) -> bool:
        if not self._matches:
            self.update_matches()
        if not self._matches:
            return False
        pos = (
            self.editor.textCursor().selectionStart()
            if backwards
            else self.editor.textCursor().selectionEnd()
        )
        if backwards:
            candidates = [m for m in self._matches if m[0] < pos]
            target = candidates[-1] if candidates else self._matches[-1]
        else:
            candidates = [m for m in self._matches if m[0] >= pos]
            target = candidates[0] if candidates else self._matches[0]
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(target[0])
        cursor.setPosition(target[1], QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()
        self._update_count()
        return True

    # -- replacing -----------------------------------------------------------------------
    def _replacement_for(self, matched: str) -> str:
        if not self.regex_button.isChecked():
            return self.replace_edit.text()
        regex = self.pattern()
        match = regex.match(matched) if regex is not None else None
        if match is None or not match.hasMatch():
            return self.replace_edit.text()
        # \1 / $1 style groups, as editors usually allow
        out = self.replace_edit.text()
        for n in range(match.lastCapturedIndex(), 0, -1):
            out = out.replace(f"\\{n}", match.captured(n)).replace(f"${n}", match.captured(n))
        return out

    def replace_one(self) -> None:
        if self.editor.isReadOnly():
            return
        if self._current_index() < 0 and not self.find_next(False):
            return
        cursor = self.editor.textCursor()
        cursor.insertText(self._replacement_for(cursor.selectedText()))
        self.update_matches()
        self.find_next(False)

    def replace_all(self) -> int:
        if self.editor.isReadOnly():
            return 0
        self.update_matches()
        if not self._matches:
            return 0
        matches = list(self._matches)  # editing re-runs the search (textChanged)
        cursor = QTextCursor(self.editor.document())
        cursor.beginEditBlock()
        for start, end in reversed(matches):  # from the end: earlier offsets stay valid
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(self._replacement_for(cursor.selectedText()))
        cursor.endEditBlock()
        count = len(matches)
        self.update_matches()
        self.count_label.setText(f"Replaced {count}")
        return count
