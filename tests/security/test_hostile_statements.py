"""The standing adversarial suite: hostile SQL through every door, nothing changes.

Each statement of the corpus goes through ``lantide sql`` (a real subprocess) and through
the agent's tools on a real workspace (validate_query, run_query, create_sql_tab +
run_sql_tab). A hostile one is refused with its code; a legitimate one runs. Either way
the workspace's files hash the same, the cache database holds the same objects (tables,
views, attached databases, secrets, locked settings), nothing appears outside the
workspace, a secret outside it never shows, and no output holds a traceback.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.security

SECRET = "TOPSECRET-4242"

# (id, statement, expected refusal code; None: legitimate, it runs)
CORPUS = [
    # DDL
    ("create-table", "CREATE TABLE x AS SELECT 1", "QUERY_REFUSED_DDL"),
    ("create-view", "create or replace view customers_v as select 1", "QUERY_REFUSED_DDL"),
    ("drop-table", "DROP TABLE customers", "QUERY_REFUSED_DDL"),
    ("drop-view", "DROP VIEW IF EXISTS customers", "QUERY_REFUSED_DDL"),
    ("alter-rename", "ALTER TABLE customers RENAME TO c2", "QUERY_REFUSED_DDL"),
    ("create-macro", "CREATE MACRO m(x) AS x + 1", "QUERY_REFUSED_DDL"),
    ("create-secret", "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')", "QUERY_REFUSED_DDL"),
    ("create-sequence", "CREATE SEQUENCE seq1", "QUERY_REFUSED_DDL"),
    ("truncate", "TRUNCATE customers", "QUERY_REFUSED_DDL"),
    ("comment-on", "COMMENT ON TABLE customers IS 'x'", "QUERY_REFUSED_DDL"),
    ("create-type", "CREATE TYPE mood AS ENUM ('a', 'b')", "QUERY_REFUSED_DDL"),
    # DML
    ("insert", "INSERT INTO customers SELECT * FROM customers", "QUERY_REFUSED_DML"),
    (
        "insert-or-replace",
        "INSERT OR REPLACE INTO customers SELECT * FROM customers",
        "QUERY_REFUSED_DML",
    ),
    ("update", "UPDATE customers SET segment = 'x'", "QUERY_REFUSED_DML"),
    ("update-returning", "UPDATE customers SET segment = 'x' RETURNING *", "QUERY_REFUSED_DML"),
    ("delete", "DELETE FROM customers", "QUERY_REFUSED_DML"),
    (
        "merge",
        "MERGE INTO customers USING customers c2 ON false WHEN NOT MATCHED THEN INSERT VALUES (1)",
        "QUERY_REFUSED_DML",
    ),
    # ATTACH
    ("attach-memory", "ATTACH ':memory:' AS m", "QUERY_REFUSED_ATTACH"),
    ("attach-file", "ATTACH '{outside}/evil.duckdb' AS evil", "QUERY_REFUSED_ATTACH"),
    ("detach", "DETACH DATABASE IF EXISTS m", "QUERY_REFUSED_ATTACH"),
    ("use", "USE system", "QUERY_REFUSED_ATTACH"),
    # extensions
    ("install", "INSTALL httpfs", "QUERY_REFUSED_EXTENSION"),
    ("force-install", "FORCE INSTALL httpfs", "QUERY_REFUSED_EXTENSION"),
    ("load", "LOAD httpfs", "QUERY_REFUSED_EXTENSION"),
    ("load-path", "LOAD '{outside}/evil.duckdb_extension'", "QUERY_REFUSED_EXTENSION"),
    # COPY / EXPORT / IMPORT
    ("copy-to-outside", "COPY customers TO '{outside}/copied.csv'", "QUERY_REFUSED_COPY"),
    ("copy-query-to-data", "COPY (SELECT 1) TO 'data/new.csv'", "QUERY_REFUSED_COPY"),
    ("copy-from", "COPY customers FROM 'data/customers.csv'", "QUERY_REFUSED_COPY"),
    ("export-database", "EXPORT DATABASE '{outside}/dump'", "QUERY_REFUSED_EXPORT_IMPORT"),
    ("import-database", "IMPORT DATABASE '{outside}/dump'", "QUERY_REFUSED_EXPORT_IMPORT"),
    # settings
    ("pragma", "PRAGMA enable_profiling", "QUERY_REFUSED_SETTING"),
    ("pragma-assign", "PRAGMA threads = 1", "QUERY_REFUSED_SETTING"),
    ("set-external-access", "SET enable_external_access = true", "QUERY_REFUSED_SETTING"),
    ("set-global", "SET GLOBAL allowed_directories = ['/']", "QUERY_REFUSED_SETTING"),
    ("set-variable", "SET VARIABLE p = '/etc/passwd'", "QUERY_REFUSED_SETTING"),
    ("reset-all", "RESET ALL", "QUERY_REFUSED_SETTING"),
    # transactions and maintenance
    ("begin", "BEGIN TRANSACTION", "QUERY_REFUSED_NOT_SELECT"),
    ("rollback", "ROLLBACK", "QUERY_REFUSED_NOT_SELECT"),
    ("checkpoint", "CHECKPOINT", "QUERY_REFUSED_NOT_SELECT"),
    ("force-checkpoint-stmt", "FORCE CHECKPOINT", "QUERY_REFUSED_NOT_SELECT"),
    ("vacuum", "VACUUM", "QUERY_REFUSED_NOT_SELECT"),
    ("explain-analyze", "EXPLAIN ANALYZE SELECT 1", "QUERY_REFUSED_NOT_SELECT"),
    # CALL
    ("call-checkpoint", "CALL checkpoint()", "QUERY_REFUSED_CALL"),
    ("call-pragma", "CALL pragma_table_info('customers')", "QUERY_REFUSED_CALL"),
    # several statements
    ("two-statements", "SELECT 1; DROP TABLE customers", "QUERY_REFUSED_MULTIPLE_STATEMENTS"),
    (
        "statement-after-comment",
        "SELECT 1;\n/* harmless */ DELETE FROM customers",
        "QUERY_REFUSED_MULTIPLE_STATEMENTS",
    ),
    # table functions with side effects or unseen SQL
    ("checkpoint-fn", "SELECT * FROM checkpoint()", "QUERY_REFUSED_FUNCTION"),
    ("force-checkpoint-fn", "SELECT * FROM force_checkpoint()", "QUERY_REFUSED_FUNCTION"),
    (
        "enable-logging",
        "SELECT * FROM enable_logging(storage = 'file', storage_path = '{outside}/log')",
        "QUERY_REFUSED_FUNCTION",
    ),
    ("query-fn", "SELECT * FROM query('DROP TABLE customers')", "QUERY_REFUSED_FUNCTION"),
    (
        "serialized-sql",
        "SELECT * FROM json_execute_serialized_sql('{{}}')",
        "QUERY_REFUSED_FUNCTION",
    ),
    ("secrets-fn", "SELECT * FROM duckdb_secrets()", "QUERY_REFUSED_FUNCTION"),
    (
        "checkpoint-in-cte",
        "WITH c AS (SELECT * FROM checkpoint()) SELECT * FROM c",
        "QUERY_REFUSED_FUNCTION",
    ),
    (
        "checkpoint-in-summarize",
        "SUMMARIZE SELECT * FROM force_checkpoint()",
        "QUERY_REFUSED_FUNCTION",
    ),
    (
        "store-rejects",
        "SELECT count(*) FROM read_csv('data/customers.csv', store_rejects = true, "
        "rejects_table = 'orders')",
        "QUERY_REFUSED_FUNCTION",
    ),
    ("getenv", "SELECT getenv('HOME')", "QUERY_REFUSED_FUNCTION"),
    ("setval", "SELECT setval('seq1', 5)", "QUERY_REFUSED_FUNCTION"),
    # files outside data/
    ("read-passwd", "SELECT * FROM read_csv('/etc/passwd')", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
    (
        "read-text-outside",
        "SELECT * FROM read_text('{outside}/secret.csv')",
        "QUERY_REFUSED_OUTSIDE_WORKSPACE",
    ),
    (
        "read-blob-cache",
        "SELECT * FROM read_blob('.lantide/cache.duckdb')",
        "QUERY_REFUSED_OUTSIDE_WORKSPACE",
    ),
    (
        "dotdot",
        "SELECT * FROM read_text('data/../.lantide/workspace.json')",
        "QUERY_REFUSED_OUTSIDE_WORKSPACE",
    ),
    ("glob-root", "SELECT * FROM glob('/*')", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
    ("path-as-table", "SELECT * FROM '{outside}/secret.csv'", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
    (
        "list-with-outside",
        "SELECT * FROM read_text(['data/customers.csv', '{outside}/secret.csv'])",
        "QUERY_REFUSED_OUTSIDE_WORKSPACE",
    ),
    (
        "sniff-outside",
        "SELECT * FROM sniff_csv('{outside}/secret.csv')",
        "QUERY_REFUSED_OUTSIDE_WORKSPACE",
    ),
    (
        "parquet-meta-outside",
        "SELECT * FROM parquet_metadata('{outside}/x.parquet')",
        "QUERY_REFUSED_OUTSIDE_WORKSPACE",
    ),
    ("summarize-outside", "SUMMARIZE '{outside}/secret.csv'", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
    ("describe-outside", "DESCRIBE '{outside}/secret.csv'", "QUERY_REFUSED_OUTSIDE_WORKSPACE"),
    (
        "pivot-outside",
        "PIVOT read_csv('{outside}/secret.csv') ON token USING count(*)",
        "QUERY_REFUSED_OUTSIDE_WORKSPACE",
    ),
    ("url", "SELECT * FROM read_parquet('https://example.com/x.parquet')", "QUERY_REFUSED_NETWORK"),
    ("s3", "SELECT * FROM 's3://bucket/x.csv'", "QUERY_REFUSED_NETWORK"),
    (
        "computed-path",
        "SELECT * FROM read_text('{outside}' || '/secret.csv')",
        "QUERY_REFUSED_FUNCTION",
    ),
    (
        "lateral-path",
        "SELECT t.* FROM (SELECT '{outside}/secret.csv' AS p) s, read_text(s.p) t",
        "QUERY_REFUSED_FUNCTION",
    ),
    # comment and quoting tricks
    ("comment-then-drop", "/* SELECT */ DROP TABLE customers", "QUERY_REFUSED_DDL"),
    ("mixed-case", "DrOp TaBlE customers", "QUERY_REFUSED_DDL"),
    ("line-comment-hides-nothing", "-- SELECT 1\nDELETE FROM customers", "QUERY_REFUSED_DML"),
    ("unterminated-string", "SELECT 'abc; DROP TABLE customers", "SQL_SYNTAX"),
    ("unterminated-comment", "SELECT 1 /* DROP TABLE customers", "SQL_SYNTAX"),
    # CTE-wrapped writes
    (
        "cte-insert",
        "WITH a AS (SELECT 1) INSERT INTO customers SELECT * FROM a",
        "QUERY_REFUSED_DML",
    ),
    ("cte-delete", "WITH d AS (DELETE FROM customers RETURNING *) SELECT * FROM d", None),
    # legitimate statements: they run
    ("select", "SELECT count(*) AS n FROM customers", None),
    ("from-first", "FROM customers LIMIT 3", None),
    ("drop-in-string", "SELECT 'DROP TABLE customers; --' AS s", None),
    ("drop-in-comment", "SELECT 1 AS x /* ; DROP TABLE customers */", None),
    ("read-text-inside", "SELECT count(*) AS n FROM read_text('data/*.csv')", None),
    ("glob-inside", "SELECT count(*) AS n FROM glob('data/*')", None),
    ("pivot", "PIVOT customers ON segment USING count(*)", None),
    ("summarize", "SUMMARIZE customers", None),
    ("describe", "DESCRIBE customers", None),
    ("catalog", "SELECT count(*) AS n FROM duckdb_tables()", None),
]

# "cte-delete": DuckDB has no DML in a CTE; the guard refuses the statement (DML) or sqlglot
# cannot read it (syntax): either is a refusal. Its expected codes:
ALTERNATIVES = {"cte-delete": {"QUERY_REFUSED_DML", "SQL_SYNTAX"}}


def _ids():
    return [c[0] for c in CORPUS]


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("outside")
    (folder / "secret.csv").write_text(f"token\n{SECRET}\n")
    return folder


def _new_sample(tmp_path_factory) -> Path:
    """One workspace per door for the whole corpus: each statement is checked against the
    state just before it, and a refusal leaves that state as it was."""
    from lantide.workspace.sample import create_sample

    root = tmp_path_factory.mktemp("hostile") / "ws"
    create_sample(root)
    return root


@pytest.fixture(scope="module")
def cli_workspace(tmp_path_factory, outside) -> Path:
    return _new_sample(tmp_path_factory)


def _statement(sql: str, outside: Path) -> str:
    return sql.format(outside=outside)


def _file_hashes(root: Path) -> dict[str, str]:
    """Every file of the workspace but the cache database (checked by its objects) and the
    lock file."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith((".lantide/cache.duckdb", ".lantide/lock")):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


