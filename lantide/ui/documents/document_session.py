"""The worker side of a Plan/Report tab: open, save, annotate, render, all off the UI thread.

Each function runs in a worker and returns a :class:`DocumentSnapshot`: plain data the UI
thread shows (text in the editor's form, annotations, marks in editor positions, the
preview HTML). The :class:`lantide.docs.Document` itself is only touched here, one call at
a time per tab; every rule (what a valid range is, how resolving changes the text, how
a save re-anchors marks) is the docs layer's.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from lantide.ui.documents.text_offsets import TextOffsets, disk_form, editor_form, newline_of

if TYPE_CHECKING:  # the docs layer is imported by the workers, when a document first opens
    from lantide.docs.document import Annotation, AnnotationRecord, Document, SaveSummary
    from lantide.docs.operations import ResolveChange
    from lantide.docs.sidecar import AnnotationEvent

    class AnnotationRow(AnnotationRecord):
        """One annotation of the tab's list: the entry (``Annotation.to_dict``) with its
        whole thread, so the list needs no second call."""

        replies: list[AnnotationEvent]
        resolution: AnnotationEvent | None


class OperationArgs(TypedDict, total=False):
    """What the list or the editor asks :func:`run_operation` to do (the keys it needs)."""

    id: str
    start: int  # Qt positions in the editor
    end: int
    comment: str
    text: str
    mode: str
    replacement: str | None
    answer: str | None


# Operations that rewrite the text (add or drop mark tags): pending edits are saved first.
TEXT_OPERATIONS = {"create", "resolve", "reopen", "delete", "undelete", "reattach"}

_MARK_OPEN = re.compile(
    r'<mark class="lantide-annotation lantide-(\w+)" '
    r'data-annotation-id="([^"]+)"[^>]*>'
)


@dataclass
class MarkSpan:
    """A mark in editor (Qt) positions: its tags and the quoted text between them."""

    id: str
    status: str  # open / resolved / unknown (a mark without an entry)
    start: int
    inner_start: int
    inner_end: int
    end: int


@dataclass
class DocumentSnapshot:
    document: Document  # touch it only in workers
    disk_text: str
    editor_text: str
    newline: str
    annotations: list[AnnotationRow]
    open_count: int
    read_only_reason: str | None
    marks: list[MarkSpan]
    html: str
    repairs: list[dict[str, str]] = field(default_factory=list)
    saved: SaveSummary | None = None  # SaveReport.to_dict() after a save
    result: str | ResolveChange | None = None  # what the operation returned (a new id, ...)
    note: str | None = None  # something to tell the analyst
    deleted: list[AnnotationRow] = field(default_factory=list)  # soft-deleted, restorable

    def annotation(self, annotation_id: str) -> AnnotationRow | None:
        return next((a for a in self.annotations if a["id"] == annotation_id), None)


def mark_spans(text: str, statuses: Mapping[str, str]) -> list[MarkSpan]:
    """Marks of ``text`` (disk form) in editor positions, using the docs layer's scan."""
    from lantide.docs.marks import scan_marks

    editor = editor_form(text)
    offsets = TextOffsets(editor, newline_of(text))
    spans = []
    for m in scan_marks(text).marks:
        spans.append(
            MarkSpan(
                m.id,
                statuses.get(m.id, "unknown"),
                offsets.disk_to_qt(m.start),
                offsets.disk_to_qt(m.inner_start),
                offsets.disk_to_qt(m.inner_end),
                offsets.disk_to_qt(m.end),
            )
        )
    return spans


def preview_html(text: str, annotations: list[AnnotationRow]) -> str:
    """The docs layer's rendering, with each annotation's quoted text a link to select it."""
    from lantide.docs import render_html

    rendered = render_html(text, annotations)
    out, last = [], 0
    source = rendered.html
    for match in _MARK_OPEN.finditer(source):
        close = source.find("</mark>", match.end())
        if close < 0:
            break
        ann_id = html_lib.escape(match.group(2))
        out += [
            source[last : match.end()],
            f'<a name="ann-{ann_id}" href="annotation:{ann_id}" class="annotation-link">',
            source[match.end() : close],
            "</a>",
        ]
        last = close
    out.append(source[last:])
    return "".join(out)


def _row(ann: Annotation) -> AnnotationRow:
    return {**ann.to_dict(), "replies": ann.replies, "resolution": ann.resolution}


def _annotation_rows(doc: Document) -> list[AnnotationRow]:
    # the list reads as the document does
    return [_row(ann) for ann in doc.annotations_in_text_order()]


def _deleted_rows(doc: Document) -> list[AnnotationRow]:
    """Deleted annotations, newest deletion first, without older copies of a re-used id."""
    rows, seen = [], set()
    for ann in reversed(doc.deleted_annotations):
        if ann.id in seen:
            continue
        seen.add(ann.id)
        rows.append(_row(ann))
    return rows


def snapshot(doc, *, saved=None, result=None, note=None) -> DocumentSnapshot:
    annotations = _annotation_rows(doc)
    statuses = {a["id"]: a["status"] for a in annotations}
    return DocumentSnapshot(
        document=doc,
        disk_text=doc.text,
        editor_text=editor_form(doc.text),
        newline=newline_of(doc.text),
        annotations=annotations,
        open_count=doc.open_count,
        read_only_reason=doc.read_only_reason,
        marks=mark_spans(doc.text, statuses),
        html=preview_html(doc.text, annotations),
        repairs=[r.to_dict() for r in doc.repairs],
        saved=saved,
        result=result,
        note=note,
        deleted=_deleted_rows(doc),
    )


# -- worker functions (first argument: the WorkerContext) ------------------------------------


