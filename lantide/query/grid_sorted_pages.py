"""A page of a sorted (and maybe filtered) table, found among the first rows in the sort
order instead of all of them.

``SELECT * FROM t WHERE f ORDER BY k, rowid LIMIT n OFFSET o`` makes DuckDB test ``f`` on
every row of ``t`` before its Top-N can answer: 0.4-0.7 s for a text filter over 5
million rows, where the grid has 200 ms to repaint (issue 32). But page ``o .. o+n`` in
the order of ``k`` lies among the rows whose ``k`` is at most some value ``v`` (at least,
descending), and ``k <= v`` is a comparison DuckDB pushes into its scan of ``k``: the
filter is then tested on those rows only. So:

1. a system sample of the table (a few percent of its vectors, ~10 ms) says how many
   rows pass the filter and, among those, where ``k``'s quantiles lie;
2. ``v`` is the quantile that should leave a margin of passing rows beyond ``o + n``;
   the page is asked for with ``AND k <= v`` added;
3. a full page answer is the page: the rows with ``k <= v`` are a prefix of the rows
   passing in the sort order (NULLs sort last and are left out with the rows past
   ``v``; the rest of the ``ORDER BY`` breaks ties), so when at least ``o + n`` of them
   pass, their rows ``o .. o+n`` are the page. A short answer proves nothing: a wider
   margin is tried, then the query as it was.

The sample only guides how far to look; the answer never depends on it (a clustered
table makes a system sample of 2,048-row vectors lopsided: that costs a retry, never a
wrong row). Only base tables of at least :data:`NARROW_FROM_ROWS` rows and a first sort
key whose comparison orders as ``ORDER BY`` does (numbers, dates and timestamps, text,
booleans) are narrowed; everything else runs the plain query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from lantide.query.duckdb_types import base_type, is_date_or_timestamp, is_numeric
from lantide.query.names import quote_ident

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Row

NARROW_FROM_ROWS = 200_000  # below it the plain query takes a few ms
SAMPLE_ROWS = 131_072  # the sample aims at this many rows (64 vectors), 1% at least
MIN_PASSING_SAMPLED = 4  # fewer passing in the sample: too little to place the threshold
MARGINS = (4.0, 32.0)  # look this many times as far as the sample says is needed
MAX_FRACTION = 0.35  # past this share of the passing rows, the plain query is as cheap
QUANTILES = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35)
# integers that bind back from Python exactly; VARINT/BIGNUM and UHUGEINT are left out
_UNBOUND_INTEGERS = frozenset({"UHUGEINT", "VARINT", "BIGNUM"})


class SortedPage(NamedTuple):
    rows: list[Row]
    tries: int  # narrowed queries run (0: the table or key is not narrowed)
    narrowed: bool  # the rows came from a narrowed query, not the plain one


def narrowable(type_name: str) -> bool:
    """A first sort key of this type is narrowed: its ``<=`` orders as ``ORDER BY``."""
    base = base_type(type_name)
    if is_numeric(type_name):
        return base not in _UNBOUND_INTEGERS
    return is_date_or_timestamp(type_name) or base in ("VARCHAR", "BOOLEAN")


def _threshold_sql(type_name: str) -> tuple[str, bool]:
    """(the placeholder of the threshold, whether it travels as text). Dates and
    timestamps go as text and are cast back with a fixed keyword per kind (a Python
    date cannot hold DuckDB's infinity or year 300000; a cast of text can)."""
    base = base_type(type_name)
    if base == "DATE":
        return "CAST(? AS DATE)", True
    if base in ("TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ"):
        return "CAST(? AS TIMESTAMPTZ)", True
    if is_date_or_timestamp(type_name):
        # TIMESTAMP_NS/_MS/_S as microseconds: the cast is monotone, so k <= v still
        # keeps a prefix of the order (a few more rows at most)
        return "CAST(? AS TIMESTAMP)", True
    return "?", False


def sorted_page(
    cur: Cursor,
    relation: str,
    *,
    where: str,
    params: list[object],
    order: str,
    first_key: tuple[str, str, str] | None,
    offset: int,
    limit: int,
    narrow_from_rows: int = NARROW_FROM_ROWS,
    margins: tuple[float, ...] = MARGINS,
) -> SortedPage:
    """Rows ``offset .. offset+limit`` of ``relation`` passing ``where`` (``"WHERE ..."``
    or ``""``, with ``params``) in ``order`` (an ``ORDER BY`` whose first key is
    ``first_key``: ``(column, "asc"|"desc", type)``, and which breaks every tie)."""
    plain = f"SELECT * FROM {relation} {where} {order} LIMIT {limit} OFFSET {offset}"
    if first_key is None or limit <= 0 or not order or not narrowable(first_key[2]):
        return SortedPage(cur.execute(plain, params).fetchall(), 0, False)
    name, direction, type_name = first_key
    rows_in_table = int(cur.execute(f"SELECT count(*) FROM {relation}").fetchall()[0][0])
    if rows_in_table < narrow_from_rows:
        return SortedPage(cur.execute(plain, params).fetchall(), 0, False)
    thresholds, share = _sample(
        cur, relation, rows_in_table, where, params, name, direction, type_name
    )
    tries = 0
    if share > 0:
        needed = (offset + limit) / (share * rows_in_table)
        placeholder, _ = _threshold_sql(type_name)
        compare = "<=" if direction == "asc" else ">="
        narrowed = f"{quote_ident(name)} {compare} {placeholder}"
        where_narrowed = f"{where} AND ({narrowed})" if where else f"WHERE {narrowed}"
        tried: set[object] = set()
        for margin in margins:
            fraction = needed * margin
            if fraction > MAX_FRACTION:
                break
            at = next(i for i, q in enumerate(QUANTILES) if q >= fraction)
            value = thresholds[at]
            if value is None or value in tried:
                continue
            tried.add(value)
            tries += 1
            rows = cur.execute(
                f"SELECT * FROM {relation} {where_narrowed} {order} LIMIT {limit} OFFSET {offset}",
                [*params, value],
            ).fetchall()
            if len(rows) == limit:
                return SortedPage(rows, tries, True)
    return SortedPage(cur.execute(plain, params).fetchall(), tries, False)


def _sample(
    cur: Cursor,
    relation: str,
    rows_in_table: int,
    where: str,
    params: list[object],
    name: str,
    direction: str,
    type_name: str,
) -> tuple[list[object], float]:
    """(the sort key's value at each of :data:`QUANTILES` of the passing rows, in the
    sort order; the share of the table's rows passing with a non-NULL key), from a
    system sample; a share of 0 when too few passing rows were sampled."""
    percent = min(100.0, max(1.0, SAMPLE_ROWS * 100.0 / max(rows_in_table, 1)))
    ident = quote_ident(name)
    passing = f"({where.removeprefix('WHERE ')}) AND " if where else ""
    passing += f"{ident} IS NOT NULL"
    fractions = QUANTILES if direction == "asc" else tuple(1.0 - q for q in QUANTILES)
    _, as_text = _threshold_sql(type_name)
    value = (
        f"quantile_disc({ident}, [{', '.join(repr(f) for f in fractions)}]) "
        f"FILTER (WHERE {passing})"
    )
    if as_text:
        value = f"CAST({value} AS VARCHAR[])"
    sampled, passed, values = cur.execute(
        f"SELECT count(*), count(*) FILTER (WHERE {passing}), {value} "
        f"FROM {relation} TABLESAMPLE {percent:.4f}% (system)",
        [*params, *params],
    ).fetchall()[0]
    if not sampled or passed < MIN_PASSING_SAMPLED or not values:
        return [], 0.0
    return list(values), passed / sampled
