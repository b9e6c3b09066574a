"""Export writes the rows in the grid's order when asked (order_by, checked like
fetch_rows: names quoted, unknown columns refused)."""

from __future__ import annotations

import csv

import pytest

from lantide.query.errors import QueryError


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_export_follows_order_by(sample_service, tmp_path):
    target = tmp_path / "products.csv"
    sample_service.export_table("products", target, order_by=[("list_price", "desc")])
    header, *rows = _rows(target)
    prices = [float(r[header.index("list_price")]) for r in rows]
    assert len(prices) == 120 and prices == sorted(prices, reverse=True)
    expected = sample_service.fetch_rows("products", 0, 120, order_by=[("list_price", "desc")])
    assert [r[0] for r in rows] == [str(e[0]) for e in expected]


def test_export_without_order_keeps_the_tables_order(sample_service, tmp_path):
    target = tmp_path / "plain.csv"
    sample_service.export_table("products", target)
    own = sample_service.fetch_rows("products", 0, 120)
    assert [r[0] for r in _rows(target)[1:]] == [str(e[0]) for e in own]


def test_export_order_by_an_unknown_column_is_refused(sample_service, tmp_path):
    target = tmp_path / "x.csv"
    with pytest.raises(QueryError) as err:
        sample_service.export_table("products", target, order_by=[("nope; DROP", "asc")])
    assert err.value.code == "UNKNOWN_COLUMN"
    assert not target.exists()
