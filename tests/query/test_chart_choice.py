"""The default chart of a result: a category and a measure, or a series over time; never an
identifier as the measure, never a line through thousands of raw rows."""

from __future__ import annotations

import datetime as dt

import pytest

from lantide.query.chart_choice import BAR, LINE, SCATTER, ChartChoice, choose_chart, is_identifier


def cols(*spec: str) -> list[dict]:
    return [{"name": s.split(":")[0], "type": s.split(":")[1]} for s in spec]


@pytest.mark.parametrize(
    "name,expected",
    [
        ("id", True),
        ("customer_id", True),
        ("ORDER_ID", True),
        ("orderId", True),
        ("order_no", True),
        ("zip", True),
        ("paid", False),
        ("valid", False),
        ("revenue", False),
        ("churned", False),
        ("identity_score", False),
    ],
)
def test_identifiers_by_name(name, expected):
    assert is_identifier(name) is expected


def test_a_category_and_a_measure_make_bars():
    columns = cols("region:VARCHAR", "q2_customers:BIGINT", "churn_rate:DOUBLE")
    rows = [("north", 10, 0.1), ("south", 12, 0.2)]
    assert choose_chart(columns, rows) == ChartChoice(BAR, 0, 1)


def test_the_id_is_never_the_measure():
    columns = cols("customer_id:BIGINT", "region:VARCHAR", "revenue:DOUBLE")
    rows = [(i, "north" if i % 2 else "south", i * 1.5) for i in range(50)]
    assert choose_chart(columns, rows) == ChartChoice(BAR, 1, 2)


def test_raw_events_are_not_a_line_of_ids_over_dates():
    columns = cols("customer_id:BIGINT", "order_date:DATE", "amount:DOUBLE")
    start = dt.date(2025, 1, 1)
    rows = [(i, start + dt.timedelta(days=i % 90), float(i % 100)) for i in range(256)]
    choice = choose_chart(columns, rows, total_rows=120_000)
    assert choice is None or (choice.kind != LINE and choice.y != 0)
    # the id alone is not a chart either
    assert (
        choose_chart(cols("customer_id:BIGINT", "order_date:DATE"), rows, total_rows=120_000)
        is None
    )


def test_a_series_over_time_is_a_line():
    columns = cols("month:DATE", "revenue:DECIMAL(18,2)")
    rows = [(dt.date(2025, m, 1), m * 100) for m in range(1, 13)]
    assert choose_chart(columns, rows) == ChartChoice(LINE, 0, 1)


def test_two_measures_of_a_few_rows_make_a_scatter_and_many_rows_none():
    columns = cols("price:DOUBLE", "quantity:INTEGER")
    rows = [(float(i), i % 7) for i in range(100)]
    assert choose_chart(columns, rows, total_rows=100) == ChartChoice(SCATTER, 0, 1)
    assert choose_chart(columns, rows, total_rows=500_000) is None


def test_a_category_with_too_many_values_is_no_bar_chart():
    columns = cols("name:VARCHAR", "amount:DOUBLE")
    rows = [(f"customer {i}", float(i)) for i in range(256)]
    assert choose_chart(columns, rows, total_rows=100_000) is None


def test_no_measure_no_chart():
    assert choose_chart(cols("region:VARCHAR", "customer_id:BIGINT"), [("a", 1)]) is None
