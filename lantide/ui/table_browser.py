"""A table browser tab: schema, first rows and a column profile.

Placeholder with the public signature; filled in by the UI-data work (issue 7).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class TableBrowserWidget(QWidget):
    sig_title_changed = Signal(str)

    def __init__(self, services, table_name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.table_name = table_name
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Table {table_name}", self))

    def title(self) -> str:
        return self.table_name

    def is_dirty(self) -> bool:
        return False
