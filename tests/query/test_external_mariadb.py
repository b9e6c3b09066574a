"""External databases through a second real engine: MariaDB and its ODBC driver, staged
locally as PostgreSQL's are (tests/query/test_external.py). MariaDB's databases are ODBC
catalogs, not schemas; ``maria.shop.customers`` names one as it names a PostgreSQL schema."""

from __future__ import annotations

import json
import threading
import time

import pytest

from lantide.query.errors import TableNotFound
from tests.fakes.mariadb_server import maria_server  # noqa: F401

pytestmark = pytest.mark.mariadb


@pytest.fixture
def maria_service(maria_server, sample_workspace, open_service):  # noqa: F811
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace

    ws = Workspace.open(sample_workspace, lock=False)
    add_connection(
        ws,
        "maria",
        maria_server.connection_string,
        dialect="mysql",
        user=maria_server.user,
        password=maria_server.password,
    )
    return open_service(sample_workspace, large_remote_rows=1000)


def test_databases_are_listed_as_schemas_without_the_system_ones(maria_service):
    tables = maria_service.show_tables()
    external = sorted(t["qualified_name"] for t in tables["tables"] if t["kind"] == "external")
    # performance_schema's tables were listed, and every table without its database
    assert external == ['"maria"."sales"."invoices"', '"maria"."shop"."customers"']
    assert tables["problems"] == []


def test_read_schema_asks_the_driver_by_catalog(maria_service):
    schema = maria_service.read_schema("maria.shop.customers")
    assert schema["kind"] == "external"
    types = {c["name"]: c["type"] for c in schema["columns"]}
    assert types["customer_id"] == "INTEGER" and types["credit"] == "DECIMAL(12,2)"
    assert types["since"] == "DATE" and types["name"] == "VARCHAR(40)"
    assert types["vip"] == "TINYINT"  # MariaDB's BOOLEAN is TINYINT(1), read as it is


def test_a_remote_statement_is_staged_then_joined_locally(maria_service):
    staged = maria_service.run_query(
        "SELECT region, count(*) AS n, sum(credit) AS credit, max(vip) AS any_vip, "
        "min(since) AS first FROM maria.shop.customers GROUP BY region ORDER BY region",
        result_label="maria regions",
    )
    assert staged["reason_code"] == "staged_external" and staged["source"] == "maria"
    assert staged["cached_table_name"] == "maria_regions" and staged["row_count"] == 3
    assert staged["preview"][0] == ["DE-BY", 100, 153237.5, 1, "2024-01-02"]
    local = maria_service.run_query(
        "SELECT p.region, p.n, count(c.customer_id) AS sample_customers FROM maria_regions p "
        "LEFT JOIN customers c ON c.region = p.region GROUP BY ALL ORDER BY 1"
    )
    assert [r[0] for r in local["preview"]] == ["DE-BY", "FR-IDF", "US-CA"]
    assert all(r[2] > 0 for r in local["preview"])


def test_cross_source_statement_is_refused(maria_service):
    with pytest.raises(Exception) as info:
        maria_service.run_query(
            "SELECT * FROM maria.shop.customers c JOIN orders o ON o.customer_id = c.customer_id"
        )
    assert info.value.code == "CROSS_SOURCE_QUERY"


def test_large_remote_result_needs_the_warning_id_back(maria_service):
    sql = "SELECT * FROM maria.sales.invoices"
    first = maria_service.run_query(sql)
    assert first["status"] == "warning_required" and first["estimated_rows"] == 5000
    warning_id = first["large_remote_warning_id"]
    with pytest.raises(TableNotFound):
        maria_service.relation_info(f"staged_{warning_id}")
    done = maria_service.run_query(sql, large_remote_warning_id=warning_id)
    assert done["status"] == "ok" and done["row_count"] == 5000 and len(done["preview"]) == 200
    assert done["columns"][3] == {"name": "issued", "type": "TIMESTAMP"}
    assert done["preview"][0] == [1, 2, 1.5, "2025-01-01T01:00:00"]


def test_a_tab_on_a_connection_stages_and_feeds_local_tabs(maria_service):
    maria_service.create_sql_tab(
        "q3-churn", "maria_customers", "SELECT customer_id, region FROM maria.shop.customers"
    )
    maria_service.create_sql_tab(
        "q3-churn",
        "maria_by_region",
        "SELECT region, count(*) AS n FROM maria_customers GROUP BY 1",
    )
    report = maria_service.source_run_sql_tab("q3-churn", "maria_by_region")
    assert [(t["tab"], t["status"]) for t in report["tabs"]] == [
        ("maria_customers", "ran"),
        ("maria_by_region", "ran"),
    ]
    assert maria_service.relation_info("maria_by_region")["row_count"] == 3
    lineage = {t["tab"]: t for t in maria_service.lineage("q3-churn")["tabs"]}
    assert lineage["maria_customers"]["reads_external"] == ['"maria"."shop"."customers"']


def test_wrong_password_is_a_clear_error_without_the_secret(maria_service, memory_keyring):
    memory_keyring.set_password("lantide", "connection:maria", "wrong-password")
    with pytest.raises(Exception) as info:
        maria_service.run_query("SELECT 1 AS x FROM maria.shop.customers LIMIT 1")
    assert info.value.code == "CONNECTION_ERROR" and "wrong-password" not in str(info.value)
    assert "wrong-password" not in json.dumps(maria_service.show_tables()["problems"])


def test_password_lives_in_the_keyring_only(
    maria_service,
    maria_server,  # noqa: F811
    sample_workspace,
    memory_keyring,
):
    text = (sample_workspace / ".lantide" / "workspace.json").read_text()
    assert maria_server.password not in text
    assert memory_keyring.get_password("lantide", "connection:maria") == maria_server.password


def test_a_cancel_reaches_a_slow_remote_statement(maria_service, maria_server):  # noqa: F811
    """The cancel is the driver's SQLCancel on the running statement: the server stops it
    (it is gone from its process list), and the caller gets QUERY_CANCELLED at once."""
    scope = maria_service.cancel_scope("analyst")
    out: dict = {}

    def slow():
        try:
            with scope:
                out["result"] = maria_service.run_query(
                    "SELECT sleep(60) AS slept FROM maria.shop.customers LIMIT 1",
                    result_label="slow",
                )
        except Exception as exc:  # the test reads it below
            out["error"] = exc

    def running_on_server() -> bool:
        rows = maria_server.sql("SELECT info FROM information_schema.processlist;")
        return "sleep(60)" in rows.lower()

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
        maria_service.relation_info("slow")
