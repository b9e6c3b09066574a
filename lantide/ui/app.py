"""Starting the desktop app, and switching it to another workspace.

The workspace lock is taken before any window exists, so a second process gets the plain
"open in another Lantide process, pid N" error on the command line. The window shows
first; DuckDB opens and registers the data files afterwards in a worker, so the window
appears fast even on a large workspace.

``LANTIDE_READY_FILE``: when set, the app writes ``{"pid", "shown_at", "idle_at"}``
(wall-clock seconds) to that path once the main window is idle: ``shown_at`` when the
window's first paint was done and the event loop ran again, ``idle_at`` when the database
was open and the explorer filled as well. The start-up benchmark and the Xvfb test wait for it;
nothing else uses it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import traceback
from pathlib import Path

from lantide import __version__
from lantide.ui.startup import start_up_done
from lantide.ui.startup.gc_pauses import START_UP_QUIET_MS

log = logging.getLogger(__name__)
READY_FILE_ENV = "LANTIDE_READY_FILE"
# After the first paint the database opens (and the explorer lists its tables) alone for up
# to this long before the rest of the held work (file watching, the Agent Integration's
# activity and clients, the recent-workspaces list) starts beside it. The docks' panels,
# whose loading used to be that rest, are made once the window is usable (main_window's
# PANELS_AT_LATEST_MS, the same bound), so nothing the analyst sees waits on it.
URGENT_ALONE_MS = 1500


class AppController:
    """Owns the open workspace, its services and its window; switches between workspaces."""

    def __init__(self, app, settings):
        from lantide.ui.startup import collector_policy

        self.app = app
        self.settings = settings
        self.workspace = None
        self.services = None
        self.window = None
        # Short full garbage collections: long-lived objects frozen (see gc_pauses),
        # from the first window's idle on (its callback would slow the start-up itself).
        self.gc_pauses = collector_policy()
        self.update_check = None  # the weekly update check, once per run

    def show_workspace(self, workspace) -> None:
        from PySide6.QtCore import QTimer

        from lantide.ui.main_window import MainWindow
        from lantide.ui.services import AppServices

        self.workspace = workspace
        self.services = AppServices(workspace, self.settings)
        self.services.workers.hold()  # background work starts after the first paint
        self.window = MainWindow(self.services)
        self.window.sig_shown.connect(_note_shown)
        # After the first paint: open DuckDB and register data (queued first, so the two
        # worker threads start on it before the panels' own loading), start watching files,
        # then let the held work run. A window that is never painted (e.g. minimised)
        # starts them a moment later anyway.
        self.window.sig_shown.connect(self.services.start)
        self.window.sig_shown.connect(
            lambda: self.services.workers.resume(urgent_alone_ms=URGENT_ALONE_MS)
        )
        self.window.sig_workspace_requested.connect(self.switch_workspace)
        self.window.sig_idle.connect(_write_ready_file)
        self.window.sig_idle.connect(self._started)
        self.window.show()
        QTimer.singleShot(1000, self.services.workers.resume)
        QTimer.singleShot(1000, self.services.start)
        # the start-up's pause of the garbage collector ends at idle, or by this time
        QTimer.singleShot(START_UP_QUIET_MS, start_up_done)

    def _started(self) -> None:
        if self.gc_pauses is not None:
            self.gc_pauses.install()
            self.gc_pauses.milestone("start-up")  # before collection resumes: see gc_pauses
        start_up_done()
        if self.update_check is None:
            from lantide.ui.update_check import check_on_start

            self.update_check = check_on_start(self.window)

    def switch_workspace(self, path: str) -> bool:
        """Open the workspace at ``path`` in place of the current one; False if it did not."""
        from PySide6.QtWidgets import QMessageBox

        from lantide.errors import LantideError
        from lantide.workspace.model import Workspace
        from lantide.workspace.settings import update_settings

        root = Path(path).expanduser().resolve()
        if self.workspace is not None and root == self.workspace.root:
            return True
        try:
            if not Workspace.is_workspace(root):
                answer = QMessageBox.question(
                    self.window,
                    "Create a workspace?",
                    f"{root} is not a Lantide workspace yet. Create one there? The files in "
                    "the folder stay as they are.",
                )
                if answer != QMessageBox.StandardButton.Yes:
                    return False
                Workspace.create(root)
            new = Workspace.open(root, lock=True)
        except LantideError as exc:
            QMessageBox.warning(
                self.window,
                "Cannot open the workspace",
                f"{exc.message}\n\n{exc.hint or ''}".strip(),
            )
            return False
        if self.window is not None and not self.window.confirm_close():
            new.close()
            return False
        old_window, old_workspace = self.window, self.workspace
        self.settings.add_recent_workspace(new.root)
        try:  # on the file as it is now: `lantide chat` may have written it meanwhile
            update_settings(lambda settings: settings.add_recent_workspace(new.root))
        except LantideError as exc:
            log.warning("recent workspaces not saved: %s", exc)
        self.show_workspace(new)  # before the old window closes, so the app does not quit
        if old_window is not None:
            old_window.shutdown()
            old_window.close()
            old_window.deleteLater()
        if old_workspace is not None:
            old_workspace.close()
        if self.gc_pauses is not None:
            self.gc_pauses.thaw()  # the old window's objects are garbage now, frozen or not
        return True

    def close(self) -> None:
        start_up_done()
        if self.window is not None:
            self.window.shutdown()
        if self.workspace is not None:
            self.workspace.close()
        if self.gc_pauses is not None:
            self.gc_pauses.uninstall()


_shown_at: list[float] = []


def _note_shown() -> None:
    if not _shown_at:
        _shown_at.append(time.time())


def _write_ready_file() -> None:
    target = os.environ.get(READY_FILE_ENV)
    if not target:
        return
    from lantide.workspace.atomic import atomic_write_json

    now = time.time()
    try:
        atomic_write_json(
            Path(target),
            {"pid": os.getpid(), "idle_at": now, "shown_at": _shown_at[0] if _shown_at else now},
        )
    except OSError as exc:
        log.warning("could not write %s: %s", target, exc)


def _install_excepthook(controller: AppController) -> None:
    """An exception in a slot is shown in the window and logged, never a silent crash."""
    previous = sys.excepthook

    def hook(kind, exc, tb):
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, exc, tb)
            return
        sys.stderr.write("".join(traceback.format_exception(kind, exc, tb)))
        services = controller.services
        if services is not None:
            with contextlib.suppress(Exception):  # the traceback is on stderr already
                services.report_error(exc, "Unexpected error (details on the console)")

    sys.excepthook = hook


def run_app(workspace_root: Path, argv: list[str] | None = None) -> int:
    from lantide.ui import startup

    startup.before_qt()  # before anything imports PySide6's modules: see lantide.ui.startup
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings_or_defaults, update_settings

    ws = Workspace.open(workspace_root, lock=True)
    # A broken settings file: the app opens with the defaults and says so; the file is kept.
    settings, settings_problem = load_settings_or_defaults()
    settings.add_recent_workspace(ws.root)

    from PySide6.QtWidgets import QApplication

    from lantide.ui.icons import app_icon
    from lantide.ui.theme import install_theme

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv[:1])
    app.setApplicationName("Lantide")
    app.setApplicationDisplayName("Lantide")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("Lantide")
    app.setDesktopFileName("lantide")
    app.setWindowIcon(app_icon())
    install_theme(app, settings.appearance)
    controller = AppController(app, settings)
    _install_excepthook(controller)
    try:
        controller.show_workspace(ws)
        if settings_problem is not None:
            controller.services.report_error(
                settings_problem,
                "Your settings could not be read; the defaults are in use "
                "and nothing will be written over the file",
            )
        else:  # the recent-workspaces list, in the background (an fsynced write)
            controller.services.workers.submit(
                lambda _ctx: update_settings(lambda fresh: fresh.add_recent_workspace(ws.root)),
                name="save recent workspaces",
                on_error=lambda exc: log.warning("recent workspaces not saved: %s", exc),
            )
        return app.exec()
    finally:
        controller.close()
