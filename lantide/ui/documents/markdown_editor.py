"""The Markdown editor of a Plan/Report tab.

A ``QPlainTextEdit`` with Markdown colouring, annotation marks drawn as highlights (extra
selections whose cursors follow edits, so they stay on their text while the analyst
types), *Annotate* in the context menu, and a text replacement that changes only the
part that differs, so an update from disk or from the agent keeps the cursor, the scroll
position and the undo history.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QContextMenuEvent, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from lantide.ui.documents.document_session import MarkSpan
from lantide.ui.icons import icon
from lantide.ui.shortcuts import shortcut
from lantide.ui.theme import colors
from lantide.ui.themed import mark_theme, theme_switched


def common_affixes(old: str, new: str) -> tuple[int, int]:
    """Lengths of the common prefix and suffix (not overlapping) of two strings."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class MarkdownEditorWidget(QPlainTextEdit):
    sig_annotate_requested = Signal()
    sig_mark_activated = Signal(str)  # the annotation whose mark the cursor entered by a click

    def __init__(self, parent: QWidget | None = None):
        from lantide.ui.documents.markdown_highlighter import MarkdownHighlighter

        super().__init__(parent)
        self.setObjectName("MarkdownEditor")
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 10.5))
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 4)
        self.setCenterOnScroll(False)
        self.document().setDocumentMargin(12)
        self.highlighter = MarkdownHighlighter(self.document())
        mark_theme(self)
        self._marks: list[tuple[MarkSpan, QTextCursor]] = []
        self._active: str | None = None
        self._find_selections: list[QTextEdit.ExtraSelection] = []
        self._clicked = False

    # -- marks ---------------------------------------------------------------------------
    def set_marks(self, marks: list[MarkSpan], active: str | None = None) -> None:
        """Highlight these marks (editor positions in the current text)."""
        self._marks = []
        length = self.document().characterCount() - 1
        for span in marks:
            if span.inner_end > length:
                continue  # the text moved on since the scan; the next scan fixes it
            cursor = QTextCursor(self.document())
            cursor.setPosition(span.inner_start)
            cursor.setPosition(span.inner_end, QTextCursor.MoveMode.KeepAnchor)
            self._marks.append((span, cursor))
        self._active = active
        self._refresh_selections()

    def set_active_mark(self, annotation_id: str | None) -> None:
        self._active = annotation_id
        self._refresh_selections()

    def set_find_selections(self, selections: list[QTextEdit.ExtraSelection]) -> None:
        self._find_selections = selections
        self._refresh_selections()

    def _refresh_selections(self) -> None:
        theme = colors()
        selections = []
        for span, cursor in self._marks:
            sel = QTextEdit.ExtraSelection()
            sel.cursor = cursor
            if span.id == self._active:
                color = theme.mark_active
            elif span.status == "open":
                color = theme.mark_open
            elif span.status == "resolved":
                color = theme.mark_resolved
            else:
                color = QColor(theme.danger).lighter(170)
            sel.format.setBackground(color)
            sel.format.setProperty(QTextFormat.Property.UserProperty + 1, span.id)
            if span.id == self._active:
                sel.format.setUnderlineStyle(sel.format.UnderlineStyle.SingleUnderline)
            selections.append(sel)
        self.setExtraSelections(selections + self._find_selections)

    def mark_ids(self) -> list[str]:
        return [span.id for span, _ in self._marks]

    def mark_at(self, position: int) -> str | None:
        for span, cursor in self._marks:
            if cursor.selectionStart() <= position <= cursor.selectionEnd():
                return span.id
        return None

    def mark_range(self, annotation_id: str) -> tuple[int, int] | None:
        """Where the mark's quoted text is now (it follows edits)."""
        for span, cursor in self._marks:
            if span.id == annotation_id:
                return cursor.selectionStart(), cursor.selectionEnd()
        return None

    def reveal(self, start: int, end: int | None = None, *, select: bool = True) -> None:
        """Scroll to ``start`` (and select up to ``end``), centred in the view."""
        length = self.document().characterCount() - 1
        start = max(0, min(start, length))
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        if select and end is not None:
            cursor.setPosition(max(start, min(end, length)), QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cursor)
        self.centerCursor()

    # -- text ----------------------------------------------------------------------------
    def replace_text(self, new_text: str, *, undoable: bool = True) -> None:
        """Make the editor hold ``new_text``, changing only the part that differs."""
        old = self.toPlainText()
        if old == new_text:
            return
        if not undoable:
            self.setPlainText(new_text)
            return
        prefix, suffix = common_affixes(old, new_text)
        start = _utf16_len(old[:prefix])
        end = _utf16_len(old[: len(old) - suffix])
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(new_text[prefix : len(new_text) - suffix])
        cursor.endEditBlock()

    def selection_range(self) -> tuple[int, int] | None:
        cursor = self.textCursor()
        if not cursor.hasSelection():
            return None
        return cursor.selectionStart(), cursor.selectionEnd()

    def selected_text(self) -> str:
        # QTextCursor uses U+2029 between paragraphs; show the analyst plain newlines.
        return self.textCursor().selectedText().replace("\u2029", "\n")

    # -- events --------------------------------------------------------------------------
    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if theme_switched(self, event):  # light/dark: recolour the Markdown and the marks
            self.highlighter.refresh_theme()
            self._refresh_selections()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt's name
        menu = self.createStandardContextMenu(event.pos())
        first = menu.actions()[0] if menu.actions() else None
        annotate = menu.addAction(icon("annotate"), "Annotate…")
        annotate.setShortcut(shortcut("annotate"))
        annotate.setEnabled(self.textCursor().hasSelection() and not self.isReadOnly())
        annotate.triggered.connect(self.sig_annotate_requested.emit)
        if first is not None:
            menu.removeAction(annotate)
            menu.insertAction(first, annotate)
            menu.insertSeparator(first)
        at = self.mark_at(self.cursorForPosition(event.pos()).position())
        if at:
            show = menu.addAction(icon("chat"), "Show this annotation")
            show.triggered.connect(lambda: self.sig_mark_activated.emit(at))
        menu.exec(event.globalPos())

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self._clicked = True
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().mouseReleaseEvent(event)
        if (
            self._clicked
            and event.button() == Qt.MouseButton.LeftButton
            and not self.textCursor().hasSelection()
        ):
            at = self.mark_at(self.textCursor().position())
            if at:
                self.sig_mark_activated.emit(at)
        self._clicked = False
