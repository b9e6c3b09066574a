"""fetch_rows(order_by=...): the grid's sorting, on real data files and cached tables."""

from __future__ import annotations

import pytest

from lantide.query.errors import QueryError


def _write_ties(data_dir, rows: int = 3000) -> None:
    # Few distinct keys, so most rows tie on the sort key; nulls every 7th row.
    lines = ["id,grp,score,Name"]
    for i in range(rows):
        score = "" if i % 7 == 0 else str((i * 37) % 101)
        lines.append(f"{i},{i % 3},{score},n{i % 11}")
    (data_dir / "ties.csv").write_text("\n".join(lines) + "\n")


def test_sorts_a_data_file_both_ways_with_nulls_last(empty_workspace, open_service):
    _write_ties(empty_workspace / "data")
    svc = open_service(empty_workspace)
    asc = svc.fetch_rows("ties", 0, 3000, order_by=[("score", "asc")])
    desc = svc.fetch_rows("ties", 0, 3000, order_by=[("SCORE", "DESC")])
    scores = [r[2] for r in asc]
    non_null = [s for s in scores if s is not None]
    assert non_null == sorted(non_null) and scores[len(non_null) :] == [None] * (
        3000 - len(non_null)
    )
    assert [r[2] for r in desc][: len(non_null)] == sorted(non_null, reverse=True)
    assert desc[-1][2] is None
    # the unsorted call keeps the file's order
    assert [r[0] for r in svc.fetch_rows("ties", 0, 5)] == [0, 1, 2, 3, 4]


def test_pages_of_a_sorted_table_neither_repeat_nor_skip(empty_workspace, open_service):
    _write_ties(empty_workspace / "data")
    svc = open_service(empty_workspace, threads=2)
    keys = [("grp", "desc"), ("Name", "asc")]
    for relation in (
        "ties",
        svc.run_query("SELECT * FROM ties", result_label="ties copy")["cached_table_name"],
    ):
        pages = [
            svc.fetch_rows(relation, offset, 250, order_by=keys) for offset in range(0, 3000, 250)
        ]
        ids = [r[0] for page in pages for r in page]
        assert sorted(ids) == list(range(3000)), relation
        whole = svc.fetch_rows(relation, 0, 3000, order_by=keys)
        assert [r[0] for r in whole] == ids
        assert [(r[1], r[3]) for r in whole] == sorted(
            ((r[1], r[3]) for r in whole), key=lambda k: (-k[0], k[1])
        )


def test_sorts_a_workbook_sheet(sample_service):
    rows = sample_service.fetch_rows(
        '"targets"."Segments"', 0, 100, order_by=[("target_customers", "desc")]
    )
    values = [r[2] for r in rows]
    assert values and values == sorted(values, reverse=True)


def test_unknown_columns_and_bad_directions_are_refused(empty_workspace, open_service):
    _write_ties(empty_workspace / "data")
    svc = open_service(empty_workspace)
    with pytest.raises(QueryError) as info:
        svc.fetch_rows("ties", 0, 10, order_by=[('score" DESC; --', "asc")])
    assert info.value.code == "UNKNOWN_COLUMN" and "ties" in info.value.message
    assert "score" in info.value.hint
    for bad in ([("score", "up")], [("score",)], "score", [(None, "asc")]):
        with pytest.raises(QueryError) as info:
            svc.fetch_rows("ties", 0, 10, order_by=bad)
        assert info.value.code == "BAD_ORDER_BY", bad


def test_odd_column_names_are_quoted(empty_workspace, open_service):
    (empty_workspace / "data" / "odd.csv").write_text(
        '"order","a ""b""",rowid\n2,x,9\n1,y,8\n3,z,7\n'
    )
    svc = open_service(empty_workspace)
    assert [r[0] for r in svc.fetch_rows("odd", 0, 10, order_by=[("order", "desc")])] == [3, 2, 1]
    assert [r[1] for r in svc.fetch_rows("odd", 0, 10, order_by=[('a "b"', "asc")])] == [
        "x",
        "y",
        "z",
    ]
    table = svc.run_query("SELECT * FROM odd", result_label="odd copy")["cached_table_name"]
    # a column named rowid hides DuckDB's row id; sorting by it still works
    assert [r[2] for r in svc.fetch_rows(table, 0, 10, order_by=[("rowid", "asc")])] == [7, 8, 9]
