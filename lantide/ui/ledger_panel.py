"""The bottom panel: the step ledger of the conversation and the query history.

Placeholder with the public signature; filled in by the UI-data work (issue 7).
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class LedgerPanel(QWidget):
    def __init__(self, services, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Ledger", self))

    def select_step(self, step_id: str) -> None:
        """Show and select the ledger entry ``step_id``."""