def load_document(context, workspace_root, project_dir: str, kind: str) -> DocumentSnapshot:
    from lantide.docs import open_document
    from lantide.workspace.model import Project

    project = Project.load(workspace_root, project_dir)
    doc = open_document(project, kind)
    note = doc.recovery.message if doc.recovery else None
    return snapshot(doc, note=note)


def reload_document(context, doc) -> DocumentSnapshot:
    doc.reload()
    return snapshot(doc)


def save_document(context, doc, editor_text: str, newline: str) -> DocumentSnapshot:
    report = doc.save_text(disk_form(editor_text, newline), by="user")
    return snapshot(doc, saved=report.to_dict())


def run_operation(
    context,
    doc,
    operation: str,
    args: OperationArgs,
    pending_editor_text: str | None,
    newline: str,
) -> DocumentSnapshot:
    """One annotation operation; unsaved edits are saved first when it rewrites the text.

    ``args`` positions (``start``/``end``) are Qt positions in ``pending_editor_text`` (or
    in the saved text when nothing is pending).
    """
    saved = None
    note = None
    if pending_editor_text is not None and operation in TEXT_OPERATIONS:
        wanted = disk_form(pending_editor_text, newline)
        report = doc.save_text(wanted, by="user")
        saved = report.to_dict()
        note = "Your edits were saved together with this change."
        if operation in ("create", "reattach") and report.text != wanted:
            return snapshot(
                doc,
                saved=saved,
                note="Saving adjusted the text, so the selection "
                "may have moved: select the text again and annotate it.",
            )
    offsets = TextOffsets(editor_form(doc.text), newline_of(doc.text))
    result = None
    if operation == "create":
        result = doc.create_annotation(
            offsets.qt_to_disk(args["start"]),
            offsets.qt_to_disk(args["end"]),
            args["comment"],
            by="user",
        )
    elif operation == "reattach":
        doc.reattach(
            args["id"],
            offsets.qt_to_disk(args["start"]),
            offsets.qt_to_disk(args["end"]),
            by="user",
        )
        result = args["id"]
    elif operation == "reply":
        doc.reply(args["id"], args["text"], by="user")
        result = args["id"]
    elif operation == "resolve":
        result = doc.resolve(
            args["id"],
            args["mode"],
            replacement=args.get("replacement"),
            answer=args.get("answer"),
            by="user",
        )
    elif operation == "reopen":
        doc.reopen(args["id"], by="user")
        result = args["id"]
    elif operation == "delete":
        doc.delete(args["id"], by="user")
        note = "Annotation deleted; the Deleted filter of the annotations list can restore it."
    elif operation == "undelete":
        restored = doc.undelete(args["id"], by="user")
        result = args["id"]
        if restored.detached:
            note = (
                "Annotation restored, but its text is no longer in the document: select "
                "new text and reattach it."
            )
    else:
        raise ValueError(f"unknown document operation {operation!r}")
    return snapshot(doc, saved=saved, result=result, note=note)


def render_live(
    context, editor_text: str, newline: str, annotations: list[AnnotationRow]
) -> tuple[str, list[MarkSpan]]:
    """Preview and marks of text being edited (not saved yet)."""
    text = disk_form(editor_text, newline)
    statuses = {a["id"]: a["status"] for a in annotations}
    return preview_html(text, annotations), mark_spans(text, statuses)


def check_external_change(context, monitor, changes: list) -> list:
    """The docs layer's verdict on a watcher batch: DocumentChanged reports that matter."""
    return monitor.handle(changes)


# -- the agent's pending edits (lantide.docs.pending_edits: every rule is the engine's) ------


@dataclass
class ReviewState:
    """The pending edits of a tab's document, as the review bar shows them, and what a
    decision did (``snapshot``: the document read again after it, when one was made)."""

    edits: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)
    decision: dict[str, Any] | None = None
    error: Any = None  # a refused hunk (EditConflictError) after the clean ones went in
    snapshot: DocumentSnapshot | None = None


def pending_edits(context, workspace_root, project_dir: str, kind: str) -> ReviewState:
    from lantide.docs.pending_edits import describe, list_edits
    from lantide.workspace.model import Project

    edits, problems = list_edits(Project.load(workspace_root, project_dir))
    return ReviewState(
        [describe(e) for e in edits if e.kind == kind],
        [p.message for p in problems],
    )


def decide_edit(context, doc, edit_id: str, action: str, hunks: list[int] | None) -> ReviewState:
    """Accept or reject hunks of a pending edit, then read the document and the edits again."""
    from lantide.docs.edit_review import EditConflictError, decide
    from lantide.workspace.model import Project

    project = Project.load(doc.project.workspace_root, doc.project.dirname)
    decision, error = None, None
    try:
        decision = decide(project, edit_id, action, hunks).to_dict()
    except EditConflictError as exc:
        error = exc
    doc.reload()
    state = pending_edits(context, project.workspace_root, project.dirname, doc.kind)
    state.decision, state.error, state.snapshot = decision, error, snapshot(doc)
    return state


def decide_edit_file(
    context, workspace_root, project_dir: str, kind: str, edit_id: str, action: str, hunks
) -> ReviewState:
    """:func:`decide_edit` for a tab without a Document (the HTML Report): it reads the
    page again itself."""
    from lantide.docs.edit_review import EditConflictError, decide
    from lantide.workspace.model import Project

    project = Project.load(workspace_root, project_dir)
    decision, error = None, None
    try:
        decision = decide(project, edit_id, action, hunks).to_dict()
    except EditConflictError as exc:
        error = exc
    state = pending_edits(context, workspace_root, project_dir, kind)
    state.decision, state.error = decision, error
    return state
