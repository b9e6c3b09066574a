"""One Lantide process per workspace.

DuckDB locks ``cache.duckdb`` itself, but its error is a stack trace about a file. We take
an OS-level lock on ``.lantide/lock`` first and write our pid into it, so a second process
is told plainly which process holds the workspace. The OS drops the lock when the holder
exits, even after a crash, so a stale lock file never blocks anyone.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from lantide.errors import LantideError
from lantide.workspace import layout


class WorkspaceLockedError(LantideError):
    code = "WORKSPACE_LOCKED"

    def __init__(self, root: Path, pid: int | None):
        self.pid = pid
        who = f"pid {pid}" if pid else "pid unknown"
        super().__init__(
            f"workspace is open in another Lantide process, {who}: {root}",
            hint="Close the other Lantide window or command first, then try again.",
        )


def try_lock(fd: int) -> bool:
    """A non-blocking exclusive OS lock on ``fd`` (flock; msvcrt on Windows)."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows builds
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


class WorkspaceLock:
    """An exclusive, process-wide lock on a workspace, held until :meth:`release`."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.path = layout.lock_path(self.root)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if not try_lock(fd):
            pid = _read_pid(fd)
            os.close(fd)
            raise WorkspaceLockedError(self.root, pid)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        # No fsync: another process reads the pid through the page cache, and after a crash
        # the lock is gone with its holder (the pid only names the holder; 4 ms at start-up).
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)  # closing drops the flock
        self._fd = None

    def __enter__(self) -> WorkspaceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 64).decode("ascii", "replace").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None
