"""A dismissable bar above the tabs for errors and warnings the analyst must see.

Errors stay until closed (or replaced); warnings fade after a while. The text is
selectable so a message or a path can be copied. Messages of level ``info`` only go to
the status bar.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from lantide.ui.icons import icon
from lantide.ui.theme import blend, colors


class MessageBarWidget(QFrame):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("MessageBar")
        self.icon_label = QLabel(self)
        self.text_label = QLabel(self)
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton(self)
        self.close_button.setIcon(icon("close"))
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.icon_label, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.text_label, 1)
        self.action_button = QPushButton(self)  # one optional way out of the problem
        self.action_button.hide()
        self.action_button.clicked.connect(self._action_clicked)
        self._action = None
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self.hide)
        self.level = ""
        self.hide()

    def show_message(self, text: str, level: str = "error", action=None) -> None:
        """``action``: optional ``(label, callback)``, a button that acts and dismisses."""
        if level not in ("error", "warning"):
            return
        self._action = action
        self.action_button.setVisible(action is not None)
        if action is not None:
            self.action_button.setText(action[0])
        self.level = level
        theme = colors()
        color = theme.danger if level == "error" else theme.warning
        tint = blend(color, self.palette().color(QPalette.ColorRole.Base), 0.14)
        self.setStyleSheet(
            f"QFrame#MessageBar {{ background: {tint.name()}; "
            f"border-bottom: 1px solid {color.name()}; }}"
        )
        self.icon_label.setPixmap(icon(level, color).pixmap(18, 18))
        self.text_label.setText(text)
        self.show()
        if level == "warning":
            self._timer.start(20000)
        else:
            self._timer.stop()

    def _action_clicked(self) -> None:
        action, self._action = self._action, None
        self.hide()
        if action is not None:
            action[1]()

    def text(self) -> str:
        return self.text_label.text() if self.isVisible() else ""
