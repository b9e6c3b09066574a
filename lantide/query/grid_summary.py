"""The quick summary of a grid selection: count, sum, average, minimum and maximum.

A whole column of a big result is summarized by DuckDB
(:func:`lantide.query.grid_queries.summarize_column`); a selection of cells already in the
grid is summarized here from their values. Both give a
:class:`~lantide.query.grid_queries.ColumnSummary`, several columns' summaries are
combined by :func:`combine`, and :func:`summary_text` writes one line for the status bar.

Count is of the values that are not NULL (NULLs are counted apart); sum and average only
when every value is a number; minimum and maximum when the values compare (numbers,
dates, times, text), else only the count is given.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from collections.abc import Iterable, Sequence
from typing import TypeGuard

from lantide.query.grid_copy import cell_text
from lantide.query.grid_queries import ColumnSummary

_ORDERED = (str, _dt.datetime, _dt.date, _dt.time, _dt.timedelta)


Number = int | float | decimal.Decimal


def _is_number(value: object) -> TypeGuard[Number]:
    return isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)


def _total(numbers: Sequence[Number]) -> Number:
    """Exact for integers and decimals; a float among them makes it a float sum."""
    if any(isinstance(v, float) for v in numbers):
        return math.fsum(float(v) for v in numbers)
    total: int | decimal.Decimal = 0
    for v in numbers:
        if not isinstance(v, float):  # none is, here: int and Decimal sums stay exact
            total += v
    return total


def _kind(value: object) -> type | None:
    if _is_number(value):
        return float  # numbers compare with each other
    for kind in _ORDERED:  # datetime before date: a datetime is a date too
        if isinstance(value, kind):
            return kind
    return None


def _mean(total: Number, count: int) -> float:
    """Divided before it becomes a float: a decimal sum's mean reads as it should (1.1,
    not 1.0999999999999999)."""
    return float(total / count) if isinstance(total, decimal.Decimal) else total / count


def summarize_values(values: Iterable[object]) -> ColumnSummary:
    """The summary of ``values`` (Python values as DuckDB returned them)."""
    present: list[object] = []
    nulls = 0
    for value in values:
        if value is None:
            nulls += 1
        else:
            present.append(value)
    numbers = [v for v in present if _is_number(v)]
    numeric = bool(present) and len(numbers) == len(present)
    total: Number | None = None
    average: float | None = None
    if numeric:
        total = _total(numbers)
        average = _mean(total, len(numbers))
    kinds = {_kind(v) for v in present}
    low = high = None
    if present and len(kinds) == 1 and None not in kinds:
        low, high = min(present), max(present)  # type: ignore[type-var]  # one ordered kind
    return {
        "count": len(present),
        "nulls": nulls,
        "sum": total,
        "avg": average,
        "min": low,
        "max": high,
        "numeric": numeric,
    }


def combine(summaries: Sequence[ColumnSummary]) -> ColumnSummary:
    """One summary of several columns' (each from DuckDB or :func:`summarize_values`)."""
    count = sum(s["count"] for s in summaries)
    nulls = sum(s["nulls"] for s in summaries)
    with_values = [s for s in summaries if s["count"]]
    numeric = bool(with_values) and all(s["numeric"] for s in with_values)
    total: Number | None = None
    average: float | None = None
    sums = [s["sum"] for s in with_values if _is_number(s["sum"])]
    if numeric and len(sums) == len(with_values):
        total = _total(sums)
        average = _mean(total, count)
    ends = summarize_values([s["min"] for s in with_values] + [s["max"] for s in with_values])
    return {
        "count": count,
        "nulls": nulls,
        "sum": total,
        "avg": average,
        "min": ends["min"],
        "max": ends["max"],
        "numeric": numeric,
    }


def number_text(value: object, *, group: str = ",", point: str = ".") -> str:
    """A summary's number, grouped by thousands; an average to at most 6 decimals."""
    if isinstance(value, int):
        text = f"{value:,}"
    elif isinstance(value, decimal.Decimal):
        text = f"{value:,f}"
    elif isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        if value != 0 and abs(value) < 1e-4 or abs(value) >= 1e15:
            text = f"{value:.6g}"
        else:
            text = f"{value:,.6f}".rstrip("0").rstrip(".")
    else:
        return cell_text(value)
    swap: dict[str, str | int | None] = {",": "\0", ".": point}
    return text.translate(str.maketrans(swap)).replace("\0", group)


def summary_text(summary: ColumnSummary, *, group: str = ",", point: str = ".") -> str:
    """``Count 3 · Sum 6 · Avg 2 · Min 1 · Max 3`` (and ``NULL 1`` when some are)."""

    def shown(value: object) -> str:
        return number_text(value, group=group, point=point)

    parts = [f"Count {summary['count']:,}"]
    if summary["nulls"]:
        parts.append(f"NULL {summary['nulls']:,}")
    if summary["numeric"] and summary["sum"] is not None:
        parts += [f"Sum {shown(summary['sum'])}", f"Avg {shown(summary['avg'])}"]
    if summary["min"] is not None:
        low, high = shown(summary["min"]), shown(summary["max"])
        if len(low) > 40 or len(high) > 40:  # long text: the ends say little in one line
            low, high = low[:39] + "…", high[:39] + "…"
        parts += [f"Min {low}", f"Max {high}"]
    return " · ".join(parts)
