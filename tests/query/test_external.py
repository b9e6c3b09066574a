"""External databases through the real PostgreSQL ODBC driver, staged locally."""

from __future__ import annotations

import json

import pytest

from lantide.query.errors import TableNotFound

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_service(pg_server, sample_workspace, open_service):
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(
        ws,
        "shop",
        pg_server.connection_string,
        dialect="postgres",
        user=pg_server.user,
        password=pg_server.password,
    )
    return open_service(sample_workspace, large_remote_rows=1000)


def test_password_lives_in_the_keyring_only(
    pg_service, pg_server, sample_workspace, memory_keyring
):
    text = (sample_workspace / ".lantide" / "workspace.json").read_text()
    assert pg_server.password not in text
    assert json.loads(text)["connections"][0]["name"] == "shop"
    assert memory_keyring.get_password("lantide", "connection:shop") == pg_server.password
    cache = (sample_workspace / ".lantide" / "cache.duckdb").read_bytes()
    assert pg_server.password.encode() not in cache


def test_connection_string_with_a_password_moves_it_to_the_keyring(
    pg_server, sample_workspace, memory_keyring
):
    from lantide.query.connections import add_connection, test_connection
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(
        ws, "moved", pg_server.connection_string + f";PWD={pg_server.password}", user=pg_server.user
    )
    assert pg_server.password not in (sample_workspace / ".lantide" / "workspace.json").read_text()
    assert memory_keyring.get_password("lantide", "connection:moved") == pg_server.password
    assert test_connection(ws, "moved")["tables"] == 2


def test_show_tables_and_read_schema(pg_service):
    tables = pg_service.show_tables()
    external = {t["qualified_name"] for t in tables["tables"] if t["kind"] == "external"}
    assert {'"shop"."public"."customers"', '"shop"."sales"."invoices"'} <= external
    schema = pg_service.read_schema("shop.public.customers")
    assert schema["kind"] == "external"
    types = {c["name"]: c["type"] for c in schema["columns"]}
    assert types["customer_id"] == "INTEGER" and types["credit"] == "DECIMAL(12,2)"
    assert types["since"] == "DATE" and types["vip"] == "BOOLEAN"
    assert schema["ddl"].startswith(
        'CREATE TABLE "shop"."public"."customers" ("customer_id" INTEGER'
    )


def test_a_remote_statement_is_staged_then_joined_locally(pg_service):
    staged = pg_service.run_query(
        "SELECT region, count(*) AS n, sum(credit) AS credit, bool_or(vip) AS any_vip, "
        "min(since) AS first FROM shop.public.customers GROUP BY region ORDER BY region",
        result_label="pg regions",
    )
    assert staged["reason_code"] == "staged_external" and staged["source"] == "shop"
    assert staged["cached_table_name"] == "pg_regions" and staged["row_count"] == 3
    assert staged["preview"][0] == ["DE-BY", 100, 153237.5, True, "2024-01-02"]
    local = pg_service.run_query(
        "SELECT p.region, p.n, count(c.customer_id) AS sample_customers FROM pg_regions p "
        "LEFT JOIN customers c ON c.region = p.region GROUP BY ALL ORDER BY 1"
    )
    assert [r[0] for r in local["preview"]] == ["DE-BY", "FR-IDF", "US-CA"]
    assert all(r[2] > 0 for r in local["preview"])


def test_staging_streams_in_batches(pg_service, monkeypatch):
    from lantide.query import external

    monkeypatch.setattr(external, "BATCH_ROWS", 7)
    seen = []
    real = external._to_batch

    def spy(schema, rows):
        seen.append(len(rows))
        return real(schema, rows)

    monkeypatch.setattr(external, "_to_batch", spy)
    result = pg_service.run_query(
        "SELECT customer_id, name FROM shop.public.customers WHERE customer_id <= 20",
        result_label="few",
    )
    assert result["row_count"] == 20
    assert seen == [7, 7, 6]  # never more than one batch of rows in Python


def test_cross_source_statement_is_refused(pg_service):
    with pytest.raises(Exception) as info:
        pg_service.run_query(
            "SELECT * FROM shop.public.customers c JOIN orders o ON o.customer_id = c.customer_id"
        )
    assert info.value.code == "CROSS_SOURCE_QUERY" and "Stage each side first" in info.value.hint
    invalid = pg_service.validate_query("SELECT * FROM shop.sales.invoices i, customers c")
    assert invalid["ok"] is False and invalid["error"] == "CROSS_SOURCE_QUERY"


