"""The inline comment box that opens under the selected text when the analyst annotates.

Ctrl+Enter (or *Comment*) submits, Escape (or *Cancel*) closes it. The box floats next to
the selection, so the quoted text stays visible. It lives on a parent wider than the
editor (the document tab), so a narrow editor column never cuts it off; it is as wide as
that parent allows and always fully inside it.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class _CommentEdit(QPlainTextEdit):
    sig_submit = Signal()
    sig_cancel = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.sig_submit.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.sig_cancel.emit()
            return
        super().keyPressEvent(event)


WIDTH = 380
MIN_WIDTH = 240  # the quote, the box and both buttons still fit


class InlineCommentWidget(QFrame):
    sig_comment_submitted = Signal(str)
    sig_cancelled = Signal()

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self._host = parent  # where it opens (parentWidget() is typed Optional)
        self.setObjectName("InlineComment")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setStyleSheet(
            "QFrame#InlineComment { border: 1px solid palette(highlight); "
            "border-radius: 6px; background: palette(base); }"
        )
        self.quote_label = QLabel(self)
        self.quote_label.setWordWrap(True)
        self.edit = _CommentEdit(self)
        self.edit.setPlaceholderText("Your comment (Ctrl+Enter to save, Esc to cancel)")
        self.edit.setFixedHeight(70)
        self.edit.sig_submit.connect(self.submit)
        self.edit.sig_cancel.connect(self.cancel)
        self.ok_button = QPushButton("Comment", self)
        self.ok_button.setDefault(True)
        self.ok_button.clicked.connect(self.submit)
        cancel = QPushButton("Cancel", self)
        cancel.clicked.connect(self.cancel)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(cancel)
        row.addWidget(self.ok_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.quote_label)
        layout.addWidget(self.edit)
        layout.addLayout(row)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.cancel)
        self.setFixedWidth(WIDTH)
        self.hide()

    def open_at(self, point: QPoint, quote: str, *, above: int = 24) -> None:
        """Open at ``point`` (in the parent's coordinates), or ``above`` pixels higher
        than the box is tall when there is no room below."""
        short = " ".join(quote.split())
        if len(short) > 80:
            short = short[:79] + "…"
        self.quote_label.setText(f"Annotate “{short}”")
        self.edit.clear()
        parent = self._host
        self.setFixedWidth(max(MIN_WIDTH, min(WIDTH, parent.width() - 8)))
        self.adjustSize()
        x = max(4, min(point.x(), parent.width() - self.width() - 4))
        y = point.y()
        if y + self.height() > parent.height():
            y = point.y() - self.height() - above
        y = max(4, min(y, parent.height() - self.height() - 4))
        self.move(x, y)
        self.show()
        self.raise_()
        self.edit.setFocus()

    def submit(self) -> None:
        text = self.edit.toPlainText().strip()
        if not text:
            self.edit.setFocus()
            return
        self.hide()
        self.sig_comment_submitted.emit(text)

    def cancel(self) -> None:
        self.hide()
        self.sig_cancelled.emit()
