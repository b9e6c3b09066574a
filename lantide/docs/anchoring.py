"""Keeping annotations attached to their text: the mark in the text is the truth.

:func:`reconcile` takes a text and the sidecar entries and returns a consistent pair:

- an entry whose mark is present keeps it; its ``anchor.span`` and ``quote`` are
  refreshed from the mark (a resolved entry whose mark is back is reopened, a detached
  one is reattached);
- an open entry whose mark is gone is re-anchored by its quote when the quote occurs
  exactly once where a mark may stand, else it is flagged ``detached`` (never deleted);
- a mark whose id has no entry, around exactly the quote of an open entry that lost its
  mark, is that entry's mark with a mistyped id: the id is restored; any other mark
  whose id has no entry gets an entry recreated from the mark's text, flagged
  ``recreated``;
- a mark whose id is that of a deleted entry (the sidecar's ``deleted`` list; the text was
  put back by another editor or an undo) brings that entry back, history and all
  (``undeleted``; then ``reopened``/``reattached`` as for any entry whose mark is back);
- a second mark with the same id, or an opening tag with no closing tag, loses its tags
  (the text they enclosed stays).

Every such change is a :class:`Repair`, also written to the entry's history. Afterwards
each open, non-detached entry has exactly one mark, resolved and detached entries have
none, and no two marks share an id.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

from lantide.docs.errors import AnnotationRangeError
from lantide.docs.marks import Mark, MarkScan, mark_open, remove_tags, scan_marks
from lantide.docs.ranges import wrap_checked
from lantide.docs.sidecar import (
    AnnotationEntry,
    event,
    insert_by_creation,
    set_span,
    stored_span,
)

AUTO = "lantide"  # the author of automatic repairs in an entry's history


@dataclass(frozen=True)
class Repair:
    action: str  # reanchored, detached, reattached, reopened, undeleted, recreated,
    #              id_restored, duplicate_removed, stray_tag_removed
    id: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"action": self.action, "id": self.id, "detail": self.detail}


@dataclass
class Reconciled:
    text: str
    entries: list[AnnotationEntry]
    scan: MarkScan
    repairs: list[Repair] = field(default_factory=list)
    deleted: list[AnnotationEntry] = field(default_factory=list)


def count_occurrences(text: str, quote: str) -> list[int]:
    """Start offsets of every (possibly overlapping) occurrence, at most three."""
    found: list[int] = []
    if not quote:
        return found
    i = text.find(quote)
    while i >= 0 and len(found) < 3:
        found.append(i)
        i = text.find(quote, i + 1)
    return found


def anchor_by_text(
    scan: MarkScan, annotation_id: str, candidates: list[tuple[str, list[int] | None]]
) -> tuple[str, MarkScan] | str:
    """Wrap the first candidate text that can carry the mark.

    ``candidates`` are ``(text, span_hint)``: the hint is tried first when the text is
    there, else the text must occur exactly once. Returns ``(new_text, new_scan)``, or
    the reason (a string) why no candidate could be used.
    """
    reason = "the annotation has no quote to look for"
    for wanted, hint in candidates:
        if not wanted or not wanted.strip():
            continue
        positions = []
        if (
            hint
            and hint[0] >= 0
            and hint[0] + len(wanted) <= len(scan.text)
            and scan.text[hint[0] : hint[0] + len(wanted)] == wanted
        ):
            positions = [hint[0]]
        else:
            positions = count_occurrences(scan.text, wanted)
        if not positions:
            reason = f"its quote {short(wanted)!r} is no longer in the text"
            continue
        if len(positions) > 1:
            reason = f"its quote {short(wanted)!r} occurs more than once"
            continue
        try:
            new_text, new_scan, _s, _e = wrap_checked(
                scan, positions[0], positions[0] + len(wanted), annotation_id, trim_spaces=False
            )
        except AnnotationRangeError as exc:
            reason = f"its quote {short(wanted)!r} is where a mark cannot stand ({exc.message})"
            continue
        return new_text, new_scan
    return reason


def short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _keeper(marks: list[Mark], entry: AnnotationEntry | None, text: str) -> Mark:
    if entry is None:
        return marks[0]
    hint = stored_span(entry) or [0, 0]
    matching = [m for m in marks if m.inner(text) == entry.get("quote")] or marks
    return min(matching, key=lambda m: abs(m.inner_start - hint[0]))


def _drop_extra_tags(
    text: str, scan: MarkScan, by_id: dict[str, AnnotationEntry], repairs: list[Repair]
) -> str:
    doomed = []
    for ann_id, marks in scan.by_id().items():
        if len(marks) > 1:
            keep = _keeper(marks, by_id.get(ann_id), text)
            for m in marks:
                if m is not keep:
                    doomed += [m.open, m.close]
                    repairs.append(
                        Repair(
                            "duplicate_removed",
                            ann_id,
                            f"a second mark with this id around "
                            f"{short(m.inner(text))!r} was removed; its text stays",
                        )
                    )
    for tag in scan.stray:
        doomed.append(tag)
        repairs.append(
            Repair(
                "stray_tag_removed",
                tag.annotation_id or "",  # a stray tag always has an id (scan_marks)
                "an opening mark tag without its closing tag was removed",
            )
        )
    return remove_tags(text, doomed) if doomed else text


def _restore_mangled_ids(
    text: str, scan: MarkScan, entries: list[AnnotationEntry], repairs: list[Repair]
) -> str:
    """A mark with an unknown id around exactly the quote of an open entry that lost its
    mark is that entry's mark with a mistyped id (an agent or an editor changed it)."""
    known = {e["id"] for e in entries}
    marked = {m.id for m in scan.marks}
    lost = [
        e
        for e in entries
        if e["status"] == "open" and not e.get("detached") and e["id"] not in marked
    ]
    unknown = [m for m in scan.marks if m.id not in known]
    renames = []
    for mark in unknown:
        inner = mark.inner(text)
        matches = [e for e in lost if e.get("quote") == inner]
        if len(matches) == 1 and sum(1 for u in unknown if u.inner(text) == inner) == 1:
            renames.append((mark, matches[0]["id"]))
            lost.remove(matches[0])
    for mark, ann_id in sorted(renames, key=lambda r: -r[0].start):
        text = text[: mark.open.start] + mark_open(ann_id) + text[mark.open.end :]
        repairs.append(
            Repair(
                "id_restored",
                ann_id,
                f"a mark around its quote carried the unknown id {mark.id!r}; its id was restored",
            )
        )
    return text


