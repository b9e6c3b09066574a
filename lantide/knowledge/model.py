"""What a knowledge file holds once read: entries, groups, sections and problems.

One file (user or project knowledge, DESIGN.md section 7) becomes a
:class:`KnowledgeDocument`. Entries keep the exact lines they came from, so edits
rewrite only those lines and everything else the analyst wrote stays byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from lantide.errors import LantideError

# A file's identity on disk: (mtime_ns, size, inode), or ("unreadable",) when stat failed
StatKey = tuple[int, int, int] | tuple[str]
# Where a proposed entry came from: {"conversation": id, "turn": n}, as in its comment
EntrySource = dict[str, str | int]

SECTIONS = ("Rules", "Info")
SCOPES = ("user", "project")
ENABLED = "enabled"
QUEUED = "queued"
QUEUED_MARKER = "[queued]"


class ProblemDict(TypedDict):
    """:meth:`Problem.to_dict`."""

    line: int  # 1-based
    message: str
    severity: str  # warning or error


class EntryDict(TypedDict):
    """:meth:`Entry.to_dict`: a knowledge entry as the command line, the app and the agent
    see it."""

    ref: str  # 3 (project) or u3 (user)
    number: int
    scope: str  # user or project
    section: str  # Rules or Info
    heading: str | None
    status: str  # enabled or queued
    text: str
    line: int  # 1-based
    source: EntrySource | None  # where a proposal came from


class KnowledgeFileDict(TypedDict):
    """:meth:`KnowledgeDocument.to_dict`."""

    scope: str
    path: str | None
    exists: bool
    writable: bool
    size_chars: int  # without Queued entries
    entries: list[EntryDict]
    problems: list[ProblemDict]


class KnowledgeError(LantideError):
    code = "KNOWLEDGE"


class KnowledgeConflictError(KnowledgeError):
    """The file changed on disk between reading it and writing it."""

    code = "KNOWLEDGE_CONFLICT"


@dataclass(frozen=True)
class Problem:
    """Something in a file that is not read as knowledge, with its 1-based line."""

    line: int
    message: str
    severity: str = "warning"  # "warning": read around it; "error": the file is read-only

    def to_dict(self) -> ProblemDict:
        return {"line": self.line, "message": self.message, "severity": self.severity}

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class Entry:
    """One list item under ``## Rules`` or ``## Info``."""

    number: int  # 1-based, in document order within its file
    scope: str  # "user" | "project"
    section: str  # "Rules" | "Info"
    heading: str | None  # the ``###`` heading above it, if any
    status: str  # "enabled" | "queued"
    text: str  # what the model may see: no marker, no HTML comments
    raw: str  # the item's lines exactly as in the file (trailing blank lines excluded)
    start: int  # 0-based index of its first line
    end: int  # 0-based exclusive end
    source: EntrySource | None = None  # where a proposal came from

    @property
    def line(self) -> int:
        return self.start + 1

    @property
    def ref(self) -> str:
        """How the command line and the app name it: ``3`` (project) or ``u3`` (user)."""
        return f"u{self.number}" if self.scope == "user" else str(self.number)

    @property
    def enabled(self) -> bool:
        return self.status == ENABLED

    @property
    def group_name(self) -> str:
        """The name the catalog index uses: the heading, or the section when ungrouped."""
        return self.heading if self.heading is not None else self.section

    def to_dict(self) -> EntryDict:
        return {
            "ref": self.ref,
            "number": self.number,
            "scope": self.scope,
            "section": self.section,
            "heading": self.heading,
            "status": self.status,
            "text": self.text,
            "line": self.line,
            "source": self.source,
        }


@dataclass(frozen=True)
class Group:
    """A ``###`` heading inside a Rules or Info section."""

    section: str
    name: str
    start: int  # line index of the heading
    end: int  # exclusive: the next heading of level <= 3, or the end of the section


@dataclass(frozen=True)
class Section:
    """One ``## Rules`` or ``## Info`` heading and the lines up to the next ``#``/``##``."""

    name: str
    start: int  # line index of the heading
    end: int  # exclusive
    groups: tuple[Group, ...] = ()


@dataclass
class KnowledgeDocument:
    """A parsed knowledge file. ``lines`` keep their line endings."""

    scope: str
    path: Path | None
    lines: list[str]
    entries: list[Entry] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    exists: bool = True
    writable: bool = True  # False when the bytes could not be read as UTF-8
    bom: str = ""
    stat_key: StatKey | None = None  # (mtime_ns, size, inode) when read from disk

    @property
    def text(self) -> str:
        return "".join(self.lines)

    @property
    def newline(self) -> str:
        """The file's own line ending, so inserted lines match it."""
        for line in self.lines:
            if line.endswith("\r\n"):
                return "\r\n"
            if line.endswith("\n"):
                return "\n"
            if line.endswith("\r"):
                return "\r"
        return "\n"

    @property
    def size_chars(self) -> int:
        """The file's characters without its Queued entries (never injected).

        This is the size the flat/catalog thresholds are measured on.
        """
        queued = sum(
            len("".join(self.lines[e.start : e.end])) for e in self.entries if e.status == QUEUED
        )
        return len(self.text) - queued

    def enabled_entries(self) -> list[Entry]:
        return [e for e in self.entries if e.status == ENABLED]

    def queued_entries(self) -> list[Entry]:
        return [e for e in self.entries if e.status == QUEUED]

    @property
    def has_group_headings(self) -> bool:
        return any(s.groups for s in self.sections)

    def sections_named(self, name: str) -> list[Section]:
        return [s for s in self.sections if s.name == name]

    def entry(self, number: int) -> Entry:
        if not 1 <= number <= len(self.entries):
            where = self.path or f"{self.scope} knowledge"
            raise KnowledgeError(
                f"no knowledge entry {number} in {where} (it has {len(self.entries)})",
                hint="List the entries and their numbers with: lantide knowledge WORKSPACE",
                code="KNOWLEDGE_NO_ENTRY",
            )
        return self.entries[number - 1]

    def to_dict(self) -> KnowledgeFileDict:
        return {
            "scope": self.scope,
            "path": str(self.path) if self.path else None,
            "exists": self.exists,
            "writable": self.writable,
            "size_chars": self.size_chars,
            "entries": [e.to_dict() for e in self.entries],
            "problems": [p.to_dict() for p in self.problems],
        }
