"""Table functions: the guard keeps an allow-list, and every one DuckDB has is decided.

The list of table functions comes from ``duckdb_functions()`` of a real Lantide engine at
test time, so a DuckDB upgrade that adds one makes these tests name it instead of letting
it through unseen.
"""

from __future__ import annotations

import pytest

from lantide.query import guard
from lantide.query.errors import QueryRefused
from lantide.query.guard import check


def _table_functions(engine) -> dict[str, list[list[str]]]:
    rows = engine.execute(
        "SELECT function_name, list(parameters) FROM duckdb_functions() "
        "WHERE function_type IN ('table', 'table_macro') GROUP BY ALL ORDER BY 1"
    )
    return {name: overloads for name, overloads in rows}


def _arguments(overloads) -> str:
    """Arguments for the shortest overload: the path first if it takes one, 1 for the rest."""
    params = min(overloads, key=len)
    args = ["1"] * len(params)
    if _takes_a_path(overloads) and args:
        args[0] = "'data/customers.csv'"
    return ", ".join(args)


def _takes_a_path(overloads) -> bool:
    return any(params and params[0] in ("path", "paths", "pattern", "file") for params in overloads)


def test_every_duckdb_table_function_is_classified(sample_service):
    """Allowed, a file reader (paths checked) or refused with a reason: nothing unknown."""
    names = set(_table_functions(sample_service.engine))
    classified = (
        guard.READ_ONLY_TABLE_FUNCTIONS | guard.FILE_READERS | set(guard.REFUSED_TABLE_FUNCTIONS)
    )
    assert not names - classified, (
        f"decide these new DuckDB table functions: {sorted(names - classified)}"
    )
    assert not guard.READ_ONLY_TABLE_FUNCTIONS & guard.FILE_READERS
    assert not (guard.READ_ONLY_TABLE_FUNCTIONS | guard.FILE_READERS) & set(
        guard.REFUSED_TABLE_FUNCTIONS
    )


def test_each_table_function_is_allowed_or_refused_with_a_code(sample_service):
    ws = sample_service.workspace
    for name, overloads in _table_functions(sample_service.engine).items():
        sql = f"SELECT * FROM {name}({_arguments(overloads)})"
        try:
            parsed = check(sql, data_dir=ws.data_dir, workspace_root=ws.root)
        except QueryRefused as exc:
            assert exc.code == "QUERY_REFUSED_FUNCTION", (name, exc.code)
            assert name in exc.message and len(exc.hint) > 20
            assert name not in guard.READ_ONLY_TABLE_FUNCTIONS | guard.FILE_READERS
            continue
        assert name in guard.READ_ONLY_TABLE_FUNCTIONS | guard.FILE_READERS, name
        if name in guard.FILE_READERS:
            assert parsed.files == ["data/customers.csv"], name
            assert str(ws.data_dir / "customers.csv") in parsed.body, name


def test_each_file_reader_refuses_a_path_outside_data(sample_service, tmp_path):
    ws = sample_service.workspace
    for name, overloads in _table_functions(sample_service.engine).items():
        if not _takes_a_path(overloads) or name not in guard.FILE_READERS:
            continue
        for path, code in (
            (str(tmp_path / "x.csv"), "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
            ("data/../workspace.json", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
            ("https://example.com/x", "QUERY_REFUSED_NETWORK"),
        ):
            for form in (f"'{path}'", f"['data/customers.csv', '{path}']"):
                with pytest.raises(QueryRefused) as info:
                    check(
                        f"SELECT * FROM {name}({form})",
                        data_dir=ws.data_dir,
                        workspace_root=ws.root,
                    )
                assert info.value.code == code, (name, form)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM checkpoint()",
        "SELECT * FROM force_checkpoint()",
        "SELECT * FROM main.checkpoint()",
        'SELECT * FROM "checkpoint"()',
        "SELECT * FROM enable_logging(storage = 'file', storage_path = 'data/')",
        "SELECT * FROM enable_profiling()",
        "SELECT * FROM truncate_duckdb_logs()",
        "SELECT * FROM json_execute_serialized_sql('{}')",
        "SELECT * FROM duckdb_secrets()",
        "SELECT * FROM pandas_scan(1)",
        "SELECT * FROM customers, LATERAL (SELECT * FROM checkpoint())",
        "WITH c AS (SELECT * FROM checkpoint()) SELECT * FROM c",
        "SELECT (SELECT count(*) FROM force_checkpoint())",
        "SUMMARIZE SELECT * FROM checkpoint()",
        "SELECT * FROM some_future_function()",
    ],
)
def test_side_effect_and_unknown_table_functions_are_refused(sample_service, sql):
    ws = sample_service.workspace
    with pytest.raises(QueryRefused) as info:
        check(sql, data_dir=ws.data_dir, workspace_root=ws.root)
    assert info.value.code == "QUERY_REFUSED_FUNCTION"


