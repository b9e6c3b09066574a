"""A Plan or Report and its annotations, opened, changed and saved as one pair.

```python
doc = open_document(project, "plan")     # finishes an interrupted save first
doc.text                                  # the text with its marks (repairs applied)
doc.annotations                           # [Annotation], sidecar order
doc.read_only_reason                      # None, or why annotations cannot change
doc.repairs                               # [Repair] found on open, saved with the next change
ann_id = doc.create_annotation(start, end, "which denominator?", by="user")
doc.reply(ann_id, "every customer active in Q2", by="agent")
doc.resolve(ann_id, "B", answer="kept: Q2 actives", by="agent")  # -> change dict
doc.reopen(ann_id)
doc.delete(ann_id)                        # the mark goes; the entry moves to the deleted list
doc.deleted_annotations                   # [Annotation], deletion order, .deleted is True
doc.undelete(ann_id)                      # back, marked again or detached (-> Annotation)
report = doc.save_text(new_text, by="user")  # -> SaveReport: re-anchored, detached, ...
```

Every change writes text and sidecar together through :mod:`lantide.docs.journal`.
A change is refused (:class:`DocumentConflictError`) when either file changed on disk
since it was read: :meth:`Document.reload` first. When the sidecar is unreadable the
document is read-only for annotations: the text can still be saved, the sidecar is
never written.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from lantide.docs import operations as ops
from lantide.docs.anchoring import Reconciled, Repair, check_consistent, reconcile, refresh_anchors
from lantide.docs.errors import AnnotationError, AnnotationsReadOnlyError, DocumentConflictError
from lantide.docs.journal import Recovery, document_lock, read_bytes, recover, save_pair
from lantide.docs.marks import Mark, MarkScan, scan_marks
from lantide.docs.operations import ResolveChange
from lantide.docs.sidecar import (
    AnnotationAnchor,
    AnnotationEntry,
    AnnotationEvent,
    AnnotationStatus,
    Sidecar,
    dump_sidecar,
    last_event,
    latest_reply,
    load_sidecar,
    replies,
)
from lantide.errors import CorruptFileError, MissingFileError
from lantide.workspace.atomic import atomic_write_text
from lantide.workspace.layout import sidecar_path

if TYPE_CHECKING:
    from lantide.workspace.model import Project

KINDS = ("plan", "report")


class AnnotationRecord(TypedDict):
    """:meth:`Annotation.to_dict`: the sidecar entry (unknown keys kept) with its live
    ``span`` and the flags always present."""

    id: str
    status: AnnotationStatus
    quote: str
    comment: str
    history: list[AnnotationEvent]
    anchor: NotRequired[AnnotationAnchor | None]
    span: list[int] | None  # the mark's inner text now; None without a mark
    detached: bool
    recreated: bool
    deleted: bool


@dataclass(frozen=True)
class Annotation:
    """A read-only view of one sidecar entry and its place in the text."""

    raw: AnnotationEntry
    span: tuple[int, int] | None  # live: the mark's inner text now; None without a mark
    deleted: bool = False  # in the sidecar's deleted list (then span is None)

    @property
    def id(self) -> str:
        return self.raw["id"]

    @property
    def status(self) -> AnnotationStatus:
        return self.raw["status"]

    @property
    def quote(self) -> str:
        return self.raw.get("quote", "")

    @property
    def comment(self) -> str:
        return self.raw.get("comment", "")

    @property
    def history(self) -> list[AnnotationEvent]:
        return list(self.raw.get("history", []))

    @property
    def detached(self) -> bool:
        return bool(self.raw.get("detached"))

    @property
    def recreated(self) -> bool:
        return bool(self.raw.get("recreated"))

    @property
    def is_open(self) -> bool:
        return self.raw["status"] == "open"

    @property
    def replies(self) -> list[AnnotationEvent]:
        return replies(self.raw)

    @property
    def latest_reply(self) -> AnnotationEvent | None:
        return latest_reply(self.raw)

    @property
    def resolution(self) -> AnnotationEvent | None:
        return last_event(self.raw, "resolved") if self.status == "resolved" else None

    @property
    def deletion(self) -> AnnotationEvent | None:
        """The ``deleted`` event (``at``, ``by``) of a deleted annotation, else None."""
        return last_event(self.raw, "deleted") if self.deleted else None

    def to_dict(self) -> AnnotationRecord:
        """The sidecar entry, with ``span`` the live one (None when there is no mark)."""
        return {
            **copy.deepcopy(self.raw),
            "span": list(self.span) if self.span else None,
            "detached": self.detached,
            "recreated": self.recreated,
            "deleted": self.deleted,
        }


class SaveSummary(TypedDict):
    """:meth:`SaveReport.to_dict`: each list but ``repairs`` and ``warnings`` holds ids."""

    text_adjusted: bool
    kept: list[str]
    reanchored: list[str]
    detached: list[str]
    unknown_marks: list[str]  # repairs "recreated": marks whose id had no entry
    reopened: list[str]
    reattached: list[str]
    undeleted: list[str]
    ids_restored: list[str]
    duplicates_removed: list[str]
    stray_tags_removed: list[str]
    repairs: list[dict[str, str]]  # Repair.to_dict()
    warnings: list[str]


@dataclass
class SaveReport:
    """What a text save did to the annotations (every list holds annotation ids)."""

    text: str
    text_adjusted: bool  # the saved text differs from the text given (marks restored/removed)
    kept: list[str] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def ids(self, action: str) -> list[str]:
        return [r.id for r in self.repairs if r.action == action]

    def to_dict(self) -> SaveSummary:
        return {
            "text_adjusted": self.text_adjusted,
            "kept": self.kept,
            "reanchored": self.ids("reanchored"),
            "detached": self.ids("detached"),
            "unknown_marks": self.ids("recreated"),
            "reopened": self.ids("reopened"),
            "reattached": self.ids("reattached"),
            "undeleted": self.ids("undeleted"),
            "ids_restored": self.ids("id_restored"),
            "duplicates_removed": self.ids("duplicate_removed"),
            "stray_tags_removed": self.ids("stray_tag_removed"),
            "repairs": [r.to_dict() for r in self.repairs],
            "warnings": self.warnings,
        }


class Document:
    def __init__(self, project: Project, kind: str):
        if kind not in KINDS:
            raise AnnotationError(
                f"unknown document {kind!r}", hint="Use 'plan' or 'report'.", code="BAD_DOCUMENT"
            )
        self.project = project
        self.kind = kind
        self.path = project.document_path(kind)
        self.sidecar_path = sidecar_path(self.path)
        self.recovery: Recovery | None = None
        self.reload()

    # -- reading ------------------------------------------------------------------------
    def reload(self) -> None:
        """Read both files again (finishing an interrupted save first)."""
        with document_lock(self.path):
            self.recovery = recover(self.path, self.sidecar_path) or self.recovery
            raw_text = read_bytes(self.path)
            raw_sidecar = read_bytes(self.sidecar_path)
        if raw_text is None:
            raise MissingFileError(
                self.path,
                f"{self.kind} file",
                hint=f"Create {self.path.name}, or fix '{self.kind}' in project.json.",
            )
        try:
            text = raw_text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptFileError(
                self.path, f"not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None
        self._disk = (raw_text, raw_sidecar)
        self.disk_text = text
        self.read_only_reason: str | None = None
        self.read_only_error: CorruptFileError | None = None
        try:
            self._sidecar = load_sidecar(self.sidecar_path)
        except CorruptFileError as exc:
            self._sidecar = Sidecar(self.sidecar_path, exists=True)
            self.read_only_reason, self.read_only_error = exc.message, exc
        if self.read_only_reason:
            self._set(Reconciled(text, [], scan_marks(text)))
        else:
            self._set(reconcile(text, self._sidecar.entries, deleted=self._sidecar.deleted))

    def _set(self, state: Reconciled) -> None:
        self.text = state.text
        self._entries = state.entries
        self._deleted = state.deleted
        self._scan = state.scan
        self.repairs: list[Repair] = list(state.repairs)

    @property
    def annotations(self) -> list[Annotation]:
        marks = {m.id: m for m in self._scan.marks}
        return [Annotation(copy.deepcopy(e), _span(marks.get(e["id"]))) for e in self._entries]

    def annotations_in_text_order(self) -> list[Annotation]:
        """:attr:`annotations` as a reader meets them: by where their mark starts in the
        text; those without a mark (detached) after them, in the sidecar's order."""
        ordered = list(enumerate(self.annotations))
        ordered.sort(key=lambda p: (p[1].span is None, p[1].span[0] if p[1].span else 0, p[0]))
        return [a for _i, a in ordered]

    def annotation(self, annotation_id: str) -> Annotation:
        entry = ops.find_entry(self._entries, annotation_id, self._deleted)
        mark = self._scan.mark(annotation_id)
        return Annotation(copy.deepcopy(entry), _span(mark))

    @property
    def deleted_annotations(self) -> list[Annotation]:
        """The deleted annotations, oldest deletion first; not in the text, not counted."""
        return [Annotation(copy.deepcopy(e), None, deleted=True) for e in self._deleted]

    def deleted_annotation(self, annotation_id: str) -> Annotation:
        entry = next((e for e in reversed(self._deleted) if e["id"] == annotation_id), None)
        if entry is None:
            raise AnnotationError(
                f"no deleted annotation with id {annotation_id!r}", code="ANNOTATION_UNKNOWN_ID"
            )
        return Annotation(copy.deepcopy(entry), None, deleted=True)

    @property
    def disk_entries(self) -> list[AnnotationEntry]:
        """The sidecar entries as last read or written (before unsaved repairs)."""
        return copy.deepcopy(self._sidecar.entries)

    @property
    def marks(self) -> list[Mark]:
        return list(self._scan.marks)

    @property
    def scan(self) -> MarkScan:
        return self._scan

    @property
    def open_count(self) -> int:
        return sum(1 for e in self._entries if e["status"] == "open")

    @property
    def dirty(self) -> bool:
        """Whether what is shown differs from the files (repairs not saved yet)."""
        if self.text.encode("utf-8") != self._disk[0]:
            return True
        return not self.read_only_reason and bool(self.repairs or self._sidecar_changed())

    def _sidecar_changed(self) -> bool:
        if not self._sidecar.exists and not self._entries and not self._deleted:
            return False
        return (
            dump_sidecar(self._sidecar.top, self._entries, self._deleted).encode("utf-8")
            != self._disk[1]
        )

    def relative_path(self) -> str:
        try:
            return self.path.relative_to(self.project.workspace_root).as_posix()
        except ValueError:
            return str(self.path)

    # -- operations -----------------------------------------------------------------------
    def create_annotation(self, start: int, end: int, comment: str, by: str = "user") -> str:
        self._writable()
        text, entries, ann_id, scan = ops.create(
            self._scan, self._entries_copy(), start, end, comment, by, self._deleted
        )
        self._apply(text, entries, scan)
        return ann_id

    def reply(self, annotation_id: str, text: str, by: str = "user") -> Annotation:
        self._writable()
        entries = self._entries_copy()
        ops.reply(entries, annotation_id, text, by, self._deleted)
        self._apply(self.text, entries, self._scan)
        return self.annotation(annotation_id)

    def resolve(
        self,
        annotation_id: str,
        mode: str,
        replacement: str | None = None,
        answer: str | None = None,
        by: str = "user",
    ) -> ResolveChange:
        return self.resolve_many(
            [{"id": annotation_id, "mode": mode, "replacement": replacement, "answer": answer}],
            by=by,
        )[annotation_id]

    def resolve_many(self, items: object, by: str = "user") -> dict[str, ResolveChange]:
        """All items or none; returns the change per id (see :mod:`lantide.docs.operations`)."""
        self._writable()
        text, entries, changes = ops.resolve_many(
            self._scan, self._entries_copy(), items, by, self._deleted
        )
        self._apply(text, entries)
        return changes

    def reopen(self, annotation_id: str, by: str = "user") -> Annotation:
        self._writable()
        self._apply(*ops.reopen(self._scan, self._entries_copy(), annotation_id, by, self._deleted))
        return self.annotation(annotation_id)

    def reattach(self, annotation_id: str, start: int, end: int, by: str = "user") -> Annotation:
        self._writable()
        self._apply(
            *ops.reattach(
                self._scan, self._entries_copy(), annotation_id, start, end, by, self._deleted
            )
        )
        return self.annotation(annotation_id)

    def delete(self, annotation_id: str, by: str = "user") -> None:
        """Remove the mark (its text stays); the annotation, history and all, is kept in
        the sidecar's deleted list with a ``deleted`` event, and can be undeleted."""
        self._writable()
        text, entries, deleted = ops.delete(
            self._scan, self._entries_copy(), copy.deepcopy(self._deleted), annotation_id, by
        )
        self._apply(text, entries, deleted=deleted)

    def undelete(self, annotation_id: str, by: str = "user") -> Annotation:
        """Bring a deleted annotation back (see :func:`lantide.docs.operations.undelete`);
        the returned annotation is ``detached`` when its text could not be marked."""
        self._writable()
        text, entries, deleted, scan = ops.undelete(
            self._scan, self._entries_copy(), copy.deepcopy(self._deleted), annotation_id, by
        )
        self._apply(text, entries, scan, deleted=deleted)
        return self.annotation(annotation_id)

    def save_text(self, new_text: str, by: str = "user") -> SaveReport:
        """Save an edit of the whole text: marks present keep their annotations, the others
        are re-anchored by quote or flagged detached; nothing is dropped."""
        state, report = self.preview_save(new_text)
        if state is None:  # annotations read-only: the text alone
            self._check_disk()
            atomic_write_text(self.path, new_text)
            self._after_save(new_text, None)
            self._set(Reconciled(new_text, [], scan_marks(new_text)))
            return report
        self._commit(state.text, state.entries, state.scan, state.deleted)
        return report

    def preview_save(self, new_text: str) -> tuple[Reconciled | None, SaveReport]:
        """What :meth:`save_text` would write and report, nothing written (a pending edit
        is made of it). The state is None when annotations are read-only."""
        if not isinstance(new_text, str):
            raise AnnotationError("the new text must be a string", code="BAD_TEXT")
        if self.read_only_reason:
            warning = (
                f"annotations are read-only ({self.read_only_reason}); only the text was saved"
            )
            return None, SaveReport(new_text, False, warnings=[warning])
        state = reconcile(new_text, self._entries, deleted=self._deleted)
        known = {e["id"] for e in self._entries}
        restored = {r.id for r in state.repairs if r.action in ("reanchored", "id_restored")}
        kept = [m.id for m in state.scan.marks if m.id in known and m.id not in restored]
        return state, SaveReport(state.text, state.text != new_text, kept, list(state.repairs))

    def preview_resolve(
        self, items: list[dict[str, Any]], by: str = "user"
    ) -> tuple[str, dict[str, ResolveChange]]:
        """The text :meth:`resolve_many` would write and its changes per id, nothing
        written; refused as :meth:`resolve_many` would refuse."""
        self._writable()
        text, entries, changes = ops.resolve_many(
            self._scan, self._entries_copy(), items, by, self._deleted
        )
        problems = check_consistent(text, entries, scan_marks(text))
        if problems:
            raise AnnotationError(
                "the change would break other annotations: " + "; ".join(problems),
                hint="Check the replacement for unbalanced backticks or Markdown that swallows "
                "the marks after it.",
                code="ANNOTATION_WOULD_BREAK_MARKS",
            )
        return text, changes

    def save_repairs(self) -> bool:
        """Write what opening the document repaired; False when nothing needed writing."""
        self._writable()
        if not self.dirty:
            return False
        self._commit(self.text, self._entries)
        return True

    # -- internals ------------------------------------------------------------------------
    def _writable(self) -> None:
        if self.read_only_reason:
            raise AnnotationsReadOnlyError(
                f"annotations of {self.path.name} are read-only: {self.read_only_reason}",
                hint=(self.read_only_error.hint if self.read_only_error else None),
            )

    def _entries_copy(self) -> list[AnnotationEntry]:
        return copy.deepcopy(self._entries)

    def _apply(
        self,
        text: str,
        entries: list[AnnotationEntry],
        scan: MarkScan | None = None,
        deleted: list[AnnotationEntry] | None = None,
    ) -> None:
        """Commit the result of an operation, refusing one that broke another mark.

        ``scan`` is the parse of ``text`` when the operation already made one; ``deleted``
        the new deleted list when the operation changed it."""
        if scan is None or scan.text is not text and scan.text != text:
            scan = scan_marks(text)
        problems = check_consistent(text, entries, scan)
        if problems:
            raise AnnotationError(
                "the change would break other annotations: " + "; ".join(problems),
                hint="Check the replacement for unbalanced backticks or Markdown that swallows "
                "the marks after it.",
                code="ANNOTATION_WOULD_BREAK_MARKS",
            )
        refresh_anchors(text, entries, scan)
        self._commit(text, entries, scan, deleted)

    def _check_disk(self) -> None:
        now = (read_bytes(self.path), read_bytes(self.sidecar_path))
        if now != self._disk:
            changed = [
                p.name
                for p, a, b in zip((self.path, self.sidecar_path), now, self._disk, strict=True)
                if a != b
            ]
            raise DocumentConflictError(
                f"{' and '.join(changed)} changed on disk since {self.path.name} was opened",
                hint="Nothing was saved. Reload the document, then make the change again.",
            )

    def _commit(
        self,
        text: str,
        entries: list[AnnotationEntry],
        scan: MarkScan | None = None,
        deleted: list[AnnotationEntry] | None = None,
    ) -> None:
        deleted = self._deleted if deleted is None else deleted
        with document_lock(self.path):
            self._check_disk()
            sidecar_text = dump_sidecar(self._sidecar.top, entries, deleted)
            text_bytes = text.encode("utf-8")
            if not self._sidecar.exists and not entries and not deleted:
                if text_bytes != self._disk[0]:
                    atomic_write_text(self.path, text)
                self._after_save(text, None)
            elif text_bytes != self._disk[0] or sidecar_text.encode("utf-8") != self._disk[1]:
                save_pair(
                    self.path,
                    self.sidecar_path,
                    text=text if text_bytes != self._disk[0] else None,
                    sidecar_text=sidecar_text,
                    before_text=self._disk[0],
                    before_sidecar=self._disk[1],
                )
                self._after_save(text, sidecar_text)
        self._sidecar.exists = self._sidecar.exists or bool(entries) or bool(deleted)
        self._sidecar.entries = copy.deepcopy(entries)
        self._sidecar.deleted = copy.deepcopy(deleted)
        self._set(Reconciled(text, entries, scan or scan_marks(text), [], copy.deepcopy(deleted)))

    def _after_save(self, text: str, sidecar_text: str | None) -> None:
        self.disk_text = text
        sidecar_bytes = sidecar_text.encode("utf-8") if sidecar_text is not None else self._disk[1]
        self._disk = (text.encode("utf-8"), sidecar_bytes)


def _span(mark: Mark | None) -> tuple[int, int] | None:
    return (mark.inner_start, mark.inner_end) if mark is not None else None


def open_document(project: Project, kind: str) -> Document:
    """Open ``project``'s ``plan`` or ``report`` (a :class:`lantide.workspace.model.Project`)."""
    return Document(project, kind)


__all__ = ["Annotation", "Document", "SaveReport", "open_document", "KINDS"]
