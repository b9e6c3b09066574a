"""Saving a document and its sidecar together, or not at all.

Two files cannot be replaced by one rename, so a save goes through a small journal kept
next to the document as a hidden file, ``.plan.md.lantide-journal`` (the file watcher
ignores dot files; a project folder moved or renamed takes its journal with it):

0. nothing written yet;                                failpoint ``save-started``
1. the journal is written atomically: the complete new text and sidecar, and the SHA-256
   of both files as they were before the save;        failpoint ``journal-written``
2. the document is replaced atomically;                failpoint ``document-written``
3. the sidecar is replaced atomically;                 failpoint ``sidecar-written``
4. the journal is removed.                             failpoint ``journal-removed``

:func:`recover` runs whenever a document is opened. A journal left behind by a crash is
rolled forward: each file still as it was before the save gets its new content, a file
that already has it is left alone. When a file is neither (someone edited it after the
crash) nothing is applied and nothing is overwritten: both files stay as they are, the
journal is set aside (``….lantide-journal.unapplied-TIMESTAMP``) for inspection, and
anchoring (:mod:`lantide.docs.anchoring`) makes the pair consistent when it is opened.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

from lantide.docs.failpoints import failpoint
from lantide.workspace.atomic import atomic_write_text, fsync_dir

JOURNAL_SUFFIX = ".lantide-journal"
JOURNAL_VERSION = 1

_locks_guard = threading.Lock()
_locks: dict[str, threading.RLock] = {}


def document_lock(document_path: Path) -> threading.RLock:
    """One lock per document in this process: saves and recovery never interleave."""
    key = str(Path(document_path).resolve())
    with _locks_guard:
        return _locks.setdefault(key, threading.RLock())


def journal_path(document_path: Path) -> Path:
    document_path = Path(document_path)
    return document_path.with_name("." + document_path.name + JOURNAL_SUFFIX)


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        return None


class RecoveryDict(TypedDict):
    """:meth:`Recovery.to_dict`."""

    journal: str
    rolled_forward: list[str]  # file names
    kept: list[str]
    set_aside: str | None
    message: str


@dataclass
class Recovery:
    """What opening a document did about a save that a crash interrupted."""

    journal: Path
    rolled_forward: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    set_aside: Path | None = None
    problem: str | None = None

    @property
    def message(self) -> str:
        if self.problem:
            return f"{self.journal.name}: {self.problem}; set aside as {self.set_aside}"
        parts = []
        if self.rolled_forward:
            parts.append("finished an interrupted save of " + ", ".join(self.rolled_forward))
        if self.kept:
            parts.append(
                "an interrupted save was not finished because "
                + ", ".join(self.kept)
                + f" changed afterwards; the unsaved change is kept in {self.set_aside}"
            )
        return "; ".join(parts) or "an interrupted save had already completed"

    def to_dict(self) -> RecoveryDict:
        return {
            "journal": str(self.journal),
            "rolled_forward": self.rolled_forward,
            "kept": self.kept,
            "set_aside": str(self.set_aside) if self.set_aside else None,
            "message": self.message,
        }


def save_pair(
    document_path: Path,
    sidecar_path: Path,
    *,
    text: str | None,
    sidecar_text: str,
    before_text: bytes | None,
    before_sidecar: bytes | None,
) -> None:
    """Replace the document (``text``; None leaves it alone) and its sidecar together.

    ``before_*`` are the files' bytes as they were read; the caller has checked that the
    files still hold them.
    """
    document_path, sidecar_path = Path(document_path), Path(sidecar_path)
    journal = journal_path(document_path)
    record = {
        "version": JOURNAL_VERSION,
        "kind": "lantide-document-journal",
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "pid": os.getpid(),
        "document": {
            "name": document_path.name,
            "before_sha256": digest(before_text),
            "content": text,
            "sha256": digest(text.encode("utf-8")) if text is not None else None,
        },
        "sidecar": {
            "name": sidecar_path.name,
            "before_sha256": digest(before_sidecar),
            "content": sidecar_text,
            "sha256": digest(sidecar_text.encode("utf-8")),
        },
    }
    with document_lock(document_path):
        failpoint("save-started")
        atomic_write_text(journal, json.dumps(record, ensure_ascii=False))
        failpoint("journal-written")
        if text is not None:
            atomic_write_text(document_path, text)
        failpoint("document-written")
        atomic_write_text(sidecar_path, sidecar_text)
        failpoint("sidecar-written")
        journal.unlink(missing_ok=True)
        fsync_dir(journal.parent)
        failpoint("journal-removed")


def _set_aside(journal: Path, label: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = journal.with_name(f"{journal.name}.{label}-{stamp}")
    os.replace(journal, target)
    return target


def _valid(record: object) -> bool:
    if not isinstance(record, dict) or record.get("kind") != "lantide-document-journal":
        return False
    for key in ("document", "sidecar"):
        part = record.get(key)
        if not isinstance(part, dict) or not isinstance(part.get("name"), str):
            return False
        if part.get("content") is not None and not isinstance(part["content"], str):
            return False
    return record["sidecar"].get("content") is not None


def recover(document_path: Path, sidecar_path: Path) -> Recovery | None:
    """Finish a save a crash interrupted; None when there is nothing to do."""
    document_path, sidecar_path = Path(document_path), Path(sidecar_path)
    journal = journal_path(document_path)
    with document_lock(document_path):
        raw = read_bytes(journal)
        if raw is None:
            return None
        out = Recovery(journal)
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            record = None
        if not _valid(record):
            out.problem = "not a journal this Lantide can read"
            out.set_aside = _set_aside(journal, "broken")
            return out
        pending, conflicts = [], []
        for path, part in ((document_path, record["document"]), (sidecar_path, record["sidecar"])):
            if part.get("content") is None:
                continue  # this save left the file alone
            current = digest(read_bytes(path))
            if current == part.get("sha256"):
                continue
            if current == part.get("before_sha256"):
                pending.append((path, part["content"]))
            else:
                conflicts.append(path.name)
        if conflicts:
            # Someone edited a file after the crash, from a state we cannot know: apply
            # nothing, keep the journal for inspection; anchoring makes the pair consistent.
            out.kept = conflicts
            out.set_aside = _set_aside(journal, "unapplied")
            return out
        for path, content in pending:
            atomic_write_text(path, content)
            out.rolled_forward.append(path.name)
        journal.unlink(missing_ok=True)
        fsync_dir(journal.parent)
        return out