_OBJECTS_SQL = """
SELECT 'table' AS kind, database_name || '.' || schema_name || '.' || table_name
    FROM duckdb_tables()
UNION ALL SELECT 'view', database_name || '.' || schema_name || '.' || view_name FROM duckdb_views()
    WHERE NOT internal
UNION ALL SELECT 'database', database_name FROM duckdb_databases() WHERE NOT internal
UNION ALL SELECT 'sequence', sequence_name FROM duckdb_sequences()
UNION ALL SELECT 'macro', function_name FROM duckdb_functions() WHERE NOT internal
UNION ALL SELECT 'type', type_name FROM duckdb_types() WHERE NOT internal
UNION ALL SELECT 'temporary', table_name FROM duckdb_tables() WHERE temporary
ORDER BY ALL
"""


def _cache_objects(cache: Path) -> list[tuple]:
    import duckdb

    con = duckdb.connect(str(cache), read_only=True)
    try:
        return con.execute(_OBJECTS_SQL).fetchall()
    finally:
        con.close()


def _clean_output(text: str) -> None:
    assert "Traceback" not in text
    assert SECRET not in text


# -- through the command line ------------------------------------------------------------


@pytest.mark.parametrize("case", CORPUS, ids=_ids())
def test_cli(cli_workspace, run_cli, outside, case):
    sample_workspace = cli_workspace
    name, sql, code = case
    if not (sample_workspace / ".lantide" / "cache.duckdb").exists():
        prepared = run_cli("sql", sample_workspace, "SELECT 1 AS ready")  # the cache exists
        assert prepared.returncode == 0, prepared.stderr
    files, objects = (
        _file_hashes(sample_workspace),
        _cache_objects(sample_workspace / ".lantide" / "cache.duckdb"),
    )
    outside_before = sorted(p.name for p in outside.iterdir())
    out = run_cli("sql", sample_workspace, _statement(sql, outside), "--json")
    _clean_output(out.stdout + out.stderr)
    if code is None and name not in ALTERNATIVES:
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["status"] == "ok"
    else:
        assert out.returncode == 1, out.stdout
        printed = out.stderr.split("code: ")[-1].strip() if "code: " in out.stderr else None
        assert printed in ALTERNATIVES.get(name, {code}), out.stderr
    assert _file_hashes(sample_workspace) == files
    assert _cache_objects(sample_workspace / ".lantide" / "cache.duckdb") == objects
    assert sorted(p.name for p in outside.iterdir()) == outside_before


