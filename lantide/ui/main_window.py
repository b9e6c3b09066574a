"""The main window: workspace explorer and the central tab area."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QDockWidget, QMainWindow, QTabWidget, QTreeWidget,
                               QTreeWidgetItem, QLabel)

from lantide.workspace.model import Workspace


class MainWindow(QMainWindow):
    def __init__(self, workspace: Workspace):
        super().__init__()
        self.workspace = workspace
        self.setObjectName("LantideMainWindow")
        self.setWindowTitle(f"{workspace.name} — Lantide")
        self.resize(1280, 800)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.setCentralWidget(self.tabs)
        self.tabs.addTab(QLabel(f"Workspace {workspace.root}", self), "Welcome")

        self.explorer = QTreeWidget(self)
        self.explorer.setHeaderHidden(True)
        dock = QDockWidget("Explorer", self)
        dock.setObjectName("ExplorerDock")
        dock.setWidget(self.explorer)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        self.refresh_explorer()
        self.statusBar().showMessage(str(workspace.root))

    def refresh_explorer(self) -> None:
        self.explorer.clear()
        projects = QTreeWidgetItem(self.explorer, ["Projects"])
        for project in self.workspace.list_projects():
            item = QTreeWidgetItem(projects, [project.name])
            QTreeWidgetItem(item, [project.plan])
            QTreeWidgetItem(item, [project.report])
            for tab in project.sql_tab_names():
                QTreeWidgetItem(item, [f"{tab}.sql"])
        data = QTreeWidgetItem(self.explorer, ["Data"])
        if self.workspace.data_dir.is_dir():
            for path in sorted(self.workspace.data_dir.iterdir()):
                if path.is_file():
                    QTreeWidgetItem(data, [path.name])
        self.explorer.expandAll()
