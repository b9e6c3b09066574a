"""Help: the keyboard shortcuts (F1) and About Lantide with the versions of its parts."""

from __future__ import annotations

import platform
import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from lantide import __version__
from lantide.ui.icons import app_icon, icon
from lantide.ui.shortcuts import by_area
from lantide.ui.tree_items import child_items, top_level_items

# Distributions whose versions About lists (read from metadata; nothing is imported).
_COMPONENTS = (
    "PySide6-Essentials",
    "duckdb",
    "sqlglot",
    "markdown-it-py",
    "openai",
    "tiktoken",
    "watchdog",
    "keyring",
)


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ShortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts — Lantide")
        self.resize(560, 560)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter shortcuts…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Action", "Keys"])
        self.tree.setRootIsDecorated(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        for area, items in by_area().items():
            group = QTreeWidgetItem(self.tree, [area, ""])
            font = group.font(0)
            font.setBold(True)
            group.setFont(0, font)
            group.setFirstColumnSpanned(True)
            for s in items:
                QTreeWidgetItem(group, [s.description, s.native_text()])
            group.setExpanded(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.tree)
        layout.addWidget(buttons)

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for group in top_level_items(self.tree):
            shown = 0
            for child in child_items(group):
                match = (
                    not needle
                    or needle in child.text(0).lower()
                    or needle in child.text(1).lower()
                    or needle in group.text(0).lower()
                )
                child.setHidden(not match)
                shown += match
            group.setHidden(shown == 0)

    def visible_rows(self) -> list[tuple[str, str]]:
        rows = []
        for group in top_level_items(self.tree):
            for child in child_items(group):
                if not child.isHidden() and not group.isHidden():
                    rows.append((child.text(0), child.text(1)))
        return rows


def component_versions() -> list[tuple[str, str]]:
    from importlib import metadata

    out = [
        ("Lantide", __version__),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
    ]
    try:
        from PySide6 import QtCore

        out.append(("Qt", QtCore.qVersion()))
    except Exception:
        pass
    for dist in _COMPONENTS:
        try:
            out.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            out.append((dist, "not installed"))
    out.append(("Platform", f"{platform.system()} {platform.release()} ({platform.machine()})"))
    return out


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("AboutDialog")
        self.setWindowTitle("About Lantide")
        self.setMinimumWidth(460)
        logo = QLabel(self)
        logo.setPixmap(app_icon().pixmap(64, 64))
        title = QLabel(
            f"<h2 style='margin:0'>Lantide {__version__}</h2>"
            "<p>A desktop workbench for data analysts who work with an AI agent.</p>",
            self,
        )
        title.setWordWrap(True)
        head = QHBoxLayout()
        head.addWidget(logo, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(title, 1)
        self.versions = component_versions()
        table = QTreeWidget(self)
        table.setColumnCount(2)
        table.setHeaderLabels(["Component", "Version"])
        table.setRootIsDecorated(False)
        for name, version in self.versions:
            QTreeWidgetItem(table, [name, version])
        table.resizeColumnToContents(0)
        copy = QPushButton(icon("ledger"), "Copy versions", self)
        copy.clicked.connect(self.copy_versions)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(table)
        layout.addWidget(QLabel(f"Python executable: {sys.executable}", self))
        layout.addWidget(buttons)

    def versions_text(self) -> str:
        return "\n".join(f"{name}: {version}" for name, version in self.versions)

    def copy_versions(self) -> None:
        QGuiApplication.clipboard().setText(self.versions_text())