def test_large_remote_result_needs_the_warning_id_back(pg_service):
    sql = "SELECT * FROM shop.sales.invoices"
    first = pg_service.run_query(sql)
    assert first["status"] == "warning_required" and first["estimated_rows"] == 5000
    warning_id = first["large_remote_warning_id"]
    again = pg_service.run_query(sql)
    assert again["status"] == "warning_required"
    with pytest.raises(TableNotFound):
        pg_service.relation_info(f"staged_{warning_id}")
    other = pg_service.run_query(
        "SELECT invoice_id FROM shop.sales.invoices", large_remote_warning_id=warning_id
    )
    assert other["status"] == "warning_required"  # the id is for that statement only
    done = pg_service.run_query(sql, large_remote_warning_id=warning_id)
    assert done["status"] == "ok" and done["row_count"] == 5000 and len(done["preview"]) == 200
    assert done["columns"][3] == {"name": "issued", "type": "TIMESTAMP"}


def test_a_tab_on_a_connection_stages_and_feeds_local_tabs(pg_service):
    pg_service.create_sql_tab(
        "q3-churn", "pg_customers", "SELECT customer_id, region FROM shop.public.customers"
    )
    pg_service.create_sql_tab(
        "q3-churn", "pg_by_region", "SELECT region, count(*) AS n FROM pg_customers GROUP BY 1"
    )
    report = pg_service.source_run_sql_tab("q3-churn", "pg_by_region")
    assert [(t["tab"], t["status"]) for t in report["tabs"]] == [
        ("pg_customers", "ran"),
        ("pg_by_region", "ran"),
    ]
    assert report["tabs"][0]["reason_code"] == "persisted_tab"  # row 1 of the strategy wins
    assert report["steps"][0]["cached_table_name"] == "pg_customers"
    assert pg_service.relation_info("pg_by_region")["row_count"] == 3
    lineage = {t["tab"]: t for t in pg_service.lineage("q3-churn")["tabs"]}
    assert lineage["pg_customers"]["reads_external"] == ['"shop"."public"."customers"']
    # remote data may change: a tab reading a connection is never assumed up to date,
    # and so neither is what reads it
    again = pg_service.source_run_sql_tab("q3-churn", "pg_by_region")
    assert [t["status"] for t in again["tabs"]] == ["ran", "ran"]


def test_wrong_password_is_a_clear_error_without_the_secret(pg_service, memory_keyring):
    memory_keyring.set_password("lantide", "connection:shop", "wrong-password")
    with pytest.raises(Exception) as info:
        pg_service.run_query("SELECT 1 AS x FROM shop.public.customers LIMIT 1")
    assert info.value.code == "CONNECTION_ERROR" and "wrong-password" not in str(info.value)
    problems = pg_service.show_tables()["problems"]
    assert problems == [] or "wrong-password" not in json.dumps(problems)


def test_source_run_asks_before_staging_a_large_remote_tab(pg_service):
    pg_service.create_sql_tab("q3-churn", "pg_invoices", "SELECT * FROM shop.sales.invoices")
    pg_service.create_sql_tab(
        "q3-churn",
        "invoice_totals",
        "SELECT customer_id, sum(amount) AS amount FROM pg_invoices GROUP BY 1",
    )
    first = pg_service.source_run_sql_tab("q3-churn", "invoice_totals")
    assert [(t["tab"], t["status"]) for t in first["tabs"]] == [
        ("pg_invoices", "failed"),
        ("invoice_totals", "not_run"),
    ]
    error = first["tabs"][0]["error"]
    assert error["error"] == "LARGE_REMOTE_RESULT" and error["estimated_rows"] == 5000
    assert error["connection"] == "shop" and "Source Run again" in error["hint"]
    with pytest.raises(TableNotFound):
        pg_service.relation_info("pg_invoices")  # nothing was copied
    # an id issued for another statement confirms nothing
    other = pg_service.run_query("SELECT invoice_id FROM shop.sales.invoices")
    refused = pg_service.source_run_sql_tab(
        "q3-churn", "invoice_totals", large_remote_warning_id=[other["large_remote_warning_id"]]
    )
    assert refused["tabs"][0]["error"]["error"] == "LARGE_REMOTE_RESULT"
    done = pg_service.source_run_sql_tab(
        "q3-churn", "invoice_totals", large_remote_warning_id=[error["large_remote_warning_id"]]
    )
    assert [(t["tab"], t["status"]) for t in done["tabs"]] == [
        ("pg_invoices", "ran"),
        ("invoice_totals", "ran"),
    ]
    assert pg_service.relation_info("pg_invoices")["row_count"] == 5000
    # run_sql_tab asks the same way and takes the same confirmation
    asked = pg_service.run_sql_tab("q3-churn", "pg_invoices")
    assert asked["status"] == "warning_required"
    assert (
        pg_service.run_sql_tab(
            "q3-churn", "pg_invoices", large_remote_warning_id=error["large_remote_warning_id"]
        )["row_count"]
        == 5000
    )


