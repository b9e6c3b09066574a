"""Choosing DuckDB's CSV options where its own detection falls short.

**Encoding.** DuckDB reads UTF-8 and, when told, UTF-16 and Latin-1; which one a file gets
(and when it is refused instead) is :mod:`lantide.query.text_encodings`.

**Decimal commas.** In a ';'-separated file (as Excel writes CSV where the comma is the
decimal mark), a text column whose every value is a number written with a decimal comma
is read as numbers, with a note (:mod:`lantide.query.decimal_commas`).

**A CSV whose bad rows made DuckDB's sniffer give up on the delimiter.**

When rows with a wrong number of fields fall inside the sniffer's sample, DuckDB reads the
whole file as one column (``"id,name,amount"``): the table silently loses its shape. That
is the one case handled here: the view came out with a single column, yet its header line
holds a delimiter. The file is sniffed again with that delimiter, skipping the bad rows
only to learn the columns and types, and the view then reads it strictly with that
dialect, so a query over it fails on the first bad row with its line number ("CSV Error
on Line: 121 ... Expected Number of Columns: 3 Found: 2") instead of returning a wrong
table. DuckDB does all the CSV parsing; this module only chooses its options.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.query import text_encodings
from lantide.query.duckdb_types import is_fractional
from lantide.query.names import quote_ident, quote_literal

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Engine, Row
    from lantide.query.results import Column  # sniff_csv's Columns: {name, type} each

DELIMITERS = (",", ";", "\t", "|")
_HEADER_BYTES = 64 * 1024


def text_encoding(path: Path) -> str | None:
    """The ``encoding`` option ``read_csv`` needs for ``path``; None for UTF-8 (the default).
    Raises for a file that mixes UTF-8 with other bytes (:mod:`lantide.query.text_encodings`)."""
    return text_encodings.choice(path).encoding


def encoding_option(path: Path) -> str:
    """``, encoding = '...'`` for a ``read_csv`` call, or nothing."""
    encoding = text_encoding(path)
    return f", encoding = {quote_literal(encoding)}" if encoding else ""


def first_lines(path: Path, n: int) -> list[str]:
    head = text_encodings.head_bytes(path, _HEADER_BYTES)
    text = head.decode(text_encoding(path) or "utf-8", errors="replace")
    return text.splitlines()[:n]


def _columns_sql(columns: list[Column]) -> str:
    return (
        "{"
        + ", ".join(f"{quote_literal(c['name'])}: {quote_literal(c['type'])}" for c in columns)
        + "}"
    )


def _sniff(cur: Cursor, path: Path, extra: str = "") -> Row | None:
    """``sniff_csv``'s answer: (delimiter, skip, columns, has_header, quote, escape,
    date_format, timestamp_format, new_line, comment)."""
    return cur.execute(
        "SELECT Delimiter, SkipRows, Columns, HasHeader, Quote, Escape, DateFormat, "
        "TimestampFormat, NewLineDelimiter, Comment FROM "
        f"sniff_csv({quote_literal(str(path))}{extra}{encoding_option(path)})"
    ).fetchone()


def prelude_lines(cur: Cursor, path: Path, extra: str) -> int | None:
    """The lines above the data (skipped, and the header line) when read with the
    ``read_csv`` options ``extra``; None when the sniff fails."""
    try:
        sniffed = _sniff(cur, path, extra)
    except Exception:
        return None
    return None if sniffed is None else int(sniffed[1]) + bool(sniffed[3])


def fixed_options(fmt: str) -> str:
    """The ``read_csv`` options the file's kind fixes (a ``.tsv`` is tab-separated)."""
    return ", delim = '\t'" if fmt == "tsv" else ""


def sniffed_reader(cur: Cursor, path: Path, fmt: str = "csv") -> tuple[str, Row] | None:
    """A ``read_csv(...)`` that reads ``path`` as DuckDB's own detection does, with what it
    sniffed written out (dialect, header, skip, column names and types), and the sniff.

    A view over it binds without sniffing the file again, so counting its rows, listing its
    columns and every query of it skip the sniff (about as long as reading a small file).
    When the file changes it is registered, and so sniffed, anew. None when the sniff
    fails: the auto-detecting reader's own error then says what is wrong."""
    try:
        sniffed = _sniff(cur, path, fixed_options(fmt))
    except Exception:
        return None
    if sniffed is None:
        return None
    delim, skip, columns, has_header, quote, escape, date_format, ts_format, new_line, comment = (
        sniffed
    )
    if not columns:
        return None
    options = [
        quote_literal(str(path)),
        "auto_detect = false",
        f"delim = {quote_literal(delim)}",
        f"quote = {quote_literal(_sniffed_char(quote))}",
        f"escape = {quote_literal(_sniffed_char(escape))}",
        f"comment = {quote_literal(_sniffed_char(comment))}",
        f"skip = {int(skip)}",
        f"header = {'true' if has_header else 'false'}",
        f"columns = {_columns_sql(columns)}",
    ]
    if new_line and new_line != "(empty)":
        options.append(f"new_line = {quote_literal(new_line)}")
    for name, value in (("dateformat", date_format), ("timestampformat", ts_format)):
        if value:
            options.append(f"{name} = {quote_literal(value)}")
    return f"read_csv({', '.join(options)}{encoding_option(path)})", sniffed


