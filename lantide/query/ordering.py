"""Sorting a table for the desktop grid: ``order_by`` checked and written as ``ORDER BY``.

``order_by`` is a list of ``(column_name, "asc" | "desc")``. Column names are matched
against the relation's own columns (case-insensitively, as DuckDB does) and written as
quoted identifiers, so nothing the caller passes is ever pasted into SQL.

DuckDB's sort is not stable: rows that tie on the sort keys come back in a different order
from one query to the next, and a grid that pages with ``LIMIT``/``OFFSET`` would then
show some rows twice and skip others. So every ordering ends with a tie-breaker: the row
id of a base table, or else the remaining columns (rows equal on every column are
interchangeable, so any order of them pages consistently).
"""

from __future__ import annotations

from lantide.query.errors import QueryError
from lantide.query.names import quote_ident

DIRECTIONS = ("asc", "desc")


def normalize_order_by(order_by: object) -> list[tuple[str, str]]:
    """``order_by`` as ``[(name, "asc"|"desc")]``; a bad shape or direction is an error."""
    if not order_by:
        return []
    if isinstance(order_by, (str, bytes)) or not hasattr(order_by, "__iter__"):
        raise QueryError(
            f"order_by must be a list of (column, direction) pairs, not {order_by!r}",
            code="BAD_ORDER_BY",
            hint='Pass e.g. [("amount", "desc"), ("name", "asc")].',
        )
    out: list[tuple[str, str]] = []
    for item in order_by:
        try:
            name, direction = item
        except (TypeError, ValueError):
            raise QueryError(
                f"order_by entry {item!r} is not a (column, direction) pair",
                code="BAD_ORDER_BY",
                hint='Pass e.g. [("amount", "desc"), ("name", "asc")].',
            ) from None
        if not isinstance(name, str) or not name:
            raise QueryError(
                f"order_by column {name!r} is not a column name",
                code="BAD_ORDER_BY",
                hint="Name the column as text.",
            )
        word = str(direction).strip().lower()
        if word not in DIRECTIONS:
            raise QueryError(
                f"order_by direction {direction!r} of column {name!r} is not 'asc' or 'desc'",
                code="BAD_ORDER_BY",
                hint="Use 'asc' (smallest first) or 'desc' (largest first).",
            )
        out.append((name, word))
    return out


def sort_keys(
    order_by: list[tuple[str, str]], columns: list[str], relation: str
) -> list[tuple[str, str]]:
    """``[(actual column name, "asc"|"desc")]`` of the checked ``order_by`` over
    ``columns`` (the relation's), each column once (its first mention decides its
    direction). An unknown column raises ``UNKNOWN_COLUMN`` naming the relation."""
    by_folded: dict[str, str] = {}
    for col in columns:
        by_folded.setdefault(col.casefold(), col)
    keys: list[tuple[str, str]] = []
    used: set[str] = set()
    for name, direction in order_by:
        actual = by_folded.get(name.casefold())
        if actual is None:
            raise QueryError(
                f"{relation} has no column {name!r} to sort by",
                code="UNKNOWN_COLUMN",
                hint="Sort by one of its columns: "
                + ", ".join(columns[:20])
                + (", ..." if len(columns) > 20 else "")
                + ".",
            )
        if actual.casefold() in used:
            continue
        used.add(actual.casefold())
        keys.append((actual, direction))
    return keys


def order_by_clause(
    order_by: list[tuple[str, str]], columns: list[str], relation: str, *, has_rowid: bool
) -> str:
    """``ORDER BY ...`` for the checked ``order_by`` over ``columns`` (the relation's).

    Nulls come last in both directions (what spreadsheets and pandas do), whatever
    DuckDB's default. An unknown column raises ``UNKNOWN_COLUMN`` naming the relation.
    """
    keys = sort_keys(order_by, columns, relation)
    if not keys:
        return ""
    parts = [f"{quote_ident(name)} {direction.upper()} NULLS LAST" for name, direction in keys]
    if has_rowid and "rowid" not in {c.casefold() for c in columns}:
        parts.append("rowid")  # a column named rowid hides the row id
    else:
        used = {name.casefold() for name, _ in keys}
        parts.extend(
            f"{quote_ident(c)} ASC NULLS LAST" for c in columns if c.casefold() not in used
        )
    return "ORDER BY " + ", ".join(parts)
