"""Column profiles for the table browser, computed in DuckDB (nothing large crosses over).

``profile_relation`` returns::

    {"relation", "row_count", "columns": [
        {"name", "type", "null_count", "null_fraction", "distinct_count", "min", "max",
         "histogram": {"kind": "numeric", "bins": [{"low", "high", "count"}]}
                    | {"kind": "top_values", "values": [{"value", "count"}], "other_count"}}]}

Numbers, dates and timestamps get an equal-width histogram of ``bins`` bins; other types
their ``top`` most frequent values. ``distinct_count`` is exact below a million rows and
DuckDB's HyperLogLog estimate above (``distinct_exact`` says which). A text value (min, max,
a top value) is cut inside DuckDB at :data:`results.CELL_CHARS` characters and marked, as
a preview cell is.
"""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from lantide.query import duckdb_types
from lantide.query.names import quote_ident
from lantide.query.results import CELL_CHARS, JSONValue, cut_marker, jsonable

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Engine

EXACT_DISTINCT_ROWS = 1_000_000


class HistogramBin(TypedDict):
    low: JSONValue  # a number, or a date/timestamp as ISO text
    high: JSONValue
    count: int


class TopValue(TypedDict):
    value: JSONValue
    count: int


class Histogram(TypedDict):
    """``numeric``: ``bins``; ``top_values``: ``values`` and ``other_count``."""

    kind: Literal["numeric", "top_values"]
    bins: NotRequired[list[HistogramBin]]
    values: NotRequired[list[TopValue]]
    other_count: NotRequired[int]  # the non-null rows outside the top values


class ColumnProfile(TypedDict):
    name: str
    type: str
    null_count: int
    null_fraction: float
    distinct_count: int
    distinct_exact: bool  # False: DuckDB's estimate
    min: JSONValue  # None when min/max say nothing for the type
    max: JSONValue
    histogram: Histogram


class TableProfile(TypedDict):
    """``profile_relation``'s answer (the module docstring)."""

    relation: str
    row_count: int
    columns: list[ColumnProfile]


def _is_numeric(type_name: str) -> bool:
    return duckdb_types.is_numeric(type_name)


def _is_temporal(type_name: str) -> bool:
    return duckdb_types.is_date_or_timestamp(type_name)


def _is_orderable(type_name: str) -> bool:
    """min/max are worth showing: numbers, dates and times, text, booleans."""
    return (
        duckdb_types.is_numeric(type_name)
        or duckdb_types.is_temporal(type_name)
        or duckdb_types.base_type(type_name) in {"VARCHAR", "BOOLEAN"}
    )


def profile_relation(
    engine: Engine, relation: str, *, bins: int = 10, top: int = 10, only: list[str] | None = None
) -> TableProfile:
    """``only``: profile just these columns (exact names, in this order)."""

    def work(cur: Cursor) -> TableProfile:
        cur.execute(f"SELECT * FROM {relation} LIMIT 0")
        columns = [(d[0], str(d[1])) for d in cur.description]
        if only is not None:
            types = dict(columns)
            columns = [(name, types[name]) for name in only]
        row_count = int(cur.execute(f"SELECT count(*) FROM {relation}").fetchall()[0][0])
        exact = row_count <= EXACT_DISTINCT_ROWS
        out: list[ColumnProfile] = []
        for name, type_name in columns:
            col = quote_ident(name)
            orderable = _is_orderable(type_name)
            distinct = f"count(DISTINCT {col})" if exact else f"approx_count_distinct({col})"
            minmax = (
                f"{_cut_sql(f'min({col})', type_name)}, {_cut_sql(f'max({col})', type_name)}"
                if orderable
                else "NULL, NULL"
            )
            nulls, n_distinct, lo, hi = cur.execute(
                f"SELECT count(*) - count({col}), {distinct}, {minmax} FROM {relation}"
            ).fetchall()[0]
            histogram = (
                _numeric_histogram(cur, relation, col, type_name, lo, hi, bins)
                if (_is_numeric(type_name) or _is_temporal(type_name)) and lo is not None
                else _top_values(cur, relation, col, top, row_count - int(nulls))
            )
            out.append(
                {
                    "name": name,
                    "type": type_name,
                    "null_count": int(nulls),
                    "null_fraction": (nulls / row_count) if row_count else 0.0,
                    "distinct_count": int(n_distinct or 0),
                    "distinct_exact": exact,
                    "min": _marked(jsonable(lo)),
                    "max": _marked(jsonable(hi)),
                    "histogram": histogram,
                }
            )
        return {"relation": relation, "row_count": row_count, "columns": out}

    return engine.run(work)


