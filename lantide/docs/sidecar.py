"""The annotation sidecar ``NAME.annotations.json`` (DESIGN.md section 5), version 1.

```json
{"version": 1,
 "annotations": [
  {"id": "a1b2c3", "status": "open", "quote": "quoted text", "comment": "why?",
   "anchor": {"span": [120, 131]},
   "history": [{"at": "2026-11-30T10:00:00Z", "by": "user", "action": "created",
                "text": "why?"}]}]}
```

- ``status`` is ``open`` or ``resolved``. ``detached: true`` (an open annotation whose mark
  and quote were lost) and ``recreated: true`` (rebuilt from a mark that had no entry) are
  flags on an entry, not statuses.
- ``anchor.span`` is ``[start, end)``: Python ``str`` offsets of the quoted inner text (the
  characters between ``<mark …>`` and ``</mark>``) in the document text as on disk, marks
  included. It is a hint, refreshed on every save; the mark in the text is the truth.
- ``history`` events are ``{"at", "by", "action", "text"?, …}``; actions: created, replied,
  resolved (with ``mode`` and ``replacement``), reopened, deleted, undeleted, reanchored,
  detached, reattached, recreated, id_restored, duplicate_removed, stray_tag_removed.
- ``deleted`` (optional, top level, after ``annotations``): the annotations that were
  deleted, so that no annotation and none of its history is ever lost. Each is a whole
  entry as it was when deleted (its ``status`` too), whose history ends with
  ``{"at", "by", "action": "deleted"}``; its ``anchor.span`` is where its text was left
  once the mark's tags were removed. An entry moves back to ``annotations`` when it is
  undeleted (history ``undeleted``) or when a mark with its id reappears in the text
  (history ``undeleted`` by ``lantide``). The key is written only when the list is not
  empty. It needs no new version: a reader that does not know it keeps it as an unknown
  field and shows only ``annotations``. Ids are unique in ``annotations``. A reader that
  does not know ``deleted`` may recreate an entry from a pasted mark with a deleted id,
  so an id may be both live and deleted, and once that one is deleted too, twice in
  ``deleted``: all are kept; the live entry is the annotation, and undelete takes the
  last deleted one with that id.
- Fields Lantide does not know, at any level, are kept when it rewrites the file.
- A file without ``version`` but with an ``annotations`` list is read as version 0 and
  written back as version 1. A newer version, invalid JSON or a wrong shape makes the
  document read-only for annotations; the file is never rewritten.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NotRequired, TypedDict, cast

from lantide.docs.marks import is_valid_id
from lantide.errors import CorruptFileError

SIDECAR_VERSION = 1
STATUSES = ("open", "resolved")
DELETED_KEY = "deleted"
# the file's name: lantide.workspace.layout.sidecar_path (the workspace watcher needs it too)


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


AnnotationStatus = Literal["open", "resolved"]


class AnnotationAnchor(TypedDict, total=False):
    """``anchor``: where the quoted text was at the last save (a hint; the mark is the truth)."""

    span: list[int]  # [start, end) of the mark's inner text in the text on disk


class AnnotationEvent(TypedDict, total=False):
    """One ``history`` event. Lantide writes ``at``, ``by`` and ``action`` on every event;
    the sidecar check only requires an event to be an object (a hand-edited file may lack
    them), so readers use ``.get``. ``mode``/``replacement`` come with ``resolved``,
    ``quote`` with ``created`` and ``resolved``."""

    at: str  # ISO 8601, UTC, seconds: 2026-11-30T10:00:00Z
    by: str  # user, agent, lantide (automatic repairs), or an MCP client's name
    action: str  # created, replied, resolved, reopened, deleted, ... (module docstring)
    text: str
    mode: str  # A or B
    replacement: str
    quote: str


class AnnotationEntry(TypedDict):
    """One annotation in the sidecar (``annotations`` or ``deleted``), as validated by
    :func:`parse_sidecar`; keys Lantide does not know are kept as they are."""

    id: str
    status: AnnotationStatus
    quote: str  # "" when the file had none
    comment: str  # "" when the file had none (a recreated entry)
    history: list[AnnotationEvent]
    anchor: NotRequired[AnnotationAnchor | None]
    detached: NotRequired[bool]  # open, but its mark and quote were lost
    recreated: NotRequired[bool]  # rebuilt from a mark that had no entry


def event(
    action: str,
    by: str,
    text: str | None = None,
    *,
    mode: str | None = None,
    replacement: str | None = None,
    quote: str | None = None,
) -> AnnotationEvent:
    out: AnnotationEvent = {"at": now_iso(), "by": by, "action": action}
    if text is not None:
        out["text"] = text
    if mode is not None:
        out["mode"] = mode
    if replacement is not None:
        out["replacement"] = replacement
    if quote is not None:
        out["quote"] = quote
    return out


@dataclass
class Sidecar:
    """A parsed sidecar: the top-level object (unknown keys kept) and its entries."""

    path: Path
    top: dict[str, object] = field(default_factory=lambda: {"version": SIDECAR_VERSION})
    entries: list[AnnotationEntry] = field(default_factory=list)
    exists: bool = False
    migrated_from: int | None = None
    deleted: list[AnnotationEntry] = field(default_factory=list)

    def dump(
        self,
        entries: list[AnnotationEntry] | None = None,
        deleted: list[AnnotationEntry] | None = None,
    ) -> str:
        return dump_sidecar(
            self.top,
            self.entries if entries is None else entries,
            self.deleted if deleted is None else deleted,
        )


def dump_sidecar(
    top: dict[str, object],
    entries: list[AnnotationEntry],
    deleted: Sequence[AnnotationEntry] = (),
) -> str:
    data = {k: v for k, v in top.items() if k not in ("annotations", DELETED_KEY)}
    data["version"] = SIDECAR_VERSION
    data["annotations"] = entries
    if deleted:
        data[DELETED_KEY] = list(deleted)
    # the same layout as lantide.workspace.atomic.atomic_write_json
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _problem(path: Path, message: str) -> CorruptFileError:
    return CorruptFileError(
        path,
        message,
        hint="Annotations are read-only until the file is fixed; it was left as it is. "
        "Fix it in a text editor, or move it aside to start without annotations.",
    )


def _check_span(path: Path, where: str, anchor: object) -> None:
    if anchor is None:
        return
    if not isinstance(anchor, dict):
        raise _problem(path, f"{where}: 'anchor' must be an object")
    span = anchor.get("span")
    if span is None:
        return
    if (
        not isinstance(span, list)
        or len(span) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in span)
    ):
        raise _problem(path, f"{where}: 'anchor.span' must be [start, end] (two whole numbers)")


def _validate_entry(
    path: Path, index: int, raw: object, list_name: str = "annotation"
) -> AnnotationEntry:
    where = f"{list_name} {index + 1}"
    if not isinstance(raw, dict):
        raise _problem(path, f"{where} is not an object")
    ann_id = raw.get("id")
    if not is_valid_id(ann_id):
        raise _problem(
            path, f"{where}: 'id' must be 1-64 letters, digits, '-' or '_', found {ann_id!r}"
        )
    where = f"{list_name} {ann_id}"
    if raw.get("status") not in STATUSES:
        raise _problem(
            path, f"{where}: 'status' must be 'open' or 'resolved', found {raw.get('status')!r}"
        )
    for key in ("quote", "comment"):
        if key in raw and not isinstance(raw[key], str):
            raise _problem(path, f"{where}: {key!r} must be a string")
    _check_span(path, where, raw.get("anchor"))
    history = raw.get("history", [])
    if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
        raise _problem(path, f"{where}: 'history' must be a list of objects")
    for flag in ("detached", "recreated"):
        if flag in raw and not isinstance(raw[flag], bool):
            raise _problem(path, f"{where}: {flag!r} must be true or false")
    entry = copy.deepcopy(raw)
    entry.setdefault("quote", "")
    entry.setdefault("comment", "")
    entry.setdefault("history", [])
    # the shape is checked above (events only as objects: AnnotationEvent is all optional)
    return cast(AnnotationEntry, entry)


def parse_sidecar(text: str, path: Path) -> Sidecar:
    """Parse and validate; raises :class:`CorruptFileError` naming the problem."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _problem(
            path, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    if not isinstance(data, dict):
        raise _problem(
            path,
            f"expected a JSON object with 'version' and 'annotations', found {type(data).__name__}",
        )
    version = data.get("version", 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise _problem(path, f"'version' must be a whole number, found {version!r}")
    if version > SIDECAR_VERSION:
        raise _problem(
            path,
            f"format version {version} is newer than this Lantide reads "
            f"(up to {SIDECAR_VERSION}); update Lantide",
        )
    raw_entries = data.get("annotations")
    if not isinstance(raw_entries, list):
        raise _problem(path, "'annotations' must be a list")
    entries = [_validate_entry(path, i, raw) for i, raw in enumerate(raw_entries)]
    _check_unique(path, entries, "annotations")
    raw_deleted = data.get(DELETED_KEY, [])
    if not isinstance(raw_deleted, list):
        raise _problem(path, f"{DELETED_KEY!r} must be a list")
    deleted = [
        _validate_entry(path, i, raw, "deleted annotation") for i, raw in enumerate(raw_deleted)
    ]
    top = {k: v for k, v in data.items() if k not in ("annotations", DELETED_KEY)}
    return Sidecar(
        path,
        top,
        entries,
        exists=True,
        migrated_from=version if version < SIDECAR_VERSION else None,
        deleted=deleted,
    )


def _check_unique(path: Path, entries: list[AnnotationEntry], what: str) -> None:
    seen: set[str] = set()
    for entry in entries:
        if entry["id"] in seen:
            raise _problem(path, f"two {what} share the id {entry['id']!r}")
        seen.add(entry["id"])


def load_sidecar(path: Path) -> Sidecar:
    """The sidecar at ``path``; an empty one when the file does not exist."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Sidecar(path)
    except OSError as exc:
        raise _problem(path, f"cannot be read ({exc.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _problem(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_sidecar(text, path)


# -- reading entries ------------------------------------------------------------------------


def replies(entry: AnnotationEntry) -> list[AnnotationEvent]:
    return [h for h in entry.get("history", []) if h.get("action") == "replied"]


def latest_reply(entry: AnnotationEntry) -> AnnotationEvent | None:
    found = replies(entry)
    return found[-1] if found else None


def last_event(entry: AnnotationEntry, action: str) -> AnnotationEvent | None:
    return next((h for h in reversed(entry.get("history", [])) if h.get("action") == action), None)


def stored_span(entry: AnnotationEntry) -> list[int] | None:
    anchor = entry.get("anchor")
    if isinstance(anchor, dict) and isinstance(anchor.get("span"), list):
        return list(anchor["span"])
    return None


def set_span(entry: AnnotationEntry, span: list[int]) -> None:
    anchor = entry.get("anchor")
    new_anchor: AnnotationAnchor = anchor.copy() if isinstance(anchor, dict) else {}
    new_anchor["span"] = list(span)
    entry["anchor"] = new_anchor


def created_at(entry: AnnotationEntry) -> str | None:
    first = next(iter(entry.get("history", [])), None)
    at = first.get("at") if isinstance(first, dict) else None
    return at if isinstance(at, str) else None


def insert_by_creation(
    entries: list[AnnotationEntry], entry: AnnotationEntry
) -> list[AnnotationEntry]:
    """``entries`` with ``entry`` put back before the first one created after it (ISO
    timestamps compare as text); at the end when its creation time is unknown."""
    when = created_at(entry)
    out = list(entries)
    if when is not None:
        for index, other in enumerate(out):
            other_when = created_at(other)
            if other_when is not None and other_when > when:
                out.insert(index, entry)
                return out
    out.append(entry)
    return out