def _sniffed_reader_of(path: Path, fmt: str, cur: Cursor) -> tuple[str, Row] | None:
    return sniffed_reader(cur, path, fmt)


class SniffAhead:
    """:func:`sniffed_reader` for some files on a thread of its own, while the caller
    registers the other files: DuckDB sniffs without holding the GIL, so on a first open
    the CSV files' sniffs overlap the workbook's reading and the other registrations.
    :meth:`take` waits for one file's answer (None: sniff again, or read it auto-detected,
    exactly as :func:`sniffed_reader` would have answered)."""

    def __init__(self, engine: Engine, files: list[tuple[Path, str]]) -> None:
        self._engine = engine
        self._files = files
        self._done = {str(path): threading.Event() for path, _ in files}
        self._answers: dict[str, tuple[str, Row] | None] = {}
        if files:
            threading.Thread(target=self._run, name="lantide-sniff-ahead", daemon=True).start()

    def _run(self) -> None:
        try:
            for path, fmt in self._files:
                try:
                    self._answers[str(path)] = self._engine.run(
                        functools.partial(_sniffed_reader_of, path, fmt), timeout=None
                    )
                except Exception:  # e.g. the engine closed: the registration tries itself
                    pass
                finally:
                    self._done[str(path)].set()
        finally:
            with contextlib.suppress(Exception):
                self._engine.release_cursor()

    def has(self, path: Path) -> bool:
        return str(path) in self._done

    def take(self, path: Path) -> tuple[str, Row] | None:
        """The sniff of ``path`` (one of the files given), once it is done."""
        self._done[str(path)].wait()
        return self._answers.pop(str(path), None)


def _sniffed_char(value: str | None) -> str:
    """``sniff_csv`` writes "(empty)" for none (no quote, no escape, no comment)."""
    return "" if value in (None, "(empty)") else value


def _strict_reader(cur: Cursor, path: Path, fixed: str, delim: str) -> str | None:
    """A strict ``read_csv(...)`` from line 1, with the delimiter found in the header line
    and the columns and types sniffed while skipping the bad rows; None if none fits."""
    header = first_lines(path, 1)
    candidates = [d for d in ((delim,) if fixed else DELIMITERS) if header and d in header[0]]
    best: Row | None = None
    for candidate in candidates:
        try:
            row = _sniff(
                cur, path, f", delim = {quote_literal(candidate)}, skip = 0, ignore_errors = true"
            )
        except Exception:  # this delimiter does not fit either
            continue
        if row and len(row[2]) > 1 and (best is None or len(row[2]) > len(best[2])):
            best = row
    if best is None:
        return None
    delim, _skip, columns, has_header, quote, escape, date_format, ts_format, *_ = best
    encoding = text_encoding(path)
    options = [
        quote_literal(str(path)),
        f"delim = {quote_literal(delim)}",
        "skip = 0",
        f"header = {'true' if has_header else 'false'}",
        "auto_detect = false",
        f"columns = {_columns_sql(columns)}",
    ]
    if encoding:
        options.append(f"encoding = {quote_literal(encoding)}")
    for name, value in (("quote", quote), ("escape", escape)):
        # "(empty)" written out: left unset, the reader would take '"' (a quote the sniff
        # found not in use, which can swallow the whole file into no rows)
        options.append(f"{name} = {quote_literal(_sniffed_char(value))}")
    for name, value in (("dateformat", date_format), ("timestampformat", ts_format)):
        if value:
            options.append(f"{name} = {quote_literal(value)}")
    return f"read_csv({', '.join(options)})"


