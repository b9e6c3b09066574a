"""The annotation operations, as pure functions of (text, marks, entries).

Each takes the current text, its :class:`MarkScan` and a copy of the sidecar entries,
and returns the new text and entries; :class:`lantide.docs.document.Document` saves the
result as one atomic pair. Every operation appends to the annotation's ``history``.

- :func:`create`: wraps a range in a mark (see :mod:`lantide.docs.ranges` for what is refused);
- :func:`reply`: adds a reply, text unchanged;
- :func:`resolve_many`: mode ``A`` replaces the marked text with ``replacement`` and drops
  the mark; mode ``B`` keeps the text, drops the mark and records ``answer`` (optional,
  as in DESIGN.md: ``{id, mode, replacement?, answer?}``). All items are validated before
  any is applied. A change per id is returned:
  ``{"id", "mode", "status": "resolved", "text_changed", "span"}`` where ``span`` is
  where the kept or replacing text now is (None for a detached annotation);
- :func:`reopen`: marks the text again (where it was resolved, else by quote), or leaves
  the annotation open and ``detached`` when the text is gone;
- :func:`delete`: removes the mark's tags (the text stays) and moves the entry, history
  and all, to the sidecar's ``deleted`` list;
- :func:`undelete`: brings a deleted entry back with the status it had; an open one is
  marked again (see :func:`undelete` for where), else it comes back ``detached``.

A deleted annotation's id stays taken: new annotations never reuse it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import NotRequired, TypedDict, cast

from lantide.docs.anchoring import anchor_by_text, short
from lantide.docs.errors import AnnotationBatchError, AnnotationError, BatchProblem
from lantide.docs.marks import MarkScan, contains_mark_tag, replace_mark, unwrap
from lantide.docs.ranges import wrap_checked
from lantide.docs.sidecar import (
    AnnotationEntry,
    event,
    insert_by_creation,
    last_event,
    set_span,
    stored_span,
)

MODES = ("A", "B")


class ResolveItem(TypedDict):
    """One item of a ``resolve_annotations`` batch, once :func:`validate_items` checked it
    (``mode`` in any case; ``replacement`` a string in mode A, ``answer`` a string or None)."""

    id: str
    mode: str
    replacement: NotRequired[str | None]
    answer: NotRequired[str | None]


class ResolveChange(TypedDict):
    """What resolving one annotation did (:func:`resolve_many`)."""

    id: str
    mode: str  # A or B
    status: str  # resolved
    text_changed: bool  # False for a detached annotation (no mark to replace or drop)
    span: list[int] | None  # where the kept or replacing text now is


def find_entry(
    entries: list[AnnotationEntry], annotation_id: str, deleted: Sequence[AnnotationEntry] = ()
) -> AnnotationEntry:
    """The live entry ``annotation_id``; a clear error when it is unknown or deleted."""
    for entry in entries:
        if entry["id"] == annotation_id:
            return entry
    if any(e["id"] == annotation_id for e in deleted):
        raise deleted_error(annotation_id)
    known = ", ".join(e["id"] for e in entries) or "none"
    raise AnnotationError(
        f"no annotation with id {annotation_id!r}",
        hint=f"Known annotations: {known}.",
        code="ANNOTATION_UNKNOWN_ID",
    )


def deleted_error(annotation_id: str) -> AnnotationError:
    return AnnotationError(
        f"annotation {annotation_id} was deleted",
        hint=f"Undelete it first (lantide annotations … --restore "
        f"{annotation_id}), then try again.",
        code="ANNOTATION_DELETED",
    )


def new_id(taken: set[str]) -> str:
    """Six hex digits, like the sample's ids. Ids are labels, not secrets: the global
    ``random`` is enough, and it lets property tests replay a run exactly."""
    while True:
        candidate = f"{random.getrandbits(24):06x}"
        if candidate not in taken:
            return candidate


def _require_text(value: str | None, what: str, code: str) -> str:
    if value is None or not str(value).strip():
        raise AnnotationError(f"{what} is empty", hint=f"Give a {what}.", code=code)
    return str(value)


def create(
    scan: MarkScan,
    entries: list[AnnotationEntry],
    start: int,
    end: int,
    comment: str,
    by: str,
    deleted: Sequence[AnnotationEntry] = (),
) -> tuple[str, list[AnnotationEntry], str, MarkScan]:
    comment = _require_text(comment, "comment", "ANNOTATION_COMMENT_MISSING")
    ann_id = new_id({e["id"] for e in entries} | {e["id"] for e in deleted} | scan.ids())
    new_text, new_scan, s, e = wrap_checked(scan, start, end, ann_id)
    mark = new_scan.mark(ann_id)
    assert mark is not None  # wrap_checked verified that the new text holds this mark
    quote = scan.text[s:e]
    entries.append(
        {
            "id": ann_id,
            "status": "open",
            "quote": quote,
            "comment": comment,
            "anchor": {"span": mark.span},
            "history": [event("created", by, comment, quote=quote)],
        }
    )
    return new_text, entries, ann_id, new_scan


def reply(
    entries: list[AnnotationEntry],
    annotation_id: str,
    text: str,
    by: str,
    deleted: Sequence[AnnotationEntry] = (),
) -> None:
    entry = find_entry(entries, annotation_id, deleted)
    entry["history"].append(
        event("replied", by, _require_text(text, "reply", "ANNOTATION_REPLY_MISSING"))
    )


def _item_problem(
    item: object,
    entries: dict[str, AnnotationEntry],
    scan: MarkScan,
    seen: set[str],
    deleted_ids: set[str],
) -> tuple[str, str] | None:
    if not isinstance(item, dict):
        return "ANNOTATION_BAD_ITEM", "an item must be an object {id, mode, replacement?, answer?}"
    ann_id, mode = item.get("id"), str(item.get("mode") or "").upper()
    if not isinstance(ann_id, str):  # a list or an object would not even hash
        return "ANNOTATION_BAD_ITEM", f"'id' must be a string, found {ann_id!r}"
    if ann_id not in entries and ann_id in deleted_ids:
        return "ANNOTATION_DELETED", "it was deleted (undelete it first to resolve it)"
    if ann_id not in entries:
        return "ANNOTATION_UNKNOWN_ID", f"no annotation with id {ann_id!r}"
    if ann_id in seen:
        return "ANNOTATION_DUPLICATE_ITEM", "the batch names this annotation twice"
    if entries[ann_id]["status"] == "resolved":
        return "ANNOTATION_ALREADY_RESOLVED", "already resolved"
    if mode not in MODES:
        return "ANNOTATION_BAD_MODE", f"mode must be 'A' or 'B', found {item.get('mode')!r}"
    if mode == "A":
        replacement = item.get("replacement")
        if not isinstance(replacement, str):
            return (
                "ANNOTATION_REPLACEMENT_MISSING",
                "mode A needs 'replacement' (the text that replaces the marked text)",
            )
        if contains_mark_tag(replacement):
            return (
                "ANNOTATION_REPLACEMENT_HAS_MARK",
                "the replacement must not contain <mark> tags",
            )
        if scan.mark(ann_id) is None:
            return (
                "ANNOTATION_DETACHED",
                "it is detached (no mark in the text to replace); use mode B or reattach it",
            )
    answer = item.get("answer")
    if answer is not None and not isinstance(answer, str):
        return "ANNOTATION_BAD_ITEM", "'answer' must be a string"
    return None


def validate_items(
    scan: MarkScan,
    entries: list[AnnotationEntry],
    items: object,
    deleted: Sequence[AnnotationEntry] = (),
) -> list[ResolveItem]:
    """``items`` (the model's or the user's, unchecked) as checked items; raise
    :class:`AnnotationBatchError` naming every bad item; nothing is changed."""
    if not isinstance(items, list) or not items:
        raise AnnotationError(
            "no annotations to resolve",
            hint="Give a list of {id, mode, replacement?, answer?} items.",
            code="ANNOTATION_BAD_ITEM",
        )
    by_id = {e["id"]: e for e in entries}
    deleted_ids = {e["id"] for e in deleted if isinstance(e, dict)}
    problems: list[BatchProblem] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        found = _item_problem(item, by_id, scan, seen, deleted_ids)
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            seen.add(item["id"])
        if found:
            problems.append(
                {
                    "index": index,
                    "id": item.get("id") if isinstance(item, dict) else None,
                    "code": found[0],
                    "message": found[1],
                }
            )
    if problems:
        raise AnnotationBatchError(problems)
    return cast(list[ResolveItem], items)  # each item was checked by _item_problem


def resolve_many(
    scan: MarkScan,
    entries: list[AnnotationEntry],
    items: object,
    by: str,
    deleted: Sequence[AnnotationEntry] = (),
) -> tuple[str, list[AnnotationEntry], dict[str, ResolveChange]]:
    """``items`` are checked first (:func:`validate_items`): all or nothing."""
    checked = validate_items(scan, entries, items, deleted)
    text = scan.text
    by_id = {e["id"]: e for e in entries}
    # Apply from the end of the text backwards, so each mark is still where the scan saw
    # it; then shift every result span by the edits made before it.

    def text_order(item: ResolveItem) -> int:
        mark = scan.mark(item["id"])
        return mark.start if mark else -1

    planned = sorted(checked, key=lambda it: -text_order(it))
    edits: list[tuple[int, int]] = []  # (position, length delta)
    results: dict[str, tuple[int, int] | None] = {}
    changes: dict[str, ResolveChange] = {}
    for item in planned:
        ann_id, mode = item["id"], str(item["mode"]).upper()
        entry, mark = by_id[ann_id], scan.mark(ann_id)
        replacement, answer = item.get("replacement"), item.get("answer")
        if mark is None:
            results[ann_id] = None
        elif mode == "A":
            assert isinstance(replacement, str)  # validate_items checked it
            text = replace_mark(text, mark, replacement)
            results[ann_id] = (mark.start, len(replacement))
            edits.append((mark.start, len(replacement) - (mark.end - mark.start)))
        else:
            text = unwrap(text, mark)
            results[ann_id] = (mark.start, mark.inner_end - mark.inner_start)
            edits.append(
                (mark.start, -(mark.inner_start - mark.start) - (mark.end - mark.inner_end))
            )
        entry["status"] = "resolved"
        entry.pop("detached", None)
        entry["history"].append(
            event(
                "resolved",
                by,
                answer if answer else None,
                mode=mode,
                replacement=replacement if mode == "A" else None,
                quote=mark.inner(scan.text) if mark else None,
            )
        )
        changes[ann_id] = {
            "id": ann_id,
            "mode": mode,
            "status": "resolved",
            "text_changed": mark is not None,
            "span": None,
        }
    for ann_id, where in results.items():
        if where is None:
            continue
        start = where[0] + sum(delta for pos, delta in edits if pos < where[0])
        span = [start, start + where[1]]
        set_span(by_id[ann_id], span)
        changes[ann_id]["span"] = span
    ordered = {it["id"]: changes[it["id"]] for it in checked}
    return text, entries, ordered


def reopen(
    scan: MarkScan,
    entries: list[AnnotationEntry],
    annotation_id: str,
    by: str,
    deleted: Sequence[AnnotationEntry] = (),
) -> tuple[str, list[AnnotationEntry], MarkScan]:
    entry = find_entry(entries, annotation_id, deleted)
    if entry["status"] != "resolved":
        raise AnnotationError(
            f"annotation {annotation_id} is already open",
            hint="Only a resolved annotation can be reopened.",
            code="ANNOTATION_NOT_RESOLVED",
        )
    resolved = last_event(entry, "resolved") or {}
    hint = stored_span(entry)
    candidates = []
    if resolved.get("mode") == "A" and resolved.get("replacement"):
        candidates.append((resolved["replacement"], hint))
    candidates.append((entry.get("quote", ""), hint))
    found = anchor_by_text(scan, annotation_id, candidates)
    entry["status"] = "open"
    if isinstance(found, tuple):
        entry.pop("detached", None)
        entry["history"].append(event("reopened", by))
        return found[0], entries, found[1]
    entry["detached"] = True
    entry["history"].append(event("reopened", by, f"reopened without a mark: {found}"))
    return scan.text, entries, scan


def reattach(
    scan: MarkScan,
    entries: list[AnnotationEntry],
    annotation_id: str,
    start: int,
    end: int,
    by: str,
    deleted: Sequence[AnnotationEntry] = (),
) -> tuple[str, list[AnnotationEntry], MarkScan]:
    """Give a detached annotation a new mark around ``[start, end)``."""
    entry = find_entry(entries, annotation_id, deleted)
    if entry["status"] != "open" or not entry.get("detached"):
        raise AnnotationError(
            f"annotation {annotation_id} is not detached",
            hint="Only an open, detached annotation can be reattached.",
            code="ANNOTATION_NOT_DETACHED",
        )
    new_text, new_scan, s, e = wrap_checked(scan, start, end, annotation_id)
    entry.pop("detached", None)
    entry["history"].append(event("reattached", by, f"marked {short(scan.text[s:e])!r}"))
    return new_text, entries, new_scan


def delete(
    scan: MarkScan,
    entries: list[AnnotationEntry],
    deleted: list[AnnotationEntry],
    annotation_id: str,
    by: str,
) -> tuple[str, list[AnnotationEntry], list[AnnotationEntry]]:
    """Remove the mark's tags and move the entry to ``deleted`` with a ``deleted`` event.

    Returns ``(text, entries, deleted)``. The entry keeps its status; its span hint is
    where its text now is, so that an undelete finds it there."""
    entry = find_entry(entries, annotation_id, deleted)
    mark = scan.mark(annotation_id)
    text = scan.text
    if mark is not None:
        text = unwrap(text, mark)
        set_span(entry, [mark.start, mark.start + (mark.inner_end - mark.inner_start)])
    entry["history"].append(event("deleted", by))
    return text, [e for e in entries if e is not entry], deleted + [entry]


def undelete(
    scan: MarkScan,
    entries: list[AnnotationEntry],
    deleted: list[AnnotationEntry],
    annotation_id: str,
    by: str,
) -> tuple[str, list[AnnotationEntry], list[AnnotationEntry], MarkScan]:
    """Bring a deleted annotation back; returns ``(text, entries, deleted, scan)``.

    A resolved one comes back resolved (it has no mark). An open one is marked again: at
    the place its text was left when it was deleted, if that text is still exactly there,
    else where its quote occurs exactly once; otherwise it comes back open and
    ``detached``, to be reattached or resolved in mode B. It takes its place in the list
    by creation time.
    """
    entry = next((e for e in reversed(deleted) if e["id"] == annotation_id), None)
    if entry is None:
        if any(e["id"] == annotation_id for e in entries):
            raise AnnotationError(
                f"annotation {annotation_id} is not deleted",
                hint="Only a deleted annotation can be undeleted.",
                code="ANNOTATION_NOT_DELETED",
            )
        known = ", ".join(e["id"] for e in deleted) or "none"
        raise AnnotationError(
            f"no deleted annotation with id {annotation_id!r}",
            hint=f"Deleted annotations: {known}.",
            code="ANNOTATION_UNKNOWN_ID",
        )
    if any(e["id"] == annotation_id for e in entries):
        raise AnnotationError(
            f"annotation {annotation_id} cannot be undeleted: another annotation with the "
            "same id is in the document",
            code="ANNOTATION_ID_IN_USE",
            hint="An older Lantide recreated it from a copied mark. Delete that one first "
            "if this deleted one is the one to keep.",
        )
    remaining = [e for e in deleted if e is not entry]
    text, new_scan = scan.text, scan
    if entry["status"] != "open":
        entry.pop("detached", None)
        entry["history"].append(event("undeleted", by))
    else:
        found = anchor_by_text(scan, annotation_id, [(entry.get("quote", ""), stored_span(entry))])
        if isinstance(found, tuple):
            text, new_scan = found
            entry.pop("detached", None)
            entry["history"].append(event("undeleted", by))
        else:
            entry["detached"] = True
            entry["history"].append(event("undeleted", by, f"undeleted without a mark: {found}"))
    return text, insert_by_creation(entries, entry), remaining, new_scan
