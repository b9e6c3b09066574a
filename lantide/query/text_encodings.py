"""Which text encoding a CSV/TSV file is read with, and what is said about it.

A value is read as the file holds it, or the read says what it changed. So:

- A file that is valid UTF-8 is read as UTF-8 (DuckDB's default); one that starts with a
  UTF-16 byte-order mark as UTF-16 (the mark says so).
- A file with bytes that are not UTF-8 while other bytes *are* UTF-8 sequences ("José" in
  UTF-8 on one line, "Ren\\xe9" in Latin-1 on another) is refused: read as Latin-1, every
  "é" written as UTF-8 would turn into "Ã©" (mojibake) without a word. The refusal names
  the line and byte offset of the first bad byte and how to choose the encoding.
- A file that is not UTF-8 anywhere (no multi-byte UTF-8 sequence at all, an Excel export
  on a Western-European Windows, typically) is read as Latin-1, and a reading note says so
  with the first byte that is not UTF-8.
- The analyst's choice (``lantide file encoding WS FILE ENC|auto``, kept in
  ``.lantide/data_files.json`` beside the header rule) overrules all this, with a note.

The reader functions of :mod:`lantide.query.csv_dialect` take only a path (they also run
on the sniff-ahead thread), so the analyst's choices are handed over per path with
:func:`lantide.query.file_rules.set_chosen_encodings` (``set_chosen`` here), by the data
sources when they load the rules; this module loads only when a text file is read.
"""

from __future__ import annotations

import codecs
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from lantide.query.errors import QueryError

# kept with the rules (the data sources hand them over on every refresh, CSV files or not)
from lantide.query.file_rules import chosen_encoding as chosen
from lantide.query.file_rules import set_chosen_encodings as set_chosen  # noqa: F401
from lantide.query.file_stamps import stamp

if TYPE_CHECKING:
    from gzip import GzipFile

ENCODINGS = ("utf-8", "utf-16", "latin-1")  # what DuckDB's CSV reader knows without extensions
_ALIASES = {
    "utf8": "utf-8",
    "utf-8": "utf-8",
    "utf16": "utf-16",
    "utf-16": "utf-16",
    "latin-1": "latin-1",
    "latin1": "latin-1",
    "iso-8859-1": "latin-1",
    "iso8859-1": "latin-1",
}
_NAMES = {"utf-8": "UTF-8", "utf-16": "UTF-16", "latin-1": "Latin-1"}
SAMPLE_BYTES = 1 << 20  # what decides a UTF-8 file (a later bad byte fails the query)
_CHUNK = 4 << 20
# A well-formed multi-byte UTF-8 sequence (RFC 3629): in a file that also holds bytes that
# are not UTF-8, its presence means the file mixes encodings.
_UTF8_SEQUENCE = (
    rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}"
    rb"|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)
# Bytes 0x80-0x9F: control characters in Latin-1, which DuckDB's Latin-1 reader refuses;
# Windows-1252 puts the euro sign and curly quotes there.
_C1_CONTROL = rb"[\x80-\x9f]"


def normalized(name: str) -> str | None:
    """``name`` as one of :data:`ENCODINGS` (``latin1`` -> ``latin-1``), None if unknown."""
    return _ALIASES.get(name.strip().lower().replace("_", "-"))


@dataclass(frozen=True)
class Choice:
    """The ``encoding`` option for ``read_csv`` (None: UTF-8, the default) and the reading
    note that says what was chosen and why (None when the file is read as it says)."""

    encoding: str | None
    note: str | None = None


def open_text(path: Path) -> BinaryIO | GzipFile:
    """The file's bytes as DuckDB decodes them (a ``.gz`` file inflated)."""
    if path.name.lower().endswith(".gz"):
        import gzip

        return gzip.open(path, "rb")
    return open(path, "rb")


def head_bytes(path: Path, limit: int) -> bytes:
    """The first ``limit`` bytes of the text; b"" for a compressed file that does not
    inflate (DuckDB's own error then says what is wrong)."""
    import zlib

    try:
        with open_text(path) as f:
            return f.read(limit)
    except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
        return b""


