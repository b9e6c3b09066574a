"""The result grid's questions to DuckDB: a filtered page with its row count, a column's
summary over the filtered rows, and the filtered rows as CSV for the clipboard.

Every function runs on a cursor the caller got from :meth:`Engine.run` (so it is under
the time limit and cancellable) over ``relation``, an already-quoted relation name the
browser resolved (:meth:`TableBrowser.resolve_for_grid`). Filters and sorting are
compiled by :mod:`lantide.query.grid_filters` and :mod:`lantide.query.ordering`; rows are
counted, filtered, sorted and summed in DuckDB, never in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict

from lantide.query.duckdb_types import base_type, is_date_or_timestamp, is_numeric
from lantide.query.errors import QueryError
from lantide.query.grid_copy import as_delimited
from lantide.query.grid_filters import ColumnFilter, normalize_filters, resolve_column, where_clause
from lantide.query.grid_sorted_pages import sorted_page
from lantide.query.names import quote_ident
from lantide.query.ordering import normalize_order_by, order_by_clause, sort_keys

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Row

MAX_PAGE_ROWS = 100_000
CSV_BATCH_ROWS = 2048
ORDERED_TYPES = ("VARCHAR", "BOOLEAN", "UUID", "TIME", "INTERVAL")


class FilteredPage(TypedDict):
    row_count: int  # rows that pass the filters
    rows: list[Row]


class ColumnSummary(TypedDict):
    """Count (non-NULL values), NULLs and, where the type has them, sum, avg, min, max
    (None where not computed)."""

    count: int
    nulls: int
    sum: object
    avg: object
    min: object
    max: object
    numeric: bool


class GridCopyTooLarge(QueryError):
    code = "GRID_COPY_TOO_LARGE"


def relation_columns(cur: Cursor, relation: str) -> list[tuple[str, str]]:
    """``(name, type)`` of each column of ``relation``."""
    return [
        (str(r[0]), str(r[1])) for r in cur.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    ]


def _clauses(
    cur: Cursor,
    relation: str,
    filters: object,
    order_by: object,
    *,
    has_rowid: bool,
) -> tuple[str, str, list[object]]:
    where, order, params, _ = _clauses_and_key(
        cur, relation, filters, order_by, has_rowid=has_rowid
    )
    return where, order, params


def _clauses_and_key(
    cur: Cursor,
    relation: str,
    filters: object,
    order_by: object,
    *,
    has_rowid: bool,
) -> tuple[str, str, list[object], tuple[str, str, str] | None]:
    """WHERE, ORDER BY, their parameters, and the first sort key as ``(column,
    direction, type)`` (None when unsorted)."""
    checked = normalize_filters(filters)
    keys = normalize_order_by(order_by)
    if not checked and not keys:
        return "", "", [], None
    columns = relation_columns(cur, relation)
    where, params = where_clause(checked, columns, relation)
    names = [c for c, _ in columns]
    order = order_by_clause(keys, names, relation, has_rowid=has_rowid)
    first = None
    if keys:
        name, direction = sort_keys(keys, names, relation)[0]
        first = (name, direction, dict(columns)[name])
    return where, order, params, first


def filtered_page(
    cur: Cursor,
    relation: str,
    *,
    filters: Sequence[ColumnFilter] | None = None,
    order_by: Sequence[tuple[str, str]] | None = None,
    offset: int = 0,
    limit: int = 256,
    has_rowid: bool = True,
    count: bool = True,
) -> FilteredPage:
    """Rows ``offset .. offset+limit`` of ``relation`` that pass ``filters``, in
    ``order_by``; ``row_count`` is how many rows pass (-1 when ``count`` is False)."""
    where, order, params, first = _clauses_and_key(
        cur, relation, filters, order_by, has_rowid=has_rowid
    )
    offset, limit = max(0, int(offset)), max(0, min(int(limit), MAX_PAGE_ROWS))
    total = -1
    if count:
        total = int(
            cur.execute(f"SELECT count(*) FROM {relation} {where}", params).fetchall()[0][0]
        )
    # a sorted page is looked for among the first rows in the sort order only
    # (lantide.query.grid_sorted_pages); a view (a data file) has no cheap sample
    rows = sorted_page(
        cur,
        relation,
        where=where,
        params=params,
        order=order,
        first_key=first if has_rowid else None,
        offset=offset,
        limit=limit,
    ).rows
    return {"row_count": total, "rows": rows}


def filtered_count(
    cur: Cursor, relation: str, *, filters: Sequence[ColumnFilter] | None = None
) -> int:
    """How many rows of ``relation`` pass ``filters``."""
    where, _, params = _clauses(cur, relation, filters, None, has_rowid=True)
    return int(cur.execute(f"SELECT count(*) FROM {relation} {where}", params).fetchall()[0][0])


def summarize_column(
    cur: Cursor,
    relation: str,
    column: str,
    *,
    filters: Sequence[ColumnFilter] | None = None,
    has_rowid: bool = True,
) -> ColumnSummary:
    """Count, NULLs, sum, avg, min, max of ``column`` over the rows passing ``filters``;
    sum and avg only for numbers, min and max for numbers, dates and text."""
    where, _, params = _clauses(cur, relation, filters, None, has_rowid=has_rowid)
    name, kind = resolve_column(column, relation_columns(cur, relation), relation)
    ident = quote_ident(name)
    numeric = is_numeric(kind)
    ordered = numeric or is_date_or_timestamp(kind) or base_type(kind) in ORDERED_TYPES
    parts = [f"count({ident})", f"count(*) - count({ident})"]
    parts += [f"sum({ident})", f"avg({ident})"] if numeric else ["NULL", "NULL"]
    parts += [f"min({ident})", f"max({ident})"] if ordered else ["NULL", "NULL"]
    row = cur.execute(f"SELECT {', '.join(parts)} FROM {relation} {where}", params).fetchall()[0]
    return {
        "count": int(row[0]),
        "nulls": int(row[1]),
        "sum": row[2],
        "avg": row[3],
        "min": row[4],
        "max": row[5],
        "numeric": numeric,
    }


def filtered_csv(
    cur: Cursor,
    relation: str,
    *,
    filters: Sequence[ColumnFilter] | None = None,
    order_by: Sequence[tuple[str, str]] | None = None,
    has_rowid: bool = True,
    max_rows: int,
    max_bytes: int,
) -> tuple[str, int]:
    """The rows passing ``filters`` as CSV text with a header, and their count; more
    than ``max_rows`` rows or ``max_bytes`` bytes is refused (``GRID_COPY_TOO_LARGE``)
    before anything reaches the clipboard."""
    where, order, params = _clauses(cur, relation, filters, order_by, has_rowid=has_rowid)
    total = int(cur.execute(f"SELECT count(*) FROM {relation} {where}", params).fetchall()[0][0])
    advice = "Narrow the filter, or use Export to write the rows to a file."
    if total > max_rows:
        raise GridCopyTooLarge(
            f"{total:,} rows are too many for the clipboard (the limit is {max_rows:,})",
            hint=advice,
        )
    # The engine's DuckDB may not touch files (``enable_external_access`` is off), so
    # COPY cannot write a CSV: DuckDB filters, sorts and hands the rows over in batches,
    # the csv writer quotes them, and the byte cap is checked as the text grows.
    cur.execute(f"SELECT * FROM {relation} {where} {order}", params)
    names = [str(d[0]) for d in cur.description or []]
    parts = [as_delimited(names, [], ",")]
    size = len(parts[0].encode("utf-8"))
    while batch := cur.fetchmany(CSV_BATCH_ROWS):
        text = as_delimited(names, batch, ",", header=False)
        size += len(text.encode("utf-8"))
        if size > max_bytes:
            raise GridCopyTooLarge(
                f"the {total:,} rows make more than {max_bytes / 1e6:,.0f} MB of CSV, "
                "too much for the clipboard",
                hint=advice,
            )
        parts.append(text)
    return "".join(parts), total
