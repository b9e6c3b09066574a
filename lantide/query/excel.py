"""Excel and OpenDocument workbooks as typed columns, one batch per sheet (python-calamine).

DuckDB's own Excel extension is not available offline, so a workbook is read with
calamine (Rust, fast) and each sheet handed to DuckDB as typed columns
(:mod:`lantide.query.typed_columns`). A value is read as the sheet holds it, or a reading
note says what changed:

- Where the table is (rows in use, blank rows inside it kept, a title above its header
  skipped with a note, columns named from the header or by their letters):
  :mod:`lantide.query.sheet_table`.
- A column's type is inferred from its non-empty cells: whole numbers -> BIGINT, numbers
  -> DOUBLE, true/false -> BOOLEAN, dates -> DATE, date-times -> TIMESTAMP, durations ->
  INTERVAL; a column with mixed kinds becomes text, each cell spelled as a sheet shows it
  in its General format (TRUE, 1.5, 2024-01-02 03:04:05, 255:10:10), never as Python
  does (True, 10 days, 15:10:10).
- **Error cells** (``#DIV/0!``, ``#N/A``, ``#VALUE!``; found by :mod:`lantide.query.sheet_scan`,
  as calamine reads them as empty) are NULL in their column, which keeps its type (a
  column of numbers stays numeric), and their text is in a companion column
  ``<column>__error`` placed after it (VARCHAR, NULL where the cell is no error); a note
  lists the cells. A sheet of error cells only is a table of those rows, not of none.
- Empty cells (and empty strings) are NULL. Empty sheets become empty tables.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from lantide.query.sheet_table import (
    Cell,
    SheetRow,
    cell_name,
    column_letters,
    find_table,
)
from lantide.query.typed_columns import ColumnBatch


def _header_names(row: SheetRow | None, width: int, first_column: int) -> list[str]:
    names = []
    for i in range(width):
        cell = row[i] if row is not None and i < len(row) else None
        text = str(cell).strip() if cell is not None else ""
        names.append(text or column_letters(first_column + i))
    return names


def _distinct(names: list[str]) -> list[str]:
    """A repeated name gets a suffix (``amount_2``); case does not count, as in DuckDB."""
    out, seen = [], set()
    for base in names:
        name, n = base, 1
        while name.casefold() in seen:
            n += 1
            name = f"{base}_{n}"
        seen.add(name.casefold())
        out.append(name)
    return out


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "int" if value.is_integer() and abs(value) < 2**53 else "float"
    if isinstance(value, datetime):
        return (
            "datetime"
            if (value.hour, value.minute, value.second, value.microsecond) != (0, 0, 0, 0)
            else "date"
        )
    if isinstance(value, date):
        return "date"
    if isinstance(value, time):
        return "time"
    if isinstance(value, timedelta):
        return "duration"
    return "text"


def _as_text(value: object) -> str:
    """A cell as a sheet shows it in the General format."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else f"{value:.15g}"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds" if not value.microsecond else "auto")
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):  # as [h]:mm:ss shows it
        seconds = value.total_seconds()
        sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
        hours, rest = divmod(seconds, 3600)
        minutes, secs = divmod(rest, 60)
        return f"{sign}{int(hours)}:{int(minutes):02d}:{secs:02.0f}"
    return str(value)


_TYPES = {
    "bool": "BOOLEAN",
    "int": "BIGINT",
    "float": "DOUBLE",
    "date": "DATE",
    "datetime": "TIMESTAMP",
    "time": "TIME",
    "duration": "INTERVAL",
    "null": "VARCHAR",
    "text": "VARCHAR",
}


