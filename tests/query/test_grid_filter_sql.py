"""The grid's filters (lantide.query.grid_filters, grid_queries): compiled to a DuckDB
WHERE over a real cached table, counted and paged in DuckDB, composed with the sort,
hostile names and values bound or quoted, bad values refused with what to type."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from lantide.query.errors import QueryError
from lantide.query.grid_filters import describe_filter, normalize_filters, ops_for

HOSTILE = 'x"); DROP TABLE "orders"; --'
SQL = f"""
SELECT i AS id,
       CASE WHEN i % 5 = 0 THEN NULL ELSE 'Customer ' || (i % 7) END AS name,
       CAST((i % 100) * 1.25 AS DECIMAL(10, 2)) AS amount,
       DATE '2024-01-01' + CAST(i % 60 AS INTEGER) AS day,
       TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i) HOUR AS at,
       CASE WHEN i = 3 THEN '50% off_now \\ ''quoted''' ELSE 'plain' END AS note,
       i % 3 AS "{HOSTILE.replace('"', '""')}"
FROM range(1000) r(i)
"""


@pytest.fixture
def grid_table(empty_workspace, open_service):
    svc = open_service(empty_workspace)
    result = svc.run_query(SQL, result_label="orders")
    assert result["materialized"] and result["row_count"] == 1000
    return svc, result["cached_table_name"]


def ids(rows) -> list[int]:
    return [r[0] for r in rows]


def test_text_filters_count_and_page_in_duckdb(grid_table):
    svc, table = grid_table
    page = svc.filtered_page(
        table, 0, 5, filters=[{"column": "NAME", "op": "contains", "value": "customer 3"}]
    )
    expected = [i for i in range(1000) if i % 5 and i % 7 == 3]
    assert page["row_count"] == len(expected)
    assert ids(page["rows"]) == expected[:5]
    equals = svc.filtered_page(
        table, filters=[{"column": "name", "op": "equals", "value": "customer 3"}]
    )
    assert equals["row_count"] == 0  # equals counts case
    # paging through the filtered result: every row once, in order
    pages = [
        svc.fetch_rows(table, off, 7, filters=[{"column": "name", "op": "contains", "value": "3"}])
        for off in range(0, len(expected), 7)
    ]
    assert [i for p in pages for i in ids(p)] == expected


def test_null_and_not_null(grid_table):
    svc, table = grid_table
    nulls = svc.filtered_page(table, 0, 1000, filters=[{"column": "name", "op": "null"}])
    assert nulls["row_count"] == 200 and all(r[1] is None for r in nulls["rows"])
    rest = svc.filtered_page(table, 0, 3, filters=[{"column": "name", "op": "not_null"}])
    assert rest["row_count"] == 800 and ids(rest["rows"]) == [1, 2, 3]


def test_numeric_and_date_ranges_are_exact_and_compose_with_the_sort(grid_table):
    svc, table = grid_table
    filters = [
        {"column": "amount", "op": "range", "low": "1.25", "high": "2.50"},
        {"column": "day", "op": "range", "low": "2024-01-02", "high": None},
    ]
    page = svc.filtered_page(table, 0, 1000, filters=filters, order_by=[("id", "desc")])
    expected = [
        i
        for i in range(1000)
        if Decimal("1.25") <= (i % 100) * Decimal("1.25") <= Decimal("2.50") and i % 60 >= 1
    ]
    assert page["row_count"] == len(expected)
    assert ids(page["rows"]) == sorted(expected, reverse=True)
    assert all(r[3] >= dt.date(2024, 1, 2) for r in page["rows"])
    # a timestamp range with a date end means midnight; an equals on a number is numeric
    stamp = svc.filtered_page(
        table,
        filters=[{"column": "at", "op": "range", "low": "2024-01-02", "high": "2024-01-02 05:00"}],
    )
    assert ids(stamp["rows"]) == list(range(24, 30))
    equal = svc.filtered_page(
        table, 0, 3, filters=[{"column": "amount", "op": "equals", "value": "2.5"}]
    )
    assert equal["row_count"] == 10 and ids(equal["rows"]) == [2, 102, 202]


def test_hostile_column_name_and_values_are_bound_not_pasted(grid_table):
    svc, table = grid_table
    hostile = svc.filtered_page(table, filters=[{"column": HOSTILE, "op": "equals", "value": "2"}])
    assert hostile["row_count"] == 333
    for value in ('\'; DROP TABLE "orders"; --', "') OR 1=1 --", "%", "_"):
        page = svc.filtered_page(
            table, filters=[{"column": "note", "op": "contains", "value": value}]
        )
        literal = value in "50% off_now \\ 'quoted'"
        assert page["row_count"] == (1 if literal else 0), value  # % and _ are plain text
    quoted = svc.filtered_page(
        table, filters=[{"column": "note", "op": "contains", "value": "\\ 'QUOTED'"}]
    )
    assert ids(quoted["rows"]) == [3]
    assert svc.filtered_page(table)["row_count"] == 1000  # the table is still there


def test_bad_filters_are_refused_with_what_to_type(grid_table):
    svc, table = grid_table
    cases = [
        ([{"column": "amount", "op": "range", "low": "3,5"}], "BAD_FILTER", "not a number"),
        ([{"column": "day", "op": "range", "low": "31/12/2024"}], "BAD_FILTER", "2024-03-31"),
        ([{"column": "name", "op": "range", "low": "a"}], "BAD_FILTER", "contains"),
        ([{"column": "nope", "op": "null"}], "UNKNOWN_COLUMN", "amount"),
        ([{"column": "name", "op": "like"}], "BAD_FILTER", "contains"),
        ([{"column": "name", "op": "range"}], "BAD_FILTER", "end"),
        ("name = 1", "BAD_FILTER", "column"),
        ([{"column": "amount", "op": "equals", "value": "1" * 40}], "BAD_FILTER", "digits"),
        # a decimal DuckDB would round (1e-400 equal to 0) or fail to cast: refused
        ([{"column": "amount", "op": "equals", "value": "1e-400"}], "BAD_FILTER", "digits"),
        ([{"column": "amount", "op": "range", "low": "9" * 38}], "BAD_FILTER", "too large"),
    ]
    for filters, code, words in cases:
        with pytest.raises(QueryError) as caught:
            svc.filtered_page(table, filters=filters)
        error = caught.value
        assert error.code == code, filters
        assert words in f"{error.message} {error.hint}", (filters, error.message, error.hint)


def test_summaries_of_a_whole_filtered_column(grid_table):
    svc, table = grid_table
    amounts = svc.summarize_column(table, "amount")
    values = [(i % 100) * Decimal("1.25") for i in range(1000)]
    assert amounts["count"] == 1000 and amounts["nulls"] == 0
    assert (
        amounts["sum"] == sum(values)
        and amounts["min"] == 0
        and amounts["max"] == Decimal("123.75")
    )
    assert amounts["avg"] == pytest.approx(float(sum(values)) / 1000)
    names = svc.summarize_column(table, "name", [{"column": "id", "op": "range", "high": "9"}])
    assert (names["count"], names["nulls"]) == (8, 2)
    assert (names["sum"], names["avg"]) == (None, None) and not names["numeric"]
    assert (names["min"], names["max"]) == ("Customer 0", "Customer 6")  # i % 7 of 1..9
    days = svc.summarize_column(table, "day")
    assert (days["min"], days["max"]) == (dt.date(2024, 1, 1), dt.date(2024, 2, 29))


def test_filtered_rows_as_csv_and_the_size_cap(grid_table):
    svc, table = grid_table
    text, count = svc.rows_as_csv(
        table,
        filters=[{"column": "id", "op": "range", "low": "3", "high": "3"}],
        max_rows=10,
        max_bytes=10_000,
    )
    lines = text.splitlines()
    assert count == 1 and lines[0].startswith("id,name,amount,day,at,note,")
    assert "\"50% off_now \\ 'quoted'\"" in lines[1] or "50% off_now \\ 'quoted'" in lines[1]
    with pytest.raises(QueryError) as caught:
        svc.rows_as_csv(table, max_rows=999, max_bytes=10**9)
    assert caught.value.code == "GRID_COPY_TOO_LARGE" and "1,000 rows" in caught.value.message
    with pytest.raises(QueryError) as caught:
        svc.rows_as_csv(table, max_rows=10**6, max_bytes=1000)
    assert caught.value.code == "GRID_COPY_TOO_LARGE" and "MB" in caught.value.message


def test_filters_read_in_words():
    words = [
        describe_filter(f)
        for f in normalize_filters(
            [
                {"column": "a", "op": "contains", "value": "x"},
                {"column": "b", "op": "range", "low": "1", "high": ""},
                {"column": "c", "op": "range", "low": "1", "high": "2"},
                {"column": "d", "op": "NOT_NULL"},
            ]
        )
    ]
    assert words == ["a contains “x”", "b ≥ 1", "1 ≤ c ≤ 2", "d is not NULL"]


def test_a_data_file_view_filters_and_sorts_and_case_is_ignored_beyond_ascii(
    empty_workspace, open_service
):
    # a CSV file is a view (no row id): the sort's tie-breaker is the other columns
    lines = ["city,n"] + [f"{'Zürich' if i % 3 == 0 else 'Bern'},{i % 4}" for i in range(90)]
    (empty_workspace / "data" / "cities.csv").write_text("\n".join(lines) + "\n")
    svc = open_service(empty_workspace)
    filters = [{"column": "city", "op": "contains", "value": "ZÜR"}]
    page = svc.filtered_page("cities", 0, 100, filters=filters, order_by=[("n", "desc")])
    assert page["row_count"] == 30 and {r[0] for r in page["rows"]} == {"Zürich"}
    assert [r[1] for r in page["rows"]] == sorted((r[1] for r in page["rows"]), reverse=True)
    pages = [
        svc.fetch_rows("cities", off, 7, order_by=[("n", "asc")], filters=filters)
        for off in range(0, 30, 7)
    ]
    assert sum(len(p) for p in pages) == 30


def test_numbers_at_the_edges_compare_exactly_or_are_refused(empty_workspace, open_service):
    svc = open_service(empty_workspace)
    sql = (
        "SELECT i AS n, i * 1e300 AS big FROM range(3) r(i) UNION ALL SELECT 9223372036854775807, 0"
    )
    table = svc.run_query(sql, result_label="edges")["cached_table_name"]
    top = [{"column": "n", "op": "equals", "value": "9223372036854775807"}]
    assert svc.filtered_page(table, filters=top)["row_count"] == 1  # 19 digits, an integer
    doubles = [{"column": "big", "op": "range", "low": "1.5e300"}]
    assert svc.filtered_page(table, filters=doubles)["row_count"] == 1  # 2e300
    with pytest.raises(QueryError) as caught:
        svc.filtered_page(table, filters=[{"column": "big", "op": "range", "high": "1e400"}])
    assert caught.value.code == "BAD_FILTER" and "beyond the range" in caught.value.message


def test_the_filters_a_column_offers_follow_its_type():
    assert ops_for("VARCHAR") == ["contains", "equals", "null", "not_null"]
    assert ops_for("DECIMAL(18,2)") == ops_for("DATE") == ["range", "equals", "null", "not_null"]
    assert ops_for("TIMESTAMP WITH TIME ZONE")[0] == "range"
    assert ops_for("INTEGER[]")[0] == "contains"  # a list is matched as its text