def test_a_confirmation_from_an_earlier_command_line_call_counts(
    pg_server, sample_workspace, run_cli
):
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import load_settings, save_settings

    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(ws, "shop", pg_server.connection_string, user=pg_server.user)
    ws.close()
    settings = load_settings()
    settings.query.large_remote_rows = 1000
    save_settings(settings)
    env = {"LANTIDE_PASSWORD_SHOP": pg_server.password}
    sql = "SELECT * FROM shop.sales.invoices"
    first = run_cli("sql", sample_workspace, sql, env=env)
    assert first.returncode == 1 and "5,000 rows" in first.stderr
    warning_id = first.stderr.split("--large-remote-warning-id ")[1].split()[0]
    done = run_cli(
        "sql", sample_workspace, sql, "--large-remote-warning-id", warning_id, "--json", env=env
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["row_count"] == 5000


def test_a_cancel_reaches_a_slow_remote_statement(pg_service, pg_server):
    """The cancel is the driver's SQLCancel on the running statement, counting included (the
    large-result check counts the whole statement on the source first): the server stops
    it, and the caller gets QUERY_CANCELLED at once."""
    import threading
    import time

    scope = pg_service.cancel_scope("analyst")
    out: dict = {}

    def slow():
        try:
            with scope:
                out["result"] = pg_service.run_query(
                    "SELECT pg_sleep(60) AS slept FROM shop.public.customers LIMIT 1",
                    result_label="slow",
                )
        except Exception as exc:  # the test reads it below
            out["error"] = exc

    def running_on_server() -> bool:
        rows = pg_server.psql(
            "SELECT query FROM pg_stat_activity WHERE state = 'active' "
            "AND query ILIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()"
        )
        return bool(rows.strip())

    thread = threading.Thread(target=slow, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running_on_server():
        assert time.monotonic() < deadline, f"the statement never reached the server: {out}"
        time.sleep(0.05)
    started = time.monotonic()
    assert scope.cancel() >= 1
    thread.join(30)
    assert not thread.is_alive()
    assert out["error"].code == "QUERY_CANCELLED", out
    assert time.monotonic() - started < 20  # not the 60 s of the statement
    deadline = time.monotonic() + 10
    while running_on_server():
        assert time.monotonic() < deadline, "the server still runs the cancelled statement"
        time.sleep(0.05)
    with pytest.raises(TableNotFound):
        pg_service.relation_info("slow")


def test_a_cancel_arriving_as_a_statement_ends_never_touches_a_closed_handle(pg_service):
    """A cancel comes from another thread and may land as the statement closes its
    connection: SQLCancel on the freed handle crashed the process (a segfault in pyodbc,
    once in about 25 runs of the remote tab's cancel test). Here every statement's cancel
    is hammered from a second thread while, and after, it ends."""
    import contextlib
    import threading

    external = pg_service.external
    hooks: list = []
    lock = threading.Lock()

    @contextlib.contextmanager
    def register(hook):
        with lock:
            hooks.append(hook)
        yield

    stop = threading.Event()

    def hammer():
        while not stop.is_set():
            with lock:
                pending = list(hooks[-3:])
            for hook in pending:
                hook()

    thread = threading.Thread(target=hammer, daemon=True)
    thread.start()
    counted, stopped = 0, 0
    try:
        for _ in range(150):
            try:
                counted += external.count_rows("shop", "SELECT 1 AS n", register_cancel=register)
            except Exception as exc:  # a cancel that reached the statement in time
                assert getattr(exc, "code", None) == "QUERY_CANCELLED", exc
                stopped += 1
    finally:
        stop.set()
        thread.join(10)
    assert counted + stopped == 150 and hooks
