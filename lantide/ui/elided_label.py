"""A one-line label of plain text that shows as much as fits, ending in "…", instead of
cutting the text off or asking its container for more room; the whole text is its tooltip
and its ``text()``."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QWidget


class ElidedLabel(QLabel):
    """One line of plain text, cut with "…" to the width it gets (the whole in the
    tooltip): it never asks the chat for more room."""

    def __init__(self, text: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._full = ""
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._elide()

    def text(self) -> str:  # the whole text, not what fits
        return self._full

    def shown_text(self) -> str:
        """What fits and is shown (ends with "…" when cut)."""
        return super().text()

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        self.set_full_text(text)

    def _elide(self) -> None:
        super().setText(
            self.fontMetrics().elidedText(
                self._full, Qt.TextElideMode.ElideRight, max(self.contentsRect().width(), 0)
            )
        )

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(
            min(self.fontMetrics().horizontalAdvance(self._full) + 4, 40),
            super().sizeHint().height(),
        )

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return self.sizeHint()
