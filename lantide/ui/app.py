"""Starting the desktop app."""

from __future__ import annotations

import sys
from pathlib import Path

from lantide import __version__


def run_app(workspace_root: Path, argv: list[str] | None = None) -> int:
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings, save_settings

    # Take the workspace lock before any window exists: a second process gets the
    # plain "open in another Lantide process, pid N" error on the command line.
    ws = Workspace.open(workspace_root, lock=True)
    settings = load_settings()
    settings.add_recent_workspace(ws.root)
    save_settings(settings)

    from PySide6.QtWidgets import QApplication

    from lantide.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("Lantide")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("Lantide")
    window = MainWindow(ws)
    window.show()
    try:
        return app.exec()
    finally:
        ws.close()
