"""Excel and OpenDocument workbooks as typed columns, one batch per sheet (python-calamine).

DuckDB's own Excel extension is not available offline, so a workbook is read with
calamine (Rust, fast) and each sheet handed to DuckDB as typed columns
(:mod:`lantide.query.typed_columns`).

- The first row is the header when all its cells are distinct non-empty texts, or when
  its filled cells are texts and the row below holds a number or a date; a blank name is
  the column's letter and a repeated one gets a suffix (``amount_2``). Otherwise columns
  are named like Excel's (A, B, C, ...).
- A column's type is inferred from its non-empty cells: whole numbers -> BIGINT, numbers
  -> DOUBLE, true/false -> BOOLEAN, dates -> DATE, date-times -> TIMESTAMP; a column
  with mixed kinds becomes text, each cell written as it shows in the sheet.
- Empty cells (and empty strings) are NULL. Empty sheets become empty tables.
"""

from __future__ import annotations

import contextlib
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from lantide.query.typed_columns import ColumnBatch

# A sheet's row as calamine reads it: str, int, float, bool, date, time, timedelta or None.
SheetRow = list[Any]


def excel_column_name(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = chr(65 + rem) + name
    return name


def _filled(cell: object) -> bool:
    return cell is not None and not (isinstance(cell, str) and not cell.strip())


def _is_header(rows: list[SheetRow]) -> bool:
    first = rows[0]
    cells = [c for c in first if _filled(c)]
    if not cells or not all(isinstance(c, str) for c in cells):
        return False
    if len(cells) == len(first) and len({c.strip().casefold() for c in cells}) == len(cells):
        return True  # every cell a distinct text
    # Blank or repeated names: still a header when the row below holds data that is not
    # text (a number, a date) - names above values, as analysts' sheets often have.
    return len(rows) > 1 and any(_filled(c) and not isinstance(c, str) for c in rows[1])


def _header_names(row: SheetRow, width: int) -> list[str]:
    names, seen = [], set()
    for i in range(width):
        base = str(row[i]).strip() if i < len(row) and str(row[i]).strip() else excel_column_name(i)
        name, n = base, 1
        while name.casefold() in seen:
            n += 1
            name = f"{base}_{n}"
        seen.add(name.casefold())
        names.append(name)
    return names


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
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
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


def sheet_to_columns(rows: list[SheetRow]) -> ColumnBatch:
    """One sheet's cell rows (calamine ``to_python``) as typed columns."""
    rows = [r for r in rows if any(c not in (None, "") for c in r)]
    width = max((len(r) for r in rows), default=0)
    if not rows:
        return ColumnBatch(["A"], ["VARCHAR"], [[]])
    header = _is_header(rows)
    names = _header_names(rows[0] if header else [], width)
    body = rows[1:] if header else rows
    typed = [_column([r[i] if i < len(r) else None for r in body]) for i in range(width)]
    return ColumnBatch(names, [t for t, _ in typed], [values for _, values in typed])


def read_sheets(path: Path, sheets: list[str]) -> dict[str, ColumnBatch | BaseException]:
    """``{sheet: typed columns, or the exception reading it raised}``, the workbook opened
    once (after :mod:`workbook_limits` checks). A panic of calamine (pyo3's
    PanicException is a BaseException) is returned like any other failure."""
    from python_calamine import CalamineWorkbook

    book = CalamineWorkbook.from_path(str(path))
    out: dict[str, ColumnBatch | BaseException] = {}
    try:
        for sheet in sheets:
            try:
                out[sheet] = sheet_to_columns(
                    book.get_sheet_by_name(sheet).to_python(skip_empty_area=True)
                )
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:
                out[sheet] = exc
    finally:
        with contextlib.suppress(Exception):
            book.close()
    return out
