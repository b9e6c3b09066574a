"""Where the table is on a sheet: the rows and columns in use, its header row, the title
rows above it.

A sheet as calamine reads it starts at its first cell in use (``origin``, e.g. C3), each
row a list of cells. The table is read as the sheet holds it:

- Rows between the first and the last row in use are kept, blank ones too (as rows of
  NULL): a gap in a table is part of what the sheet says. Blank rows after the last row
  in use are not in the table.
- Rows above the table that hold one text each (a title, "Report for Q1", a date line)
  are skipped when the first row with two or more cells below them is a header (names
  above values, :func:`is_header`); a reading note names the rows skipped and where the
  column names are. The table's columns are then those in use from its header down, so a
  header at C3 under a title in A1 names columns from C3 on.
- A column without a header name is named as the sheet names it: its letter (C, D, ...).

Error cells (``#DIV/0!``; :mod:`lantide.query.sheet_scan`) count as cells in use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SheetRow = list[Any]  # a sheet's row as calamine reads it: str, int, float, bool, date, ...
Cell = tuple[int, int]  # (row, column), 0-based, from A1

_TITLE_ROWS = 10  # rows above a header looked at for a title


def column_letters(index: int) -> str:
    """``0`` -> ``A``, ``27`` -> ``AB``."""
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = chr(65 + rem) + name
    return name


def cell_name(cell: Cell) -> str:
    return f"{column_letters(cell[1])}{cell[0] + 1}"


def filled(cell: object) -> bool:
    return cell is not None and not (isinstance(cell, str) and not cell.strip())


def is_header(rows: list[SheetRow]) -> bool:
    """Whether ``rows[0]`` names the columns: all its cells distinct non-empty texts, or its
    filled cells texts over a row that holds a number or a date."""
    first = rows[0]
    cells = [c for c in first if filled(c)]
    if not cells or not all(isinstance(c, str) for c in cells):
        return False
    if len(cells) == len(first) and len({c.strip().casefold() for c in cells}) == len(cells):
        return True  # every cell a distinct text
    # Blank or repeated names: still a header when the row below holds data that is not
    # text (a number, a date) - names above values, as analysts' sheets often have.
    return len(rows) > 1 and any(filled(c) and not isinstance(c, str) for c in rows[1])


@dataclass
class SheetTable:
    header: SheetRow | None  # the names row (None: no header row)
    body: list[SheetRow]  # the data rows, each ``width`` cells
    first_row: int  # the sheet row of body[0]
    first_column: int  # the sheet column of each row's first cell
    width: int
    notes: list[str] = field(default_factory=list)


def find_table(rows: list[SheetRow], origin: Cell, errors: dict[Cell, str]) -> SheetTable:
    """The table on a sheet read from ``origin`` (see the module's docstring)."""
    top, left = origin

    def in_use(i: int, row: SheetRow) -> list[int]:
        return [j for j, c in enumerate(row) if filled(c) or (top + i, left + j) in errors]

    used = [in_use(i, row) for i, row in enumerate(rows)]
    filled_rows = [i for i, cells in enumerate(used) if cells]
    if not filled_rows:
        return SheetTable(None, [], top, left, 0)
    first, last = filled_rows[0], filled_rows[-1]
    start, notes = first, []
    header_at = next((i for i in filled_rows[:_TITLE_ROWS] if len(used[i]) >= 2), None)
    if header_at is not None and header_at > first:
        titles = [i for i in range(first, header_at) if used[i]]
        below = _columns(rows, used, header_at, last)
        if all(isinstance(rows[i][used[i][0]], str) for i in titles) and is_header(
            _sliced(rows[header_at : last + 1], *below)
        ):
            start = header_at
            cells = ", ".join(cell_name((top + i, left + used[i][0])) for i in titles)
            notes.append(
                f"{_rows(top + titles[0], top + titles[-1])} ({cells}) skipped: taken for a "
                f"title above the table; the column names are on row {top + header_at + 1}"
            )
    lo, hi = _columns(rows, used, start, last)
    table = _sliced(rows[start : last + 1], lo, hi)
    header = is_header(table)
    return SheetTable(
        table[0] if header else None,
        table[1:] if header else table,
        top + start + (1 if header else 0),
        left + lo,
        hi - lo + 1,
        notes,
    )


def _columns(rows: list[SheetRow], used: list[list[int]], start: int, last: int) -> tuple[int, int]:
    """The first and last column in use in rows ``start``..``last``."""
    cells = [j for i in range(start, last + 1) for j in used[i]]
    return min(cells), max(cells)


def _sliced(rows: list[SheetRow], lo: int, hi: int) -> list[SheetRow]:
    width = hi - lo + 1
    return [(row[lo : hi + 1] + [None] * width)[:width] for row in rows]


def _rows(first: int, last: int) -> str:
    return f"row {first + 1}" if first == last else f"rows {first + 1}-{last + 1}"
