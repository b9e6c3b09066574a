"""Per-column facts of a query's result: non-NULL values, NaN/infinity, and for the
columns a rule asks about, min, max, median and total.

A materialized result is read in DuckDB with one aggregate statement over its cached
table (nothing crosses into Python but one row). A result that was only previewed is not
kept anywhere; when the preview holds every row its facts come from those rows, and when
it holds only the first rows they are facts of those rows (``complete`` is False): a
NaN seen there is certainly in the result, but a column NULL in the first rows may not be
NULL further down, so the rules that need every row do not fire on a partial view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lantide.query.duckdb_types import is_float, is_numeric
from lantide.query.names import quote_ident

if TYPE_CHECKING:
    from collections.abc import Set as AbstractSet

    from lantide.query.engine import Cursor
    from lantide.query.results import Column, JSONValue


@dataclass
class ColumnFacts:
    name: str
    type: str
    non_null: int = 0
    nonfinite: int = 0  # NaN, +inf, -inf (float columns)
    minimum: float | None = None
    maximum: float | None = None
    median: float | None = None
    total: float | None = None


@dataclass
class ResultFacts:
    row_count: int
    rows_seen: int
    columns: list[ColumnFacts] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.rows_seen >= self.row_count


def from_table(
    cur: Cursor,
    table: str,
    columns: list[Column],
    row_count: int,
    *,
    detail: AbstractSet[int] = frozenset(),
    totals: AbstractSet[int] = frozenset(),
) -> ResultFacts:
    """One aggregate statement over the cached table. ``detail``: column positions that
    need min, max and median; ``totals``: positions whose sum is needed."""
    parts: list[str] = []
    plan: list[tuple[int, str]] = []
    for i, col in enumerate(columns):
        ident = quote_ident(col["name"])
        parts.append(f"count({ident})")
        plan.append((i, "non_null"))
        if is_float(col["type"]):
            parts.append(f"count(*) FILTER (WHERE isnan({ident}) OR isinf({ident}))")
            plan.append((i, "nonfinite"))
        if is_numeric(col["type"]):
            finite = (
                f" FILTER (WHERE NOT (isnan({ident}) OR isinf({ident})))"
                if is_float(col["type"])
                else ""
            )
            if i in detail:
                for what, agg in (("minimum", "min"), ("maximum", "max"), ("median", "median")):
                    parts.append(f"CAST({agg}({ident}){finite} AS DOUBLE)")
                    plan.append((i, what))
            if i in totals:
                parts.append(f"CAST(sum({ident}) AS DOUBLE)")
                plan.append((i, "total"))
    facts = ResultFacts(row_count, row_count, [ColumnFacts(c["name"], c["type"]) for c in columns])
    if not parts or row_count == 0:
        return facts
    values = cur.execute(f"SELECT {', '.join(parts)} FROM {quote_ident(table)}").fetchall()[0]
    for (i, what), value in zip(plan, values, strict=True):  # a value per planned part
        setattr(
            facts.columns[i],
            what,
            value if what in ("minimum", "maximum", "median", "total") else int(value or 0),
        )
    return facts


def _as_float(value: JSONValue) -> float | None:
    """A preview value as a number; the preview writes NaN and infinity as text."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value.lower() in ("nan", "inf", "-inf", "infinity", "-infinity"):
        return float(value)
    return None


def from_rows(
    columns: list[Column],
    rows: list[list[JSONValue]],
    row_count: int,
    *,
    detail: AbstractSet[int] = frozenset(),
    totals: AbstractSet[int] = frozenset(),
) -> ResultFacts:
    """The same facts from the preview rows (all of the result, or its first rows)."""
    facts = ResultFacts(row_count, len(rows), [ColumnFacts(c["name"], c["type"]) for c in columns])
    for i, col in enumerate(facts.columns):
        values = [row[i] for row in rows if i < len(row)]
        col.non_null = sum(1 for v in values if v is not None)
        if not is_numeric(col.type):
            continue
        numbers = [x for x in (_as_float(v) for v in values) if x is not None]
        col.nonfinite = sum(1 for x in numbers if not math.isfinite(x)) if is_float(col.type) else 0
        finite = [x for x in numbers if math.isfinite(x)]
        if i in detail and finite:
            col.minimum, col.maximum = min(finite), max(finite)
            import statistics  # a ratio-named column only (fractions, decimal)

            col.median = statistics.median(finite)
        if i in totals and finite:
            col.total = math.fsum(finite)
    return facts
