"""A banner inside a tab: a refusal or an error with the guard's advice, a hint, or a
question about the file on disk, with optional action buttons ("Go to line 3", "Reload").

Unlike the window's message bar it belongs to one tab, so an error stays next to the SQL
that caused it. The text is selectable so a message can be copied.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from lantide.ui.analyst_words import plain_hint
from lantide.ui.icons import icon
from lantide.ui.theme import colors
from lantide.ui.themed import mark_theme, theme_switched, tint

ERROR, WARNING, INFO = "error", "warning", "info"


class NoticeBanner(QFrame):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("NoticeBanner")
        mark_theme(self)
        self.level = ""
        self.tag: str | None = None
        self._title: str = ""
        self._code: str | None = None
        self.icon_label = QLabel(self)
        # fixed: else the icon's cell takes the spare width and squeezes the text
        self.icon_label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.title_label = QLabel(self)
        self.title_label.setWordWrap(True)
        self.title_label.setTextFormat(Qt.TextFormat.RichText)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail_label = QLabel(self)
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for label in (self.title_label, self.detail_label):  # the text takes the width
            label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.close_button = QToolButton(self)
        self.close_button.setIcon(icon("close"))
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.clear)
        self._actions = QHBoxLayout()
        self._actions.setContentsMargins(0, 2, 0, 0)
        self._actions.setSpacing(6)
        text = QVBoxLayout()
        text.setContentsMargins(0, 0, 0, 0)
        text.setSpacing(2)
        text.addWidget(self.title_label)
        text.addWidget(self.detail_label)
        text.addLayout(self._actions)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 7, 6, 7)
        layout.setSpacing(8)
        layout.addWidget(self.icon_label, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(text, 1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_notice(
        self,
        title: str,
        detail: str | None = None,
        level: str = ERROR,
        *,
        code: str | None = None,
        actions: Sequence[tuple[str, Callable[[], None]]] = (),
        closable: bool = True,
        tag: str | None = None,
    ) -> None:
        """Show a notice; ``tag`` says what it is about, so its owner can clear just it."""
        self.level = level
        self.tag = tag
        self._title, self._code = title, code
        self.apply_theme()
        self.detail_label.setText(detail or "")
        self.detail_label.setVisible(bool(detail))
        while self._actions.count():
            item = self._actions.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for text, callback in actions:
            button = QPushButton(text, self)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(callback)
            self._actions.addWidget(button)
        if actions:
            self._actions.addStretch(1)
        self.close_button.setVisible(closable)
        self.show()

    def apply_theme(self) -> None:
        if not self.level:
            return
        theme = colors()
        color = {ERROR: theme.danger, WARNING: theme.warning}.get(self.level, theme.link)
        fill = tint(color, 0.12 if not theme.dark else 0.22)
        self.setStyleSheet(
            f"QFrame#NoticeBanner {{ background: {fill.name()}; "
            f"border: 1px solid {color.name()}; border-radius: 4px; }}"
        )
        self.icon_label.setPixmap(
            icon({ERROR: "error", WARNING: "warning"}.get(self.level, "info"), color).pixmap(18, 18)
        )
        head = f"<b>{html.escape(self._title)}</b>"
        if self._code:
            head += (
                f" &nbsp;<span style='color:{theme.muted.name()}; font-size:small'>"
                f"{html.escape(self._code)}</span>"
            )
        self.title_label.setText(head)

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if theme_switched(self, event):
            self.apply_theme()

    def show_error(
        self,
        exc: BaseException,
        *,
        what: str = "",
        actions: Sequence[tuple[str, Callable[[], None]]] = (),
    ) -> None:
        """A LantideError's message, hint and code; anything else as one line."""
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        title = f"{what}: {message}" if what else message
        code = getattr(exc, "code", None)
        level = INFO if code == "QUERY_CANCELLED" else ERROR
        hint = getattr(exc, "hint", None)
        self.show_notice(
            title, plain_hint(hint) if hint else None, level, code=code, actions=actions
        )

    def buttons(self) -> list[QPushButton]:
        items = (self._actions.itemAt(i) for i in range(self._actions.count()))
        widgets = [item.widget() for item in items if item is not None]
        return [w for w in widgets if isinstance(w, QPushButton)]

    def text(self) -> str:
        """The visible text (title and detail), for tests and accessibility."""
        if not self.isVisible() and not self.level:
            return ""
        return f"{self.title_label.text()}\n{self.detail_label.text()}".strip()

    def clear(self) -> None:
        self.level = ""
        self.tag = None
        self.hide()
