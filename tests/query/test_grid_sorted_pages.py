"""A sorted grid page looked for among the first rows in the sort order only
(lantide.query.grid_sorted_pages): every page, filtered or not, in either direction,
equals the same rows of the plain full query, across page boundaries, with NULLs, ties,
NaN and infinities in the sort key, whatever the sample guessed (a margin too small
makes the narrowed query come back short, and the page is asked for again)."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lantide.query import grid_queries
from lantide.query.grid_filters import normalize_filters, where_clause
from lantide.query.grid_sorted_pages import narrowable, sorted_page
from lantide.query.ordering import normalize_order_by, order_by_clause, sort_keys

# sort key values per type: few distinct ones (ties) and NULLs
KEYS = {
    "INTEGER": st.one_of(st.none(), st.integers(-3, 3)),
    "BIGINT": st.one_of(st.none(), st.sampled_from([-(2**63), -1, 0, 7, 2**63 - 1])),
    "DOUBLE": st.one_of(
        st.none(), st.sampled_from([-math.inf, -1.5, -0.0, 0.0, 2.25, math.inf, math.nan])
    ),
    "DECIMAL(12,2)": st.one_of(st.none(), st.sampled_from(["-1.25", "0.00", "0.01", "99.99"])),
    "VARCHAR": st.one_of(st.none(), st.sampled_from(["", "a", "A", "ab", "b", "é", "z "])),
    "BOOLEAN": st.one_of(st.none(), st.booleans()),
    "DATE": st.one_of(
        st.none(), st.sampled_from(["-infinity", "0001-01-01", "2024-02-29", "infinity"])
    ),
    "TIMESTAMP_NS": st.one_of(
        st.none(),
        st.sampled_from(
            ["2024-01-01 00:00:00.000000001", "2024-01-01 00:00:00.000000999", "2024-01-01"]
        ),
    ),
    "TIMESTAMPTZ": st.one_of(st.none(), st.sampled_from(["2024-01-01 00:00+00", "infinity"])),
    "INTERVAL": st.one_of(st.none(), st.sampled_from(["1 day", "30 days", "1 month"])),
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    con = duckdb.connect(str(Path(tmp_path_factory.mktemp("grid_sorted")) / "cache.duckdb"))
    yield con
    con.close()


def _table(con, type_name: str, keys: list, tags: list[str]) -> None:
    con.execute("CREATE OR REPLACE TABLE t (id INTEGER, k VARCHAR, tag VARCHAR)")
    rows = [
        (i, None if k is None else str(k), tag)
        for i, (k, tag) in enumerate(zip(keys, tags, strict=True))
    ]
    if rows:
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    con.execute(f"ALTER TABLE t ALTER k TYPE {type_name}")


def _clauses(con, filters, order_by):
    columns = [(str(r[0]), str(r[1])) for r in con.execute("DESCRIBE t").fetchall()]
    where, params = where_clause(normalize_filters(filters), columns, "t")
    keys = normalize_order_by(order_by)
    names = [c for c, _ in columns]
    order = order_by_clause(keys, names, "t", has_rowid=True)
    name, direction = sort_keys(keys, names, "t")[0]
    return where, params, order, (name, direction, dict(columns)[name])


def _page(con, clauses, offset: int, limit: int, **margins):
    """Rows ``offset .. offset+limit`` of ``t`` under ``clauses`` (from :func:`_clauses`),
    narrowing tried whatever the table's size."""
    where, params, order, first = clauses
    return sorted_page(
        con.cursor(),
        "t",
        where=where,
        params=params,
        order=order,
        first_key=first,
        offset=offset,
        limit=limit,
        narrow_from_rows=0,
        **margins,
    )


def _same(rows: list) -> list[str]:
    return [repr(r) for r in rows]  # NaN is not equal to itself; its text is


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    type_name=st.sampled_from(sorted(KEYS)),
    data=st.data(),
    direction=st.sampled_from(["asc", "desc"]),
    second=st.sampled_from([None, ("tag", "desc"), ("id", "asc")]),
    filtered=st.booleans(),
    page=st.integers(1, 9),
    margins=st.sampled_from([(4.0, 32.0), (0.05,), (0.5,), (1.0,), (2.0,), (0.3, 1.2), ()]),
)
def test_every_page_is_the_plain_querys(
    db, type_name, data, direction, second, filtered, page, margins
):
    n = data.draw(st.integers(0, 120), label="rows")
    keys = data.draw(st.lists(KEYS[type_name], min_size=n, max_size=n), label="keys")
    tags = data.draw(st.lists(st.sampled_from(["x", "xy", "y"]), min_size=n, max_size=n))
    _table(db, type_name, keys, tags)
    filters = [{"column": "TAG", "op": "contains", "value": "x"}] if filtered else []
    order_by = [("K", direction)] + ([second] if second else [])
    clauses = _clauses(db, filters, order_by)
    where, params, order, _ = clauses
    reference = db.execute(f"SELECT * FROM t {where} {order}", params).fetchall()
    got, narrowed = [], 0
    for offset in range(0, len(reference) + page, page):
        answer = _page(db, clauses, offset, page, margins=margins)
        assert _same(answer.rows) == _same(reference[offset : offset + page]), offset
        got.extend(answer.rows)
        narrowed += answer.narrowed
    # every row once, none skipped, in the plain query's order
    assert _same(got) == _same(reference)
    assert sorted(r[0] for r in got) == sorted({r[0] for r in got})
    if not narrowable(type_name):
        assert narrowed == 0


