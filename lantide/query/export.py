"""Exporting a table to CSV, Parquet or XLSX, streamed in Arrow batches.

Rows flow DuckDB -> Arrow batches -> the writer, so an export of any size holds one batch
in memory. The file is written next to its target under a temporary name and renamed into
place at the end (the atomic-write pattern of :mod:`lantide.workspace.atomic`, streamed):
a failed export leaves any existing file untouched. XLSX is written with xlsxwriter in
constant-memory mode and is limited to Excel's 1,048,575 data rows.
"""

from __future__ import annotations

import os
import tempfile
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

from lantide.query.errors import QueryError
from lantide.workspace.atomic import TEMP_SUFFIX, own_writes

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
    raise QueryError(f"cannot tell the export format of {path.name!r}", code="EXPORT_FORMAT",
                     hint="Use a .csv, .parquet or .xlsx file name, or pass the format.")


def export_relation(engine, relation: str, path: Path, fmt: str | None = None, *,
                    order_by: list[tuple[str, str]] | None = None,
                    has_rowid: bool = True) -> dict:
    """Write ``relation`` to ``path``; ``order_by`` (checked pairs, see
    :mod:`lantide.query.ordering`) writes the rows in the order the grid shows them."""
    from lantide.query.ordering import order_by_clause

    path = Path(path).expanduser().resolve()
    fmt = _format_of(path, fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)

    def work(cur):
        if fmt == "xlsx":
            total = int(cur.execute(f"SELECT count(*) FROM {relation}").fetchall()[0][0])
            if total > XLSX_MAX_ROWS:
                raise QueryError(f"{relation} has {total:,} rows; an XLSX sheet holds "
                                 f"{XLSX_MAX_ROWS:,}", code="EXPORT_TOO_LARGE",
                                 hint="Export to CSV or Parquet, or filter the table first.")
        order = ""
        if order_by:
            columns = [d[0] for d in cur.execute(f"SELECT * FROM {relation} LIMIT 0").description]
            order = order_by_clause(order_by, columns, relation, has_rowid=has_rowid)
        reader = cur.sql(f"SELECT * FROM {relation} {order}").to_arrow_reader(BATCH_ROWS)
        return {"csv": _write_csv, "parquet": _write_parquet, "xlsx": _write_xlsx}[fmt](reader, tmp)

    try:
        rows = engine.run(work, timeout=None)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    own_writes.record(path)
    return {"relation": relation, "path": str(path), "format": fmt, "row_count": rows,
            "bytes": path.stat().st_size}


def _write_csv(reader, tmp: Path) -> int:
    import pyarrow.csv as pacsv

    rows = 0
    with pacsv.CSVWriter(str(tmp), reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


def _write_parquet(reader, tmp: Path) -> int:
    import pyarrow.parquet as pq

    rows = 0
    with pq.ParquetWriter(str(tmp), reader.schema, compression="zstd") as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


def _cell(value):
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (datetime, date, time, int, float, str, bool)) or value is None:
        if isinstance(value, datetime) and value.tzinfo is not None:
            return value.replace(tzinfo=None)
        return value
    if isinstance(value, timedelta):
        return value.total_seconds()
    return str(value)


def _write_xlsx(reader, tmp: Path) -> int:
    import xlsxwriter

    book = xlsxwriter.Workbook(str(tmp), {"constant_memory": True, "strings_to_numbers": False,
                                          "strings_to_formulas": False, "strings_to_urls": False})
    try:
        sheet = book.add_worksheet("data")
        bold = book.add_format({"bold": True})
        date_fmt = book.add_format({"num_format": "yyyy-mm-dd"})
        ts_fmt = book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
        sheet.write_row(0, 0, reader.schema.names, bold)
        row_index = 0
        for batch in reader:
            for record in batch.to_pylist():
                row_index += 1
                for col, value in enumerate(record.values()):
                    value = _cell(value)
                    if isinstance(value, datetime):
                        sheet.write_datetime(row_index, col, value, ts_fmt)
                    elif isinstance(value, date):
                        sheet.write_datetime(row_index, col, datetime(value.year, value.month, value.day), date_fmt)
                    elif value is None:
                        continue
                    else:
                        sheet.write(row_index, col, value)
    finally:
        book.close()
    return row_index
