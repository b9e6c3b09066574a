"""Positions in the editor versus positions in the document on disk.

The docs layer counts Python ``str`` indices in the file's text as it is on disk; the
editor shows the same text with ``\\n`` line endings and counts UTF-16 code units (Qt's
``QTextCursor.position``). :class:`TextOffsets` converts between the two, so a selection
in the editor becomes the right ``create_annotation(start, end)`` range even in a file with
Windows line endings or characters outside the Basic Multilingual Plane (emoji).
"""

from __future__ import annotations

import bisect


def editor_form(text: str) -> str:
    """The text as the editor holds it: every line ending ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def newline_of(text: str) -> str:
    """The line ending a file uses (the first one found), ``\\n`` by default."""
    i = text.find("\n")
    if i > 0 and text[i - 1] == "\r":
        return "\r\n"
    if i < 0 and "\r" in text:
        return "\r"
    return "\n"


def disk_form(text: str, newline: str) -> str:
    """Editor text back in the file's line endings."""
    return text if newline == "\n" else text.replace("\n", newline)


class TextOffsets:
    """Converts between Qt positions in ``editor_text`` and indices in its disk form."""

    def __init__(self, editor_text: str, newline: str = "\n"):
        self.text = editor_text
        self.newline = newline
        self._extra = len(newline) - 1
        # Python indices of characters that take two UTF-16 units, and the Qt position
        # just after each of them.
        self._wide = [i for i, ch in enumerate(editor_text) if ord(ch) > 0xFFFF]
        self._wide_after_qt = [w + j + 2 for j, w in enumerate(self._wide)]
        # Disk index just after each line ending, when a line ending is wider than "\n".
        newlines = [i for i, ch in enumerate(editor_text) if ch == "\n"] if self._extra else []
        self._newline_after_disk = [
            n + self._extra * k + 1 + self._extra for k, n in enumerate(newlines)
        ]
        self._newlines = newlines

    # Qt position (UTF-16 units) <-> Python index in the editor text
    def qt_to_editor(self, qt_pos: int) -> int:
        return qt_pos - bisect.bisect_right(self._wide_after_qt, qt_pos)

    def editor_to_qt(self, index: int) -> int:
        return index + bisect.bisect_left(self._wide, index)

    # Python index in the editor text <-> Python index on disk
    def editor_to_disk(self, index: int) -> int:
        return index + self._extra * bisect.bisect_left(self._newlines, index)

    def disk_to_editor(self, index: int) -> int:
        return index - self._extra * bisect.bisect_right(self._newline_after_disk, index)

    # the two steps together
    def qt_to_disk(self, qt_pos: int) -> int:
        return self.editor_to_disk(self.qt_to_editor(qt_pos))

    def disk_to_qt(self, index: int) -> int:
        return self.editor_to_qt(self.disk_to_editor(index))
