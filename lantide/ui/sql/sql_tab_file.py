"""The file behind a SQL tab, ``projects/P/sql/TAB.sql``: read in a worker, written
atomically, and watched for edits by other programs.

It knows what the file held when the tab last read or wrote it (:attr:`disk_text`), so the
tab can tell its own saves from another program's edits and ask before replacing them.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from lantide.workspace.atomic import atomic_write_text
from lantide.workspace.layout import project_dir, sql_tab_path
from lantide.workspace.watcher import SQL_TAB, FileChange


def tab_file_path(workspace, project: str, tab_name: str) -> Path:
    """``project`` is the project's folder name, as tabs are known (no disk read here)."""
    return sql_tab_path(project_dir(workspace.root, project), tab_name)


def same_path(a, b) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return str(a) == str(b)


class SqlTabFile(QObject):
    # The text read (None when the file does not exist) and whether it is a reload.
    sig_read = Signal(object, bool)
    sig_read_failed = Signal(object)

    def __init__(self, services, project: str, tab_name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.services = services
        self.path = tab_file_path(services.workspace, project, tab_name)
        self.disk_text: str | None = None  # what the file held when last read or written

    def read(self, *, reload: bool = False) -> None:
        """Read the file in a worker; ``sig_read`` (or ``sig_read_failed``) follows."""
        path = self.path

        def work(_ctx):
            return path.read_text(encoding="utf-8") if path.exists() else None

        self.services.workers.submit(
            work,
            on_result=lambda text: self._read_done(text, reload),
            on_error=self.sig_read_failed.emit,
            name=f"read {path.name}",
        )

    def _read_done(self, text: str | None, reload: bool) -> None:
        if text is not None:
            self.disk_text = text
        self.sig_read.emit(text, reload)

    def changed_by_another_program(self, mine: str) -> bool:
        """True when the file now holds neither what we last read or wrote nor ``mine``.

        A small synchronous read: it decides whether a save must ask first."""
        try:
            on_disk = self.path.read_text(encoding="utf-8") if self.path.exists() else None
        except OSError:
            return False
        return (
            on_disk is not None
            and self.disk_text is not None
            and on_disk != self.disk_text
            and on_disk != mine
        )

    def write(self, text: str) -> None:
        """Write ``text`` atomically (raises OSError)."""
        atomic_write_text(self.path, text)
        self.disk_text = text

    def forget_disk_text(self) -> None:
        """The file was deleted: the next save writes it without asking."""
        self.disk_text = None

    def change_of_mine(self, changes: list[FileChange]) -> FileChange | None:
        """The last change in a watcher batch that concerns this file, if any."""
        mine = [c for c in changes if c.kind == SQL_TAB and same_path(c.path, self.path)]
        return mine[-1] if mine else None
