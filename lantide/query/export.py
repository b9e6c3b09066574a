"""Exporting a table to CSV, Parquet or XLSX, streamed.

Rows are fetched from the engine in batches of ``BATCH_ROWS``, so an export of any size
holds one batch in Python (no Arrow: the installed build ships without pyarrow). The
engine may not write outside the workspace's data/ (its sandbox, frozen with
``lock_configuration``), so CSV is written by Python's csv module and Parquet by a scratch
in-memory DuckDB that receives the batches as typed columns and ``COPY``s them. The file
is written next to its target under a temporary name and renamed into place at the end
(the atomic-write pattern of :mod:`lantide.workspace.atomic`, streamed): a failed export
leaves any existing file untouched. XLSX is written with xlsxwriter in
constant-memory mode and is limited to Excel's 1,048,575 data rows.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from lantide.query.errors import QueryError
from lantide.workspace.atomic import TEMP_SUFFIX, own_writes

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Engine, Row


class Exported(TypedDict):
    """What ``export_table`` wrote."""

    relation: str
    path: str
    format: str  # csv, parquet, xlsx
    row_count: int
    bytes: int


BATCH_ROWS = 100_000
XLSX_MAX_ROWS = 1_048_575
FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx"}


def _format_of(path: Path, fmt: str | None) -> str:
    if fmt:
        fmt = fmt.lower().lstrip(".")
        if fmt in ("csv", "parquet", "xlsx"):
            return fmt
    elif path.suffix.lower() in FORMATS:
        return FORMATS[path.suffix.lower()]
    raise QueryError(
        f"cannot tell the export format of {path.name!r}",
        code="EXPORT_FORMAT",
        hint="Use a .csv, .parquet or .xlsx file name, or pass the format.",
    )


def export_relation(
    engine: Engine,
    relation: str,
    path: Path,
    fmt: str | None = None,
    *,
    order_by: list[tuple[str, str]] | None = None,
    has_rowid: bool = True,
) -> Exported:
    """Write ``relation`` to ``path``; ``order_by`` (checked pairs, see
    :mod:`lantide.query.ordering`) writes the rows in the order the grid shows them."""
    from lantide.query.ordering import order_by_clause

    path = Path(path).expanduser().resolve()
    fmt = _format_of(path, fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)

    def work(cur: Cursor) -> int:
        if fmt == "xlsx":
            total = int(cur.execute(f"SELECT count(*) FROM {relation}").fetchall()[0][0])
            if total > XLSX_MAX_ROWS:
                raise QueryError(
                    f"{relation} has {total:,} rows; an XLSX sheet holds {XLSX_MAX_ROWS:,}",
                    code="EXPORT_TOO_LARGE",
                    hint="Export to CSV or Parquet, or filter the table first.",
                )
        order = ""
        if order_by:
            columns = [d[0] for d in cur.execute(f"SELECT * FROM {relation} LIMIT 0").description]
            order = order_by_clause(order_by, columns, relation, has_rowid=has_rowid)
        query = f"SELECT * FROM {relation} {order}"
        return {"csv": _write_csv, "parquet": _write_parquet, "xlsx": _write_xlsx}[fmt](
            cur, query, tmp
        )

    try:
        rows = engine.run(work, timeout=None)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    own_writes.record(path)
    return {
        "relation": relation,
        "path": str(path),
        "format": fmt,
        "row_count": rows,
        "bytes": path.stat().st_size,
    }


def _batches(cur: Cursor, query: str) -> tuple[list[str], Iterator[list[Row]]]:
    """The column names, and lists of at most ``BATCH_ROWS`` row tuples."""
    cur.execute(query)
    names = [d[0] for d in cur.description]

    def rows() -> Iterator[list[Row]]:
        while batch := cur.fetchmany(BATCH_ROWS):
            yield batch

    return names, rows()


def _csv_text(value: object) -> object:
    """A cell as DuckDB's own CSV writes it (true/false, ISO dates, hex-escaped bytes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in value)
    return value


def _write_csv(cur: Cursor, query: str, tmp: Path) -> int:
    import csv

    names, batches = _batches(cur, query)
    rows = 0
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(names)
        for batch in batches:
            writer.writerows([_csv_text(v) for v in row] for row in batch)
            rows += len(batch)
    return rows


def _write_parquet(cur: Cursor, query: str, tmp: Path) -> int:
    import duckdb

    from lantide.query.names import quote_literal
    from lantide.query.typed_columns import ColumnBatch, create_table, insert

    types = [row[1] for row in cur.execute(f"DESCRIBE {query}").fetchall()]
    names, batches = _batches(cur, query)
    scratch = duckdb.connect(":memory:")
    try:
        create_table(scratch, "export", ColumnBatch(names, types, [[] for _ in names]))
        rows = 0
        for batch in batches:
            rows += insert(
                scratch,
                "export",
                ColumnBatch(names, types, [list(c) for c in zip(*batch, strict=True)]),
            )
        scratch.execute(
            f"COPY export TO {quote_literal(str(tmp))} (FORMAT parquet, COMPRESSION zstd)"
        )
    finally:
        scratch.close()
    return rows


def _cell(value: object) -> object:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (datetime, date, time, int, float, str, bool)) or value is None:
        if isinstance(value, datetime) and value.tzinfo is not None:
            return value.replace(tzinfo=None)
        return value
    if isinstance(value, timedelta):
        return value.total_seconds()
    return str(value)


def _write_xlsx(cur: Cursor, query: str, tmp: Path) -> int:
    import xlsxwriter

    book = xlsxwriter.Workbook(
        str(tmp),
        {
            "constant_memory": True,
            "strings_to_numbers": False,
            "strings_to_formulas": False,
            "strings_to_urls": False,
        },
    )
    try:
        sheet = book.add_worksheet("data")
        bold = book.add_format({"bold": True})
        date_fmt = book.add_format({"num_format": "yyyy-mm-dd"})
        ts_fmt = book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
        names, batches = _batches(cur, query)
        sheet.write_row(0, 0, names, bold)
        row_index = 0
        for batch in batches:
            for record in batch:
                row_index += 1
                for col, value in enumerate(record):
                    value = _cell(value)
                    if isinstance(value, datetime):
                        sheet.write_datetime(row_index, col, value, ts_fmt)
                    elif isinstance(value, date):
                        sheet.write_datetime(
                            row_index, col, datetime(value.year, value.month, value.day), date_fmt
                        )
                    elif value is None:
                        continue
                    else:
                        sheet.write(row_index, col, value)
    finally:
        book.close()
    return row_index
