"""A CSV that parses to fewer rows than it has lines of data is said so, never silent.

A quote that opens a field and is closed lines later (or never: ``1;"pedro "pdet" ...``)
makes the reader take those lines for one value, or drop them; DuckDB can then read a
file of eleven lines as a table of no rows, without an error. After a text file is
registered its view is checked:

Both checks run only when a line near the top has an odd number of quotes (the only way
lines go missing; the usual file costs nothing):

- **No rows** from a file that has lines of data below its header: the file is refused
  (a problem line naming the lines and the first line with an odd number of quotes), so
  no empty table stands for it.
- **Fewer rows than records**: every row spans one line plus the line breaks inside its
  values, so rows + line breaks inside values < non-blank lines of data means lines were
  lost; a reading note gives the counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lantide.query.csv_dialect import first_lines
from lantide.query.errors import QueryError
from lantide.query.names import quote_ident
from lantide.query.text_encodings import SAMPLE_BYTES, head_bytes, open_text

if TYPE_CHECKING:
    from lantide.query.engine import Cursor

_SCAN_LINES = 2000
_COUNT_BYTES = 256 << 20  # lines are counted in files up to this size (text, inflated)
_CHUNK = 4 << 20


def first_odd_quote_line(path: Path, after: int = 0) -> int | None:
    """The first line (1-based, after the first ``after``) among the first lines of the
    file that holds an odd number of double quotes."""
    for number, line in enumerate(first_lines(path, _SCAN_LINES), start=1):
        if number > after and line.count('"') % 2:
            return number
    return None


def _data_lines(path: Path, prelude: int) -> int | None:
    """Non-blank lines below the ``prelude`` (skipped lines and the header), streamed; None
    for a file too large to count here."""
    newline = b"\r" if b"\n" not in head_bytes(path, SAMPLE_BYTES) else b"\n"
    import zlib

    count, carry, total = 0, b"", 0
    try:
        with open_text(path) as f:
            while chunk := f.read(_CHUNK):
                total += len(chunk)
                if total > _COUNT_BYTES:
                    return None
                lines = (carry + chunk).split(newline)
                carry = lines.pop()
                count += sum(1 for line in lines if line.strip())
    except (OSError, EOFError, zlib.error):  # a damaged .gz: the reader's error says it
        return None
    count += bool(carry.strip())
    return max(count - prelude, 0)


def _has_a_row(cur: Cursor, view: str) -> bool | None:
    """Whether the view reads at least one row; None when reading fails (a bad row: the
    query's own error names it)."""
    try:
        return bool(cur.execute(f"SELECT 1 FROM {quote_ident(view)} LIMIT 1").fetchall())
    except Exception:
        return None


def _rows_and_breaks(cur: Cursor, view: str) -> tuple[int, int] | None:
    """(rows, line breaks inside text values) of the view; None when reading fails."""
    try:
        texts = [
            r[0]
            for r in cur.execute(
                "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND "
                "table_name = ? AND data_type = 'VARCHAR'",
                [view],
            ).fetchall()
        ]
        breaks = " + ".join(
            f"coalesce(sum(length({quote_ident(c)}) - length(replace({quote_ident(c)}, "
            "chr(10), ''))), 0)"
            for c in texts
        )
        row = cur.execute(f"SELECT count(*), {breaks or '0'} FROM {quote_ident(view)}").fetchone()
    except Exception:
        return None
    return (int(row[0]), int(row[1])) if row is not None else None


def check(cur: Cursor, path: Path, view: str, prelude: int) -> str | None:
    """The note for a file read into fewer rows than it has lines of data, None when all
    are there; raises a QueryError (``DATA_FILE_NO_ROWS``) when it reads as no rows at all.
    ``prelude``: lines above the data (skipped and header)."""
    odd = first_odd_quote_line(path, prelude)
    has_a_row = _has_a_row(cur, view)
    if has_a_row is None or (has_a_row and odd is None):
        return None  # (no quote near the top that can join lines: all rows are there)
    lines = _data_lines(path, prelude)
    if not lines:
        return None
    where = f" (line {odd} has an odd number of quotes)" if odd is not None else ""
    if not has_a_row:
        raise QueryError(
            f"data/{path.name} reads as no rows, yet it has {lines:,} lines of data below "
            f"its header{where}; it was not read, so no empty table stands for it",
            code="DATA_FILE_NO_ROWS",
            hint="A quote that is never closed takes the lines after it; fix the quoting, "
            "or choose the header row with `lantide file header`.",
        )
    counted = _rows_and_breaks(cur, view)
    if counted is None:
        return None
    rows, breaks = counted
    lost = lines - rows - breaks
    if lost <= 0:
        return None
    return (
        f"{rows:,} rows read from {lines:,} lines of data: {lost:,} lines are in no row"
        f"{where}; quotes across line breaks may have joined or dropped them"
    )
