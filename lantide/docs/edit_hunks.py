"""Line hunks of a proposed edit, and applying some of them to a file that may have moved on.

A pending edit (:mod:`lantide.docs.pending_edits`) holds the text it was made against (its
*base*) and the hunks that turn the base into the proposal, computed with :mod:`difflib`
line by line (line endings kept, so applying every hunk gives the proposal byte for byte).
Each hunk is one changed run of lines, separated from the next by at least one unchanged
line, with a stable ``index`` (its order in the base).

:func:`merge` applies a chosen set of hunks to the text on disk now:

- when the file still holds the *expected* text (the base with the hunks accepted earlier),
  the hunks go in at their place;
- when the analyst (or another program) changed the file since, it is a three-way merge:
  the analyst's changes are the diff from the expected text to the file, and a hunk that
  overlaps or touches one of them is a conflict (left out, never forced in); the others are
  moved by the lines the analyst added or removed above them and applied. Nothing the
  analyst wrote is overwritten: a conflicting hunk is refused rather than merged.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

PENDING, ACCEPTED, REJECTED, SUPERSEDED = "pending", "accepted", "rejected", "superseded"
STATUSES = (PENDING, ACCEPTED, REJECTED, SUPERSEDED)
CONTEXT_LINES = 3  # unchanged lines shown around a hunk in a unified diff


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_lines(text: str) -> list[str]:
    """Lines with their endings (``"".join`` gives the text back)."""
    return text.splitlines(keepends=True)


@dataclass
class Hunk:
    """Lines ``old_start .. old_start + len(old)`` of the base become ``new``."""

    index: int
    old_start: int  # 0-based line of the base
    old: list[str]
    new: list[str]
    status: str = PENDING

    @property
    def old_end(self) -> int:
        return self.old_start + len(self.old)

    @property
    def delta(self) -> int:
        return len(self.new) - len(self.old)

    def to_dict(self) -> dict[str, object]:
        return {
            "index": self.index,
            "old_start": self.old_start,
            "old": list(self.old),
            "new": list(self.new),
            "status": self.status,
        }


def compute_hunks(base: str, proposal: str) -> list[Hunk]:
    """The changed runs of lines from ``base`` to ``proposal``, numbered from 0."""
    a, b = split_lines(base), split_lines(proposal)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            hunks.append(Hunk(len(hunks), i1, a[i1:i2], b[j1:j2]))
    return hunks


def apply_in_place(base_lines: Sequence[str], hunks: Iterable[Hunk]) -> list[str]:
    """``base_lines`` with ``hunks`` (disjoint ranges of the base) applied."""
    out: list[str] = []
    at = 0
    for hunk in sorted(hunks, key=lambda h: h.old_start):
        out.extend(base_lines[at : hunk.old_start])
        out.extend(hunk.new)
        at = hunk.old_end
    out.extend(base_lines[at:])
    return out


@dataclass
class MergeResult:
    text: str  # the file's text with the clean hunks applied
    applied: list[int] = field(default_factory=list)  # hunk indices
    conflicts: list[int] = field(default_factory=list)  # hunk indices left out


def _shifted(hunk: Hunk, earlier: Sequence[Hunk]) -> tuple[int, int]:
    """The hunk's old range in the expected text (base plus the ``earlier`` accepted hunks)."""
    shift = sum(h.delta for h in earlier if h.old_end <= hunk.old_start)
    return hunk.old_start + shift, hunk.old_end + shift


def merge(base: str, accepted: Sequence[Hunk], chosen: Sequence[Hunk], current: str) -> MergeResult:
    """Apply ``chosen`` to ``current``: the file on disk, which should hold ``base`` with the
    ``accepted`` hunks applied (the expected text); see the module's docstring."""
    base_lines = split_lines(base)
    if not chosen:
        return MergeResult(current)
    expected = apply_in_place(base_lines, accepted)
    current_lines = split_lines(current)
    if current_lines == expected:
        text = "".join(apply_in_place(base_lines, [*accepted, *chosen]))
        return MergeResult(text, sorted(h.index for h in chosen))
    # the analyst's changes since: ranges of the expected text, with their line deltas
    matcher = difflib.SequenceMatcher(None, expected, current_lines, autojunk=False)
    theirs = [
        (i1, i2, (j2 - j1) - (i2 - i1))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]
    result = MergeResult(current)
    placed: list[tuple[int, int, list[str]]] = []  # (start, end) in current, new lines
    for hunk in sorted(chosen, key=lambda h: h.old_start):
        start, end = _shifted(hunk, accepted)
        if any(start <= c_end and c_start <= end for c_start, c_end, _d in theirs):
            result.conflicts.append(hunk.index)
            continue
        moved = sum(d for c_start, c_end, d in theirs if c_end <= start)
        at, to = start + moved, end + moved
        if current_lines[at:to] != hunk.old:  # cannot happen for an untouched range: be sure
            result.conflicts.append(hunk.index)
            continue
        placed.append((at, to, hunk.new))
        result.applied.append(hunk.index)
    lines = list(current_lines)
    for at, to, new in sorted(placed, reverse=True):  # bottom up: earlier places stay put
        lines[at:to] = new
    result.text = "".join(lines)
    return result


def unified_diff(
    base: str, hunks: Sequence[Hunk], *, label: str = "", context: int = CONTEXT_LINES
) -> str:
    """A unified diff of ``hunks`` against ``base``, one ``@@`` block per hunk, each
    headed by its index (``@@ -12,2 +12,3 @@ hunk 1 (pending)``)."""
    base_lines = split_lines(base)
    out = [f"--- a/{label}\n", f"+++ b/{label}\n"] if label else []
    shift = 0
    for hunk in sorted(hunks, key=lambda h: h.old_start):
        before = base_lines[max(0, hunk.old_start - context) : hunk.old_start]
        after = base_lines[hunk.old_end : hunk.old_end + context]
        old_len = len(before) + len(hunk.old) + len(after)
        new_len = len(before) + len(hunk.new) + len(after)
        old_from = hunk.old_start - len(before) + (1 if old_len else 0)
        new_from = old_from + shift if new_len else old_from + shift - 1
        out.append(
            f"@@ -{old_from},{old_len} +{max(new_from, 0)},{new_len} @@ "
            f"hunk {hunk.index} ({hunk.status})\n"
        )
        out += [" " + _line(x) for x in before]
        out += ["-" + _line(x) for x in hunk.old]
        out += ["+" + _line(x) for x in hunk.new]
        out += [" " + _line(x) for x in after]
        shift += hunk.delta
    return "".join(out)


def _line(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def line_span(hunk: Hunk) -> str:
    """``"12-14"`` (1-based lines of the base the hunk replaces), ``"after 12"`` for an
    insertion."""
    if not hunk.old:
        return f"after {hunk.old_start}" if hunk.old_start else "at the start"
    if len(hunk.old) == 1:
        return str(hunk.old_start + 1)
    return f"{hunk.old_start + 1}-{hunk.old_end}"
