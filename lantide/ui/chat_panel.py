"""The chat panel: the agent's streamed answers, tool cards, questions, conversations.

Placeholder with the public signature; filled in by the UI-data work (issue 7).
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class ChatPanel(QWidget):
    def __init__(self, services, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Chat", self))

    def ask(self, text: str) -> None:
        """Send ``text`` to the agent as the analyst's message (e.g. Resolve (N))."""
