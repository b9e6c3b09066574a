"""The large-result check's row estimate, against real PostgreSQL and MariaDB servers: the
engine's own EXPLAIN spares the COUNT when the result is clearly small, the COUNT still
decides otherwise, and a copy whose estimate was wrong stops at the limit with the same
``warning_required``.

What the source ran is read from the server's own statement log (PostgreSQL's
``log_statement`` for the test's role, MariaDB's general log), not from Lantide."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from lantide.query.errors import TableNotFound
from tests.fakes.mariadb_server import maria_server  # noqa: F401
from tests.query.conftest import connect_server, make_remote_tab

pytestmark = [pytest.mark.postgres, pytest.mark.mariadb]

LIMIT = 1000


@dataclass
class Source:
    name: str
    server: object
    small: str  # 3 rows, which the engine's plan knows
    # more than LIMIT rows, which the engine's plan estimates at far fewer
    underestimated: str
    underestimated_rows: int

    @contextmanager
    def statements(self) -> Iterator[Callable[[], list[str]]]:
        """The statements the server ran for Lantide's user while inside."""
        if self.name == "pg":
            data = self.server.psql("SHOW data_directory").strip()
            log = Path(data).parent / "log"  # pg_ctl's -l file (tests/query/conftest.py)
            start = log.stat().st_size
            self.server.psql("ALTER ROLE lantide SET log_statement = 'all'")

            def read() -> list[str]:
                with log.open(encoding="utf-8", errors="replace") as f:
                    f.seek(start)
                    text = f.read()
                parts = re.split(r"LOG:\s+(?:statement|execute [^:]*):\s", text)[1:]
                return [re.split(r"\n\S*\d{4}-\d\d-\d\d ", p)[0] for p in parts]

            try:
                yield read
            finally:
                self.server.psql("ALTER ROLE lantide RESET log_statement")
        else:
            self.server.sql(
                "SET GLOBAL log_output = 'TABLE'; TRUNCATE mysql.general_log;"
                "SET GLOBAL general_log = ON;"
            )

            def read() -> list[str]:
                out = self.server.sql(
                    "SELECT replace(convert(argument USING utf8mb4), '\\n', ' ') "
                    "FROM mysql.general_log WHERE command_type IN ('Query', 'Execute');"
                )
                return out.splitlines()

            try:
                yield read
            finally:
                self.server.sql("SET GLOBAL general_log = OFF; TRUNCATE mysql.general_log;")


@pytest.fixture(params=["pg", "maria"])
def source(request, sample_workspace, open_service, memory_keyring):
    if request.param == "pg":
        server = request.getfixturevalue("pg_server")
        src = Source(
            "pg",
            server,
            "SELECT customer_id AS probe_small FROM public.customers "
            "WHERE customer_id IN (1, 2, 3)",
            # an expression without statistics: the planner guesses 0.5% of the rows
            "SELECT invoice_id AS probe_under FROM sales.invoices WHERE (invoice_id % 1) = 0",
            5000,
        )
        dialect = "postgres"
    else:
        server = request.getfixturevalue("maria_server")
        src = Source(
            "maria",
            server,
            "SELECT customer_id AS probe_small FROM shop.customers WHERE customer_id IN (1, 2, 3)",
            # MariaDB plans a recursive CTE at its first step's rows (2 each side)
            "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 60) "
            "SELECT a.n AS probe_under, b.n AS m FROM g a, g b",
            3600,
        )
        dialect = "mysql"
    connect_server(sample_workspace, src.name, server, dialect)
    service = open_service(sample_workspace, large_remote_rows=LIMIT)
    return service, src


def _run_on_source(service, src, name: str, sql: str) -> tuple[dict, list[str]]:
    """Tab ``name`` written to run ``sql`` on the source and run: its result and the
    statements the source saw meanwhile."""
    make_remote_tab(service, name, sql, src.name)
    with src.statements() as ran:
        result = service.run_sql_tab("q3-churn", name)
        return result, ran()


def _counts(statements: list[str], marker: str) -> list[str]:
    return [s for s in statements if marker in s and re.search(r"count\(\*\)", s, re.I)]


def _explains(statements: list[str], marker: str) -> list[str]:
    return [s for s in statements if marker in s and s.lstrip().upper().startswith("EXPLAIN")]


def test_a_clearly_small_result_is_not_counted(source):
    service, src = source
    done, seen = _run_on_source(service, src, "small", src.small)
    assert done["status"] == "ok" and done["row_count"] == 3
    assert _explains(seen, "probe_small"), seen  # the engine's plan was asked
    assert not _counts(seen, "probe_small"), seen  # and no COUNT ran
    assert sum("probe_small" in s for s in seen) == 2, seen  # EXPLAIN, then the copy


def test_a_large_result_is_counted_and_warned(source):
    service, src = source
    large = "SELECT invoice_id AS probe_large FROM sales.invoices"
    first, seen = _run_on_source(service, src, "invoices", large)
    assert first["status"] == "warning_required"
    assert first["estimated_rows"] == 5000 and first["estimate_source"] == "count"
    assert len(_counts(seen, "probe_large")) == 1, seen
    with pytest.raises(TableNotFound):
        service.relation_info("invoices")


def test_an_underestimated_result_stops_at_the_limit(source):
    service, src = source
    first, seen = _run_on_source(service, src, "under", src.underestimated)
    assert not _counts(seen, "probe_under"), seen  # the plan said small: no COUNT
    assert first["status"] == "warning_required", first
    assert first["estimate_source"] == "copy" and first["estimated_rows"] > LIMIT
    assert "stopped" in first["message"]
    with pytest.raises(TableNotFound):  # nothing of the stopped copy is kept
        service.relation_info("under")
    done = service.run_sql_tab(
        "q3-churn", "under", large_remote_warning_id=first["large_remote_warning_id"]
    )
    assert done["status"] == "ok" and done["row_count"] == src.underestimated_rows
    assert service.relation_info("under")["row_count"] == src.underestimated_rows


def test_source_run_stops_an_underestimated_tab_and_what_reads_it(source):
    service, src = source
    make_remote_tab(service, "under", src.underestimated, src.name)
    make_remote_tab(service, "reader", "SELECT count(*) AS n FROM under")
    report = service.source_run_sql_tab("q3-churn", "reader")
    status = {t["tab"]: t for t in report["tabs"]}
    assert status["under"]["status"] == "failed" and status["reader"]["status"] == "not_run"
    error = status["under"]["error"]
    assert error["error"] == "LARGE_REMOTE_RESULT" and error["estimate_source"] == "copy"
    again = service.source_run_sql_tab(
        "q3-churn", "reader", large_remote_warning_id=error["large_remote_warning_id"]
    )
    assert [t["status"] for t in again["tabs"]] == ["ran", "ran"]
    assert service.run_query("SELECT n FROM reader")["preview"] == [[src.underestimated_rows]]


def test_an_ad_hoc_staging_is_checked_the_same_way(source):
    """``NAME.schema.table`` in a local statement stages through the same check: PostgreSQL
    underestimates the expression (the copy stops it), MariaDB's plan keeps all 5000 rows
    (the COUNT warns)."""
    service, src = source
    out = service.run_query(
        f"SELECT invoice_id FROM {src.name}.sales.invoices WHERE (invoice_id % 1) = 0",
        purpose_required=False,
    )
    assert out["status"] == "warning_required", out
    assert out["estimate_source"] == ("copy" if src.name == "pg" else "count")
    assert out["estimated_rows"] > LIMIT
