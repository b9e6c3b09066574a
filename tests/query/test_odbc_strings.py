"""ODBC connection strings built from host/port/database for the common drivers, the
dialect each driver speaks, and the fields read back from a string."""

from __future__ import annotations

import pytest

from lantide.query.odbc_strings import (
    build_connection_string,
    dialect_for_driver,
    fields_of,
    parse_connection_string,
)


@pytest.mark.parametrize(
    "driver,expected",
    [
        (
            "ODBC Driver 18 for SQL Server",
            "Driver={ODBC Driver 18 for SQL Server};Server=db.corp,1433;Database=sales",
        ),
        (
            "PostgreSQL Unicode",
            "Driver={PostgreSQL Unicode};Server=db.corp;Port=1433;Database=sales",
        ),
        (
            "MariaDB ODBC 3.1 Driver",
            "Driver={MariaDB ODBC 3.1 Driver};Server=db.corp;Port=1433;Database=sales",
        ),
    ],
)
def test_build_per_driver(driver, expected):
    assert build_connection_string(driver, "db.corp", 1433, "sales") == expected


@pytest.mark.parametrize(
    "driver,dialect",
    [
        ("ODBC Driver 17 for SQL Server", "tsql"),
        ("SQL Server", "tsql"),
        ("PostgreSQL ANSI", "postgres"),
        ("MySQL ODBC 8.0 Unicode Driver", "mysql"),
        ("MariaDB ODBC 3.1 Driver", "mysql"),
        ("Oracle in OraClient19Home1", None),
    ],
)
def test_dialect_follows_the_driver(driver, dialect):
    assert dialect_for_driver(driver) == dialect


def test_empty_fields_are_left_out_and_odd_values_braced():
    assert (
        build_connection_string("PostgreSQL Unicode", "h", "", "")
        == "Driver={PostgreSQL Unicode};Server=h"
    )
    text = build_connection_string("PostgreSQL Unicode", "h", 5432, "a;b={x}")
    assert text.endswith("Database={a;b={x}}}")
    assert parse_connection_string(text)["database"] == "a;b={x}"


@pytest.mark.parametrize(
    "driver",
    ["ODBC Driver 18 for SQL Server", "PostgreSQL Unicode", "MySQL ODBC 8.0 Unicode Driver"],
)
def test_fields_round_trip(driver):
    text = build_connection_string(driver, "10.0.0.5", "6000", "warehouse")
    assert fields_of(text) == {
        "driver": driver,
        "host": "10.0.0.5",
        "port": "6000",
        "database": "warehouse",
    }


def test_fields_of_a_hand_written_string():
    text = "DRIVER={PostgreSQL Unicode}; SERVER=localhost ;PORT=5433;DATABASE=shop;SSLmode=require"
    assert fields_of(text) == {
        "driver": "PostgreSQL Unicode",
        "host": "localhost",
        "port": "5433",
        "database": "shop",
    }
