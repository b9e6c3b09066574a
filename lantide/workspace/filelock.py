"""A lock on one user file, shared by the threads of this process and by other processes.

The workspace lock (:mod:`lantide.workspace.lock`) keeps a second Lantide process out of
a workspace, but some commands work beside the open app on purpose (``lantide knowledge``),
and the app's own threads write too. A read-modify-write of a file (check it is unchanged,
then replace it) is only a compare-and-swap when nobody else can replace the file between
the check and the rename: :func:`file_lock` gives that.

The lock is an OS lock (``flock``; ``msvcrt.locking`` on Windows) on a companion file in
the workspace's ``.lantide/locks/`` (beside the file, hidden, outside a workspace). It is
never deleted (deleting a lock file while
another process waits on it would let two holders in), and the OS drops the lock when its
holder dies, so a crash never leaves the file locked. The lock is reentrant within a thread.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lantide.errors import LantideError
from lantide.workspace import layout
from lantide.workspace.lock import try_lock

DEFAULT_TIMEOUT = 30.0


class FileLockTimeout(LantideError):
    code = "FILE_BUSY"


class _Held(threading.local):
    def __init__(self) -> None:
        self.depth: dict[str, int] = {}


_held = _Held()
_thread_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()


def lock_path_for(path: Path) -> Path:
    """Where the lock of ``path`` lives: in its workspace's ``.lantide/locks/`` (nothing
    is added to the analyst's folders), else (user config files) beside it, hidden."""
    path = Path(path)
    for folder in path.parents:
        if layout.settings_path(folder).is_file():
            rel = path.relative_to(folder).as_posix()
            digest = hashlib.sha1(rel.encode("utf-8")).hexdigest()[:16]
            return layout.locks_dir(folder) / f"{digest}-{path.name}.lock"
    return path.with_name(f".{path.name}.lock")


def _thread_lock(key: str) -> threading.RLock:
    with _guard:
        return _thread_locks.setdefault(key, threading.RLock())


@contextmanager
def file_lock(path: Path | str, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold the lock of ``path`` (the file need not exist) for the ``with`` block."""
    path = Path(path).absolute()
    key = str(path)
    rlock = _thread_lock(key)
    if not rlock.acquire(timeout=timeout):
        raise _busy(path, timeout)
    try:
        if _held.depth.get(key):
            _held.depth[key] += 1
            try:
                yield
            finally:
                _held.depth[key] -= 1
            return
        fd = _acquire_os_lock(path, timeout)
        _held.depth[key] = 1
        try:
            yield
        finally:
            _held.depth.pop(key, None)
            os.close(fd)  # closing drops the OS lock
    finally:
        rlock.release()


def _acquire_os_lock(path: Path, timeout: float) -> int:
    lock_file = lock_path_for(path)
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + timeout
    delay = 0.001
    while not try_lock(fd):
        if time.monotonic() >= deadline:
            os.close(fd)
            raise _busy(path, timeout)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    return fd


def _busy(path: Path, timeout: float) -> FileLockTimeout:
    return FileLockTimeout(
        f"{path} is being changed by another Lantide process or window "
        f"(waited {timeout:.0f} s); nothing was written",
        hint="Try again in a moment. If it persists, close other Lantide windows and "
        "commands working on this file.",
    )
