"""Which chart a result starts with: a rule on its columns (names and DuckDB types) and a
sample of its rows, so it is decided here and not in a widget.

The pair an analyst expects is a category and a measure (bars), or a time and a measure
when the result is a series, one row per time (a line). Never an identifier as the measure
(``customer_id`` over ``order_date`` as a line of 10,000 points says nothing), and no line
or scatter through raw rows beyond :data:`MAX_POINTS`. When nothing sensible fits, no chart
is chosen and the analyst picks the columns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lantide.query.duckdb_types import is_numeric, is_temporal

BAR, LINE, SCATTER = "bar", "line", "scatter"
MAX_BARS = 60  # more categories than this are not a readable bar chart
MAX_POINTS = 2_000  # a line or scatter of more raw rows is noise

# id, customer_id, order_no, zip, postcode, phone, orderId: numbers that are names.
_IDENTIFIER = re.compile(r"(^|_)(id|uuid|key|no|nr|code|zip|postcode|phone)$", re.IGNORECASE)
_IDENTIFIER_CAMEL = re.compile(r"[a-z0-9](Id|ID|Key|No)$")


@dataclass(frozen=True)
class ChartChoice:
    kind: str
    x: int  # column index
    y: int  # column index


def is_time(type_name: str) -> bool:
    return is_temporal(type_name)


def is_identifier(name: str) -> bool:
    return bool(_IDENTIFIER.search(name or "") or _IDENTIFIER_CAMEL.search(name or ""))


def _distinct(rows: Sequence[Sequence[Any]], index: int) -> int:
    return len({row[index] for row in rows})


def choose_chart(
    columns: Sequence[Mapping[str, str]],
    rows: Sequence[Sequence[Any]],
    total_rows: int | None = None,
) -> ChartChoice | None:
    """The chart to start with for a result of ``columns`` (dicts with ``name`` and
    ``type``), judged on ``rows`` (a sample, the first rows) and ``total_rows``."""
    total = total_rows if total_rows is not None else len(rows)
    measures = [
        i for i, c in enumerate(columns) if is_numeric(c["type"]) and not is_identifier(c["name"])
    ]
    if not measures:
        return None
    times = [i for i, c in enumerate(columns) if is_time(c["type"])]
    categories = [
        i
        for i, c in enumerate(columns)
        if i not in times and not is_numeric(c["type"]) and not is_identifier(c["name"])
    ]
    sample = list(rows)
    measure = measures[0]
    # A series: one row per time (grouped by day, month, ...), not raw events.
    for t in times:
        if sample and _distinct(sample, t) == len(sample) and total <= MAX_POINTS * 5:
            return ChartChoice(LINE, t, measure)
    for c in categories:
        if not sample or _distinct(sample, c) <= MAX_BARS:
            return ChartChoice(BAR, c, measure)
    if times and total <= MAX_POINTS:
        return ChartChoice(LINE, times[0], measure)
    if len(measures) >= 2 and total <= MAX_POINTS:
        return ChartChoice(SCATTER, measures[0], measures[1])
    if total <= MAX_BARS:  # a handful of numbers: one bar each
        return ChartChoice(BAR, measure, measure)
    return None