def _column(values: SheetRow) -> tuple[str, list[Any]]:
    """A column's DuckDB type and its values converted to it."""
    clean = [None if v is None or (isinstance(v, str) and v == "") else v for v in values]
    kinds = {_kind(v) for v in clean if v is not None}
    if kinds == {"datetime", "date"}:
        kinds = {"datetime"}
    if kinds == {"int", "float"}:
        kinds = {"float"}
    kind = kinds.pop() if len(kinds) == 1 else ("text" if kinds else "null")
    if kind == "int":
        clean = [None if v is None else int(v) for v in clean]
    elif kind == "float":
        clean = [None if v is None else float(v) for v in clean]
    elif kind == "date":
        clean = [None if v is None else (v.date() if isinstance(v, datetime) else v) for v in clean]
    elif kind == "datetime":
        clean = [
            None
            if v is None
            else (v if isinstance(v, datetime) else datetime(v.year, v.month, v.day))
            for v in clean
        ]
    elif kind == "text":
        clean = [None if v is None else _as_text(v) for v in clean]
    return _TYPES[kind], clean


@dataclass
class SheetRead:
    """A sheet read: its typed columns and the notes of what was read differently."""

    columns: ColumnBatch
    notes: list[str] = field(default_factory=list)


_LISTED_CELLS = 8


def sheet_to_columns(
    rows: list[SheetRow], origin: Cell = (0, 0), errors: dict[Cell, str] | None = None
) -> SheetRead:
    """One sheet's cell rows (calamine ``to_python``, which starts at ``origin``, the
    first cell in use) as typed columns; ``errors``: the sheet's error cells."""
    errors = errors or {}
    table = find_table(rows, origin, errors)
    if not table.width:
        return SheetRead(ColumnBatch(["A"], ["VARCHAR"], [[]]), table.notes)
    base = _header_names(table.header, table.width, table.first_column)
    names, types, columns = [], [], []
    found: list[tuple[Cell, str]] = []
    companions = []
    for j in range(table.width):
        column = table.first_column + j
        texts = [errors.get((table.first_row + i, column)) for i in range(len(table.body))]
        values = [None if text else row[j] for row, text in zip(table.body, texts, strict=True)]
        type_name, clean = _column(values)
        names.append(base[j])
        types.append(type_name)
        columns.append(clean)
        if any(texts):
            names.append(f"{base[j]}__error")
            types.append("VARCHAR")
            columns.append(texts)
            companions.append(len(names) - 1)
            found += [((table.first_row + i, column), text) for i, text in enumerate(texts) if text]
    names = _distinct(names)
    notes = list(table.notes)
    if found:
        found.sort()
        cells = ", ".join(f"{cell_name(c)} ({text})" for c, text in found[:_LISTED_CELLS])
        more = f" and {len(found) - _LISTED_CELLS:,} more" if len(found) > _LISTED_CELLS else ""
        notes.append(
            f"{len(found):,} error cell(s) read as NULL, their text kept in "
            f"{', '.join(names[i] for i in companions)}: {cells}{more}"
        )
    return SheetRead(ColumnBatch(names, types, columns), notes)


def read_sheets(path: Path, sheets: list[str]) -> dict[str, SheetRead | BaseException]:
    """``{sheet: typed columns and notes, or the exception reading it raised}``, the
    workbook opened once (after :mod:`workbook_limits` checks). A panic of calamine (pyo3's
    PanicException is a BaseException) is returned like any other failure."""
    from python_calamine import CalamineWorkbook

    from lantide.query.sheet_scan import error_cells

    book = CalamineWorkbook.from_path(str(path))
    errors = error_cells(path, sheets)
    out: dict[str, SheetRead | BaseException] = {}
    try:
        for sheet in sheets:
            try:
                read = book.get_sheet_by_name(sheet)
                origin = read.start or (0, 0)
                got = sheet_to_columns(read.to_python(skip_empty_area=True), origin, errors[sheet])
                got.notes = [f"sheet {sheet!r}: {note}" for note in got.notes]  # its cells
                out[sheet] = got
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:
                out[sheet] = exc
    finally:
        with contextlib.suppress(Exception):
            book.close()
    return out
