"""A one-line label that shows as much of its text as fits, ending in "…", instead of
cutting the text off at its edge; the whole text is its tooltip."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QTextDocumentFragment
from PySide6.QtGui import Qt as QtGuiNamespace  # mightBeRichText lives in QtGui
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

MIN_CHARS = 6  # never narrower than a few characters and the ellipsis


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight):
        super().__init__(text, parent)
        self.mode = mode
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setToolTip(self.plain_text())

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self.setToolTip(self.plain_text())

    def plain_text(self) -> str:
        text = self.text()
        if QtGuiNamespace.mightBeRichText(text):
            return QTextDocumentFragment.fromHtml(text).toPlainText()
        return text

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        hint = super().minimumSizeHint()
        return QSize(self.fontMetrics().horizontalAdvance("x" * MIN_CHARS + "…"), hint.height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.fontMetrics().horizontalAdvance(self.plain_text()) + 2,
                     super().sizeHint().height())

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.plain_text(), self.mode, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment()) | int(Qt.AlignmentFlag.AlignVCenter), shown)

    def shown_text(self) -> str:
        """The text as drawn at the current width (for tests)."""
        return self.fontMetrics().elidedText(self.plain_text(), self.mode,
                                             self.contentsRect().width())
