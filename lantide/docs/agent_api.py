"""The agent's side of documents: ``read_plan``/``read_report``, ``resolve_annotations``
and ``update_plan``/``update_report`` (DESIGN.md sections 5 and 6).

:func:`agent_view` ``(project, kind) -> dict``::

    {"document": "plan", "project": "q3-churn", "path": "projects/q3-churn/plan.md",
     "text": "... <mark data-annotation-id=\\"3f9a1c\\">…</mark> ...",   # with its marks
     "annotations": [{"id", "status", "quote", "comment", "span"?, "detached"?,
                      "recreated"?, "replies", "latest_reply"?, "resolution"?}],
     "open_annotation_count": 3,
     "annotation_summary": [{"id", "quote", "comment", "latest_reply"?, "detached"?}],
     "patch_guidance": "...",                  # prompts/patch_guidance.md.j2
     "read_only_reason": None,                 # or why annotations cannot change
     "repairs"?: [...], "recovered"?: "..."}   # only when something happened

``span`` is given only for annotations whose mark is in the text now (a stale hint is left
out). Quotes, comments and replies longer than the limits are cut with ``… [+N chars]``.
Deleted annotations are not shown (nor counted).

:func:`document_listing` ``(doc, include_deleted=False) -> dict``: what ``lantide
annotations --json`` prints. Every key of :func:`agent_view`, with ``annotations`` the
whole entries (:func:`full_annotation`, nothing cut), plus ``resolved_annotation_count``,
``deleted_annotation_count``, ``read_only_hint``, ``repairs`` (always), and with
``include_deleted`` ``deleted_annotations`` (whole entries, ``deleted: true``, ``deletion``).

:func:`resolve_annotations` ``(project, kind, items, by) -> dict``::

    {"document", "path", "changes": {id: {"id", "mode", "status", "text_changed", "span"}},
     "text_changed": bool, "open_annotation_count": int}

:func:`update_document` ``(project, kind, content, by) -> dict``::

    {"document", "path", "text_changed", "text_adjusted", "kept", "reanchored",
     "detached", "unknown_marks", "reopened", "reattached", "undeleted", "ids_restored",
     "duplicates_removed", "stray_tags_removed", "repairs", "warnings",
     "open_annotation_count"}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lantide.docs.agent_view_types import (
    AnnotationFollowUp,
    AnnotationPlacement,
    AnnotationTask,
    CompactAnnotation,
    DeletedListShown,
    DeletionShown,
    DocumentListing,
    DocumentUpdate,
    DocumentView,
    ListedAnnotation,
    ReplyView,
    ResolveResult,
)
from lantide.docs.document import Annotation, Document, SaveReport, open_document
from lantide.docs.sidecar import AnnotationEvent

if TYPE_CHECKING:
    from lantide.workspace.model import Project

QUOTE_LIMIT = 160
COMMENT_LIMIT = 600


def cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [+{len(text) - limit} chars]"


def _reply(event: AnnotationEvent | None) -> ReplyView | None:
    if not event:
        return None
    return {
        "by": event.get("by"),
        "at": event.get("at"),
        "text": cut(str(event.get("text", "")), COMMENT_LIMIT),
    }


def compact_annotation(ann: Annotation) -> CompactAnnotation:
    placement: AnnotationPlacement = {}
    if ann.span:
        placement["span"] = list(ann.span)
    if ann.detached:
        placement["detached"] = True
    if ann.recreated:
        placement["recreated"] = True
    follow_up: AnnotationFollowUp = {}
    if ann.latest_reply:
        follow_up["latest_reply"] = _reply(ann.latest_reply)
    resolution = ann.resolution
    if resolution:
        fields = {
            "mode": resolution.get("mode"),
            "by": resolution.get("by"),
            "at": resolution.get("at"),
            "text": resolution.get("text"),
            "replacement": resolution.get("replacement"),
        }
        follow_up["resolution"] = {
            k: cut(str(v), COMMENT_LIMIT) for k, v in fields.items() if v is not None
        }
    return {
        "id": ann.id,
        "status": ann.status,
        "quote": cut(ann.quote, QUOTE_LIMIT),
        "comment": cut(ann.comment, COMMENT_LIMIT),
        **placement,
        "replies": len(ann.replies),
        **follow_up,
    }


def annotation_summary(doc: Document) -> list[AnnotationTask]:
    """The open annotations as an action list."""
    out = []
    for ann in doc.annotations:
        if not ann.is_open:
            continue
        item: AnnotationTask = {
            "id": ann.id,
            "quote": cut(ann.quote, QUOTE_LIMIT),
            "comment": cut(ann.comment, COMMENT_LIMIT),
        }
        if ann.latest_reply:
            item["latest_reply"] = _reply(ann.latest_reply)
        if ann.detached:
            item["detached"] = True
        out.append(item)
    return out


def patch_guidance(doc: Document) -> str:
    from lantide.templates import render_prompt

    detached = sum(1 for a in doc.annotations if a.is_open and a.detached)
    return render_prompt(
        "patch_guidance.md.j2", kind=doc.kind, open_count=doc.open_count, detached_count=detached
    ).strip()


def view_of(doc: Document) -> DocumentView:
    out: DocumentView = {
        "document": doc.kind,
        "project": doc.project.dirname,
        "path": doc.relative_path(),
        "text": doc.text,
        "annotations": [compact_annotation(a) for a in doc.annotations],
        "open_annotation_count": doc.open_count,
        "annotation_summary": annotation_summary(doc),
        "patch_guidance": patch_guidance(doc),
        "read_only_reason": doc.read_only_reason,
    }
    if doc.repairs:
        out["repairs"] = [r.to_dict() for r in doc.repairs]
    if doc.recovery is not None:
        out["recovered"] = doc.recovery.message
    return out


def full_annotation(ann: Annotation) -> ListedAnnotation:
    """The whole entry (:meth:`Annotation.to_dict`) with the agent view's derived fields,
    uncut: ``replies`` (how many), ``latest_reply``, ``resolution`` and, for a deleted one,
    ``deletion`` (None when they do not apply)."""
    deletion: DeletionShown = {"deletion": ann.deletion} if ann.deleted else {}
    return {
        **ann.to_dict(),
        "replies": len(ann.replies),
        "latest_reply": ann.latest_reply,
        "resolution": ann.resolution,
        **deletion,
    }


def document_listing(doc: Document, include_deleted: bool = False) -> DocumentListing:
    """The agent view of ``doc`` with whole entries and the counts (``annotations --json``)."""
    deleted = doc.deleted_annotations
    shown: DeletedListShown = (
        {"deleted_annotations": [full_annotation(a) for a in deleted]} if include_deleted else {}
    )
    return {
        **view_of(doc),
        "annotations": [full_annotation(a) for a in doc.annotations],
        "resolved_annotation_count": sum(1 for a in doc.annotations if not a.is_open),
        "deleted_annotation_count": len(deleted),
        **shown,
        "read_only_hint": doc.read_only_error.hint if doc.read_only_error else None,
        "repairs": [r.to_dict() for r in doc.repairs],
    }


def agent_view(project: Project, kind: str) -> DocumentView:
    """The ``read_plan`` / ``read_report`` payload."""
    return view_of(open_document(project, kind))


def resolve_annotations(
    project: Project, kind: str, items: object, by: str = "agent"
) -> ResolveResult:
    """Resolve a batch, all or none (:class:`AnnotationBatchError` names every bad item);
    ``items`` as the agent sent them (:func:`lantide.docs.operations.validate_items`)."""
    doc = open_document(project, kind)
    changes = doc.resolve_many(items, by=by)
    return {
        "document": kind,
        "path": doc.relative_path(),
        "changes": changes,
        "text_changed": any(c["text_changed"] for c in changes.values()),
        "open_annotation_count": doc.open_count,
    }


def update_document(project: Project, kind: str, content: str, by: str = "agent") -> DocumentUpdate:
    """Replace the whole text (``update_plan`` / ``update_report``); no annotation is lost."""
    doc = open_document(project, kind)
    before = doc.disk_text
    report = doc.save_text(content, by=by)
    return update_result(doc, kind, report, before)


def preview_update(project: Project, kind: str, content: str) -> tuple[str, str, DocumentUpdate]:
    """What :func:`update_document` would write, nothing written: ``(the text on disk, the
    text it would write, its result)`` (a pending edit is made of it)."""
    doc = open_document(project, kind)
    state, report = doc.preview_save(content)
    result = update_result(doc, kind, report, doc.disk_text)
    if state is not None:  # the count the update would leave (it may reopen some)
        result["open_annotation_count"] = sum(1 for e in state.entries if e["status"] == "open")
    return doc.disk_text, report.text, result


def preview_resolution(
    project: Project, kind: str, items: list[dict[str, Any]], by: str = "agent"
) -> tuple[str, str, dict[str, Any]]:
    """What :func:`resolve_annotations` would write, nothing written: ``(the text on disk,
    the text it would write, its result)``; refused as it would be refused."""
    doc = open_document(project, kind)
    text, changes = doc.preview_resolve(items, by=by)
    resolved = set(changes)
    still_open = sum(1 for a in doc.annotations if a.is_open and a.id not in resolved)
    return (
        doc.disk_text,
        text,
        {
            "document": kind,
            "path": doc.relative_path(),
            "changes": changes,
            "text_changed": text != doc.disk_text,
            "open_annotation_count": still_open,
        },
    )


def update_result(doc: Document, kind: str, report: SaveReport, before: str) -> DocumentUpdate:
    out: DocumentUpdate = {
        "document": kind,
        "path": doc.relative_path(),
        "text_changed": report.text != before,
        **report.to_dict(),
        "open_annotation_count": doc.open_count,
    }
    warnings = out["warnings"]
    if out["reanchored"]:
        warnings.append(
            "marks of " + ", ".join(out["reanchored"]) + " were missing and were put "
            "back around their quotes; to close an annotation use resolve_annotations"
        )
    if out["detached"]:
        warnings.append(
            "annotations " + ", ".join(out["detached"]) + " lost their marks and "
            "quotes: they are detached (still open); resolve them in mode B or ask "
            "the analyst"
        )
    if out["undeleted"]:
        warnings.append(
            "marks of deleted annotations " + ", ".join(out["undeleted"]) + " are "
            "in the text again: those annotations were brought back"
        )
    if out["unknown_marks"]:
        warnings.append(
            "marks with unknown ids " + ", ".join(out["unknown_marks"]) + " got new "
            "entries without a comment; do not invent annotation ids"
        )
    return out
