"""The payloads of :mod:`lantide.docs.agent_api`: what ``read_plan``/``read_report``,
``resolve_annotations``, ``update_plan``/``update_report`` and ``lantide annotations
--json`` return (the keys, their order and meaning are described there)."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from lantide.docs.document import AnnotationRecord, SaveSummary
from lantide.docs.operations import ResolveChange
from lantide.docs.sidecar import AnnotationEvent, AnnotationStatus


class ReplyView(TypedDict):
    """A reply as the agent sees it (text cut at :data:`lantide.docs.agent_api.COMMENT_LIMIT`)."""

    by: str | None
    at: str | None
    text: str


class AnnotationPlacement(TypedDict, total=False):
    """Where a compact annotation is, and its flags (each only when it applies)."""

    span: list[int]  # only when its mark is in the text now
    detached: bool  # only when true
    recreated: bool  # only when true


class AnnotationFollowUp(TypedDict, total=False):
    """What happened to a compact annotation since it was made (when anything did)."""

    latest_reply: ReplyView | None
    resolution: dict[str, str]  # mode, by, at, text, replacement (those set)


class CompactAnnotation(AnnotationPlacement, AnnotationFollowUp):
    """One annotation in ``read_plan``/``read_report`` (texts cut)."""

    id: str
    status: AnnotationStatus
    quote: str
    comment: str
    replies: int  # how many


class AnnotationTask(TypedDict):
    """An open annotation in ``annotation_summary``, the agent's task list."""

    id: str
    quote: str
    comment: str
    latest_reply: NotRequired[ReplyView | None]
    detached: NotRequired[bool]


class DeletionShown(TypedDict, total=False):
    deletion: AnnotationEvent | None  # only for a deleted annotation


class ListedAnnotation(AnnotationRecord, DeletionShown):
    """A whole entry with the derived fields, uncut (:func:`full_annotation`)."""

    replies: int
    latest_reply: AnnotationEvent | None
    resolution: AnnotationEvent | None


class DocumentViewBase(TypedDict):
    """The keys a document view and a document listing share."""

    document: str  # plan or report
    project: str
    path: str
    text: str
    open_annotation_count: int
    annotation_summary: list[AnnotationTask]
    patch_guidance: str
    read_only_reason: str | None
    repairs: NotRequired[list[dict[str, str]]]  # Repair.to_dict(); always in a listing
    recovered: NotRequired[str]


class DocumentView(DocumentViewBase):
    """The ``read_plan`` / ``read_report`` payload (:func:`agent_view`)."""

    annotations: list[CompactAnnotation]


class DeletedListShown(TypedDict, total=False):
    deleted_annotations: list[ListedAnnotation]  # only with include_deleted


class DocumentListing(DocumentViewBase, DeletedListShown):
    """What ``lantide annotations --json`` prints (:func:`document_listing`)."""

    annotations: list[ListedAnnotation]
    resolved_annotation_count: int
    deleted_annotation_count: int
    read_only_hint: str | None


class ResolveResult(TypedDict):
    """The ``resolve_annotations`` result."""

    document: str
    path: str
    changes: dict[str, ResolveChange]
    text_changed: bool
    open_annotation_count: int


class DocumentUpdate(SaveSummary):
    """The ``update_plan`` / ``update_report`` result."""

    document: str
    path: str
    text_changed: bool
    open_annotation_count: int
