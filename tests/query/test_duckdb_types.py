"""One classification of DuckDB's type names (lantide.query.duckdb_types) for the grid,
the charts, the profile, the result checks and the CSV reader: before it, four copies
disagreed (the result checks took ``INTEGER[]`` for a number, the grid and the charts
took ``INTERVAL`` for one through an ``INT`` prefix). Checked against the names DuckDB
itself reports for real columns."""

from __future__ import annotations

import duckdb
import pytest

from lantide.query import chart_choice, duckdb_types, profile
from lantide.query.checks import result_stats

# (expression, number, fraction, time) as DuckDB types the column
CASES = [
    ("1::TINYINT", True, False, False),
    ("1::INTEGER", True, False, False),
    ("1::UHUGEINT", True, False, False),
    ("1.5::DOUBLE", True, True, False),
    ("1.5::FLOAT", True, True, False),
    ("1.5::DECIMAL(18,3)", True, True, False),
    ("DATE '2024-01-02'", False, False, True),
    ("TIMESTAMP '2024-01-02 03:04:05'", False, False, True),
    ("TIMESTAMPTZ '2024-01-02 03:04:05+00'", False, False, True),
    ("TIME '03:04:05'", False, False, True),
    ("INTERVAL 3 DAY", False, False, False),
    ("[1, 2]::INTEGER[]", False, False, False),
    ("[1.5, 2]::DOUBLE[2]", False, False, False),
    ("{'a': 1}", False, False, False),
    ("MAP {'a': 1}", False, False, False),
    ("'x'", False, False, False),
    ("true", False, False, False),
]


@pytest.fixture(scope="module")
def reported_types():
    con = duckdb.connect()
    try:
        names = [f"c{i}" for i in range(len(CASES))]
        select = ", ".join(
            f"{expr} AS {name}" for (expr, *_), name in zip(CASES, names, strict=True)
        )
        return [d[1] for d in con.execute(f"DESCRIBE SELECT {select}").fetchall()]
    finally:
        con.close()


def test_each_reported_type_is_classified_once_and_alike_everywhere(reported_types):
    for (expr, number, fraction, time), type_name in zip(CASES, reported_types, strict=True):
        assert duckdb_types.is_numeric(type_name) is number, (expr, type_name)
        assert duckdb_types.is_fractional(type_name) is fraction, (expr, type_name)
        assert duckdb_types.is_temporal(type_name) is time, (expr, type_name)
        # the parts that used to keep copies now agree with it
        assert chart_choice.is_numeric(type_name) is number, (expr, type_name)
        assert result_stats.is_numeric(type_name) is number, (expr, type_name)
        assert profile._is_numeric(type_name) is number, (expr, type_name)


def test_a_decimal_with_its_parameters_and_odd_spacing_is_a_number():
    assert duckdb_types.is_numeric("decimal( 18, 3 )")
    assert duckdb_types.base_type("TIMESTAMP  WITH TIME ZONE") == "TIMESTAMP WITH TIME ZONE"
    assert duckdb_types.base_type("STRUCT(a INTEGER)") == ""