def test_narrowed_pages_come_from_the_narrowed_query_and_match(db):
    # 200,000 rows, a key with many ties and NULLs, a filter passing about one in nine
    db.execute(
        """CREATE OR REPLACE TABLE t AS SELECT i AS id,
             CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 1000 END AS k,
             'row ' || (i % 97) AS tag
           FROM range(200000) r(i)"""
    )
    filters = [{"column": "tag", "op": "contains", "value": "row 1"}]
    for direction in ("asc", "desc"):
        clauses = _clauses(db, filters, [("k", direction)])
        where, params, order, _ = clauses
        reference = db.execute(f"SELECT * FROM t {where} {order}", params).fetchall()
        assert len(reference) > 20000
        for offset in (0, 256, 300, 1024):
            answer = _page(db, clauses, offset, 256)
            assert answer.narrowed and answer.tries >= 1
            assert answer.rows == reference[offset : offset + 256]
        # the last page, past the share narrowed: the plain query, still right
        last = len(reference) - 100
        answer = _page(db, clauses, last, 256)
        assert answer.rows == reference[last:]


def test_a_big_cached_result_pages_the_same_through_the_service(
    empty_workspace, open_service, monkeypatch
):
    """A real cached result above the narrowing size, paged as the grid pages it."""
    svc = open_service(empty_workspace)
    result = svc.run_query(
        """SELECT i AS id,
                  CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 104729) % 5000 END AS score,
                  DATE '2024-01-01' + CAST(i % 400 AS INTEGER) AS day,
                  'user ' || (i % 9973) AS who
           FROM range(250000) r(i)""",
        result_label="big result",
    )
    table = result["cached_table_name"]
    seen = []
    real = grid_queries.sorted_page

    def watched(*args, **kwargs):
        answer = real(*args, **kwargs)
        seen.append(answer)
        return answer

    monkeypatch.setattr(grid_queries, "sorted_page", watched)
    relation, _ = svc.browser.resolve_for_grid(table)
    filters = [{"column": "who", "op": "contains", "value": "USER 1"}]
    cases = [
        (filters, [("score", "asc")], "WHERE who ILIKE '%user 1%'", "score ASC NULLS LAST"),
        (filters, [("day", "desc")], "WHERE who ILIKE '%user 1%'", "day DESC NULLS LAST"),
        (None, [("score", "desc")], "", "score DESC NULLS LAST"),
    ]
    for flt, order_by, where, order in cases:
        plain = f"SELECT id FROM {relation} {where} ORDER BY {order}, rowid"
        reference = [r[0] for r in svc.engine.execute(plain)]
        for offset in (0, 256, 512, 1000, len(reference) - 256):
            rows = svc.fetch_rows(table, offset, 256, order_by=order_by, filters=flt)
            assert [r[0] for r in rows] == reference[offset : offset + 256], (order_by, offset)
        first = svc.filtered_page(table, 0, 256, order_by=order_by, filters=flt)
        assert first["row_count"] == len(reference)
        assert [r[0] for r in first["rows"]] == reference[:256]
    assert sum(answer.narrowed for answer in seen) >= 12  # the first pages were narrowed


def test_values_a_python_date_cannot_hold_still_narrow(db):
    db.execute(
        """CREATE OR REPLACE TABLE t AS SELECT i AS id,
             CASE WHEN i % 3 = 0 THEN DATE 'infinity'
                  WHEN i % 3 = 1 THEN CAST('300000-01-01' AS DATE)
                  ELSE DATE '2024-01-01' + CAST(i % 50 AS INTEGER) END AS k,
             'x' AS tag
           FROM range(3000) r(i)"""
    )
    for direction in ("asc", "desc"):
        clauses = _clauses(db, [], [("k", direction)])
        reference = db.execute(f"SELECT id FROM t {clauses[2]}").fetchall()
        for offset in (0, 1000, 2500):
            answer = _page(db, clauses, offset, 200, margins=(1.0, 4.0, 32.0))
            assert [(r[0],) for r in answer.rows] == reference[offset : offset + 200]
    assert dt.date.max.year < 300000  # what the text round trip is for
