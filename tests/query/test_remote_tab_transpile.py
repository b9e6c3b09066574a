"""``from=DIALECT`` in a remote tab's header, against real PostgreSQL and MariaDB servers: a
tab written in DuckDB's SQL is transpiled by sqlglot to the server's dialect, checked there
and run; without ``from=`` the same text runs as written (and the server does not read it)."""

from __future__ import annotations

import pytest

from lantide.errors import LantideError
from tests.fakes.mariadb_server import maria_server  # noqa: F401
from tests.query.conftest import connect_server

pytestmark = [pytest.mark.postgres, pytest.mark.mariadb]

# DuckDB's SQL that neither server reads as written: '::' and '||' (MariaDB reads || as OR),
# strftime (PostgreSQL has none) and date_diff with a unit argument (neither has it)
DUCKDB_SQL = (
    "SELECT region, 'r:' || region AS label, count(*)::INTEGER AS n,\n"
    "       strftime(DATE '2024-05-01', '%Y') AS y,\n"
    "       date_diff('day', DATE '2024-01-01', DATE '2024-03-01') AS days\n"
    "FROM {schema}.customers GROUP BY region ORDER BY region"
)


@pytest.fixture(params=["pg", "maria"])
def remote(request, sample_workspace, open_service, memory_keyring):
    if request.param == "pg":
        server, dialect, schema = request.getfixturevalue("pg_server"), "postgres", "public"
    else:
        server, dialect, schema = request.getfixturevalue("maria_server"), "mysql", "shop"
    connect_server(sample_workspace, request.param, server, dialect)
    return open_service(sample_workspace, large_remote_rows=1000), request.param, schema


def test_a_duckdb_tab_runs_on_the_server_with_from_duckdb(remote, sample_workspace):
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    service, name, schema = remote
    sql = DUCKDB_SQL.format(schema=schema)
    service.create_sql_tab(
        "q3-churn", "regions", f"-- lantide: connection={name} from=duckdb\n{sql}"
    )
    result = service.run_sql_tab("q3-churn", "regions")
    assert result["status"] == "ok" and result["row_count"] == 3
    rows = service.run_query("SELECT * FROM regions ORDER BY region")["preview"]
    assert [r[:3] for r in rows] == [
        ["DE-BY", "r:DE-BY", 100],
        ["FR-IDF", "r:FR-IDF", 100],
        ["US-CA", "r:US-CA", 100],
    ]
    assert {str(r[3]) for r in rows} == {"2024"} and {int(r[4]) for r in rows} == {60}
    # the step records the tab's text; the lineage names the server's table
    assert result["step"]["sql"].startswith(f"-- lantide: connection={name} from=duckdb\n")
    lineage = {t["tab"]: t for t in service.lineage("q3-churn")["tabs"]}["regions"]
    assert lineage["reads_external"] and not lineage.get("error")
    # a local tab reads its result in the same Source Run
    service.create_sql_tab("q3-churn", "labels", "SELECT label FROM regions ORDER BY label")
    report = service.source_run_sql_tab("q3-churn", "labels")
    assert [(t["tab"], t["status"]) for t in report["tabs"]] == [
        ("regions", "ran"),
        ("labels", "ran"),
    ]
    # the same text without from= runs as written: the server does not take it
    path = tab_path(Project.load(sample_workspace, "q3-churn"), "regions")
    path.write_text(f"-- lantide: connection={name}\n{sql}\n", encoding="utf-8")
    with pytest.raises(LantideError):
        service.run_sql_tab("q3-churn", "regions")


def test_what_cannot_be_transpiled_fails_its_tab_only(remote, sample_workspace):
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    service, name, schema = remote
    header = f"-- lantide: connection={name} from=duckdb\n"
    with pytest.raises(LantideError) as info:  # not made: sqlglot writes no PIVOT there
        service.create_sql_tab(
            "q3-churn",
            "pivot",
            header + f"SELECT * FROM {schema}.customers PIVOT (count(*) FOR vip IN (true, false))",
        )
    assert info.value.code == "TRANSPILE_UNSUPPORTED" and "PIVOT" in info.value.message
    project = Project.load(sample_workspace, "q3-churn")
    tab_path(project, "odd").write_text(
        f"-- lantide: connection={name} from=duckb\nSELECT 1 AS one\n", encoding="utf-8"
    )
    service.create_sql_tab("q3-churn", "local_part", "SELECT count(*) AS n FROM customers")
    service.create_sql_tab("q3-churn", "both", "SELECT * FROM odd, local_part")
    report = service.source_run_sql_tab("q3-churn", "both")
    status = {t["tab"]: t["status"] for t in report["tabs"]}
    assert status == {"odd": "failed", "local_part": "ran", "both": "not_run"}
    failed = next(t for t in report["tabs"] if t["tab"] == "odd")
    assert failed["error"]["error"] == "DIALECT_UNKNOWN" and "duckb" in failed["error"]["message"]
