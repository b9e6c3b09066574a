"""Remote SQL tabs against real PostgreSQL and MariaDB servers: a tab whose first line is
``-- lantide: connection=NAME`` runs wholly on that connection in its own dialect, lands as
the tab's cached table, and feeds local tabs in the same Source Run."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from lantide.query.errors import TableNotFound
from tests.fakes.mariadb_server import maria_server  # noqa: F401
from tests.query.conftest import connect_server, make_remote_tab

pytestmark = [pytest.mark.postgres, pytest.mark.mariadb]


@dataclass
class Engine:
    """One server and the SQL that only its dialect reads."""

    name: str  # the connection's name in the workspace
    server: object
    # region counts, written so that only this engine's dialect parses them as meant
    by_region: str
    invoices: str  # 5000 rows: past the large-result limit of 1000
    slow: str  # runs for a minute
    sleeping: str  # what the server's process list shows while ``slow`` runs

    def running(self) -> bool:
        if self.name == "pg":
            out = self.server.psql(
                "SELECT query FROM pg_stat_activity WHERE state = 'active' "
                "AND query ILIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()"
            )
        else:
            out = self.server.sql("SELECT info FROM information_schema.processlist;")
        return self.sleeping in out.lower()


def _pg(server) -> Engine:
    return Engine(
        "pg",
        server,
        # ::int and FILTER are PostgreSQL's
        "SELECT region, count(*)::int AS n, count(*) FILTER (WHERE vip) AS vips\n"
        "FROM public.customers GROUP BY region ORDER BY region",
        "SELECT invoice_id, amount FROM sales.invoices",
        "SELECT pg_sleep(60) AS slept FROM public.customers LIMIT 1",
        "pg_sleep(60)",
    )


def _maria(server) -> Engine:
    return Engine(
        "maria",
        server,
        # backticks and IF() are MySQL's
        "SELECT `region`, count(*) AS n, sum(IF(vip, 1, 0)) AS vips\n"
        "FROM shop.customers GROUP BY `region` ORDER BY `region`",
        "SELECT invoice_id, amount FROM sales.invoices",
        "SELECT sleep(60) AS slept FROM shop.customers LIMIT 1",
        "sleep(60)",
    )


@pytest.fixture(params=["pg", "maria"])
def remote(request, sample_workspace, open_service, memory_keyring):
    if request.param == "pg":
        server = request.getfixturevalue("pg_server")
        engine, dialect = _pg(server), "postgres"
    else:
        server = request.getfixturevalue("maria_server")
        engine, dialect = _maria(server), "mysql"
    connect_server(sample_workspace, engine.name, server, dialect)
    service = open_service(sample_workspace, large_remote_rows=1000)
    return service, engine


def test_a_mixed_chain_runs_remote_then_local(remote):
    service, engine = remote
    make_remote_tab(service, "regions", engine.by_region, engine.name)
    make_remote_tab(
        service, "vip_share", "SELECT region, vips / n AS share FROM regions ORDER BY region"
    )
    report = service.source_run_sql_tab("q3-churn", "vip_share")
    assert [(t["tab"], t["status"]) for t in report["tabs"]] == [
        ("regions", "ran"),
        ("vip_share", "ran"),
    ]
    regions = service.run_query("SELECT * FROM regions ORDER BY region")
    assert [r[:2] for r in regions["preview"]] == [["DE-BY", 100], ["FR-IDF", 100], ["US-CA", 100]]
    assert sum(r[2] for r in regions["preview"]) == 42  # every 7th of 300 customers
    lineage = {t["tab"]: t for t in service.lineage("q3-churn")["tabs"]}
    assert lineage["regions"]["reads_external"] and lineage["regions"]["reads_tabs"] == []
    assert lineage["vip_share"]["reads_tabs"] == ["regions"]
    step = report["steps"][0]
    assert step["cached_table_name"] == "regions" and engine.by_region in step["sql"]
    assert report["tabs"][0]["reason_code"] == "persisted_tab"


def test_the_statement_is_checked_in_the_engines_dialect(remote, sample_workspace):
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    service, engine = remote
    refused = {
        "ddl": "CREATE TABLE x (a int)",
        "dml": "DELETE FROM sales.invoices",
        "two": "SELECT 1; SELECT 2",
        "into": "SELECT * INTO copy FROM sales.invoices",
        "file": (
            "SELECT pg_read_file('/etc/passwd')"
            if engine.name == "pg"
            else "SELECT load_file('/etc/passwd')"
        ),
    }
    project = Project.load(sample_workspace, "q3-churn")
    for name, sql in refused.items():
        with pytest.raises(Exception) as info:  # refused when the tab is made
            make_remote_tab(service, f"bad_{name}", sql, engine.name)
        assert info.value.code.startswith("QUERY_REFUSED"), (name, info.value.code)
        assert not tab_path(project, f"bad_{name}").exists()
        # and when the analyst writes the file by hand: refused before the source sees it
        tab_path(project, f"bad_{name}").write_text(
            f"-- lantide: connection={engine.name}\n{sql}\n"
        )
        with pytest.raises(Exception) as info:
            service.run_sql_tab("q3-churn", f"bad_{name}")
        assert info.value.code.startswith("QUERY_REFUSED"), (name, info.value.code)
    # what only the engine's dialect reads runs
    make_remote_tab(service, "regions", engine.by_region, engine.name)
    assert service.run_sql_tab("q3-churn", "regions")["row_count"] == 3


def test_a_missing_connection_fails_its_tab_only(remote, sample_workspace):
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    service, engine = remote
    with pytest.raises(Exception) as info:  # not made with a connection nobody has
        make_remote_tab(service, "gone", "SELECT 1 AS one", "nowhere")
    assert info.value.code == "CONNECTION_NOT_FOUND"
    # a tab written elsewhere (a colleague's workspace) names a connection not set up here
    path = tab_path(Project.load(sample_workspace, "q3-churn"), "gone")
    path.write_text("-- lantide: connection=nowhere\nSELECT 1 AS one\n")
    make_remote_tab(service, "local_part", "SELECT count(*) AS n FROM customers")
    make_remote_tab(service, "both", "SELECT * FROM gone, local_part")
    report = service.source_run_sql_tab("q3-churn", "both")
    status = {t["tab"]: t["status"] for t in report["tabs"]}
    assert status == {"gone": "failed", "local_part": "ran", "both": "not_run"}
    failed = next(t for t in report["tabs"] if t["tab"] == "gone")
    assert failed["error"]["error"] == "CONNECTION_NOT_FOUND"
    assert "nowhere" in failed["error"]["message"]


def test_a_large_remote_tab_asks_first(remote):
    service, engine = remote
    make_remote_tab(service, "invoices", engine.invoices, engine.name)
    first = service.run_sql_tab("q3-churn", "invoices")
    assert first["status"] == "warning_required" and first["estimated_rows"] == 5000
    with pytest.raises(TableNotFound):
        service.relation_info("invoices")
    done = service.run_sql_tab(
        "q3-churn", "invoices", large_remote_warning_id=first["large_remote_warning_id"]
    )
    assert done["row_count"] == 5000 and service.relation_info("invoices")["row_count"] == 5000


def test_the_agents_rules_hold_for_a_remote_tab(remote, sample_workspace):
    from lantide.workspace.model import Project

    service, engine = remote
    make_remote_tab(service, "regions", engine.by_region, engine.name)
    Project.load(sample_workspace, "q3-churn").approve_plan()
    with pytest.raises(Exception) as info:
        service.run_sql_tab("q3-churn", "regions")  # the agent's run: a purpose is needed
    assert info.value.code == "PURPOSE_REQUIRED"
    done = service.run_sql_tab("q3-churn", "regions", purpose="regions on the source")
    assert done["status"] == "ok" and done["step"]["purpose"] == "regions on the source"


def test_a_cancel_reaches_a_slow_remote_tab(remote):
    service, engine = remote
    make_remote_tab(service, "slow", engine.slow, engine.name)
    scope = service.cancel_scope("analyst")
    out: dict = {}

    def run():
        try:
            with scope:
                out["result"] = service.run_sql_tab("q3-churn", "slow")
        except Exception as exc:  # read below
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    # on the server, and under the scope on our side: the server still shows a statement
    # the driver has answered as active for a moment (the EXPLAIN before the copy)
    while not (engine.running() and scope.running):
        assert time.monotonic() < deadline, f"the statement never reached the server: {out}"
        time.sleep(0.05)
    scope.cancel()  # (between two statements it counts none, and the next one stops at once)
    thread.join(30)
    assert out["error"].code == "QUERY_CANCELLED", out
    deadline = time.monotonic() + 10
    while engine.running():
        assert time.monotonic() < deadline, "the server still runs the cancelled statement"
        time.sleep(0.05)
    with pytest.raises(TableNotFound):
        service.relation_info("slow")


def test_the_source_runs_it_read_only(remote):
    """A function the refusal lists do not know (here one the server's owner wrote) still
    cannot write: Lantide's session on the source is read-only."""
    service, engine = remote
    if engine.name == "pg":
        engine.server.psql(
            "CREATE TABLE IF NOT EXISTS public.touched (n int);"
            "CREATE OR REPLACE FUNCTION public.touch() RETURNS int LANGUAGE sql VOLATILE "
            "AS $$ INSERT INTO public.touched VALUES (1) RETURNING n $$;"
        )
        call, count = "SELECT public.touch() AS t", "SELECT count(*) FROM public.touched"
        written = lambda: engine.server.psql(count).strip()  # noqa: E731
    else:
        engine.server.sql(
            "CREATE TABLE IF NOT EXISTS shop.touched (n int);\n"
            "DROP FUNCTION IF EXISTS shop.touch;\n"
            "DELIMITER //\n"
            "CREATE FUNCTION shop.touch() RETURNS INT MODIFIES SQL DATA "
            "BEGIN INSERT INTO shop.touched VALUES (1); RETURN 1; END //\n"
            "DELIMITER ;\n"
            "GRANT EXECUTE ON shop.* TO 'lantide'@'127.0.0.1';\n"
        )
        call = "SELECT shop.touch() AS t"
        written = lambda: engine.server.sql("SELECT count(*) FROM shop.touched;").strip()  # noqa: E731
    try:
        make_remote_tab(service, "touch", call, engine.name)
        with pytest.raises(Exception) as info:
            service.run_sql_tab("q3-churn", "touch")
        assert info.value.code == "REMOTE_QUERY_ERROR", info.value
        assert "read" in str(info.value).lower() and "only" in str(info.value).lower()
        assert written() == "0"
    finally:  # the servers are shared by the session's tests, which count their tables
        if engine.name == "pg":
            engine.server.psql("DROP FUNCTION public.touch(); DROP TABLE public.touched;")
        else:
            engine.server.sql("DROP FUNCTION shop.touch;\nDROP TABLE shop.touched;\n")


def test_source_run_skips_when_nothing_changed_on_either_side(remote, sample_workspace):
    """The source digests the remote tab's rows (nothing is fetched); an unchanged digest
    and unchanged local inputs skip the chain, a changed remote row runs it again."""
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    service, engine = remote
    make_remote_tab(service, "regions", engine.by_region, engine.name)
    make_remote_tab(
        service, "vip_share", "SELECT region, vips / n AS share FROM regions ORDER BY region"
    )
    first = service.source_run_sql_tab("q3-churn", "vip_share")
    assert [t["status"] for t in first["tabs"]] == ["ran", "ran"]
    again = service.source_run_sql_tab("q3-churn", "vip_share")
    assert [t["status"] for t in again["tabs"]] == ["skipped", "skipped"]
    # the local side changes: only the local tab runs
    project = Project.load(sample_workspace, "q3-churn")
    tab_path(project, "vip_share").write_text("SELECT region, vips FROM regions ORDER BY region\n")
    local = service.source_run_sql_tab("q3-churn", "vip_share")
    assert [t["status"] for t in local["tabs"]] == ["skipped", "ran"]
    # the remote side changes: the remote tab runs, and so does what reads it
    flip = "UPDATE {t} SET vip = NOT vip WHERE customer_id = 1"
    table = "public.customers" if engine.name == "pg" else "shop.customers"

    def flip_vip() -> None:
        if engine.name == "pg":
            engine.server.psql(flip.format(t=table))
        else:
            engine.server.sql(flip.format(t=table) + ";")

    flip_vip()
    try:
        changed = service.source_run_sql_tab("q3-churn", "vip_share")
        assert [t["status"] for t in changed["tabs"]] == ["ran", "ran"]
        vips = service.run_query("SELECT sum(vips) FROM regions")["preview"][0][0]
        assert vips == 43  # customer 1 is a VIP now
    finally:
        flip_vip()  # the servers are shared by the session's tests
