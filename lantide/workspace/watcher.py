"""Noticing files changed by other programs.

A watchdog observer on the workspace folder classifies each change (document, SQL tab,
data file, knowledge, project file), waits until a path has been quiet for ``debounce``
seconds, drops changes that are Lantide's own atomic writes, and hands the batch to a
callback. The callback runs on the watcher's thread: the desktop app forwards it to the UI
thread through a signal, the query layer re-registers data files from it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from lantide.workspace import layout
from lantide.workspace.atomic import is_temp_file, own_writes

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent
    from watchdog.observers.api import BaseObserver

# kinds of change
DOCUMENT = "document"
ANNOTATIONS = "annotations"
SQL_TAB = "sql_tab"
DATA = "data"
KNOWLEDGE = "knowledge"
PROJECT = "project"
CHART = "chart"


class FileChangeDict(TypedDict):
    """:meth:`FileChange.to_dict`."""

    kind: str
    path: str
    event: str
    project: str | None


@dataclass(frozen=True)
class FileChange:
    kind: str
    path: Path
    event: str  # created / modified / deleted
    project: str | None = None

    def to_dict(self) -> FileChangeDict:
        return {
            "kind": self.kind,
            "path": str(self.path),
            "event": self.event,
            "project": self.project,
        }


def classify(root: Path, path: Path) -> tuple[str, str | None] | None:
    """(kind, project) for a path inside the workspace, or None to ignore it."""
    try:
        rel = path.resolve().relative_to(root) if path.is_absolute() else path
    except ValueError:
        try:
            rel = path.relative_to(root)
        except ValueError:
            return None
    parts = rel.parts
    if not parts or any(p.startswith(".") for p in parts) or is_temp_file(path):
        return None  # .lantide/, editor swap files, our temp files
    name = parts[-1]
    if name.endswith("~") or name.startswith("~$"):
        return None
    if parts[0] == layout.DATA_DIR and len(parts) >= 2:
        return DATA, None
    if parts[0] == layout.PROJECTS_DIR and len(parts) >= 3:
        project = parts[1]
        if layout.sql_tab_of(parts) is not None:
            return SQL_TAB, project
        if len(parts) == 4 and parts[2] == layout.CHARTS_DIR and name.endswith(layout.CHART_SUFFIX):
            return CHART, project
        if len(parts) == 3:
            if name == "project.json":
                return PROJECT, project
            if name == "knowledge.md":
                return KNOWLEDGE, project
            if layout.is_sidecar(name):
                return ANNOTATIONS, project
            if name.endswith((".md", ".markdown", ".html")):
                return DOCUMENT, project
    return None


class WorkspaceWatcher:
    def __init__(
        self,
        root: Path,
        callback: Callable[[list[FileChange]], None],
        *,
        debounce: float = 0.3,
        extra_paths: Iterable[Path] = (),
    ):
        self.root = Path(root).resolve()
        self.callback = callback
        self.debounce = debounce
        self._extra = [Path(p).resolve() for p in extra_paths]  # e.g. user knowledge
        self._pending: dict[Path, tuple[float, str]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._observer: BaseObserver | None = None
        self._flusher: threading.Thread | None = None

    # -- lifecycle
    def start(self) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.is_directory or event.event_type in (
                    "opened",
                    "closed",
                    "closed_no_write",
                ):
                    return
                if event.event_type == "moved":
                    watcher._note(Path(os.fsdecode(event.src_path)), "deleted")
                    watcher._note(Path(os.fsdecode(event.dest_path)), "created")
                else:
                    watcher._note(Path(os.fsdecode(event.src_path)), event.event_type)

        observer = Observer()
        observer.schedule(_Handler(), str(self.root), recursive=True)
        for extra in {p.parent for p in self._extra}:
            if extra.is_dir():
                observer.schedule(_Handler(), str(extra), recursive=False)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._flusher = threading.Thread(target=self._run, name="lantide-watcher", daemon=True)
        self._flusher.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._flusher is not None:
            self._flusher.join(timeout=5)

    def __enter__(self) -> WorkspaceWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals
    def _note(self, path: Path, event: str) -> None:
        if is_temp_file(path):
            return
        with self._lock:
            prev = self._pending.get(path)
            # created then modified is still "created"; anything then deleted is "deleted"
            if prev and prev[1] == "created" and event == "modified":
                event = "created"
            self._pending[path] = (time.monotonic(), event)
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(timeout=self.debounce)
            self._wake.clear()
            now = time.monotonic()
            ready: list[tuple[Path, str]] = []
            with self._lock:
                for path, (stamp, event) in list(self._pending.items()):
                    if now - stamp >= self.debounce:
                        ready.append((path, event))
                        del self._pending[path]
            changes = [c for c in (self._change(p, e) for p, e in ready) if c is not None]
            if changes:
                try:
                    self.callback(changes)
                except Exception:  # a faulty listener must not kill the watcher
                    import logging

                    logging.getLogger(__name__).exception("file watcher callback failed")

    def _change(self, path: Path, event: str) -> FileChange | None:
        if path.resolve() in self._extra:
            if event != "deleted" and own_writes.is_own(path):
                return None
            return FileChange(KNOWLEDGE, path, event, None)
        kind = classify(self.root, path)
        if kind is None:
            return None
        if event != "deleted":
            if not path.exists():
                event = "deleted"
            elif own_writes.is_own(path):
                return None
        return FileChange(kind[0], path, event, kind[1])
