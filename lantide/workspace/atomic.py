"""The one way Lantide writes a user file: temporary file, fsync, rename.

A reader (or a crash) sees either the old file or the new one, never half of each. Each
write is also remembered in :data:`own_writes`, so the file watcher can tell Lantide's
own saves from edits made by another program.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

TEMP_SUFFIX = ".lantide-tmp"


class OwnWrites:
    """What this process last wrote to each path, as (size, mtime_ns)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[int, int]] = {}

    def record(self, path: Path) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        with self._lock:
            self._seen[str(Path(path).resolve())] = (st.st_size, st.st_mtime_ns)

    def forget(self, path: Path) -> None:
        with self._lock:
            self._seen.pop(str(Path(path).resolve()), None)

    def is_own(self, path: Path) -> bool:
        """True when the file on disk is exactly what Lantide last wrote there."""
        key = str(Path(path).resolve())
        with self._lock:
            stamp = self._seen.get(key)
        if stamp is None:
            return False
        try:
            st = os.stat(path)
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == stamp


own_writes = OwnWrites()


def is_temp_file(path: Path | str) -> bool:
    return str(path).endswith(TEMP_SUFFIX)


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in ``directory`` durable (POSIX; a no-op elsewhere)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_prefix(path: Path) -> str:
    # The writer's pid is in the name, so a temporary file left by a killed writer can be
    # told from one another process is writing right now.
    return f".{path.name}.{os.getpid()}."


