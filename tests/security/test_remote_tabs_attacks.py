"""Remote SQL tabs attacked as an attacker and a careless analyst would (issue 34): a tab
whose first line is ``-- lantide: connection=NAME`` runs wholly on that connection, so what
reaches the server is what the check lets through. Everything that reaches a server runs
against the real private PostgreSQL and MariaDB servers of the query tests."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.fakes.mariadb_server import maria_server  # noqa: F401
from tests.query.conftest import _free_port, pg_server  # noqa: F401

pytestmark = [pytest.mark.security]

PROJECT = "q3-churn"


def _connect(ws_root: Path, name: str, server, dialect: str, **changes) -> None:
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace

    ws = Workspace.open(ws_root, lock=False)
    add_connection(
        ws,
        name,
        changes.get("connection_string", server.connection_string),
        dialect=dialect,
        user=server.user,
        password=changes.get("password", server.password),
    )


@pytest.fixture(params=["pg", "maria"])
def remote(request, sample_workspace, open_service, memory_keyring):
    """A service with the connection ``src`` on the real server of the param, and the
    server, its dialect and its table of customers."""
    if request.param == "pg":
        server, dialect, customers = request.getfixturevalue("pg_server"), "postgres", "public"
    else:
        server, dialect, customers = request.getfixturevalue("maria_server"), "mysql", "shop"
    _connect(sample_workspace, "src", server, dialect)
    # the same server with a wrong password, and a port nobody listens on
    wrong = "not-the-" + server.password
    _connect(sample_workspace, "wrong_password", server, dialect, password=wrong)
    cs = server.connection_string.replace(f"Port={server.port}", f"Port={_free_port()}")
    _connect(sample_workspace, "unreachable", server, dialect, connection_string=cs, password=wrong)
    service = open_service(sample_workspace, large_remote_rows=100_000)
    return service, server, dialect, f"{customers}.customers"


def _tab(service, name: str, sql: str, connection: str | None = "src") -> None:
    header = f"-- lantide: connection={connection}\n" if connection else ""
    service.create_sql_tab(PROJECT, name, header + sql)


def _write_tab(workspace: Path, name: str, text: str) -> None:
    """A tab file as the analyst (or a colleague's workspace) wrote it: no check."""
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    tab_path(Project.load(workspace, PROJECT), name).write_text(text, encoding="utf-8")


def _all_text(root: Path) -> str:
    out = []
    for path in root.rglob("*"):
        if path.is_file():
            try:
                out.append(path.read_bytes().decode("utf-8", "replace"))
            except OSError:
                continue
    return "\n".join(out)


# -- a connection that refuses the login or cannot be reached -----------------------------


@pytest.mark.postgres
@pytest.mark.mariadb
@pytest.mark.parametrize("how", ["wrong_password", "unreachable"])
def test_a_refused_or_unreachable_connection_fails_its_tab_only(
    remote, sample_workspace, how, caplog
):
    """Source Run's decision whether to run a remote tab asks the source for a digest; a
    source that refuses the login (or is not there) failed the whole Source Run with an
    uncaught ConnectionProblem, and no report. Now: that tab fails, naming the tab and the
    connection, its readers do not run, the independent tabs run, no password anywhere."""
    service, server, dialect, customers = remote
    wrong = "not-the-" + server.password
    _tab(service, "good_remote", f"SELECT count(*) AS n FROM {customers}")
    _tab(service, "bad_remote", f"SELECT count(*) AS n FROM {customers}", how)
    _tab(service, "local_part", "SELECT count(*) AS n FROM customers", None)
    _tab(service, "on_bad", "SELECT n FROM bad_remote", None)
    _tab(
        service,
        "all_of_it",
        "SELECT * FROM good_remote, on_bad, local_part",
        None,
    )
    caplog.set_level(logging.DEBUG)
    report = service.source_run_sql_tab(PROJECT, "all_of_it")
    status = {t["tab"]: t["status"] for t in report["tabs"]}
    assert status == {
        "good_remote": "ran",
        "bad_remote": "failed",
        "local_part": "ran",
        "on_bad": "not_run",
        "all_of_it": "not_run",
    }, report["tabs"]
    failed = next(t for t in report["tabs"] if t["tab"] == "bad_remote")
    message = failed["error"]["message"]
    assert "bad_remote" in message and repr(how) in message, message
    assert failed["error"]["error"] in ("CONNECTION_ERROR",), failed
    assert not report["ok"]
    # the password is nowhere: not in the report, the log, nor any file of the workspace
    for secret in (server.password, wrong):
        assert secret not in repr(report)
        assert secret not in caplog.text
        assert secret not in _all_text(sample_workspace)
    # and the run of that tab alone says the same
    with pytest.raises(Exception) as info:
        service.run_sql_tab(PROJECT, "bad_remote")
    assert repr(how) in str(info.value) and wrong not in str(info.value)


# -- what the server gets: the statement, without the header or the comments around it ----


@pytest.mark.postgres
@pytest.mark.mariadb
@pytest.mark.parametrize(
    "tail",
    [" -- all of them", "; -- all of them", "\n/* a closing note */", ";;\n-- x\n\n"],
    ids=["comment", "semicolon_comment", "block_comment", "semicolons"],
)
def test_a_trailing_comment_does_not_break_the_count_or_the_digest(remote, sample_workspace, tail):
    """``SELECT count(*) FROM (<stmt>) t`` with a statement ending in ``-- comment`` and no
    newline put the ``)`` into the comment: the large-result count and Source Run's digest
    failed with a syntax error on the server. The statement sent is now its tokens' span."""
    service, server, dialect, customers = remote
    _write_tab(
        sample_workspace,
        "counted",
        f"-- lantide: connection=src\nSELECT count(*) AS n FROM {customers}{tail}",
    )
    first = service.source_run_sql_tab(PROJECT, "counted")
    assert [(t["tab"], t["status"]) for t in first["tabs"]] == [("counted", "ran")], first
    again = service.source_run_sql_tab(PROJECT, "counted")  # the digest, asked again
    assert [t["status"] for t in again["tabs"]] == ["skipped"], again
    ran = service.run_sql_tab(PROJECT, "counted")  # the count of the large-result check
    assert ran["row_count"] == 1
    assert service.run_query("SELECT n FROM counted")["preview"] == [[300]]


@pytest.mark.postgres
@pytest.mark.mariadb
def test_the_header_and_comments_around_the_statement_are_not_sent(remote, sample_workspace):
    """What the server runs (seen in its own list of running statements) starts with the
    statement's first word and ends with its last: no header, no comment after it."""
    import threading
    import time

    service, server, dialect, customers = remote
    sleep = "pg_sleep(30)" if dialect == "postgres" else "sleep(30)"
    _write_tab(
        sample_workspace,
        "slow",
        f"-- lantide: connection=src\n-- a note\nSELECT {sleep} AS slept -- tail note",
    )

    def running() -> list[str]:
        if dialect == "postgres":
            out = server.psql(
                "SELECT replace(query, chr(10), ' ') FROM pg_stat_activity "
                "WHERE state = 'active' AND pid <> pg_backend_pid()"
            )
        else:
            out = server.sql(
                "SELECT replace(info, char(10), ' ') FROM information_schema.processlist "
                "WHERE info IS NOT NULL;"
            )
        return [line for line in out.splitlines() if sleep in line]

    scope = service.cancel_scope("analyst")
    out: dict = {}

    def run():
        try:
            with scope:
                service.run_sql_tab(PROJECT, "slow")
        except Exception as exc:  # read below
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (seen := running()):
        assert time.monotonic() < deadline, f"the statement never reached the server: {out}"
        time.sleep(0.05)
    scope.cancel()
    thread.join(30)
    assert out["error"].code == "QUERY_CANCELLED"
    text = seen[0]
    assert "lantide:" not in text and "note" not in text, text
    assert f"(SELECT {sleep} AS slept) lantide_q" in text, text  # the count's wrapper
