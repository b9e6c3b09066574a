"""What the CSV reader skipped or read differently from what the file says, in words.

DuckDB's sniffer decides alone whether a file has a header line, how many lines above the
table to skip (a title), and which quote character is in use. Each such decision that
departs from the file as written is reported as a *note*: the listing of tables shows it
with the file, and every query result that reads the file carries it as a warning, with
the lines and the reason. Examples (``a;b`` over ``"unterminated,1``)::

    line 1 skipped: taken for a title above the table
    no header line found: line 2 is read as data, columns named column0, column1
    quotes are read as text: the " on line 2 does not start a quoted field

When the analyst chose the header row (:mod:`lantide.query.file_rules`), the note says so
instead. Notes cost one ``sniff_csv`` when the file is registered, never per query.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lantide.query.csv_dialect import encoding_option, first_lines
from lantide.query.names import quote_literal

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Row
    from lantide.query.results import Column  # sniff_csv's Columns: {name, type} each

HOW_TO_CHOOSE = (
    "choose the header row with `lantide file header WORKSPACE FILE LINE` (0: no header "
    "line), the encoding with `lantide file encoding WORKSPACE FILE ENC|auto`"
)
_SCAN_LINES = 2000


def _lines(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _names(columns: list[Column]) -> str:
    names = [c["name"] for c in columns]
    return ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")


def csv_notes(
    cur: Cursor,
    path: Path,
    extra: str,
    header_row: int | None,
    view: str,
    sniffed: Row | None = None,
) -> list[str]:
    """The notes for ``path`` read by ``view`` with ``read_csv`` options ``extra`` (e.g.
    ``", delim = '\\t'"``); ``header_row`` is the analyst's rule, if any. ``sniffed``: the
    registration's sniff with those options (``csv_dialect.sniffed_reader``), not redone."""
    view_columns = [c["name"] for c in sniffed[2]] if sniffed is not None else None
    if header_row is None and not _worth_a_sniff(cur, path, view, view_columns):
        return []
    if sniffed is not None:
        _delim, skip, columns, has_header, quote, *_ = sniffed
    else:
        try:
            answer = cur.execute(
                "SELECT SkipRows, HasHeader, Quote, Columns FROM "
                f"sniff_csv({quote_literal(str(path))}{extra}{encoding_option(path)})"
            ).fetchone()
        except Exception:
            return []  # the view's own error (or the first query's) says more
        if answer is None:  # sniff_csv answers one row; none is nothing to note
            return []
        skip, has_header, quote, columns = answer
    notes = []
    if header_row == 0:
        notes.append(
            "no header line, as set for this file: every line is data, columns "
            f"named {_names(columns)}"
        )
    elif header_row is not None:
        notes.append(
            f"the column names are on line {header_row}, as set for this file"
            + (f"; {_lines(1, header_row - 1)} skipped" if header_row > 1 else "")
        )
    else:
        if skip:
            notes.append(f"{_lines(1, skip)} skipped: taken for a title above the table")
        if not has_header:
            notes.append(
                f"no header line found: line {skip + 1} is read as data, columns "
                f"named {_names(columns)}"
            )
    quote_line = _first_quote_line(path, skip) if quote != '"' else None
    if quote_line is not None:
        notes.append(
            f'quotes are read as text: the " on line {quote_line} does not start a quoted field'
        )
    return notes


def _worth_a_sniff(
    cur: Cursor, path: Path, view: str, view_columns: list[str] | None = None
) -> bool:
    """Whether the sniffer may have departed from the file (so a ``sniff_csv``, about as
    long as registering, is worth it): the view's columns are not all named on line 1
    (no header, or a title skipped), or a line near the top has an odd number of quotes
    (the sniffer then reads quotes as text). The usual file costs no second sniff.
    ``view_columns``: the view's column names when known (the sniffed ones)."""
    columns = view_columns
    if columns is None:
        columns = [
            r[0]
            for r in cur.execute(
                "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND "
                "table_name = ? ORDER BY column_index",
                [view],
            ).fetchall()
        ]
    head = first_lines(path, _SCAN_LINES)
    if not head or not columns:
        return False
    first = head[0].lstrip("\ufeff")
    if any(name not in first for name in columns):
        return True
    return any(line.count('"') % 2 for line in head)


def _first_quote_line(path: Path, skip: int) -> int | None:
    """The first line (1-based) after the skipped ones that holds a double quote."""
    for number, line in enumerate(first_lines(path, _SCAN_LINES), start=1):
        if number > skip and '"' in line:
            return number
    return None
