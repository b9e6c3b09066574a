"""What a DuckDB type name holds: the one place that decides whether a column is a
number, a fraction, a date or time, for the grid, the charts, the profile, the result
checks and the CSV reader alike.

Type names are as DuckDB reports them (``cursor.description``, ``DESCRIBE``,
``sniff_csv``): parameters in brackets (``DECIMAL(18,3)``), a list or array as
``INTEGER[]`` / ``INTEGER[3]``, nested types as ``STRUCT(...)``, ``MAP(...)``,
``UNION(...)``. A list, array or nested type is never a number or a time, whatever it
holds; ``INTERVAL`` is a duration, not a number (a prefix test on ``INT`` took it for one).
"""

from __future__ import annotations

INTEGERS = frozenset(
    {
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
        "VARINT",
        "BIGNUM",
        # aliases DuckDB accepts in DDL (and other databases' staged columns may carry)
        "INT",
        "INT1",
        "INT2",
        "INT4",
        "INT8",
        "INT16",
        "SHORT",
        "LONG",
        "SIGNED",
    }
)
FLOATS = frozenset({"FLOAT", "DOUBLE", "REAL", "FLOAT4", "FLOAT8"})
DECIMALS = frozenset({"DECIMAL", "NUMERIC"})
DATES_AND_TIMESTAMPS = frozenset(
    {
        "DATE",
        "TIMESTAMP",
        "DATETIME",
        "TIMESTAMP WITH TIME ZONE",
        "TIMESTAMPTZ",
        "TIMESTAMP_S",
        "TIMESTAMP_MS",
        "TIMESTAMP_NS",
        "TIMESTAMP_US",
    }
)
TIMES_OF_DAY = frozenset({"TIME", "TIME WITH TIME ZONE", "TIMETZ", "TIME_NS"})


def base_type(type_name: str | None) -> str:
    """The type's name without parameters, upper case: ``DECIMAL(18,3)`` -> ``DECIMAL``;
    ``""`` for a list, array or nested type (``INTEGER[]``, ``STRUCT(a INTEGER)``)."""
    name = " ".join(str(type_name or "").upper().split())
    if name.endswith("]") or name.startswith(("STRUCT", "MAP", "UNION", "LIST")):
        return ""
    return name.split("(", 1)[0].strip()


def is_integer(type_name: str | None) -> bool:
    return base_type(type_name) in INTEGERS


def is_float(type_name: str | None) -> bool:
    """A binary floating-point number (it can hold NaN and infinity)."""
    return base_type(type_name) in FLOATS


def is_fractional(type_name: str | None) -> bool:
    """A number with a fraction: floating point or decimal."""
    base = base_type(type_name)
    return base in FLOATS or base in DECIMALS


def is_numeric(type_name: str | None) -> bool:
    base = base_type(type_name)
    return base in INTEGERS or base in FLOATS or base in DECIMALS


def is_date_or_timestamp(type_name: str | None) -> bool:
    return base_type(type_name) in DATES_AND_TIMESTAMPS


def is_temporal(type_name: str | None) -> bool:
    """A date, a timestamp or a time of day (an axis of time in a chart)."""
    base = base_type(type_name)
    return base in DATES_AND_TIMESTAMPS or base in TIMES_OF_DAY
