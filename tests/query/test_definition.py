"""Go to definition: the table under the cursor, found in sqlglot's parse (never in a
column, a string or a comment that spells it), and what defines it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lantide.query.definition import table_at

SQL = (
    "-- orders per customer, from the orders tab\n"
    "WITH recent AS (SELECT * FROM orders WHERE note <> 'orders')\n"
    'SELECT r.customer, r.orders FROM recent r JOIN "customers" c ON c.id = r.customer\n'
    "JOIN labelled l ON TRUE JOIN book.Sheet1 s ON TRUE"
)


def at(word: str, nth: int = 0, shift: int = 1) -> int:
    """The offset ``shift`` characters into the ``nth`` occurrence of ``word`` in SQL."""
    start = -1
    for _ in range(nth + 1):
        start = SQL.index(word, start + 1)
    return start + shift


def test_the_table_under_the_cursor_and_nothing_else():
    found = table_at(SQL, at("orders", 2))  # FROM orders
    assert found is not None and found.ref.name == "orders"
    assert SQL[found.start : found.end] == "orders"
    assert table_at(SQL, at("orders", 1)) is None  # in the comment
    assert table_at(SQL, at("orders", 3)) is None  # in the string 'orders'
    assert table_at(SQL, at("orders", 4)) is None  # the column r.orders
    assert table_at(SQL, at("customer", 1)) is None  # r.customer: a column
    quoted = table_at(SQL, at('"customers"'))
    assert quoted is not None and quoted.ref.name == "customers"
    sheet = table_at(SQL, at("Sheet1"))
    assert sheet is not None and (sheet.ref.schema, sheet.ref.name) == ("book", "Sheet1")
    # the cursor right after the name still names it
    end = SQL.index("labelled") + len("labelled")
    assert table_at(SQL, end).ref.name == "labelled"


def test_a_cte_points_at_its_definition():
    found = table_at(SQL, at("recent r"))
    assert found is not None and found.cte_offset == SQL.index("recent")


def test_text_being_typed_has_no_definition():
    assert table_at("SELECT * FROM orders WHERE (", 16) is None


@pytest.fixture
def shop(empty_workspace: Path, open_service):
    from lantide.workspace.model import Workspace

    data = empty_workspace / "data"
    (data / "orders.csv").write_text("id,customer\n1,7\n2,8\n", encoding="utf-8")
    ws = Workspace.open(empty_workspace)
    try:
        ws.create_project("sales")
        ws.create_project("other")
    finally:
        ws.close()
    service = open_service(empty_workspace)
    service.create_sql_tab("sales", "big_orders", "SELECT * FROM orders WHERE id > 1")
    service.create_sql_tab("other", "far_tab", "SELECT 1 AS one")
    service.run_sql_tab("other", "far_tab")
    service.run_query("SELECT 2 AS two", result_label="kept result")
    return service


@pytest.mark.parametrize(
    "sql, expected",
    [
        ("SELECT * FROM big_orders", ("sql_tab", "big_orders", "sales")),
        ("SELECT * FROM far_tab", ("sql_tab", "far_tab", "other")),
        ("SELECT * FROM orders", ("table", '"orders"', None)),
        ("SELECT * FROM kept_result", ("table", '"kept_result"', None)),
        ("SELECT * FROM nowhere", ("unknown", '"nowhere"', None)),
    ],
)
def test_what_defines_it(shop, sql, expected):
    found = shop.definition_at("sales", sql, len(sql) - 1)
    assert found is not None
    assert (found["kind"], found["name"], found["project"]) == expected
    assert found["message"]


def test_no_table_at_the_cursor_is_none(shop):
    assert shop.definition_at("sales", "SELECT id FROM orders", 8) is None


def test_a_remote_tabs_names_are_the_connections(shop):
    sql = "-- lantide: connection=dw\nSELECT * FROM orders"
    found = shop.definition_at("sales", sql, len(sql) - 1)
    assert found["kind"] == "unknown" and "'dw'" in found["message"]
