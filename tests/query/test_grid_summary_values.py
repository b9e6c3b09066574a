"""The quick summary of a grid selection from loaded values (lantide.query.grid_summary):
numbers exact where they can be, text and dates only counted and bounded, mixed kinds only
counted, and the line the status bar shows."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from lantide.query.grid_summary import combine, summarize_values, summary_text


def test_numbers_sum_exactly_and_nulls_are_counted_apart():
    summary = summarize_values([Decimal("0.10"), Decimal("0.20"), None, 3, None])
    assert summary["sum"] == Decimal("3.30") and summary["count"] == 3 and summary["nulls"] == 2
    assert summary["avg"] == 1.1 and summary["min"] == Decimal("0.10") and summary["max"] == 3
    assert summary_text(summary) == "Count 3 · NULL 2 · Sum 3.30 · Avg 1.1 · Min 0.10 · Max 3"
    floats = summarize_values([0.1] * 10)
    assert floats["sum"] == 1.0  # fsum: not 0.9999999999999999


def test_text_dates_and_mixed_kinds():
    text = summarize_values(["pear", "apple", None])
    assert (text["count"], text["sum"], text["min"], text["max"]) == (2, None, "apple", "pear")
    assert summary_text(text) == "Count 2 · NULL 1 · Min apple · Max pear"
    days = summarize_values([dt.date(2024, 3, 1), dt.date(2023, 1, 5)])
    assert summary_text(days) == "Count 2 · Min 2023-01-05 · Max 2024-03-01"
    mixed = summarize_values(["a", 1, dt.date(2024, 1, 1), True])
    assert summary_text(mixed) == "Count 4"  # nothing to add or compare across kinds
    assert summary_text(summarize_values([True, False])) == "Count 2"  # booleans are not numbers


def test_columns_combine_and_numbers_follow_the_locale():
    both = combine(
        [
            summarize_values([1000, 2000]),
            {
                "count": 2,
                "nulls": 1,
                "sum": Decimal("1.5"),
                "avg": 0.75,
                "min": Decimal("0.5"),
                "max": Decimal("1.0"),
                "numeric": True,
            },
        ]
    )
    assert both["count"] == 4 and both["sum"] == Decimal("3001.5") and both["avg"] == 750.375
    assert summary_text(both, group=".", point=",") == (
        "Count 4 · NULL 1 · Sum 3.001,5 · Avg 750,375 · Min 0,5 · Max 2.000"
    )
    text_and_number = combine([summarize_values(["x"]), summarize_values([1])])
    assert summary_text(text_and_number) == "Count 2"
