"""The pieces of the chat transcript: the analyst's messages, instructions the app sent on
the analyst's behalf, system notices, ``ask_user`` questions answered inline, and the
setup card shown when no model is configured.

The analyst's messages are bubbles on the right; an instruction the app wrote (Resolve
(N)) is a full-width box with its own label and icon; notices (errors, retries, the turn's
end) are small muted lines. The assistant's answer is in :mod:`lantide.ui.chat.chat_answer`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from lantide.ui.chat.chat_answer import AutoHeightBrowser
from lantide.ui.icons import icon
from lantide.ui.theme import colors
from lantide.ui.themed import ThemedFrame, tint
from lantide.ui.wrap_button import WrapButton

SHORT_CHOICES = 40  # characters of all choices together that fit one row of buttons


class UserMessageWidget(ThemedFrame):
    """What the analyst typed (a bubble on the right), or an instruction the app sent."""

    def __init__(self, text: str, *, instruction: bool = False, parent: QWidget | None = None):
        super().__init__(parent)
        self.text = text
        self.instruction = instruction
        self.setObjectName("InstructionMessage" if instruction else "UserMessage")
        # a text box, not a label: a long path or name breaks instead of widening the chat
        body = self.body = AutoHeightBrowser(self)
        body.set_plain_text(text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 7, 10, 7)
        layout.setSpacing(3)
        self._label = self._icon = None
        if instruction:
            self._label = QLabel("Instruction sent by Lantide", self)
            self._icon = QLabel(self)
            head = QHBoxLayout()
            head.addWidget(self._icon)
            head.addWidget(self._label, 1)
            layout.addLayout(head)
        layout.addWidget(body)
        self.apply_theme()

    def apply_theme(self) -> None:
        theme = colors()
        if self._label is not None and self._icon is not None:  # an instruction
            self._label.setStyleSheet(f"color: {theme.muted.name()}; font-size: small;")
            self._icon.setPixmap(icon("settings", theme.muted).pixmap(14, 14))
            self.setStyleSheet(
                f"QFrame#InstructionMessage {{ background: {theme.panel.name()}; "
                f"border: 1px dashed {theme.border.name()}; border-radius: 6px; }}"
            )
        else:
            accent = self.palette().color(self.palette().ColorRole.Highlight)
            fill = tint(accent, 0.16 if not theme.dark else 0.3)
            self.setStyleSheet(
                f"QFrame#UserMessage {{ background: {fill.name()}; border-radius: 10px; }}"
            )


class NoticeWidget(ThemedFrame):
    """A line from the system: an error, a retry, a note about the turn. Not a message."""

    def __init__(
        self,
        text: str,
        *,
        hint: str | None = None,
        level: str = "info",
        actions: Sequence[tuple[str, Callable[[], None]]] = (),
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("ChatNotice")
        self.level = level
        self.icon_label = QLabel(self)
        self.label = AutoHeightBrowser(self)  # a long path breaks instead of widening the chat
        self.label.set_plain_text(text + (f"\n{hint}" if hint else ""))
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        row.setSpacing(6)
        row.addWidget(self.icon_label, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.label, 1)
        for text_, callback in actions:
            button = QPushButton(text_, self)
            button.clicked.connect(callback)
            row.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
        self.apply_theme()

    def apply_theme(self) -> None:
        theme = colors()
        color = {"error": theme.danger, "warning": theme.warning}.get(self.level, theme.muted)
        self.icon_label.setPixmap(
            icon({"error": "error", "warning": "warning"}.get(self.level, "info"), color).pixmap(
                14, 14
            )
        )
        self.label.setStyleSheet(
            f"QTextBrowser {{ background: transparent; color: {color.name()}; }}"
        )
        if self.level == "error":
            fill = tint(theme.danger, 0.12 if not theme.dark else 0.22)
            self.setStyleSheet(
                f"QFrame#ChatNotice {{ background: {fill.name()}; border-radius: 4px; }}"
            )

    def text(self) -> str:
        return self.label.toPlainText()


class QuestionWidget(ThemedFrame):
    """An ``ask_user`` question: its choices as buttons and a box for any other answer."""

    sig_answered = Signal(str)

    def __init__(self, question: str, choices: list[str], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("QuestionCard")
        self.question = question
        self.choices = list(choices)
        self.answer: str | None = None
        title = QLabel(self)
        self._title_icon = title
        text = QLabel(question, self)
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text.setStyleSheet("font-weight: 600;")
        head = QHBoxLayout()
        head.addWidget(title, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(text, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)
        layout.addLayout(head)
        self.buttons: list[QPushButton] = []
        if choices:
            # short choices side by side; sentences one under another, each wrapping
            short = sum(len(c) for c in choices) <= SHORT_CHOICES
            row = QHBoxLayout() if short else QVBoxLayout()
            row.setSpacing(6)
            for choice in choices:
                button = QPushButton(choice, self) if short else WrapButton(choice, self)
                button.setCursor(Qt.CursorShape.PointingHandCursor)
                button.clicked.connect(lambda _=False, c=choice: self._answer(c))
                row.addWidget(button)
                self.buttons.append(button)
            if short:
                row.addStretch(1)
            layout.addLayout(row)
        self.other = QLineEdit(self)
        self.other.setPlaceholderText("Another answer…" if choices else "Your answer…")
        self.other.returnPressed.connect(lambda: self._answer(self.other.text()))
        self.send_button = QPushButton("Answer", self)
        self.send_button.clicked.connect(lambda: self._answer(self.other.text()))
        free = QHBoxLayout()
        free.addWidget(self.other, 1)
        free.addWidget(self.send_button)
        layout.addLayout(free)
        self.answer_label = QLabel(self)
        self.answer_label.setWordWrap(True)
        self.answer_label.hide()
        layout.addWidget(self.answer_label)
        self.apply_theme()

    def apply_theme(self) -> None:
        theme = colors()
        self.setStyleSheet(
            f"QFrame#QuestionCard {{ border: 1px solid {theme.link.name()}; "
            f"border-radius: 6px; background: {theme.panel.name()}; }}"
        )
        self._title_icon.setPixmap(icon("chat", theme.link).pixmap(16, 16))
        self.answer_label.setStyleSheet(f"color: {theme.muted.name()};")

    def _answer(self, text: str) -> None:
        text = text.strip()
        if not text or self.answer is not None:
            return
        self.sig_answered.emit(text)

    def set_answered(self, answer: str) -> None:
        """The question was answered (here or by a typed message): freeze it."""
        self.answer = answer
        for button, choice in zip(self.buttons, self.choices, strict=True):
            button.setEnabled(False)
            if choice == answer:
                button.setStyleSheet("font-weight: 600;")
        self.other.setEnabled(False)
        self.send_button.setEnabled(False)
        self.answer_label.setText(f"Answered: {answer}")
        self.answer_label.show()


class SetupCard(ThemedFrame):
    """A card that explains a missing setup step, with a button to fix it (full width text,
    so it reads well in a narrow dock)."""

    def __init__(self, title: str, text: str, button: str, on_click, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("SetupCard")
        self.icon_label = QLabel(self)
        self.title_label = QLabel(title, self)
        self.title_label.setWordWrap(True)
        self.title_label.setStyleSheet("font-weight: 600;")
        self.body = QLabel(text, self)
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.button = QPushButton(button, self)
        self.button.clicked.connect(on_click)
        head = QHBoxLayout()
        head.setSpacing(6)
        head.addWidget(self.icon_label, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(self.title_label, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)
        layout.addLayout(head)
        layout.addWidget(self.body)
        layout.addLayout(row)
        self.apply_theme()

    def apply_theme(self) -> None:
        theme = colors()
        self.icon_label.setPixmap(icon("model", theme.warning).pixmap(18, 18))
        self.setStyleSheet(
            f"QFrame#SetupCard {{ border: 1px solid {theme.warning.name()}; "
            f"border-radius: 6px; background: {theme.panel.name()}; }}"
        )

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        # Wrapped text needs more height when the dock narrows; a dock does not ask its
        # contents for height-for-width, so the card says it through its minimum.
        layout = self.layout()
        need = layout.heightForWidth(self.width()) if layout is not None else 0
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)

    def text(self) -> str:
        return f"{self.title_label.text()}\n{self.body.text()}"
