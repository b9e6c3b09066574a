"""The explorer's column listing and hover profile, in the engine: each kind of table lists
its columns with their types and quoted names; a connection table is described from the
connection's catalog without staging it, an unreachable connection answers a problem; a
column's summary is computed in DuckDB and kept per table fingerprint."""

from __future__ import annotations

import os
import time

import pytest


@pytest.fixture
def columns_service(empty_workspace, open_service):
    data = empty_workspace / "data"
    (data / 'q3 "sales".csv').write_text(
        'order date,amount,"say ""hi"""\n2025-01-02,10.5,a\n2025-01-03,,b\n2025-01-04,7,a\n',
        encoding="utf-8",
    )
    return open_service(empty_workspace)


def test_a_data_file_lists_its_columns_with_types_and_quoted_names(columns_service):
    answer = columns_service.table_columns('"q3 ""sales"""')
    assert answer["sql_name"] == '"q3 ""sales"""'
    assert answer["kind"] == "data_file" and "problem" not in answer
    assert [(c["name"], c["type"], c["sql_name"]) for c in answer["columns"]] == [
        ("order date", "DATE", '"order date"'),
        ("amount", "DOUBLE", '"amount"'),
        ('say "hi"', "VARCHAR", '"say ""hi"""'),
    ]


def test_a_sheet_and_a_cached_table_list_their_columns(sample_service):
    sheet = sample_service.table_columns('"targets"."Regional"')
    assert sheet["sql_name"] == '"targets"."Regional"'
    assert ("target_revenue", "BIGINT") in [(c["name"], c["type"]) for c in sheet["columns"]]
    sample_service.run_sql_tab("q3-churn", "clean_orders", purpose_required=False)
    cached = sample_service.table_columns("clean_orders")
    assert cached["kind"] == "cached_table"
    assert [c["name"] for c in cached["columns"]][-1] == "net_revenue"


def test_an_unknown_table_answers_a_problem_not_an_exception(columns_service):
    answer = columns_service.table_columns("nowhere")
    assert answer["columns"] == []
    assert answer["problem"]["code"] == "TABLE_NOT_FOUND"
    assert "nowhere" in answer["problem"]["message"]


def test_a_column_summary_counts_in_duckdb_and_is_kept_per_fingerprint(columns_service, tmp_path):
    table = '"q3 ""sales"""'
    first = columns_service.column_profile(table, "AMOUNT")  # case does not count
    assert first["name"] == "amount" and first["row_count"] == 3
    assert first["null_count"] == 1 and first["distinct_count"] == 2
    assert (first["min"], first["max"]) == (7.0, 10.5)
    assert first["fingerprint"]
    # unchanged file: the kept answer, not a new scan
    assert columns_service.column_profile(table, "amount") is first
    # the file changes (size and time): scanned again
    path = columns_service.workspace.data_dir / 'q3 "sales".csv'
    path.write_text("order date,amount,x\n2025-01-02,1,a\n", encoding="utf-8")
    later = time.time() + 5
    os.utime(path, (later, later))
    again = columns_service.column_profile(table, "amount")
    assert again["row_count"] == 1 and again["max"] == 1.0
    assert again["fingerprint"] != first["fingerprint"]


def test_an_unknown_column_is_refused_with_the_real_ones(columns_service):
    from lantide.query.errors import QueryError

    with pytest.raises(QueryError) as caught:
        columns_service.column_profile('"q3 ""sales"""', "revenue")
    assert caught.value.code == "COLUMN_NOT_FOUND" and "amount" in caught.value.hint


@pytest.mark.postgres
def test_a_connection_table_is_described_from_its_catalog_without_staging(
    pg_server, sample_workspace, open_service
):
    from lantide.query.connections import add_connection
    from lantide.query.errors import QueryError
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(
        ws, "shop", pg_server.connection_string, user=pg_server.user, password=pg_server.password
    )
    add_connection(ws, "gone", "Driver={PostgreSQL Unicode};Server=127.0.0.1;Port=9;Database=x")
    service = open_service(sample_workspace)
    before = {t["name"] for t in service.show_tables()["tables"] if t["kind"] == "cached_table"}
    answer = service.table_columns('"shop"."sales"."invoices"')
    assert answer["kind"] == "external" and answer["sql_name"] == '"shop"."sales"."invoices"'
    assert [(c["name"], c["type"]) for c in answer["columns"]] == [
        ("invoice_id", "BIGINT"),
        ("customer_id", "INTEGER"),
        ("amount", "DOUBLE"),
        ("issued", "TIMESTAMP"),
    ]
    after = {t["name"] for t in service.show_tables()["tables"] if t["kind"] == "cached_table"}
    assert after == before  # nothing staged
    down = service.table_columns('"gone"."orders"')
    assert down["columns"] == [] and "cannot connect" in down["problem"]["message"]
    with pytest.raises(QueryError) as caught:
        service.column_profile('"shop"."sales"."invoices"', "amount")
    assert caught.value.code == "PROFILE_REMOTE_TABLE"


def test_names_with_dots_keywords_and_quotes_are_quoted_whole(empty_workspace, open_service):
    (empty_workspace / "data" / "a.b.csv").write_text('select,"we""ird col"\n1,2\n3,\n')
    service = open_service(empty_workspace)
    listed = [t["qualified_name"] for t in service.show_tables()["tables"]]
    assert listed == ['"a.b"']  # one table whose name holds a dot, not schema a
    answer = service.table_columns(listed[0])
    assert [c["sql_name"] for c in answer["columns"]] == ['"select"', '"we""ird col"']
    summary = service.column_profile('"a.b"', 'we"ird col')
    assert (summary["null_count"], summary["min"], summary["max"]) == (1, 2, 2)
