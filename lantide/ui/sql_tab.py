"""A SQL tab: editor, Run / Source Run, the paged result grid, lineage and a quick chart.

Placeholder with the public signature; filled in by the UI-data work (issue 7).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class SqlTabWidget(QWidget):
    sig_title_changed = Signal(str)

    def __init__(self, services, project: str, tab_name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.project = project
        self.tab_name = tab_name
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"SQL tab {project}/{tab_name}", self))

    def title(self) -> str:
        return f"{self.tab_name}.sql"

    def is_dirty(self) -> bool:
        return False

    def save(self) -> bool:
        return True