def better_reader(
    cur: Cursor,
    path: Path,
    view: str,
    fmt: str = "csv",
    sniffed: Row | None = None,
    reader: str | None = None,
) -> tuple[str, str, list[str]] | None:
    """A ``SELECT`` that reads ``path`` better than the auto-detected ``view`` does, or
    None: strict, when bad rows fooled the sniffer into one column; with numbers for the
    columns of a ';'-separated file written with decimal commas ("1.234,50") throughout
    (:mod:`lantide.query.decimal_commas`). The usual file (several columns, no ';' in its
    header line) costs no second sniff. Returns the ``SELECT``, the ``sniff_csv`` options
    that describe how it reads and its reading notes. ``sniffed``: :func:`sniffed_reader`'s
    sniff of the file, if there is one (not redone); ``reader``: what ``view`` reads."""
    fixed = fixed_options(fmt)
    if sniffed is not None:  # the view reads with the sniffed columns
        width = len(sniffed[2])
    else:
        width = cur.execute(
            "SELECT count(*) FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = ?",
            [view],
        ).fetchall()[0][0]  # an aggregate: one row
    header = first_lines(path, 1)
    if width != 1 and not (header and ";" in header[0] and not fixed):
        return None
    try:
        if sniffed is None:
            sniffed = _sniff(cur, path, fixed)
    except Exception:
        return None  # the view's own error says more
    if sniffed is None:
        return None
    delim, _skip, columns, *_ = sniffed
    if len(columns) == 1 and (trailing := _trailing_delimiter_reader(cur, path, fixed, delim)):
        return trailing
    if len(columns) == 1:
        # A skip is left alone: a title line above the table is common, and bad rows in
        # the sample make the sniffer settle on one column rather than skip data lines.
        strict = _strict_reader(cur, path, fixed, delim)
        if strict is None:
            return None
        sniff_options = _STRICT_SNIFF.format(delim=quote_literal(_delimiter_of(strict)))
        return f"SELECT * FROM {strict}", sniff_options, []
    if delim == ";" and not any(is_fractional(c["type"]) for c in columns):
        # (a column with decimal points says the file writes numbers so: "3,4" is text)
        from lantide.query import decimal_commas

        text = [c["name"] for c in columns if c["type"] == "VARCHAR"]
        found = decimal_commas.comma_columns(reader, text) if reader else []
        if reader and found:
            notes = [decimal_commas.note(c) for c in found]
            return decimal_commas.numbers_select(reader, found), fixed, notes
    return None


def _trailing_delimiter_reader(
    cur: Cursor, path: Path, fixed: str, delim: str
) -> tuple[str, str, list[str]] | None:
    """For a header line that ends with a delimiter its data lines lack ("id,name," over
    "1,a", common in exports): the file as DuckDB reads it with ``null_padding``, its last
    column unnamed and empty, when every data line has exactly one field fewer than the
    header (checked by reading them strictly: no other short line is padded silently)."""
    header = first_lines(path, 1)
    ends = [d for d in ((delim,) if fixed else DELIMITERS) if header and header[0].endswith(d)]
    if len(ends) != 1:
        return None
    import duckdb

    # A scratch connection: a failed read must not end the registration's transaction.
    with duckdb.connect(":memory:") as scratch:
        return _padded_reader(scratch, path, ends[0])


def _padded_reader(cur: Cursor, path: Path, delim: str) -> tuple[str, str, list[str]] | None:
    padded = f", delim = {quote_literal(delim)}, null_padding = true"
    try:
        row = _sniff(cur, path, padded)
    except Exception:
        return None
    if row is None or row[1] or not row[3] or len(row[2]) < 2:
        return None  # a title skipped, no header: not this case
    _delim, _skip, columns, _header, quote, escape, date_format, ts_format, *_ = row
    options = [
        quote_literal(str(path)),
        f"delim = {quote_literal(delim)}",
        f"quote = {quote_literal(_sniffed_char(quote))}",
        f"escape = {quote_literal(_sniffed_char(escape))}",
        "skip = 0",
        "header = true",
        "auto_detect = false",
    ]
    for name, value in (("dateformat", date_format), ("timestampformat", ts_format)):
        if value:
            options.append(f"{name} = {quote_literal(value)}")
    options.append(encoding_option(path).removeprefix(", ") or "encoding = 'utf-8'")
    named: list[Column] = [{"name": c["name"], "type": "VARCHAR"} for c in columns[:-1]]
    try:  # every data line one field short: the strict read of one column fewer passes
        cur.execute(
            f"SELECT count(*) FROM read_csv({', '.join(options)}, columns = {_columns_sql(named)})"
        ).fetchall()
    except Exception:
        return None
    reader = (
        f"read_csv({', '.join(options)}, null_padding = true, columns = {_columns_sql(columns)})"
    )
    note = (
        f"line 1, the header, ends with {delim!r} and the data lines do not: read as "
        f"DuckDB reads it with null_padding, the last column {columns[-1]['name']} is empty"
    )
    return f"SELECT * FROM {reader}", padded, [note]


_STRICT_SNIFF = ", delim = {delim}, skip = 0, ignore_errors = true"


def _delimiter_of(reader: str) -> str:
    start = reader.index("delim = '") + len("delim = '")
    return reader[start : reader.index("'", start)].replace("''", "'")


def improve_view(
    cur: Cursor,
    path: Path,
    view: str,
    fmt: str = "csv",
    sniffed: Row | None = None,
    reader: str | None = None,
) -> tuple[str, list[str]]:
    """Replace ``view`` with :func:`better_reader`'s ``SELECT`` when there is one. Returns
    the ``sniff_csv`` options that describe how the view reads the file, and the notes of
    what it reads differently. ``reader``: the ``read_csv(...)`` the view reads now."""
    better = better_reader(cur, path, view, fmt, sniffed, reader)
    if better is None:
        return fixed_options(fmt), []
    select, sniff_options, notes = better
    cur.execute(f"CREATE OR REPLACE VIEW {quote_ident(view)} AS {select}")
    return sniff_options, notes
