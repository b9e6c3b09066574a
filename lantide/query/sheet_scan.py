"""What calamine's values do not say about a sheet: which cells are errors, and how much of
an OpenDocument sheet is in use.

calamine reads an error cell (``#DIV/0!``, ``#N/A``, ``#VALUE!``) as an empty string, the
same as an empty cell, so a column 10, #DIV/0!, 20 would sum to 30 without a word. The
sheet's XML says which cells are errors:

- ``.xlsx``/``.xlsm``: a cell ``<c r="A3" t="e">...<v>#DIV/0!</v></c>``; the sheet's part
  is streamed and only chunks that hold ``t="e"`` are searched.
- ``.ods``: a cell with ``calcext:value-type="error"`` (LibreOffice), its text the error;
  its position counts the repeated rows and cells before it.

``.ods`` files saved by LibreOffice end each sheet with filler: a row repeated to the
sheet's last row (1,048,576) and cells repeated to its last column, all empty. The range
in use (the last row and column holding a value) is what the size guard counts
(:mod:`lantide.query.workbook_limits`); a value repeated over a large grid still counts
whole. ``.xls`` and ``.xlsb`` are not looked into (their error cells read as empty).

Cells are ``(row, column)``, 0-based, counted from A1.
"""

from __future__ import annotations

import functools
import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from lantide.query.file_stamps import stamp

Cell = tuple[int, int]

_CHUNK = 4 << 20
_TAIL_CAP = 1 << 20
_XLSX_ERROR_CELL = rb'<(?:[A-Za-z_][\w.-]*:)?c\s[^>]*?\bt="e"[^>]*>(.*?)</(?:[A-Za-z_][\w.-]*:)?c>'
_REF = rb'\br="([A-Z]{1,3})([0-9]{1,7})"'
_TAG = rb"<(?:[A-Za-z_][\w.-]*:)?c\s[^>]*>"
_VALUE = rb"<(?:[A-Za-z_][\w.-]*:)?v>([^<]*)</"

_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_CALCEXT = "{urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0}"
_TEXT_P = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}p"


def _column_index(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n - 1


@functools.cache
def _patterns() -> tuple[re.Pattern[bytes], ...]:
    """Compiled on first use: most workbooks hold no error cell, and many sessions none."""
    return (
        re.compile(_XLSX_ERROR_CELL, re.S),
        re.compile(_REF),
        re.compile(_TAG),
        re.compile(_VALUE),
    )


def xlsx_error_cells(zf: zipfile.ZipFile, entry: str) -> dict[Cell, str]:
    """``{(row, column): "#DIV/0!"}`` of the sheet part ``entry``."""
    found: dict[Cell, str] = {}
    tail = b""
    with zf.open(entry) as f:
        while True:
            chunk = f.read(_CHUNK)
            text = tail + chunk
            if b't="e"' in text:
                error_cell, ref_of, tag_of, value_of = _patterns()
                end = 0
                for match in error_cell.finditer(text):
                    tag = tag_of.match(text, match.start())
                    ref = ref_of.search(tag.group(0)) if tag else None
                    value = value_of.search(match.group(1))
                    if ref is not None:
                        cell = (int(ref.group(2)) - 1, _column_index(ref.group(1)))
                        found[cell] = (value.group(1) if value else b"#ERROR").decode(
                            "utf-8", "replace"
                        )
                    end = match.end()
                text = text[end:]
            if not chunk:
                break
            # The last cell may be cut by the chunk's end: looked at again, whole.
            start = max(text.rfind(b"<c "), text.rfind(b"<", 0, max(text.rfind(b":c "), 0)))
            tail = text[start:] if start >= 0 and len(text) - start <= _TAIL_CAP else b""
    return found


def error_cells(path: Path, sheets: list[str]) -> dict[str, dict[Cell, str]]:
    """``{sheet: its error cells}`` (none for a kind of workbook not looked into); the
    workbook opened once."""
    suffix = path.suffix.lower()
    if suffix == ".ods":
        found = ods_sheets(path)
        return {s: found[s].errors if s in found else {} for s in sheets}
    if suffix not in (".xlsx", ".xlsm"):
        return {s: {} for s in sheets}
    from lantide.query.workbook_limits import sheet_parts

    with zipfile.ZipFile(path) as zf:
        parts = sheet_parts(zf, path)
        return {s: xlsx_error_cells(zf, parts[s]) if s in parts else {} for s in sheets}


@dataclass
class OdsSheet:
    rows: int = 0  # rows in use: the last row holding a value, counted from row 1
    columns: int = 0  # columns in use: the last column holding a value
    # error cells as written, repeats unexpanded: (row, rows, column, columns, text); a
    # repeated error is expanded only when the sheet is read, after the size guard
    error_spans: list[tuple[int, int, int, int, str]] = field(default_factory=list)

    @property
    def errors(self) -> dict[Cell, str]:
        return {
            (r, c): text
            for row, rows, column, columns, text in self.error_spans
            for r in range(row, row + rows)
            for c in range(column, column + columns)
        }


def ods_sheets(path: Path) -> dict[str, OdsSheet]:
    """``{sheet name: its range in use and error cells}`` in workbook order, read once per
    version of the file. Raises what ``zipfile`` and ElementTree raise for a damaged one."""
    st = os.stat(path)
    return _ods_sheets(str(path), *stamp(st))


@functools.lru_cache(maxsize=16)
def _ods_sheets(path_text: str, _size: int, _changed_ns: int) -> dict[str, OdsSheet]:
    from xml.etree import ElementTree

    out: dict[str, OdsSheet] = {}
    sheet = OdsSheet()
    row = 0
    with zipfile.ZipFile(path_text) as zf, zf.open("content.xml") as f:
        for event, elem in ElementTree.iterparse(f, events=("start", "end")):
            tag = elem.tag
            if event == "start":
                if tag == f"{_TABLE}table":
                    sheet, row = OdsSheet(), 0
                continue
            if tag == f"{_TABLE}table-row":
                rows = int(elem.get(f"{_TABLE}number-rows-repeated", "1"))
                column = 0
                for cell in elem:
                    repeat = int(cell.get(f"{_TABLE}number-columns-repeated", "1"))
                    kind = cell.get(f"{_OFFICE}value-type")
                    if kind is not None or len(cell):  # a value, or text
                        sheet.columns = max(sheet.columns, column + repeat)
                        sheet.rows = row + rows
                    if cell.get(f"{_CALCEXT}value-type") == "error":
                        text = "".join(p.text or "" for p in cell.iter(_TEXT_P)) or "#ERROR"
                        sheet.error_spans.append((row, rows, column, repeat, text))
                    column += repeat
                row += rows
                elem.clear()
            elif tag == f"{_TABLE}table":
                out[elem.get(f"{_TABLE}name") or f"Sheet{len(out) + 1}"] = sheet
                elem.clear()
    return out
