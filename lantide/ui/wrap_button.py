"""A push button whose text wraps to the width it gets: an ``ask_user`` choice can be a
sentence, and a plain QPushButton would ask the narrow chat for its whole width (the chat
was cut off at the right at 1024x700)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget


class WrapButton(QPushButton):
    def __init__(self, text: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.label = QLabel(text, self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.box = QHBoxLayout(self)
        self.box.setContentsMargins(10, 5, 10, 5)
        self.box.addWidget(self.label)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.setAccessibleName(text)
        self.setToolTip(text)

    # The text is the label's (``self.label.text()``); the button's own ``text()`` stays
    # empty, so nothing measures it as one unbreakable line.

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.box.sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return self.box.minimumSize()

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self.box.totalHeightForWidth(width)