def _pid_alive(pid: int) -> bool:
    if os.name != "posix":  # pragma: no cover - no cheap check: keep the file
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def remove_stale_temp_files(path: Path) -> list[Path]:
    """Remove the temporary files of ``path`` left by writers that died mid-write (SIGKILL,
    power loss). Their save never completed, so the file on disk is the truth; a
    temporary file of a live writer is left alone."""
    path = Path(path)
    head = f".{path.name}."
    removed: list[Path] = []
    try:
        entries = [e.name for e in os.scandir(path.parent)]
    except OSError:
        return removed
    for name in entries:
        if not (name.startswith(head) and name.endswith(TEMP_SUFFIX)):
            continue
        pid_text = name[len(head) :].split(".", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        try:
            (path.parent / name).unlink()
            removed.append(path.parent / name)
        except OSError:
            pass
    return removed


def _write_temp(path: Path, data: bytes) -> Path:
    """``data`` in a fsynced temporary file beside ``path`` (removed again on failure)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically; on any error the old file is intact."""
    path = Path(path)
    tmp = _write_temp(path, data)
    try:
        if path.exists():
            # Keep the permissions the user gave the file.
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    own_writes.record(path)
    remove_stale_temp_files(path)


def link_or_move(source: Path, target: Path) -> None:
    """Put ``source`` at ``target`` unless something is there (``FileExistsError``).
    Where hard links are not supported (FAT, some shares) a checked rename stands in."""
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(target):
            raise FileExistsError(target) from None
        os.replace(source, target)


def atomic_create_bytes(path: Path | str, data: bytes) -> None:
    """Create ``path`` with ``data`` atomically, only if nothing is there yet.

    Raises ``FileExistsError`` (and writes nothing) when the path exists, even when another
    process creates it between our check and our write: the complete temporary file is
    hard-linked into place, which the OS refuses to do over an existing name.
    """
    path = Path(path)
    tmp = _write_temp(path, data)
    try:
        os.chmod(tmp, 0o644)
        link_or_move(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    own_writes.record(path)


def atomic_write_text(path: Path | str, text: str, encoding: str = "utf-8") -> None:
    # newline="" semantics: the text is written exactly as given.
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: Path | str, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def append_jsonl(path: Path | str, obj: Any, *, defer_fsync: bool = False) -> None:
    """Append one JSON line to an append-only log (conversations, ledger, activity).

    A line is written with a single ``write`` call on an ``O_APPEND`` descriptor, so a
    crash leaves at most a torn last line, which readers skip. The next append ends that
    torn line first, so the new record starts a line of its own instead of being glued to
    the torn one (and lost with it).

    The line is in the OS's hands when this returns (another process reads it; a crash of
    this process loses nothing). By default it is also fsynced before returning (the ledger:
    the evidence). With ``defer_fsync`` the fsync is left to a group commit that runs at
    most :data:`DEFERRED_FSYNC_DELAY` seconds later, at :func:`sync_deferred` and at exit,
    so only a crash of the machine within that window can lose the line (a record such as
    the activity log, written on a request's critical path).
    """
    text = json.dumps(obj, ensure_ascii=False, default=str) + "\n"
    try:
        line = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from outside: keep the record, cleaned
        from lantide.untrusted import clean_text

        line = clean_text(text).encode("utf-8")
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | _O_BINARY
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:  # the log's first line: its folder may not exist yet
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o644)
    handed_over = False
    try:
        st = os.fstat(fd)
        if _ends_torn(fd, st.st_size):
            line = b"\n" + line
        os.write(fd, line)
        if defer_fsync:
            handed_over = _deferred.add((st.st_dev, st.st_ino), fd)
        else:
            os.fsync(fd)
    finally:
        if not handed_over:
            os.close(fd)


_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


def _ends_torn(fd: int, size: int) -> bool:
    """Whether the log's last line has no line end (a write cut by a crash)."""
    if size == 0:
        return False
    os.lseek(fd, size - 1, os.SEEK_SET)  # O_APPEND: the write still goes to the end
    return os.read(fd, 1) != b"\n"


DEFERRED_FSYNC_DELAY = 0.05  # seconds a deferred line may wait for its fsync
log = logging.getLogger(__name__)


class DeferredFsync:
    """Group commit for lines appended with ``defer_fsync``: one fsync per file, at most
    ``delay`` seconds after the first line waiting, on a thread of its own."""

    def __init__(self, delay: float = DEFERRED_FSYNC_DELAY):
        self.delay = delay
        self._cond = threading.Condition()
        self._pending: dict[tuple[int, int], int] = {}  # (device, inode) -> an open fd
        self._due = 0.0
        self._busy = 0  # batches being fsynced right now
        self._thread: threading.Thread | None = None

    def add(self, file_id: tuple[int, int], fd: int) -> bool:
        """Take ``fd`` (of the file ``file_id``) to fsync soon. False when that file
        already waits for its fsync: that one covers this line, written before it, and the
        caller closes ``fd``."""
        with self._cond:
            if file_id in self._pending:
                return False
            if not self._pending:
                self._due = time.monotonic() + self.delay
            self._pending[file_id] = fd
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="lantide-deferred-fsync", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()
        return True

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._pending:
                    self._cond.wait()
                    continue
                wait = self._due - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                batch, self._pending = self._pending, {}
                self._busy += 1
            self._sync(batch)

    def _sync(self, batch: dict[tuple[int, int], int]) -> None:
        try:
            for fd in batch.values():
                try:
                    os.fsync(fd)
                except OSError as exc:  # the line is written; only its durability is unsure
                    log.warning("deferred fsync of an append-only log failed: %s", exc)
                finally:
                    os.close(fd)
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()

    def sync_all(self) -> None:
        """fsync every line appended so far, now; returns when they are on disk."""
        with self._cond:
            batch, self._pending = self._pending, {}
            self._busy += 1
        self._sync(batch)
        with self._cond:
            while self._busy:  # a batch the flusher thread is writing now
                self._cond.wait()

    def _after_fork(self) -> None:
        # the child has no flusher thread; its parent fsyncs the lines it wrote
        for fd in self._pending.values():
            os.close(fd)
        self._cond = threading.Condition()
        self._pending, self._busy, self._thread = {}, 0, None


_deferred = DeferredFsync()
atexit.register(_deferred.sync_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_deferred._after_fork)


def sync_deferred() -> None:
    """Make every line appended with ``defer_fsync`` durable before returning (closing a
    workspace or a server)."""
    _deferred.sync_all()


def read_jsonl(path: Path | str) -> list[Any]:
    """Read an append-only log; a torn, malformed or non-UTF-8 line is skipped, never fatal
    (:func:`lantide.workspace.log_reader.read_log` also says which lines and why)."""
    from lantide.workspace.log_reader import read_log

    return read_log(path).records


def read_jsonl_tail(path: Path | str, lines: int, *, block: int = 1 << 16) -> list[Any]:
    """The records of the last ``lines`` lines of an append-only log, read from its end:
    a long history costs what its tail costs. Torn or malformed lines are skipped."""
    path = Path(path)
    if not path.exists() or lines <= 0:
        return []
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        end = fh.tell()
        data = b""
        while end > 0 and data.count(b"\n") <= lines:
            start = max(0, end - block)
            fh.seek(start)
            data = fh.read(end - start) + data
            end = start
    chunks = data.split(b"\n")
    if end > 0:
        chunks = chunks[1:]  # the first chunk may be the end of a longer line
    from lantide.workspace.log_reader import parse_log_line

    out = []
    for raw in chunks[-(lines + 1) :]:
        raw = raw.strip()
        if not raw:
            continue
        record, _reason = parse_log_line(raw)
        if record is not None:
            out.append(record)
    return out[-lines:]