def _undelete_marked(
    scan: MarkScan,
    entries: list[AnnotationEntry],
    deleted: list[AnnotationEntry],
    repairs: list[Repair],
) -> list[AnnotationEntry]:
    """Move back the deleted entries whose marks are in the text; returns the rest."""
    live = {e["id"] for e in entries}
    marked = {m.id for m in scan.marks} - live
    back = []
    for entry in reversed(deleted):  # the last deleted one of an id that is there twice
        if entry["id"] in marked:
            marked.discard(entry["id"])
            back.append(entry)
    for entry in reversed(back):
        entries[:] = insert_by_creation(entries, entry)
        repairs.append(Repair("undeleted", entry["id"], "its mark is in the text again"))
    return [e for e in deleted if not any(e is b for b in back)]


def reconcile(
    text: str,
    entries: list[AnnotationEntry],
    *,
    by: str = AUTO,
    deleted: Sequence[AnnotationEntry] = (),
) -> Reconciled:
    """A consistent (text, entries) pair from any text and any valid entries;
    ``deleted`` are the sidecar's deleted entries (returned in ``Reconciled.deleted``)."""
    entries = copy.deepcopy(entries)
    still_deleted = copy.deepcopy(list(deleted))
    by_id = {e["id"]: e for e in still_deleted}
    by_id.update({e["id"]: e for e in entries})
    repairs: list[Repair] = []
    scan = scan_marks(text)
    cleaned = _drop_extra_tags(text, scan, by_id, repairs)
    if cleaned != text:
        text, scan = cleaned, scan_marks(cleaned)
    still_deleted = _undelete_marked(scan, entries, still_deleted, repairs)
    by_id = {e["id"]: e for e in entries}
    restored = _restore_mangled_ids(text, scan, entries, repairs)
    if restored != text:
        text, scan = restored, scan_marks(restored)
    marked = {m.id for m in scan.marks}
    for entry in entries:
        ann_id = entry["id"]
        if ann_id in marked:
            if entry["status"] == "resolved":
                entry["status"] = "open"
                repairs.append(Repair("reopened", ann_id, "its mark is in the text again"))
            if entry.pop("detached", False):
                repairs.append(Repair("reattached", ann_id, "its mark is in the text again"))
            continue
        if entry["status"] != "open" or entry.get("detached"):
            continue
        found = anchor_by_text(scan, ann_id, [(entry.get("quote", ""), None)])
        if isinstance(found, tuple):
            text, scan = found
            repairs.append(
                Repair(
                    "reanchored", ann_id, f"its mark was gone; re-marked {short(entry['quote'])!r}"
                )
            )
        else:
            entry["detached"] = True
            repairs.append(Repair("detached", ann_id, f"its mark was gone and {found}"))
    for mark in scan.marks:
        if mark.id not in by_id:
            recreated: AnnotationEntry = {
                "id": mark.id,
                "status": "open",
                "quote": mark.inner(text),
                "comment": "",
                "anchor": {"span": mark.span},
                "recreated": True,
                "history": [],
            }
            entries.append(recreated)
            by_id[mark.id] = recreated
            repairs.append(
                Repair(
                    "recreated",
                    mark.id,
                    "a mark had no entry; the entry was recreated from its text "
                    "(the comment is unknown)",
                )
            )
    for repair in repairs:
        if repair.id in by_id:
            by_id[repair.id]["history"].append(event(repair.action, by, repair.detail))
    refresh_anchors(text, entries, scan)
    return Reconciled(text, entries, scan, repairs, still_deleted)


def refresh_anchors(text: str, entries: list[AnnotationEntry], scan: MarkScan) -> None:
    """Set span and quote of every marked entry from its mark."""
    marks = {m.id: m for m in scan.marks}
    for entry in entries:
        mark = marks.get(entry["id"])
        if mark is not None:
            set_span(entry, mark.span)
            entry["quote"] = mark.inner(text)


def check_consistent(text: str, entries: list[AnnotationEntry], scan: MarkScan) -> list[str]:
    """What is wrong with a pair (an empty list when it is consistent)."""
    problems = []
    by_id = scan.by_id()
    ids = set()
    for entry in entries:
        ann_id = entry["id"]
        if ann_id in ids:
            problems.append(f"two entries share the id {ann_id}")
        ids.add(ann_id)
        n = len(by_id.get(ann_id, []))
        wanted = 1 if entry["status"] == "open" and not entry.get("detached") else 0
        if n != wanted:
            problems.append(
                f"annotation {ann_id} ({entry['status']}"
                f"{', detached' if entry.get('detached') else ''}) has {n} marks"
            )
    for ann_id in by_id:
        if ann_id not in ids:
            problems.append(f"mark {ann_id} has no entry")
    if scan.stray:
        problems.append(f"{len(scan.stray)} opening mark tag(s) without a closing tag")
    return problems