# -- through the agent's tools -----------------------------------------------------------


@pytest.fixture(scope="module")
def agent_workspace(tmp_path_factory, outside) -> Path:
    return _new_sample(tmp_path_factory)


@pytest.fixture(scope="module")
def agent_ctx(agent_workspace):
    """A tool context of a real agent session on the sample workspace (the keyring is not
    touched by these tools; the suite's per-test in-memory keyring does not matter)."""
    sample_workspace = agent_workspace
    from lantide.agent.services import EngineServices
    from lantide.agent.session import AgentSession
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import Settings
    from tests.agent.scripted_model import ScriptedModel

    ws = Workspace.open(sample_workspace)
    services = EngineServices(ws, Settings())
    model = ScriptedModel()
    session = AgentSession.open(
        ws, None, settings=Settings(), model=model, background_model=model, services=services
    )
    try:
        yield session.tool_context(), services
    finally:
        session.background.wait(5)
        session.close()
        services.close()
        ws.close()


def _objects_live(services) -> list[tuple]:
    return services.query().engine.execute(_OBJECTS_SQL)


def _locked_settings(services) -> list[tuple]:
    return services.query().engine.execute(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', "
        "'allowed_directories', 'lock_configuration', 'autoload_known_extensions') ORDER BY 1"
    )


