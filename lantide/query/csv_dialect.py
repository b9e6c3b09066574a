"""A CSV whose bad rows made DuckDB's sniffer give up on the delimiter.

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

from pathlib import Path

from lantide.query.names import quote_ident, quote_literal

DELIMITERS = (",", ";", "\t", "|")
_HEADER_BYTES = 64 * 1024


def _header_line(path: Path) -> str:
    with open(path, "rb") as f:
        head = f.read(_HEADER_BYTES)
    return head.split(b"\n", 1)[0].decode("utf-8", errors="replace")


def _columns_sql(columns: list[dict]) -> str:
    return "{" + ", ".join(f"{quote_literal(c['name'])}: {quote_literal(c['type'])}"
                           for c in columns) + "}"


def strict_reader(cur, path: Path, view: str) -> str | None:
    """A stricter ``read_csv(...)`` for ``path`` when its view ``view`` (just created with
    auto-detection) collapsed to one column; None when the view is fine as it is."""
    count = cur.execute("SELECT count(*) FROM duckdb_columns() WHERE schema_name = 'main' "
                        "AND table_name = ?", [view]).fetchone()[0]
    if count != 1:
        return None
    header = _header_line(path)
    best = None
    for delim in (d for d in DELIMITERS if d in header):
        try:
            row = cur.execute(
                "SELECT Columns, HasHeader, Quote, Escape, DateFormat, TimestampFormat "
                f"FROM sniff_csv({quote_literal(str(path))}, delim = {quote_literal(delim)}, "
                "ignore_errors = true)").fetchone()
        except Exception:  # this delimiter does not fit either
            continue
        if row and len(row[0]) > 1 and (best is None or len(row[0]) > len(best[1][0])):
            best = (delim, row)
    if best is None:
        return None
    delim, (columns, has_header, quote, escape, date_format, ts_format) = best
    options = [quote_literal(str(path)), f"delim = {quote_literal(delim)}",
               f"header = {'true' if has_header else 'false'}", "auto_detect = false",
               f"columns = {_columns_sql(columns)}"]
    for name, value in (("quote", quote), ("escape", escape)):
        if value and value != "(empty)":
            options.append(f"{name} = {quote_literal(value)}")
    for name, value in (("dateformat", date_format), ("timestampformat", ts_format)):
        if value:
            options.append(f"{name} = {quote_literal(value)}")
    return f"read_csv({', '.join(options)})"


def recreate_view_if_collapsed(cur, path: Path, view: str) -> bool:
    """Replace ``view`` with the strict reader when it collapsed; whether it did."""
    reader = strict_reader(cur, path, view)
    if reader is None:
        return False
    cur.execute(f"CREATE OR REPLACE VIEW {quote_ident(view)} AS SELECT * FROM {reader}")
    return True