def test_checkpoint_does_not_run_through_the_service(sample_service):
    with pytest.raises(QueryRefused) as info:
        sample_service.run_query("SELECT * FROM checkpoint()")
    assert info.value.code == "QUERY_REFUSED_FUNCTION"


@pytest.mark.parametrize(
    "sql",
    [
        # a file reader whose path is not written in the statement cannot be checked
        "SELECT * FROM (SELECT 'data/customers.csv' AS p) t, read_text(t.p)",
        "SELECT * FROM read_text('data/' || 'customers.csv')",
        "SELECT * FROM read_csv(getvariable('p'))",
    ],
)
def test_file_reader_paths_must_be_written_out(sample_service, sql):
    ws = sample_service.workspace
    with pytest.raises(QueryRefused) as info:
        check(sql, data_dir=ws.data_dir, workspace_root=ws.root)
    assert info.value.code == "QUERY_REFUSED_FUNCTION"
    assert "string" in info.value.hint


@pytest.mark.parametrize(
    "sql,expected",
    [
        ("SELECT count(*) FROM read_text('data/customers.csv')", 1),
        ("SELECT count(*) FROM read_blob('data/*.csv')", 2),
        ("SELECT count(*) FROM glob('data/*.csv')", 2),
        ("SELECT count(*) FROM read_csv_auto('data/customers.csv')", 2000),
        ("SELECT count(*) FROM sniff_csv('data/customers.csv')", 1),
        ("SELECT count(*) > 0 FROM parquet_metadata('data/orders.parquet')", True),
        ("SELECT count(*) > 0 FROM parquet_schema('data/orders.parquet')", True),
        ("SELECT count(*) FROM read_parquet(['data/orders.parquet'])", 120000),
        ("SELECT count(*) FROM range(3)", 3),
        ("SELECT count(*) FROM duckdb_tables()", None),
        ("SELECT count(*) FROM customers WHERE name GLOB 'A*' OR name NOT GLOB '*.csv'", None),
    ],
)
def test_legitimate_reads_run(sample_service, sql, expected):
    result = sample_service.run_query(sql)
    if expected is not None:
        assert result["preview"] == [[expected]]
    else:
        assert len(result["preview"]) == 1


def test_json_file_readers_run_inside_data(sample_service):
    data = sample_service.workspace.data_dir
    (data / "events.json").write_text('[{"a": 1}, {"a": 2}]')
    for fn in ("read_json", "read_json_auto", "read_json_objects"):
        result = sample_service.run_query(f"SELECT count(*) FROM {fn}('data/events.json')")
        assert result["preview"] == [[2]], fn


