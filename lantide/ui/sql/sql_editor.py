"""The SQL editor: line numbers, highlighting, completion, an error marker, comment toggle.

Completion pops up while a name is typed (two letters, or right after ``alias.``) and on
Ctrl+Space; Tab or Enter accepts, Esc closes. An error with a position (line, column)
from the guard or DuckDB is marked with a wavy underline and a tinted line until the
next edit. Ctrl+/ comments or uncomments the selected lines. Ctrl+click asks for the
definition of the table clicked (``sig_definition_requested``; the tab opens it).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, QSize, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPalette,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit, QTextEdit, QWidget

from lantide.ui.drag_names import dropped_sql_name
from lantide.ui.shortcuts import shortcut
from lantide.ui.sql.sql_completion import SQL_KEYWORDS, SchemaCatalog, completions, quote_if_needed
from lantide.ui.sql.sql_highlighter import SqlHighlighter, is_dark

INDENT = "    "


class _LineNumberArea(QWidget):
    def __init__(self, editor: SqlEditor):
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.editor.line_number_width(), 0)

    def paintEvent(self, event) -> None:  # noqa: N802
        self.editor.paint_line_numbers(event)


class SqlEditor(QPlainTextEdit):
    sig_error_cleared = Signal()
    sig_definition_requested = Signal(int)  # Ctrl+click: the text position clicked

    def __init__(self, catalog: SchemaCatalog | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.catalog = catalog
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 10.5))
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 4)
        self.highlighter = SqlHighlighter(self.document(), dark=is_dark(self.palette()))
        self._numbers = _LineNumberArea(self)
        self._error: tuple[int, int] | None = None
        self._find_selections: list = []  # matches of the find bar
        self.blockCountChanged.connect(self._update_margin)
        self.updateRequest.connect(self._scroll_numbers)
        self.cursorPositionChanged.connect(self._refresh_selections)
        self.textChanged.connect(self._text_edited)
        self._update_margin()
        self._refresh_selections()
        self.context_actions: list[QAction] = []  # the tab's, after the standard entries

        self.completer = QCompleter(self)
        self.completer.setWidget(self)
        self.completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setMaxVisibleItems(12)
        self._completion_model = QStringListModel(self)
        self.completer.setModel(self._completion_model)
        # PySide6's stub gives SignalInstance no __getitem__; at run time [str] picks the
        # activated(QString) overload over activated(QModelIndex).
        self.completer.activated[str].connect(self.insert_completion)  # type: ignore[index]
        self._completion_start = 0
        self._complete_timer = QTimer(self)
        self._complete_timer.setSingleShot(True)
        self._complete_timer.setInterval(120)
        self._complete_timer.timeout.connect(lambda: self.show_completions(explicit=False))
        if catalog is not None:
            catalog.sig_catalog_changed.connect(self._catalog_changed)

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.highlighter.set_dark(is_dark(self.palette()))  # light/dark switched
            self._refresh_selections()
            self._numbers.update()

    # -- line numbers ----------------------------------------------------------------------
    def line_number_width(self) -> int:
        digits = max(3, len(str(self.blockCount())))
        return 14 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_margin(self, *_):
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    def _scroll_numbers(self, rect: QRect, dy: int) -> None:
        if dy:
            self._numbers.scroll(0, dy)
        else:
            self._numbers.update(0, rect.y(), self._numbers.width(), rect.height())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._numbers.setGeometry(QRect(cr.left(), cr.top(), self.line_number_width(), cr.height()))

    def paint_line_numbers(self, event) -> None:
        painter = QPainter(self._numbers)
        palette = self.palette()
        painter.fillRect(event.rect(), palette.color(QPalette.ColorRole.Window))
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        current = self.textCursor().blockNumber()
        error_line = self._error[0] - 1 if self._error else -1
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                if number == error_line:
                    painter.setPen(QColor("#dc2626"))
                elif number == current:
                    painter.setPen(palette.color(QPalette.ColorRole.Text))
                else:
                    painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
                painter.drawText(
                    0,
                    top,
                    self._numbers.width() - 8,
                    self.fontMetrics().height(),
                    Qt.AlignmentFlag.AlignRight,
                    str(number + 1),
                )
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1

    # -- current line and error marker ---------------------------------------------------
    def set_error_position(self, line: int, column: int) -> None:
        """Mark the error at ``line``/``column`` (1-based) and put the cursor there."""
        block = self.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            return
        self._error = (line, column)
        cursor = QTextCursor(block)
        cursor.movePosition(
            QTextCursor.MoveOperation.Right, n=min(max(column - 1, 0), block.length() - 1)
        )
        self.blockSignals(True)  # moving the cursor must not count as an edit
        self.setTextCursor(cursor)
        self.blockSignals(False)
        self.ensureCursorVisible()
        self._refresh_selections()
        self._numbers.update()

    def set_find_selections(self, selections: list) -> None:
        """The find bar's highlighted matches (kept beside the current line and error)."""
        self._find_selections = list(selections)
        self._refresh_selections()

    @property
    def error_position(self) -> tuple[int, int] | None:
        return self._error

    def clear_error(self) -> None:
        if self._error is not None:
            self._error = None
            self._refresh_selections()
            self._numbers.update()
            self.sig_error_cleared.emit()

    def _text_edited(self) -> None:
        self.clear_error()

    def _refresh_selections(self) -> None:
        selections = []
        line = QTextEdit.ExtraSelection()
        color = self.palette().color(QPalette.ColorRole.Highlight)
        color.setAlpha(22)
        line.format.setBackground(color)
        line.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        line.cursor = self.textCursor()
        line.cursor.clearSelection()
        selections.append(line)
        selections.extend(self._find_selections)
        if self._error is not None:
            block = self.document().findBlockByNumber(self._error[0] - 1)
            if block.isValid():
                tint = QTextEdit.ExtraSelection()
                tint.format.setBackground(QColor(220, 38, 38, 28))
                tint.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                tint.cursor = QTextCursor(block)
                selections.append(tint)
                word = QTextEdit.ExtraSelection()
                word.format.setUnderlineStyle(word.format.UnderlineStyle.WaveUnderline)
                word.format.setUnderlineColor(QColor("#dc2626"))
                text = block.text()
                start = min(max(self._error[1] - 1, 0), max(len(text) - 1, 0))
                end = start
                quoted = text[start : start + 1] in ('"', "'")
                while end < len(text) and (
                    end == start
                    or (
                        text[end] not in " \t,;()"
                        if not quoted
                        else text[end - 1] != text[start] or end == start + 1
                    )
                ):
                    end += 1
                cursor = QTextCursor(block)
                cursor.setPosition(block.position() + start)
                cursor.setPosition(
                    block.position() + max(end, start + 1), QTextCursor.MoveMode.KeepAnchor
                )
                word.cursor = cursor
                selections.append(word)
        self.setExtraSelections(selections)

    # -- completion ------------------------------------------------------------------------
    def _candidates(self) -> tuple[int, str, list[str]]:
        tables = self.catalog.tables if self.catalog is not None else []
        columns_of = self.catalog.columns_of if self.catalog is not None else (lambda t: None)
        pos = self.textCursor().position()
        request, words = completions(self.toPlainText(), pos, tables, columns_of)
        return request.start, request.prefix, words

    def show_completions(self, *, explicit: bool = True) -> None:
        start, prefix, words = self._candidates()
        self._completion_start = start
        if not words or (
            not explicit and len(prefix) < 2 and self.toPlainText()[start - 1 : start] != "."
        ):
            self._popup().hide()
            return
        self._completion_model.setStringList(words[:200])
        popup = self._popup()
        popup.setCurrentIndex(self._completion_model.index(0, 0))
        rect = self.cursorRect()
        rect.setWidth(
            max(220, popup.sizeHintForColumn(0) + popup.verticalScrollBar().sizeHint().width() + 12)
        )
        rect.translate(self.viewportMargins().left(), 0)
        self.completer.complete(rect)

    def insert_completion(self, word: str) -> None:
        cursor = self.textCursor()
        cursor.setPosition(self._completion_start)
        cursor.setPosition(self.textCursor().position(), QTextCursor.MoveMode.KeepAnchor)
        text = word if word in SQL_KEYWORDS else _quote_path(word)
        cursor.insertText(text)
        self.setTextCursor(cursor)
        self._popup().hide()

    def _popup(self) -> QAbstractItemView:
        popup = self.completer.popup()
        if popup is None:  # Qt makes the default popup on first use: never None
            raise RuntimeError("the SQL completer has no popup")
        return popup

    def _catalog_changed(self) -> None:
        if self._popup().isVisible():
            self.show_completions(explicit=True)

    def contextMenuEvent(self, event) -> None:  # noqa: N802
        menu = self.createStandardContextMenu(event.pos())
        if self.context_actions:
            menu.addSeparator()
            menu.addActions(self.context_actions)
        menu.exec(event.globalPos())
        menu.deleteLater()

    # -- Ctrl+click: go to definition ------------------------------------------------------
    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        if (
            event.button() == Qt.MouseButton.LeftButton
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
            and not self.textCursor().hasSelection()
        ):
            position = self.cursorForPosition(event.position().toPoint()).position()
            self.sig_definition_requested.emit(position)

    # -- keys ------------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        popup = self._popup()
        key = event.key()
        if popup.isVisible():
            if (
                key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab)
                and not event.modifiers() & Qt.KeyboardModifier.ControlModifier
            ):
                index = popup.currentIndex()
                if index.isValid():
                    self.insert_completion(index.data())
                    return
            if key == Qt.Key.Key_Escape:
                popup.hide()
                return
            if key in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
                event.ignore()  # the popup handles them
                return
        ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if ctrl and key == Qt.Key.Key_Space:
            self.show_completions(explicit=True)
            return
        if QKeySequence(event.keyCombination()) == shortcut("sql_comment"):
            self.toggle_comment()
            return
        if key == Qt.Key.Key_Tab and not event.modifiers():
            self.textCursor().insertText(INDENT)
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            indent = self.textCursor().block().text()
            indent = indent[: len(indent) - len(indent.lstrip())]
            super().keyPressEvent(event)
            self.textCursor().insertText(indent)
            return
        super().keyPressEvent(event)
        text = event.text()
        if text and (text.isalnum() or text in '_."') and not ctrl:
            self._complete_timer.start()
        elif popup.isVisible():
            self.show_completions(explicit=False)

    def replace_text(self, text: str) -> None:
        """Replace the whole text as one undoable edit (Ctrl+Z brings the old text back);
        the cursor stays on its line."""
        line = self.textCursor().blockNumber()
        edit = QTextCursor(self.document())
        edit.beginEditBlock()
        edit.select(QTextCursor.SelectionType.Document)
        edit.insertText(text)
        edit.endEditBlock()
        block = self.document().findBlockByNumber(min(line, self.blockCount() - 1))
        self.setTextCursor(QTextCursor(block))

    def toggle_comment(self) -> None:
        """Comment the selected lines with ``--``, or uncomment them when all are."""
        cursor = self.textCursor()
        doc = self.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        last = doc.findBlock(
            max(
                cursor.selectionEnd() - (1 if cursor.hasSelection() else 0), cursor.selectionStart()
            )
        ).blockNumber()
        blocks = [doc.findBlockByNumber(n) for n in range(first, last + 1)]
        texts = [b.text() for b in blocks]
        uncomment = all(t.lstrip().startswith("--") or not t.strip() for t in texts)
        edit = QTextCursor(doc)
        edit.beginEditBlock()
        for block, text in zip(blocks, texts, strict=True):  # one text per block
            if not text.strip():
                continue
            pos = block.position() + len(text) - len(text.lstrip())
            edit.setPosition(pos)
            if uncomment:
                width = 3 if text.lstrip().startswith("-- ") else 2
                edit.setPosition(pos + width, QTextCursor.MoveMode.KeepAnchor)
                edit.removeSelectedText()
            else:
                edit.insertText("-- ")
        edit.endEditBlock()

    # -- a table or column dragged from the explorer -------------------------------------
    def canInsertFromMimeData(self, source) -> bool:  # noqa: N802
        return dropped_sql_name(source) is not None or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source) -> None:  # noqa: N802
        """A dragged name goes in as the query layer quoted it, set apart by a space from
        a word it would otherwise run into; the editor takes the focus to go on typing."""
        name = dropped_sql_name(source)
        if name is None:
            super().insertFromMimeData(source)
            return
        cursor = self.textCursor()
        block = cursor.block().text()
        column = cursor.positionInBlock()
        before = block[column - 1] if column > 0 else ""
        after = block[column] if column < len(block) else ""
        glue = ('"', "_", ")")
        lead = " " if before and (before.isalnum() or before in glue) else ""
        trail = " " if after and (after.isalnum() or after in glue + ("(",)) else ""
        cursor.insertText(lead + name + trail)
        self.setTextCursor(cursor)
        self.setFocus()


def _quote_path(word: str) -> str:
    """A table name (maybe ``schema.table``) or a column, quoted where SQL needs it."""
    if "." in word:
        schema, _, name = word.partition(".")
        return f"{quote_if_needed(schema)}.{quote_if_needed(name)}"
    return quote_if_needed(word)
