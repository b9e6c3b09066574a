"""Errors of Plans, Reports and their annotations.

``code`` values are stable: the agent's tools and the command line report them as they are.
"""

from __future__ import annotations

from typing import TypedDict

from lantide.errors import ErrorDict, LantideError


class BatchProblem(TypedDict):
    """One bad item of a batch (:class:`AnnotationBatchError`)."""

    index: int  # the item's place in the batch, from 0
    id: object  # the item's ``id`` as given (None when the item is not an object)
    code: str  # ANNOTATION_UNKNOWN_ID, ANNOTATION_BAD_MODE, ...
    message: str


class DocumentError(LantideError):
    code = "DOCUMENT"


class DocumentConflictError(DocumentError):
    """The file changed on disk since it was opened: saving would overwrite someone's edit."""

    code = "DOCUMENT_CHANGED_ON_DISK"


class AnnotationError(LantideError):
    code = "ANNOTATION"


class AnnotationRangeError(AnnotationError):
    """A range that cannot carry a mark (crosses structure, code, another mark)."""

    code = "ANNOTATION_RANGE"


class AnnotationsReadOnlyError(AnnotationError):
    """The sidecar could not be read, so annotations cannot be changed."""

    code = "ANNOTATIONS_READ_ONLY"


class BatchInvalidDict(ErrorDict):
    """:class:`AnnotationBatchError` as a tool result: the error and every bad item."""

    problems: list[BatchProblem]


class AnnotationBatchError(AnnotationError):
    """Some items of a batch are invalid; nothing was applied.

    ``problems`` lists every bad item as ``{"index", "id", "code", "message"}``.
    """

    code = "ANNOTATION_BATCH_INVALID"

    def __init__(self, problems: list[BatchProblem], *, hint: str | None = None):
        self.problems = problems
        codes = {p["code"] for p in problems}
        lines = "; ".join(f"item {p['index']} ({p.get('id')!s}): {p['message']}" for p in problems)
        noun = "item is" if len(problems) == 1 else "items are"
        super().__init__(
            f"{len(problems)} {noun} invalid, nothing was changed: {lines}",
            hint=hint or "Fix every listed item and send the whole batch again.",
            code=codes.pop() if len(codes) == 1 else None,
        )

    def to_dict(self) -> BatchInvalidDict:
        return {**super().to_dict(), "problems": self.problems}