def test_cli_reads_a_file_function_without_traceback(sample_workspace, run_cli):
    out = run_cli(
        "sql", sample_workspace, "SELECT count(*) AS n FROM read_text('data/*.csv')", "--json"
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    out = run_cli("sql", sample_workspace, "SELECT * FROM read_text('/etc/passwd')")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "outside the workspace" in out.stderr


def test_duckdb_parser_cross_check_sees_table_functions():
    """The second opinion works (if it silently returned nothing, it would check nothing)."""
    from lantide.query.guard_functions import duckdb_calls

    calls = duckdb_calls(
        "SELECT * FROM t JOIN LATERAL read_text(['data/a.txt', 'data/b.txt']) ON true "
        "WHERE getenv('x') IS NULL"
    )
    table_calls = [(c.name, c.paths) for c in calls if c.in_from]
    assert table_calls == [("read_text", ["data/a.txt", "data/b.txt"])]
    assert "getenv" in {c.name for c in calls if not c.in_from}


def test_every_side_effect_scalar_is_decided(sample_service):
    """DuckDB's scalar functions with side effects: harmless ones pass, the rest are refused."""
    from lantide.query import guard_functions as gf

    ws = sample_service.workspace
    names = {
        r[0]
        for r in sample_service.engine.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() "
            "WHERE has_side_effects AND function_type = 'scalar'"
        )
    }
    undecided = names - gf.HARMLESS_SIDE_EFFECT_SCALARS - set(gf.OUTSIDE_FUNCTIONS)
    assert not undecided, f"decide these side-effect functions: {sorted(undecided)}"
    for name in sorted(names & set(gf.OUTSIDE_FUNCTIONS)):
        with pytest.raises(QueryRefused) as info:
            check(f"SELECT {name}('s')", data_dir=ws.data_dir, workspace_root=ws.root)
        assert info.value.code == "QUERY_REFUSED_FUNCTION"


@pytest.mark.parametrize(
    "sql,code",
    [
        ("SUMMARIZE '/etc/hosts.csv'", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
        ("DESCRIBE '/etc/hosts.csv'", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
        ("PIVOT read_csv('/etc/passwd') ON a USING count(*)", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
        ("PIVOT checkpoint() ON a USING count(*)", "QUERY_REFUSED_FUNCTION"),
        (
            "VALUES ((SELECT content FROM read_text('/etc/passwd')))",
            "QUERY_REFUSED_OUTSIDE_WORKSPACE",
        ),
        ("SELECT * FROM read_text($$/etc/passwd$$)", "QUERY_REFUSED_FUNCTION"),
    ],
)
def test_other_statement_forms_reading_files(sample_service, sql, code):
    with pytest.raises(QueryRefused) as info:
        sample_service.run_query(sql)
    assert info.value.code == code


def test_summarize_a_file_inside_data_runs(sample_service):
    result = sample_service.run_query("SUMMARIZE 'data/customers.csv'")
    assert result["row_count"] >= 5


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM read_csv('data/customers.csv', store_rejects = true, "
        "rejects_table = 'orders', rejects_scan = 'customers')",
        "SELECT count(*) FROM read_csv('data/customers.csv', store_rejects := true)",
        "SELECT count(*) FROM read_csv_auto('data/customers.csv', \"REJECTS_TABLE\" = 'orders')",
        "SELECT * FROM sniff_csv('data/customers.csv', store_rejects = true)",
    ],
)
def test_reader_options_that_write_tables_are_refused(sample_service, sql):
    """store_rejects makes DuckDB create temporary tables named by the query, which then
    shadow the workspace's own tables ("orders" read 0 rows) for the rest of the session."""
    with pytest.raises(QueryRefused) as info:
        sample_service.run_query(sql)
    assert info.value.code == "QUERY_REFUSED_FUNCTION" and "ignore_errors" in info.value.hint
    assert sample_service.run_query("SELECT count(*) FROM orders")["preview"] == [[120000]]
    temp = sample_service.engine.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'temp'"
    )
    assert temp == [(0,)]


def test_a_statement_duckdb_splits_in_two_is_refused():
    """If DuckDB's parser ever ends a statement where sqlglot does not, the second opinion
    refuses it (here DuckDB is given two statements directly)."""
    from lantide.query.guard_functions import duckdb_calls

    with pytest.raises(ValueError):
        duckdb_calls("SELECT 1; SELECT 2")
    assert duckdb_calls("SELECT 1") == []
