"""Typed Python columns into a DuckDB table, without Arrow.

Workbook sheets (calamine), ODBC rows (pyodbc) and the sample's orders arrive as Python
values. They reach DuckDB as one list parameter per column, unnested side by side in one
``INSERT``: DuckDB converts the lists natively, so neither pyarrow (87 MB of the installed
build) nor numpy is needed, and memory is bounded by the caller's batch.

A list DuckDB cannot convert fails the statement, and a failed statement aborts the
transaction it runs in; :func:`conform` therefore checks each column's Python types first
and routes a column that does not fit through text, cast in a scratch connection, so a
bad value is reported by column before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from lantide.query.names import quote_ident

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

    from lantide.query.engine import Cursor

# The Python types DuckDB takes as-is for a column of each type (exact type() matches:
# bool is not an int here).
_FITS: dict[str, set[type]] = {
    "BOOLEAN": {bool},
    "BIGINT": {int},
    "INTEGER": {int},
    "DOUBLE": {float, int},
    "DATE": {date, datetime},
    "TIMESTAMP": {datetime},
    "TIME": {time},
    "INTERVAL": {timedelta},
    "BLOB": {bytes, bytearray},
    "VARCHAR": {str},
}
_NONE = type(None)


class ColumnTypeError(ValueError):
    """A value of ``column`` that does not fit ``type`` (even read as text)."""

    def __init__(self, column: str, type_name: str, detail: str):
        super().__init__(f"column {column!r}: a value does not fit {type_name} ({detail})")
        self.column, self.type_name, self.detail = column, type_name, detail


@dataclass
class ColumnBatch:
    """Rows held column by column: ``columns[i]`` holds the values of ``names[i]``, whose
    DuckDB type is ``types[i]``."""

    names: list[str]
    types: list[str]
    columns: list[list[Any]]  # a cell: whatever Python value fits its DuckDB type

    @property
    def num_rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0


def _fits(type_name: str, values: list[Any]) -> bool:
    allowed = _FITS.get(type_name)
    if allowed is None and type_name.startswith("DECIMAL"):
        allowed = {Decimal, int}
    if allowed is None:
        return False
    return set(map(type, values)) <= allowed | {_NONE}


def conform(batch: ColumnBatch) -> ColumnBatch:
    """``batch`` with every column DuckDB can take as-is: a column holding other types
    (a UUID in a VARCHAR column, a driver's own object) goes through its text form.
    Raises :class:`ColumnTypeError` for a value whose text does not cast either."""
    columns: list[list[Any]] = []
    scratch: DuckDBPyConnection | None = None
    try:
        for name, type_name, values in zip(batch.names, batch.types, batch.columns, strict=True):
            if _fits(type_name, values):
                columns.append(values)
                continue
            if type_name == "DOUBLE" and set(map(type, values)) <= {Decimal, float, int, _NONE}:
                # NUMERIC without a precision arrives as Decimal: a float, as Arrow did
                columns.append([None if v is None else float(v) for v in values])
                continue
            text = [None if v is None else str(v) for v in values]
            if type_name == "VARCHAR":
                columns.append(text)
                continue
            import duckdb

            scratch = scratch or duckdb.connect(":memory:")
            try:
                # one row always: a SELECT of one expression without FROM
                (row,) = scratch.execute(f"SELECT $1::VARCHAR[]::{type_name}[]", [text]).fetchall()
                columns.append(row[0])
            except duckdb.Error as exc:
                raise ColumnTypeError(name, type_name, str(exc).splitlines()[0]) from None
    finally:
        if scratch is not None:
            scratch.close()
    return ColumnBatch(batch.names, batch.types, columns)


def create_table(cur: Cursor, table_sql: str, batch: ColumnBatch, *, replace: bool = False) -> None:
    """Create ``table_sql`` (already quoted) with ``batch``'s columns and insert its rows."""
    columns = ", ".join(
        f"{quote_ident(n)} {t}" for n, t in zip(batch.names, batch.types, strict=True)
    )
    verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
    cur.execute(f"{verb} {table_sql} ({columns})")
    insert(cur, table_sql, batch)


def insert(cur: Cursor, table_sql: str, batch: ColumnBatch, chunk_rows: int = 100_000) -> int:
    """Append ``batch``'s rows to ``table_sql`` (its columns in the same order), in chunks
    of ``chunk_rows`` so DuckDB's copy of the lists stays bounded. Returns the row count."""
    total = batch.num_rows
    if not total or not batch.columns:
        return 0
    # each unnest named: DuckDB (2.0) runs the same INSERT twice as fast on wide batches
    # with the names as without them (measured: benchmarks/README.md, ## remote)
    select = ", ".join(f"unnest(${i}::{t}[]) AS c{i}" for i, t in enumerate(batch.types, start=1))
    sql = f"INSERT INTO {table_sql} SELECT {select}"
    for start in range(0, total, chunk_rows):
        cur.execute(
            sql,
            [
                values[start : start + chunk_rows] if total > chunk_rows else values
                for values in batch.columns
            ],
        )
    return total


__all__ = ["ColumnBatch", "ColumnTypeError", "conform", "create_table", "insert"]