def _numeric_histogram(
    cur: Cursor, relation: str, col: str, type_name: str, lo: object, hi: object, bins: int
) -> Histogram:
    as_number = f"epoch({col})" if _is_temporal(type_name) else f"CAST({col} AS DOUBLE)"
    lo_n, hi_n = cur.execute(
        f"SELECT min({as_number}), max({as_number}) FROM {relation}"
    ).fetchall()[0]
    if lo_n == hi_n:
        count = cur.execute(f"SELECT count({col}) FROM {relation}").fetchall()[0][0]
        return {
            "kind": "numeric",
            "bins": [{"low": jsonable(lo), "high": jsonable(hi), "count": int(count)}],
        }
    width = (hi_n - lo_n) / bins
    rows = cur.execute(
        f"SELECT least(CAST(floor(({as_number} - ?) / ?) AS INTEGER), ?) AS b, count(*) "
        f"FROM {relation} WHERE {col} IS NOT NULL GROUP BY b ORDER BY b",
        [lo_n, width, bins - 1],
    ).fetchall()
    counts = {int(b): int(c) for b, c in rows}
    edges = [lo_n + i * width for i in range(bins + 1)]
    if _is_temporal(type_name):
        from datetime import datetime

        edges_out: list[JSONValue] = [datetime.fromtimestamp(e, UTC).isoformat() for e in edges]
    else:
        edges_out = list(edges)
    return {
        "kind": "numeric",
        "bins": [
            {"low": edges_out[i], "high": edges_out[i + 1], "count": counts.get(i, 0)}
            for i in range(bins)
        ],
    }


def _cut_sql(expr: str, type_name: str) -> str:
    """``expr`` cut to one character more than the cap inside DuckDB, for text."""
    return f"left({expr}, {CELL_CHARS + 1})" if type_name.startswith("VARCHAR") else expr


def _marked(value: JSONValue) -> JSONValue:
    if isinstance(value, str) and len(value) > CELL_CHARS:
        return value[:CELL_CHARS] + cut_marker(CELL_CHARS)
    return value


def _top_values(cur: Cursor, relation: str, col: str, top: int, non_null: int) -> Histogram:
    # grouped on the whole values; only the cut ones cross into Python
    rows = cur.execute(
        f"SELECT left(v, {CELL_CHARS + 1}), n FROM (SELECT CAST({col} AS VARCHAR) AS v, "
        f"count(*) AS n FROM {relation} WHERE {col} IS NOT NULL "
        f"GROUP BY v ORDER BY n DESC, v LIMIT {int(top)}) ORDER BY n DESC, v"
    ).fetchall()
    shown = sum(int(n) for _, n in rows)
    return {
        "kind": "top_values",
        "values": [{"value": _marked(v), "count": int(n)} for v, n in rows],
        "other_count": max(0, non_null - shown),
    }


def column_summary(
    engine: Engine, relation: str, column: str, type_name: str
) -> tuple[int, int, int, bool, JSONValue, JSONValue]:
    """``(rows, nulls, distinct, distinct_exact, min, max)`` of one column, without a
    histogram: what a tooltip shows. One scan; a second, exact distinct count only for a
    table of at most :data:`EXACT_DISTINCT_ROWS` rows (the first scan's estimate stands
    above that)."""
    col = quote_ident(column)
    minmax = (
        f"{_cut_sql(f'min({col})', type_name)}, {_cut_sql(f'max({col})', type_name)}"
        if _is_orderable(type_name)
        else "NULL, NULL"
    )

    def work(cur: Cursor) -> tuple[int, int, int, bool, JSONValue, JSONValue]:
        rows, non_null, estimate, lo, hi = cur.execute(
            f"SELECT count(*), count({col}), approx_count_distinct({col}), {minmax} FROM {relation}"
        ).fetchall()[0]
        exact = int(rows) <= EXACT_DISTINCT_ROWS
        distinct = (
            cur.execute(f"SELECT count(DISTINCT {col}) FROM {relation}").fetchall()[0][0]
            if exact
            else estimate
        )
        return (
            int(rows),
            int(rows) - int(non_null),
            int(distinct or 0),
            exact,
            _marked(jsonable(lo)),
            _marked(jsonable(hi)),
        )

    return engine.run(work)
