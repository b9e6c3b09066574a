"""Reading an append-only log (conversation, ledger, query history) defensively.

Every line is read on its own: a line that is not UTF-8, not JSON, or not a JSON object
is skipped and reported with its line number (:class:`LogProblem`), never fatal, and the
file is left exactly as it is. A torn last line (a crash mid-write) is reported as such.
Strings that decode to lone surrogates are cleaned (:mod:`lantide.untrusted`), so a record
read back can always be printed and written again.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from lantide.untrusted import clean_json, has_escaped_surrogate


class LogProblemDict(TypedDict):
    """:meth:`LogProblem.to_dict`."""

    file: str
    line: int
    reason: str


@dataclass(frozen=True)
class LogProblem:
    """One line of a log that was skipped, and why."""

    path: Path
    line: int
    reason: str

    def describe(self, root: Path | None = None) -> str:
        shown = self.path
        if root is not None:
            with contextlib.suppress(ValueError):
                shown = self.path.relative_to(root)

        return (
            f"{shown} line {self.line}: {self.reason}; the line was skipped "
            "(the file is left as it is)"
        )

    def to_dict(self) -> LogProblemDict:
        return {"file": str(self.path), "line": self.line, "reason": self.reason}


@dataclass
class LogRead:
    """The records of a log with their line numbers, and the lines that were skipped."""

    path: Path
    entries: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    problems: list[LogProblem] = field(default_factory=list)

    @property
    def records(self) -> list[dict[str, Any]]:
        return [record for _line, record in self.entries]

    def skip(self, line: int, reason: str) -> None:
        self.problems.append(LogProblem(self.path, line, reason))


def parse_log_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None) for a good line, (None, reason) for a bad one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__} where a record (an object) belongs"
    if has_escaped_surrogate(text):
        value = clean_json(value)
    return value, None


def read_log(path: Path | str) -> LogRead:
    """Read ``path`` line by line (see the module docstring). A missing file is empty."""
    path = Path(path)
    out = LogRead(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return out
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        record, reason = parse_log_line(raw.strip())
        if record is not None:
            out.entries.append((number, record))
        elif number == len(lines):  # no line end: the write was cut by a crash
            out.skip(number, "cut off (a crash while it was being written)")
        else:
            out.skip(number, reason or "unreadable")
    return out