def choice(path: Path) -> Choice:
    """How ``path`` is read; raises a QueryError (``DATA_FILE_ENCODING``) for a file that
    mixes UTF-8 with other bytes. Decided once per version of the file and choice."""
    st = os.stat(path)
    return _choice_of(str(path), *stamp(st), chosen(path))


@functools.lru_cache(maxsize=256)
def _choice_of(path_text: str, _size: int, _changed_ns: int, rule: str | None) -> Choice:
    path = Path(path_text)
    if rule is not None:
        note = f"read as {_NAMES[rule]}, as set for this file"
        return Choice(None if rule == "utf-8" else rule, note)
    head = head_bytes(path, SAMPLE_BYTES)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return Choice("utf-16")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # a cut sequence is fine
        return Choice(None)
    except UnicodeDecodeError as exc:
        offset, bad = exc.start, head[exc.start]
    line = head.count(b"\n", 0, offset) + 1
    where = f"0x{bad:02X} on line {line}, byte offset {offset}"
    if _find(path, head, _UTF8_SEQUENCE) is not None:
        raise QueryError(
            f"{_rel(path)} is not valid UTF-8: the byte {where}, is not UTF-8 while other "
            "lines are UTF-8 text; it was not read, so no value is misread. Choose its "
            f"encoding with `lantide file encoding WORKSPACE {_rel(path)} latin-1` (or "
            "utf-8, utf-16), or fix the byte",
            code="DATA_FILE_ENCODING",
            hint=f"Choose the encoding with `lantide file encoding WORKSPACE {_rel(path)} "
            "latin-1` (utf-8, utf-16; auto: detect again), or fix the file.",
        )
    c1 = _find(path, head, _C1_CONTROL)
    if c1 is not None:
        byte = head_bytes(path, c1[0] + 1)[-1]
        raise QueryError(
            f"{_rel(path)} is neither UTF-8 nor Latin-1 text: the byte 0x{byte:02X} on line "
            f"{c1[1]}, byte offset {c1[0]}, is neither (Windows-1252 writes € and curly "
            "quotes so, and a binary file has such bytes); it was not read",
            code="DATA_FILE_ENCODING",
            hint="Save the file as UTF-8 (Excel: CSV UTF-8), or fix the byte.",
        )
    return Choice(
        "latin-1",
        f"read as Latin-1: the file is not UTF-8 anywhere (first non-UTF-8 byte: {where}); "
        f"choose another with `lantide file encoding WORKSPACE {_rel(path)} ENC`",
    )


def _find(path: Path, head: bytes, regex: bytes) -> tuple[int, int] | None:
    """(byte offset, line) of the first match of ``regex`` in the text; past the sample
    the file is streamed (this runs only for files that are not UTF-8, which are rare, so
    the pattern is compiled then, not when the module is imported)."""
    pattern = re.compile(regex)
    found = pattern.search(head)
    if found is not None:
        return found.start(), head.count(b"\n", 0, found.start()) + 1
    if len(head) < SAMPLE_BYTES:
        return None
    import zlib

    tail = head[-3:]  # a sequence cut at a chunk's end is looked at whole
    offset, lines = SAMPLE_BYTES - len(tail), head.count(b"\n", 0, SAMPLE_BYTES - len(tail))
    try:
        with open_text(path) as f:
            f.seek(SAMPLE_BYTES)
            while chunk := f.read(_CHUNK):
                text = tail + chunk
                found = pattern.search(text)
                if found is not None:
                    return offset + found.start(), lines + text.count(b"\n", 0, found.start()) + 1
                offset += len(text) - 3
                lines += text.count(b"\n", 0, len(text) - 3)
                tail = text[-3:]
    except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
        pass  # a damaged end: DuckDB's own error says so when the file is read
    return None


def _rel(path: Path) -> str:
    return f"data/{path.name}"
