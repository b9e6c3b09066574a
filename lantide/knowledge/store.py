"""Knowledge files on disk: reading through an mtime cache, writing atomically.

A file is parsed again only when its modification time (or size, or inode: an atomic
replace makes a new inode) changes, so building the knowledge layer on every agent
iteration costs one ``stat`` per file. Reading never raises: a missing file is empty, a
file that is not UTF-8 or cannot be read loads what it can and becomes read-only.
Writing refuses to overwrite a file that changed on disk since it was read.
"""

from __future__ import annotations

import os
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from lantide.errors import CorruptFileError
from lantide.knowledge.model import (
    EntrySource,
    KnowledgeConflictError,
    KnowledgeDocument,
    Problem,
    StatKey,
)
from lantide.knowledge.parser import parse_knowledge
from lantide.workspace.atomic import append_jsonl, atomic_write_text, read_jsonl
from lantide.workspace.filelock import file_lock

TITLES = {"user": "User knowledge", "project": "Project knowledge"}


@dataclass
class CacheStats:
    """How often files were actually read and parsed (for tests and benchmarks)."""

    reads: int = 0
    hits: int = 0


class _DocumentCache:
    """Parsed documents keyed by (path, scope) and the file's stat key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._docs: dict[tuple[str, str], tuple[StatKey, KnowledgeDocument]] = {}
        self.stats = CacheStats()

    def get(self, path: Path, scope: str, key: StatKey) -> KnowledgeDocument | None:
        with self._lock:
            found = self._docs.get((str(path), scope))
            if found is not None and found[0] == key:
                self.stats.hits += 1
                return found[1]
        return None

    def put(self, path: Path, scope: str, key: StatKey, doc: KnowledgeDocument) -> None:
        with self._lock:
            self._docs[(str(path), scope)] = (key, doc)

    def clear(self) -> None:
        with self._lock:
            self._docs.clear()


document_cache = _DocumentCache()


def _write_lock(path: Path) -> AbstractContextManager[None]:
    """One lock per file, for threads (a background proposal and the analyst's approval)
    and for processes (``lantide knowledge`` beside the open app): nobody replaces the file
    between another writer's check and its replace."""
    return file_lock(Path(path).resolve())


def stat_key(path: Path) -> StatKey | None:
    """``(mtime_ns, size, inode)``, or None when there is no file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return ("unreadable",)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _read(path: Path, scope: str, key: StatKey) -> KnowledgeDocument:
    document_cache.stats.reads += 1
    try:
        data = path.read_bytes()
    except OSError as exc:
        doc = parse_knowledge("", scope=scope, path=path)
        doc.writable = False
        doc.problems.append(Problem(1, f"cannot be read ({exc.strerror or exc})", "error"))
        doc.stat_key = key
        return doc
    try:
        text = data.decode("utf-8")
        problem = None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        text = data.decode("utf-8", errors="replace")
        problem = Problem(
            line,
            f"not UTF-8 text ({exc.reason} at byte {exc.start}); read "
            f"what could be read, the file will not be changed",
            "error",
        )
    doc = parse_knowledge(text, scope=scope, path=path)
    if problem is not None:
        doc.writable = False
        doc.problems.insert(0, problem)
    doc.stat_key = key
    return doc


class KnowledgeFile:
    """One knowledge file (user or project)."""

    def __init__(self, path: Path | str, scope: str):
        self.path = Path(path)
        self.scope = scope

    def __repr__(self) -> str:
        return f"KnowledgeFile({str(self.path)!r}, {self.scope!r})"

    @property
    def title(self) -> str:
        return TITLES[self.scope]

    def load(self) -> KnowledgeDocument:
        """The parsed file; from the cache unless the file changed on disk."""
        key = stat_key(self.path)
        if key is None:
            doc = parse_knowledge("", scope=self.scope, path=self.path)
            doc.exists = False
            return doc
        cached = document_cache.get(self.path, self.scope, key)
        if cached is not None:
            return cached
        doc = _read(self.path, self.scope, key)
        document_cache.put(self.path, self.scope, key, doc)
        return doc

    def editing(self) -> AbstractContextManager[None]:
        """Hold the file's lock across a read-modify-write: a document loaded inside the
        block cannot go stale before :meth:`write` (reentrant)."""
        return _write_lock(self.path)

    def new_file_text(self) -> str:
        """What a knowledge file starts as when Lantide creates it."""
        return f"# {self.title}\n\n## Rules\n\n## Info\n"

    def write(
        self, before: KnowledgeDocument, text: str, parsed: KnowledgeDocument | None = None
    ) -> KnowledgeDocument:
        """Replace the file with ``text``, only if it is still what ``before`` was read from.

        ``parsed`` is ``text`` already parsed (by the edit's check); it goes into the cache
        so the next read does not parse the file again.
        """
        if not before.writable:
            problem = before.problems[0].message if before.problems else "it cannot be read"
            raise CorruptFileError(self.path, problem)
        with _write_lock(self.path):
            self._check_unchanged(before)
            atomic_write_text(self.path, before.bom + text)
            key = stat_key(self.path)
        if parsed is None or key is None:
            return self.load()
        parsed.bom, parsed.stat_key, parsed.exists = before.bom, key, True
        document_cache.put(self.path, self.scope, key, parsed)
        return parsed

    def _check_unchanged(self, before: KnowledgeDocument) -> None:
        # By content, not by stat key alone: an inode freed by one replace can come back
        # with the same size and (coarse) mtime, so an equal key does not prove equal text.
        now = stat_key(self.path)
        if now is None and not before.exists:
            return
        if now is not None and before.exists:
            try:
                on_disk = self.path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                on_disk = None
            if on_disk == before.bom + before.text:
                return  # touched, not changed
        raise KnowledgeConflictError(
            f"{self.path} changed on disk while Lantide was editing it; nothing was written",
            hint="Run the command again: it will work on the file as it is now.",
        )

    # -- proposals the analyst rejected, so they are not proposed again
    @property
    def rejected_log_path(self) -> Path:
        return self.path.with_name(f".{self.path.name}.rejected.jsonl")

    def record_rejected(self, text: str, source: EntrySource | None) -> None:
        append_jsonl(
            self.rejected_log_path,
            {
                "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "text": text,
                "source": source,
            },
        )

    def rejected_texts(self) -> list[str]:
        return [
            str(row.get("text", ""))
            for row in read_jsonl(self.rejected_log_path)
            if isinstance(row, dict)
        ]
