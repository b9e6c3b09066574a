"""The guard decides from the parsed statement; the connection is confined as well."""

from __future__ import annotations

import pytest

from lantide.query.errors import QueryError
from lantide.query.guard import check
from tests.query.conftest import BENCHDATA

REFUSED = [
    ("select 1; select 2", "QUERY_REFUSED_MULTIPLE_STATEMENTS"),
    ("select 1; drop table customers", "QUERY_REFUSED_MULTIPLE_STATEMENTS"),
    ("CREATE TABLE x AS SELECT 1", "QUERY_REFUSED_DDL"),
    ("create or replace view v as select 1", "QUERY_REFUSED_DDL"),
    ("DROP TABLE customers", "QUERY_REFUSED_DDL"),
    ("ALTER TABLE customers ADD COLUMN x INT", "QUERY_REFUSED_DDL"),
    ("create macro m(x) as x + 1", "QUERY_REFUSED_DDL"),
    ("INSERT INTO customers VALUES (1)", "QUERY_REFUSED_DML"),
    ("UPDATE customers SET name = 'x'", "QUERY_REFUSED_DML"),
    ("DELETE FROM customers", "QUERY_REFUSED_DML"),
    ("ATTACH 'other.duckdb' AS o", "QUERY_REFUSED_ATTACH"),
    ("DETACH o", "QUERY_REFUSED_ATTACH"),
    ("USE o", "QUERY_REFUSED_ATTACH"),
    ("INSTALL httpfs", "QUERY_REFUSED_EXTENSION"),
    ("LOAD httpfs", "QUERY_REFUSED_EXTENSION"),
    ("COPY customers TO 'out.csv'", "QUERY_REFUSED_COPY"),
    ("EXPORT DATABASE 'dump'", "QUERY_REFUSED_EXPORT_IMPORT"),
    ("IMPORT DATABASE 'dump'", "QUERY_REFUSED_EXPORT_IMPORT"),
    ("PRAGMA table_info('customers')", "QUERY_REFUSED_SETTING"),
    ("SET threads = 1", "QUERY_REFUSED_SETTING"),
    ("RESET threads", "QUERY_REFUSED_SETTING"),
    ("CALL pragma_table_info('customers')", "QUERY_REFUSED_CALL"),
    ("BEGIN", "QUERY_REFUSED_NOT_SELECT"),
    ("CHECKPOINT", "QUERY_REFUSED_NOT_SELECT"),
    ("SELECT getenv('HOME')", "QUERY_REFUSED_FUNCTION"),
    ("SELECT * FROM query('SELECT 1')", "QUERY_REFUSED_FUNCTION"),
    ("SELECT * FROM postgres_scan('dbname=x', 'public', 't')", "QUERY_REFUSED_FUNCTION"),
    ("SELECT * FROM read_csv('/etc/passwd')", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
    ("SELECT * FROM read_csv('data/../../etc/passwd')", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
    (
        "SELECT * FROM read_parquet(['data/a.parquet', '/tmp/b.parquet'])",
        "QUERY_REFUSED_OUTSIDE_WORKSPACE",
    ),
    ("SELECT * FROM '/etc/hosts.csv'", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
    ("SELECT * FROM read_csv('https://example.com/x.csv')", "QUERY_REFUSED_NETWORK"),
    ("SELECT * FROM 's3://bucket/x.parquet'", "QUERY_REFUSED_NETWORK"),
]


@pytest.mark.parametrize("sql,code", REFUSED)
def test_refusals_have_codes_and_advice(tmp_path, sql, code):
    (tmp_path / "data").mkdir()
    with pytest.raises(Exception) as info:
        check(sql, data_dir=tmp_path / "data", workspace_root=tmp_path, known_table=lambda r: False)
    assert info.value.code == code
    assert info.value.hint and len(info.value.hint) > 20  # says what to do instead


@pytest.mark.parametrize(
    "sql",
    [
        "select ';' as semi, 'DROP TABLE customers' as text from customers",
        "-- DROP TABLE customers;\nselect 1",
        "/* ; DELETE FROM t; */ select 1 as x",
        "select 1;",
        "select 1;;  -- trailing comment",
        "with a as (select 1 as x) select * from a",
        "from customers",
        "select * from customers union all select * from customers",
        "values (1, 'a'), (2, 'b')",
        "pivot customers on segment using count(*)",
        "summarize customers",
        "select * from range(10)",
        "select * from read_csv('data/customers.csv', delim = ',')",
    ],
)
def test_read_only_statements_pass(tmp_path, sql):
    (tmp_path / "data").mkdir()
    parsed = check(sql, data_dir=tmp_path / "data", workspace_root=tmp_path)
    assert parsed.body and not parsed.body.rstrip().endswith(";")


def test_body_drops_trailing_comment_so_it_can_be_wrapped(tmp_path):
    parsed = check("select 1 as x -- the end", data_dir=tmp_path, workspace_root=tmp_path)
    assert parsed.body == "select 1 as x"


def test_tables_exclude_cte_names_and_keep_qualification(tmp_path):
    parsed = check(
        "with recent as (select * from orders) select * from recent r "
        'join "targets"."Regional" t on true join "odd name.csv" o on true',
        data_dir=tmp_path,
        workspace_root=tmp_path,
    )
    assert sorted(r.parts for r in parsed.tables) == [
        ("odd name.csv",),
        ("orders",),
        ("targets", "Regional"),
    ]
    assert parsed.cte_count == 1 and parsed.join_count == 2


def test_syntax_error_has_position(tmp_path):
    with pytest.raises(Exception) as info:
        check("select 1 +\nfrom", data_dir=tmp_path, workspace_root=tmp_path)
    assert info.value.code == "SQL_SYNTAX"
    assert info.value.position is not None


def _benchmark_queries():
    files = sorted(BENCHDATA.glob("tpch/q*.sql")) + sorted(BENCHDATA.glob("tpcds/q*.sql"))
    return files


def test_benchmark_corpus_is_present():
    files = _benchmark_queries()
    assert len([f for f in files if f.parent.name == "tpch"]) == 22
    assert len([f for f in files if f.parent.name == "tpcds"]) == 99


@pytest.mark.parametrize("path", _benchmark_queries(), ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_guard_never_refuses_tpch_or_tpcds(tmp_path, path):
    parsed = check(path.read_text(), data_dir=tmp_path, workspace_root=tmp_path)
    assert parsed.tables  # every benchmark query reads tables


def test_confinement_holds_without_the_guard(sample_service, tmp_path):
    """Straight to the engine, bypassing the guard: files outside and settings stay shut."""
    secret = tmp_path / "outside.csv"
    secret.write_text("a,b\n1,2\n")
    engine = sample_service.engine
    with pytest.raises(Exception) as info:
        engine.execute(f"SELECT * FROM read_csv('{secret}')")
    assert info.value.code == "QUERY_REFUSED_OUTSIDE_WORKSPACE"
    with pytest.raises(Exception) as info:
        engine.execute("SELECT * FROM read_csv('/etc/passwd')")
    assert info.value.code == "QUERY_REFUSED_OUTSIDE_WORKSPACE"
    for statement in (
        "SET enable_external_access = true",
        "SET allowed_directories = ['/']",
        "SET threads = 1",
    ):
        with pytest.raises(Exception) as info:
            engine.execute(statement)
        assert "locked" in info.value.message
    with pytest.raises(QueryError):
        engine.execute("SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')")
    # the workspace's own files stay readable, by absolute path
    data = sample_service.workspace.data_dir
    assert engine.execute(f"SELECT count(*) FROM read_csv('{data}/customers.csv')")[0][0] == 2000


def test_relative_paths_are_read_from_the_workspace(sample_service):
    result = sample_service.run_query(
        "SELECT count(*) AS n FROM read_csv('data/customers.csv', header = true) "
        "JOIN 'data/products.csv' ON true WHERE false"
    )
    assert result["preview"] == [[0]]
    result = sample_service.run_query("SELECT count(*) AS n FROM 'data/customers.csv'")
    assert result["preview"] == [[2000]]
