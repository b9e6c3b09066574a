"""Plans and Reports changed by another program (the foundation's file watcher feeds this).

```python
monitor = DocumentMonitor(workspace_root)
monitor.remember(doc)                       # what the open tab shows (after open / save)
watcher = WorkspaceWatcher(root, lambda batch: emit(monitor.handle(batch)))
```

:meth:`DocumentMonitor.handle` takes a batch of :class:`lantide.workspace.watcher.FileChange`,
keeps those about a project's Plan or Report or their sidecars, re-reads each document
once (finishing an interrupted save, re-anchoring its marks) and returns a
:class:`DocumentChanged` per document that really changed, compared with what it
remembered. A clean tab reloads ``change.document``; a dirty tab asks the analyst. Nothing
is written here: repairs are in ``change.repairs`` and are saved with the next change.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from lantide.docs.document import KINDS, Document, open_document
from lantide.docs.sidecar import AnnotationEntry
from lantide.errors import LantideError
from lantide.workspace.layout import sidecar_path
from lantide.workspace.model import Project
from lantide.workspace.watcher import ANNOTATIONS, DOCUMENT, FileChange

log = logging.getLogger(__name__)


class DocumentChangedDict(TypedDict):
    """:meth:`DocumentChanged.to_dict` (the fields of the dataclass, without the document)."""

    project: str
    kind: str
    path: str
    event: str
    files: list[str]
    text_changed: bool
    annotations_changed: bool
    added: list[str]
    removed: list[str]
    status_changed: dict[str, str]
    repairs: list[dict[str, str]]
    read_only_reason: str | None
    recovered: str | None
    error: str | None


@dataclass
class DocumentChanged:
    project: str  # the project's folder name
    kind: str  # "plan" or "report"
    path: Path
    event: str  # "modified", "created" or "deleted"
    files: list[str] = field(default_factory=list)  # names of the files that changed
    text_changed: bool = False
    annotations_changed: bool = False
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    status_changed: dict[str, str] = field(default_factory=dict)  # id -> new status
    repairs: list[dict[str, str]] = field(default_factory=list)
    read_only_reason: str | None = None
    recovered: str | None = None
    error: str | None = None  # the document could not be read (e.g. not UTF-8)
    document: Document | None = None

    def to_dict(self) -> DocumentChangedDict:
        return {
            "project": self.project,
            "kind": self.kind,
            "path": str(self.path),
            "event": self.event,
            "files": self.files,
            "text_changed": self.text_changed,
            "annotations_changed": self.annotations_changed,
            "added": self.added,
            "removed": self.removed,
            "status_changed": self.status_changed,
            "repairs": self.repairs,
            "read_only_reason": self.read_only_reason,
            "recovered": self.recovered,
            "error": self.error,
        }


@dataclass(frozen=True)
class _Snapshot:
    text: str | None
    entries: dict[str, AnnotationEntry]
    read_only_reason: str | None


def _snapshot(doc: Document | None) -> _Snapshot:
    """The files as on disk: repairs not saved yet are no change of the files."""
    if doc is None:
        return _Snapshot(None, {}, None)
    entries = {}
    for raw in doc.disk_entries:
        raw = copy.deepcopy(raw)
        anchor = raw.get("anchor")
        if isinstance(anchor, dict):
            anchor.pop("span", None)  # a moved span alone is no change
        entries[raw["id"]] = raw
    return _Snapshot(doc.disk_text, entries, doc.read_only_reason)


class DocumentMonitor:
    def __init__(self, workspace_root: Path):
        self.root = Path(workspace_root).resolve()
        self._known: dict[tuple[str, str], _Snapshot] = {}

    def remember(self, doc: Document) -> None:
        self._known[(doc.project.dirname, doc.kind)] = _snapshot(doc)

    def forget(self, project: str, kind: str) -> None:
        self._known.pop((project, kind), None)

    def _which(self, change: FileChange) -> tuple[Project, str] | None:
        if change.kind not in (DOCUMENT, ANNOTATIONS) or not change.project:
            return None
        try:
            project = Project.load(self.root, change.project)
        except LantideError:
            return None  # a project file we cannot read is reported by its own watcher kind
        for kind in KINDS:
            doc_path = project.document_path(kind)
            if change.path.name in (doc_path.name, sidecar_path(doc_path).name):
                return project, kind
        return None

    def handle(self, changes: Iterable[FileChange]) -> list[DocumentChanged]:
        grouped: dict[tuple[str, str], tuple[Project, list[FileChange]]] = {}
        for change in changes:
            found = self._which(change)
            if found is None:
                continue
            project, kind = found
            grouped.setdefault((project.dirname, kind), (project, []))[1].append(change)
        out = []
        for (_dirname, kind), (project, batch) in grouped.items():
            result = self._reread(project, kind, batch)
            if result is not None:
                out.append(result)
        return out

    def _reread(
        self, project: Project, kind: str, batch: list[FileChange]
    ) -> DocumentChanged | None:
        key = (project.dirname, kind)
        path = project.document_path(kind)
        files = sorted({c.path.name for c in batch})
        before = self._known.get(key)
        if not path.exists():
            self._known[key] = _snapshot(None)
            if before is not None and before.text is None:
                return None
            return DocumentChanged(
                project.dirname,
                kind,
                path,
                "deleted",
                files,
                text_changed=True,
                annotations_changed=bool(before and before.entries),
            )
        try:
            doc = open_document(project, kind)
        except LantideError as exc:
            log.warning("cannot re-read %s: %s", path, exc.message)
            return DocumentChanged(
                project.dirname, kind, path, "modified", files, error=exc.message
            )
        after = _snapshot(doc)
        self._known[key] = after
        event = "created" if before is None or before.text is None else "modified"
        if any(c.event == "created" for c in batch) and (before is None or before.text is None):
            event = "created"
        old = before.entries if before else {}
        changed = DocumentChanged(
            project.dirname,
            kind,
            path,
            event,
            files,
            text_changed=before is None or before.text != after.text,
            annotations_changed=before is None
            or before.entries != after.entries
            or before.read_only_reason != after.read_only_reason,
            added=[i for i in after.entries if i not in old] if before else [],
            removed=[i for i in old if i not in after.entries],
            status_changed={
                i: e["status"]
                for i, e in after.entries.items()
                if i in old and old[i]["status"] != e["status"]
            },
            repairs=[r.to_dict() for r in doc.repairs],
            read_only_reason=doc.read_only_reason,
            recovered=doc.recovery.message if doc.recovery else None,
            document=doc,
        )
        if before is not None and not changed.text_changed and not changed.annotations_changed:
            return None
        return changed