@pytest.mark.parametrize("case", CORPUS, ids=_ids())
def test_agent_tools(agent_workspace, agent_ctx, outside, case):
    from lantide.agent.tools import default_registry

    sample_workspace = agent_workspace
    name, sql, code = case
    ctx, services = agent_ctx
    registry = default_registry()
    statement = _statement(sql, outside)
    codes = ALTERNATIVES.get(name, {code})
    files, objects = _file_hashes(sample_workspace), _objects_live(services)
    settings = _locked_settings(services)
    outside_before = sorted(p.name for p in outside.iterdir())
    tab = "hostile_" + name.replace("-", "_")
    calls = [
        ("validate_query", {"sql": statement}),
        ("run_query", {"sql": statement}),
        ("create_sql_tab", {"name": tab, "sql": statement, "project": "q3-churn"}),
    ]
    for tool, args in calls:
        outcome = registry.call(tool, args, ctx)
        text = json.dumps(outcome.result, default=str)
        _clean_output(text)
        assert outcome.result.get("error") != "TOOL_FAILED", (tool, text)
        if code is None and name not in ALTERNATIVES:
            assert outcome.ok, (tool, text)
        else:
            assert not outcome.ok and outcome.result.get("error") in codes, (tool, text)
    if code is None and name not in ALTERNATIVES:
        ran = registry.call("run_sql_tab", {"tab": tab, "project": "q3-churn"}, ctx)
        assert ran.ok, ran.result
        _clean_output(json.dumps(ran.result, default=str))
        # the new tab's file and its table are the only changes (and the ledger's steps)
        added = set(_file_hashes(sample_workspace)) - set(files)
        assert all(
            p == f"projects/q3-churn/sql/{tab}.sql" or p.startswith(".lantide/ledger/")
            for p in added
        ), added
        kept = _file_hashes(sample_workspace)
        logs = (".lantide/ledger/", ".lantide/conversations/")  # steps are recorded there
        assert {p: kept.get(p) for p in files if not p.startswith(logs)} == {
            p: h for p, h in files.items() if not p.startswith(logs)
        }
    else:
        assert not (sample_workspace / "projects" / "q3-churn" / "sql" / f"{tab}.sql").exists()
        assert _file_hashes(sample_workspace) == files
        assert _objects_live(services) == objects
    assert _locked_settings(services) == settings
    assert sorted(p.name for p in outside.iterdir()) == outside_before
