"""Remote SQL tabs attacked as an attacker and a careless analyst would (issue 34): a tab
whose first line is ``-- lantide: connection=NAME`` runs wholly on that connection, so what
reaches the server is what the check lets through. Everything that reaches a server runs
against the real private PostgreSQL and MariaDB servers of the query tests."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.fakes.mariadb_server import maria_server  # noqa: F401
from tests.query.conftest import (  # noqa: F401
    _free_port,
    connect_server,
    make_remote_tab,
    pg_server,
)

pytestmark = [pytest.mark.security]

PROJECT = "q3-churn"


@pytest.fixture(params=["pg", "maria"])
def remote(request, sample_workspace, open_service, memory_keyring):
    """A service with the connection ``src`` on the real server of the param, and the
    server, its dialect and its table of customers."""
    if request.param == "pg":
        server, dialect, customers = request.getfixturevalue("pg_server"), "postgres", "public"
    else:
        server, dialect, customers = request.getfixturevalue("maria_server"), "mysql", "shop"
    connect_server(sample_workspace, "src", server, dialect)
    # the same server with a wrong password, and a port nobody listens on
    wrong = "not-the-" + server.password
    connect_server(sample_workspace, "wrong_password", server, dialect, password=wrong)
    cs = server.connection_string.replace(f"Port={server.port}", f"Port={_free_port()}")
    connect_server(
        sample_workspace, "unreachable", server, dialect, connection_string=cs, password=wrong
    )
    service = open_service(sample_workspace, large_remote_rows=100_000)
    return service, server, dialect, f"{customers}.customers"


def _tab(service, name: str, sql: str, connection: str | None = "src") -> None:
    make_remote_tab(service, name, sql, connection, PROJECT)


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
        # the engine's EXPLAIN of the statement may be listed a moment before it runs
        return [
            line
            for line in out.splitlines()
            if sleep in line and not line.lstrip().upper().startswith("EXPLAIN")
        ]

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
    # the statement alone (the engine's EXPLAIN said it is small: no COUNT), or inside the
    # count's wrapper; either way it ends with its last word, no comment after it
    statement = f"SELECT {sleep} AS slept"
    assert text.strip() == statement or f"({statement}) lantide_q" in text, text


# -- statements refused before anything reaches a server ----------------------------------

MULTIPLE, NOT_SELECT = "QUERY_REFUSED_MULTIPLE_STATEMENTS", "QUERY_REFUSED_NOT_SELECT"
FUNCTION, COMMENT = "QUERY_REFUSED_FUNCTION", "QUERY_REFUSED_EXECUTABLE_COMMENT"
SYNTAX = "SQL_SYNTAX"  # MySQL forms sqlglot does not read at all: refused as well

REFUSED = {
    "postgres": {
        "two": ("SELECT 1 AS a; SELECT 2 AS b", MULTIPLE),
        "after_string": ("SELECT 'a;b' AS s; DELETE FROM public.customers", MULTIPLE),
        "after_comment": ("SELECT 1 AS a /* ; */; SET ROLE postgres", MULTIPLE),
        "lift_read_only": (
            "SELECT 1 AS a; SET TRANSACTION READ WRITE; DELETE FROM public.customers",
            MULTIPLE,
        ),
        "cr_ends_comment": ("SELECT 1 AS a --x\r; DELETE FROM public.customers; --", MULTIPLE),
        "delete_cte": (
            "WITH x AS (DELETE FROM public.customers RETURNING *) SELECT * FROM x",
            NOT_SELECT,
        ),
        "update_cte": (
            "WITH x AS (UPDATE public.customers SET vip = true RETURNING *) "
            "SELECT count(*) AS n FROM x",
            NOT_SELECT,
        ),
        "for_update": ("SELECT * FROM public.customers FOR UPDATE", NOT_SELECT),
        "for_share": ("SELECT * FROM public.customers FOR KEY SHARE", NOT_SELECT),
        "select_into": ("SELECT * INTO copied FROM public.customers", NOT_SELECT),
        "call": ("CALL public.p()", NOT_SELECT),
        "execute": ("EXECUTE prepared_one", NOT_SELECT),
        "begin": ("BEGIN", NOT_SELECT),
        "commit": ("COMMIT", NOT_SELECT),
        "set_role": ("SET ROLE postgres", NOT_SELECT),
        "set_rw": ("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", NOT_SELECT),
        "do": ("DO $$ BEGIN DELETE FROM public.customers; END $$", NOT_SELECT),
        "copy_to": ("COPY (SELECT 1) TO '/tmp/lantide-copy'", NOT_SELECT),
        "copy_program": ("COPY public.customers TO PROGRAM 'id'", NOT_SELECT),
        "query_to_xml": ("SELECT query_to_xml('DELETE FROM x', true, true, '') AS x", FUNCTION),
        "query_to_xml_nested": (
            "SELECT xpath('/row', query_to_xml('SELECT 1', true, true, '')) AS x",
            FUNCTION,
        ),
        "query_to_xml_in_where": (
            "SELECT 1 AS a FROM public.customers "
            "WHERE query_to_xml('SELECT 1', true, true, '') IS NOT NULL",
            FUNCTION,
        ),
        "query_xmlschema": (
            "SELECT query_to_xml_and_xmlschema('SELECT 1', true, true, '') AS x",
            FUNCTION,
        ),
        "table_to_xml": ("SELECT table_to_xml('pg_authid', true, true, '') AS x", FUNCTION),
        "cursor_to_xml": ("SELECT cursor_to_xml('c', 1, true, true, '') AS x", FUNCTION),
        "database_to_xml": ("SELECT database_to_xml(true, true, '') AS x", FUNCTION),
        "schema_to_xml": ("SELECT schema_to_xml('public', true, true, '') AS x", FUNCTION),
        "qualified": ("SELECT pg_catalog.query_to_xml('SELECT 1', true, true, '') AS x", FUNCTION),
        "quoted_upper": ("SELECT \"QUERY_TO_XML\"('SELECT 1', true, true, '') AS x", FUNCTION),
        "ts_stat": ("SELECT * FROM ts_stat('SELECT 1')", FUNCTION),
        "ls_waldir": ("SELECT * FROM pg_ls_waldir()", FUNCTION),
        "ls_dir": ("SELECT * FROM pg_ls_dir('.') AS f", FUNCTION),
        "read_binary": ("SELECT pg_read_binary_file('/etc/passwd') AS f", FUNCTION),
        "lo_import": ("SELECT lo_import('/etc/passwd') AS oid", FUNCTION),
        "lo_get": ("SELECT lo_get(1) AS b", FUNCTION),
        "loread": ("SELECT loread(0, 10) AS b", FUNCTION),
        "dblink": ("SELECT * FROM dblink('host=x', 'SELECT 1') AS t(a int)", FUNCTION),
        "dblink_exec": ("SELECT dblink_exec('host=x', 'DROP TABLE t') AS r", FUNCTION),
        "set_config": (
            "SELECT set_config('default_transaction_read_only', 'off', false) AS s",
            FUNCTION,
        ),
        "advisory": ("SELECT pg_advisory_lock_shared(1) AS l", FUNCTION),
        "notify": ("SELECT pg_notify('ch', 'x') AS n", FUNCTION),
        "nextval": ("SELECT nextval('s') AS n", FUNCTION),
        "terminate": ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity", FUNCTION),
    },
    "mysql": {
        "two": ("SELECT 1 AS a; SELECT 2 AS b", MULTIPLE),
        "after_string": ("SELECT 'a;b' AS s; DELETE FROM shop.customers", MULTIPLE),
        "lift_read_only": (
            "SELECT 1 AS a; SET SESSION TRANSACTION READ WRITE; DELETE FROM shop.customers",
            MULTIPLE,
        ),
        "exec_comment": ("SELECT 1 AS a /*! , sleep(5) AS b */", COMMENT),
        "exec_comment_versioned": ("SELECT 1 AS a /*!50000 , load_file('/etc/passwd') */", COMMENT),
        "exec_comment_maria": ("SELECT 1 AS a /*M! , sleep(5) AS b */", COMMENT),
        "exec_comment_maria_versioned": ("SELECT 1 AS a /*M!100000 , sleep(5) AS b */", COMMENT),
        "exec_comment_outfile": (
            "SELECT * FROM shop.customers /*!INTO OUTFILE '/tmp/lantide-out' */",
            COMMENT,
        ),
        "exec_comment_first": ("/*!SELECT 1 AS a */ SELECT 2 AS b", COMMENT),
        "load_file": ("SELECT load_file('/etc/passwd') AS f", FUNCTION),
        "sys_exec": ("SELECT sys_exec('id') AS r", FUNCTION),
        "get_lock": ("SELECT get_lock('x', 10) AS l", FUNCTION),
        "benchmark": ("SELECT benchmark(100000000, md5('a')) AS b", FUNCTION),
        "master_pos_wait": ("SELECT master_pos_wait('log', 4) AS w", FUNCTION),
        "outfile": ("SELECT * FROM shop.customers INTO OUTFILE '/tmp/lantide-out'", SYNTAX),
        "dumpfile": ("SELECT name FROM shop.customers LIMIT 1 INTO DUMPFILE '/tmp/x'", SYNTAX),
        "handler": ("HANDLER shop.customers OPEN", SYNTAX),
        "assign": ("SELECT @n := 1 AS n", "QUERY_REFUSED_ASSIGNMENT"),
        "assign_in_where": (
            "SELECT name FROM shop.customers WHERE (@n := @n + 1) > 0",
            "QUERY_REFUSED_ASSIGNMENT",
        ),
        "into_var": ("SELECT 1 INTO @x", NOT_SELECT),
        "for_update": ("SELECT * FROM shop.customers FOR UPDATE", NOT_SELECT),
        "share_mode": ("SELECT * FROM shop.customers LOCK IN SHARE MODE", NOT_SELECT),
        "delete_cte": (
            "WITH x AS (SELECT 1 AS a) DELETE FROM shop.customers WHERE customer_id = 1",
            NOT_SELECT,
        ),
        "call": ("CALL shop.p()", NOT_SELECT),
        "do": ("DO sleep(5)", SYNTAX),
        "set_rw": ("SET SESSION TRANSACTION READ WRITE", NOT_SELECT),
        "set_var": ("SET @@session.transaction_read_only = 0", NOT_SELECT),
        "set_role": ("SET ROLE admin", NOT_SELECT),
        "start": ("START TRANSACTION", NOT_SELECT),
    },
}


@pytest.mark.postgres
@pytest.mark.mariadb
def test_what_may_not_run_is_refused_before_the_server(remote, sample_workspace):
    """Each statement is refused when the tab is made and when a tab file written by hand
    runs. The tabs are bound to ``unreachable`` (a port nobody listens on): a statement
    that got past the check would fail with CONNECTION_ERROR instead of its refusal."""
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    service, server, dialect, customers = remote
    project = Project.load(sample_workspace, PROJECT)
    wrong = {}
    for key, (sql, code) in REFUSED[dialect].items():
        name = f"bad_{key}"
        try:
            _tab(service, name, sql, "unreachable")
            wrong[key] = "made"
        except Exception as exc:  # read below
            if getattr(exc, "code", None) != code:
                wrong[key] = f"made: {getattr(exc, 'code', exc)}"
        assert not tab_path(project, name).exists()
        _write_tab(sample_workspace, name, f"-- lantide: connection=unreachable\n{sql}")
        try:
            service.run_sql_tab(PROJECT, name)
            wrong[key] = "ran"
        except Exception as exc:  # read below
            if getattr(exc, "code", None) != code:
                wrong[key] = f"ran: {getattr(exc, 'code', exc)} {exc}"
    assert wrong == {}


# -- result columns of one name ---------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.mariadb
def test_two_result_columns_of_one_name_are_a_clear_error(remote, sample_workspace):
    """PostgreSQL returned both columns and the second became ``a_2``, a column nobody
    named; MySQL failed in the count's derived table with a bare driver error. Now each
    is REMOTE_DUPLICATE_COLUMN: by name when the tab is made, by the server's names (a
    ``SELECT *`` of a join, two ``count`` columns) when it runs, in Source Run too."""
    from lantide.query.errors import TableNotFound

    service, server, dialect, customers = remote
    for name, sql in {
        "same": f"SELECT customer_id AS a, name AS a FROM {customers}",
        "case": f"SELECT customer_id AS a, name AS A FROM {customers}",
        "plain": f"SELECT region, region FROM {customers}",
    }.items():
        with pytest.raises(Exception) as info:
            _tab(service, name, sql)
        assert info.value.code == "REMOTE_DUPLICATE_COLUMN", (name, info.value)
    joined = f"SELECT * FROM {customers} c JOIN {customers} d ON c.customer_id = d.customer_id"
    server_named = {"joined": joined}
    if dialect == "postgres":  # PostgreSQL names both aggregates "count"
        server_named["counts"] = f"SELECT count(*), count(name) FROM {customers}"
    for name, sql in server_named.items():
        _tab(service, name, sql)
        with pytest.raises(Exception) as info:
            service.run_sql_tab(PROJECT, name)
        assert info.value.code == "REMOTE_DUPLICATE_COLUMN", (name, info.value)
        assert "AS" in info.value.hint
        with pytest.raises(TableNotFound):
            service.relation_info(name)
        report = service.source_run_sql_tab(PROJECT, name)
        assert report["tabs"][0]["status"] == "failed"
        assert report["tabs"][0]["error"]["error"] == "REMOTE_DUPLICATE_COLUMN", report


# -- Source Run's digest of a remote result: every column of every row -------------------

DIGEST_TABLE = {
    "postgres": (
        "CREATE TABLE public.digest_probe (id int, lantide_q text, t text, n numeric(12,2), "
        "f double precision, d date, ts timestamp, b boolean, raw bytea, j jsonb);"
        "INSERT INTO public.digest_probe VALUES "
        "(1, 'q', 'a', 1.50, 0.1, '2025-01-01', '2025-01-01 10:00', true, '\\x00', '{\"k\": 1}'),"
        "(2, 'q', 'b', 2.50, 0.2, '2025-01-02', '2025-01-02 10:00', false, '\\x01', '[]')",
        "DROP TABLE public.digest_probe",
        "public.digest_probe",
    ),
    "mysql": (
        "CREATE TABLE shop.digest_probe (id int, lantide_q varchar(10), t varchar(20), "
        "n decimal(12,2), f double, d date, ts datetime, b boolean, raw blob, j text);\n"
        "INSERT INTO shop.digest_probe VALUES "
        "(1, 'q', 'a', 1.50, 0.1, '2025-01-01', '2025-01-01 10:00', true, x'00', '{}'),"
        "(2, 'q', 'b', 2.50, 0.2, '2025-01-02', '2025-01-02 10:00', false, x'01', '[]');\n",
        "DROP TABLE shop.digest_probe;\n",
        "shop.digest_probe",
    ),
}
# one change per column of row 1 (each undone before the next), and a NULL
CHANGES = {
    "lantide_q": ("'r'", "'q'"),
    "t": ("'a '", "'a'"),
    "n": ("1.51", "1.50"),
    "f": ("0.1000000001", "0.1"),
    "d": ("'2025-01-03'", "'2025-01-01'"),
    "ts": ("'2025-01-01 10:00:01'", "'2025-01-01 10:00'"),
    "b": ("false", "true"),
    "j": ("NULL", None),  # put back per dialect below
    "id": ("3", "1"),
}


@pytest.mark.postgres
@pytest.mark.mariadb
def test_the_digest_changes_with_any_column(remote):
    """PostgreSQL's digest hashed ``md5(lantide_q::text)``: a result column named
    ``lantide_q`` is that column, not the row, so only it was hashed and a change in any
    other column kept the digest (Source Run skipped a stale tab). MySQL's joined the cells
    with CHAR(31), so two different rows could join to the same text."""
    service, server, dialect, customers = remote
    create, drop, table = DIGEST_TABLE[dialect]

    def run(sql: str) -> None:
        server.psql(sql) if dialect == "postgres" else server.sql(sql + ";\n")

    external = service.runner.external

    def digest(sql: str = f"SELECT * FROM {table}") -> str | None:
        return external.result_checksum(
            "src", sql, register_cancel=service.runner.engine.cancel_hook
        )

    run(create)
    try:
        base = digest()
        assert base is not None and base == digest()
        unchanged = []
        for column, (new, old) in CHANGES.items():
            if column == "j":
                old = "'{\"k\": 1}'" if dialect == "postgres" else "'{}'"
            where = "id = 3" if column == "id" else "id = 1"
            run(f"UPDATE {table} SET {column} = {new} WHERE id = 1")
            if digest() == base:
                unchanged.append(column)
            run(f"UPDATE {table} SET {column} = {old} WHERE {where}")
            assert digest() == base, column
        assert unchanged == []
        # the same cells in other rows: a separator inside a value
        sep = "chr(31)" if dialect == "postgres" else "CHAR(31)"
        if dialect == "postgres":
            first = f"SELECT 'a' || {sep} || 'vb' AS x, 'c' AS y"
            second = f"SELECT 'a' AS x, 'b' || {sep} || 'vc' AS y"
        else:
            first = f"SELECT CONCAT('a', {sep}, 'vb') AS x, 'c' AS y"
            second = f"SELECT 'a' AS x, CONCAT('b', {sep}, 'vc') AS y"
        assert digest(first) != digest(second)
        assert digest("SELECT NULL AS x") != digest("SELECT 'n' AS x")
        assert digest("SELECT '' AS x") != digest("SELECT NULL AS x")
    finally:
        run(drop)


@pytest.mark.postgres
@pytest.mark.mariadb
def test_source_run_reruns_a_tab_whose_column_named_lantide_q_did_not_change(remote):
    """End to end: the tab names a column ``lantide_q``; a change in another column of the
    source must run the tab again, not skip it as up to date."""
    service, server, dialect, customers = remote
    _tab(
        service,
        "credits",
        f"SELECT region AS lantide_q, sum(credit) AS credit FROM {customers} GROUP BY region",
    )
    assert [t["status"] for t in service.source_run_sql_tab(PROJECT, "credits")["tabs"]] == ["ran"]
    change = f"UPDATE {customers} SET credit = credit + 1 WHERE customer_id = 1"
    undo = f"UPDATE {customers} SET credit = credit - 1 WHERE customer_id = 1"

    def run(sql: str) -> None:
        server.psql(sql) if dialect == "postgres" else server.sql(sql + ";\n")

    run(change)
    try:
        again = service.source_run_sql_tab(PROJECT, "credits")
        assert [t["status"] for t in again["tabs"]] == ["ran"], again
    finally:
        run(undo)


# -- the header: one reader, no lookalikes -------------------------------------------------


@pytest.fixture
def nowhere(sample_workspace, open_service, memory_keyring):
    """A service whose connection ``src`` points at a port nobody listens on: whatever
    reaches it fails with CONNECTION_ERROR, so a refusal proves nothing was sent."""
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace

    add_connection(
        Workspace.open(sample_workspace, lock=False),
        "src",
        f"Driver={{PostgreSQL Unicode}};Server=127.0.0.1;Port={_free_port()};Database=shop",
        dialect="postgres",
        user="lantide",
        password="not-used",
    )
    return open_service(sample_workspace)


UNCLEAR_HEADERS = {
    "capital": "-- Lantide: connection=src",
    "upper": "-- LANTIDE: CONNECTION=src",
    "space_before_colon": "-- lantide : connection=src",
    "fullwidth_colon": "-- lantide\uff1aconnection=src",
    "cyrillic_a": "-- l\u0430ntide: connection=src",
    "cyrillic_o_in_key": "-- lantide: c\u043ennection=src",
    "twice": "-- lantide: connection=src connection=other",
    "twice_case": "-- lantide: Connection=src, connection=other",
    "semicolon": "-- lantide: connection=src;other",
    "quoted": '-- lantide: connection="src"',
    "zero_width": "-- lantide: connection=src\u200b",
    "fullwidth_name": "-- lantide: connection=\uff53\uff52\uff43",
    "typo_key": "-- lantide: conection=src",
    "no_prefix": "-- connection=src",
    "second_line": "-- monthly numbers\n-- lantide: connection=src",
    "after_blank": "\n-- lantide: connection=src",
    "two_lines": "-- lantide: connection=src\n-- lantide: connection=other",
}


@pytest.mark.parametrize("header", list(UNCLEAR_HEADERS.values()), ids=list(UNCLEAR_HEADERS))
def test_a_lookalike_header_is_refused_not_run_elsewhere(nowhere, sample_workspace, header):
    """``-- Lantide: connection=src`` read as no header: the tab ran in DuckDB on the
    workspace's own ``customers``, a different table than the analyst meant; an option
    given twice bound to the last. Every such first line is REMOTE_HEADER_UNCLEAR, when
    the tab is made, when it runs, in Source Run (that tab only) and in the listing."""
    service = nowhere
    body = "SELECT count(*) AS n FROM customers"
    with pytest.raises(Exception) as info:
        service.create_sql_tab(PROJECT, "unclear", f"{header}\n{body}")
    assert info.value.code == "REMOTE_HEADER_UNCLEAR", info.value
    _write_tab(sample_workspace, "unclear", f"{header}\n{body}\n")
    with pytest.raises(Exception) as info:
        service.run_sql_tab(PROJECT, "unclear")
    assert info.value.code == "REMOTE_HEADER_UNCLEAR", info.value
    service.create_sql_tab(PROJECT, "local_part", "SELECT count(*) AS n FROM customers")
    service.create_sql_tab(PROJECT, "both", "SELECT * FROM unclear, local_part")
    report = service.source_run_sql_tab(PROJECT, "both")
    status = {t["tab"]: t["status"] for t in report["tabs"]}
    assert status == {"unclear": "failed", "local_part": "ran", "both": "not_run"}, report
    listed = {t["tab"]: t for t in service.lineage(PROJECT)["tabs"]}
    assert listed["unclear"]["error"]["error"] == "REMOTE_HEADER_UNCLEAR"


@pytest.mark.parametrize(
    "header",
    [
        "-- lantide: connection=src",
        "--lantide: connection=src",
        "--lantide:connection=src",
        "  -- lantide:   connection = src  ",
        "\ufeff-- lantide: connection=src",
        "-- lantide: connection=src\r",
    ],
)
def test_the_header_as_written_binds_its_connection(nowhere, sample_workspace, header):
    """Spellings of the header that the reader accepts: all bind ``src`` (here a port
    nobody listens on, so the run fails to connect: it went to ``src``, not to DuckDB)."""
    from lantide.query.remote_tabs import tab_connection
    from lantide.query.sql_format import header_connection

    text = f"{header}\nSELECT 1 AS one"
    assert tab_connection(text) == "src" and header_connection(text) == "src"
    _write_tab(sample_workspace, "bound", text)
    with pytest.raises(Exception) as info:
        nowhere.run_sql_tab(PROJECT, "bound")
    assert info.value.code == "CONNECTION_ERROR" and "'src'" in info.value.message


def test_a_comment_mentioning_lantide_is_not_a_header(nowhere):
    service = nowhere
    service.create_sql_tab(
        PROJECT, "noted", "-- lantide sample numbers\nSELECT count(*) AS n FROM customers"
    )
    assert service.run_sql_tab(PROJECT, "noted")["row_count"] == 1


def test_a_rename_reads_the_header_as_the_runner_does(nowhere, sample_workspace):
    """A rename rewrites the readers of the renamed tab's cached table, but never a remote
    tab (its names are the connection's). It recognised a remote tab by the prefix
    ``-- lantide: connection=`` only, so ``--lantide: connection=src`` (which the runner
    runs on ``src``) had its remote table renamed. A tab whose header is unclear may be
    either: the rename is refused, nothing changed."""
    from lantide.query.tabs import tab_path
    from lantide.workspace.model import Project

    service = nowhere
    project = Project.load(sample_workspace, PROJECT)
    service.create_sql_tab(PROJECT, "regions", "SELECT 1 AS n")
    remote_text = "--lantide: connection=src\nSELECT * FROM regions\n"
    _write_tab(sample_workspace, "remote_reader", remote_text)
    service.create_sql_tab(PROJECT, "local_reader", "SELECT n FROM regions")
    service.rename_sql_tab(PROJECT, "regions", "areas")
    assert tab_path(project, "remote_reader").read_text() == remote_text
    assert tab_path(project, "local_reader").read_text().strip() == "SELECT n FROM areas"
    unclear_text = "-- Lantide: connection=src\nSELECT * FROM areas\n"
    _write_tab(sample_workspace, "unclear_reader", unclear_text)
    with pytest.raises(Exception) as info:
        service.rename_sql_tab(PROJECT, "areas", "zones")
    assert info.value.code == "RENAME_DEPENDENT_UNPARSEABLE", info.value
    assert "unclear_reader" in info.value.message
    assert tab_path(project, "areas").exists() and not tab_path(project, "zones").exists()
    assert tab_path(project, "local_reader").read_text().strip() == "SELECT n FROM areas"


# -- the server's read-only session: the second line of defence ------------------------


@pytest.mark.postgres
@pytest.mark.mariadb
def test_a_write_that_slips_past_the_check_still_fails_on_the_server(remote):
    """Sent straight to the source (the check bypassed, as a gap in its lists would):
    PostgreSQL refuses the writing CTE in Lantide's read-only session; MariaDB's driver
    refuses a second statement (multi-statements are off). Nothing is written."""
    service, server, dialect, customers = remote
    external = service.runner.external
    if dialect == "postgres":
        attempts = [
            f"WITH x AS (DELETE FROM {customers} WHERE customer_id = 1 RETURNING *) "
            "SELECT * FROM x",
        ]
    else:
        attempts = [
            f"SELECT 1 AS a; DELETE FROM {customers} WHERE customer_id = 1",
            f"SELECT 1 AS a; SET SESSION TRANSACTION READ WRITE; DELETE FROM {customers}",
        ]
    for sql in attempts:
        with pytest.raises(Exception) as info:
            for _ in external.stream_batches(
                "src", sql, register_cancel=service.runner.engine.cancel_hook
            ):
                pass
        assert info.value.code == "REMOTE_QUERY_ERROR", (sql, info.value)
        if dialect == "postgres":
            assert "read-only" in str(info.value), (sql, info.value)
    count = f"SELECT count(*) FROM {customers}"
    left = server.psql(count) if dialect == "postgres" else server.sql(count + ";\n")
    assert left.strip() == "300"


@pytest.mark.postgres
def test_large_objects_are_written_past_the_read_only_session(
    pg_server,  # noqa: F811
    sample_workspace,
    open_service,
    memory_keyring,
):
    """Why the check refuses the ``lo_*`` family by prefix: PostgreSQL's read-only session
    does not stop ``lo_create`` (sent straight to the source, it made a large object), so
    for these the list is the only line of defence."""
    from lantide.query.remote_tabs import check_remote

    server = pg_server
    connect_server(sample_workspace, "src", server, "postgres")
    service = open_service(sample_workspace)
    before = server.psql("SELECT count(*) FROM pg_largeobject_metadata").strip()
    try:
        for _ in service.runner.external.stream_batches(
            "src", "SELECT lo_create(0) AS oid", register_cancel=service.runner.engine.cancel_hook
        ):
            pass
        assert server.psql("SELECT count(*) FROM pg_largeobject_metadata").strip() != before
        for sql in ("SELECT lo_create(0) AS oid", "SELECT lo_from_bytea(0, 'x') AS oid"):
            with pytest.raises(Exception) as info:
                check_remote(f"-- lantide: connection=src\n{sql}", "src", "postgres")
            assert info.value.code == "QUERY_REFUSED_FUNCTION"
    finally:
        server.psql("SELECT lo_unlink(oid) FROM pg_largeobject_metadata")


@pytest.mark.postgres
@pytest.mark.mariadb
def test_a_huge_sleep_is_ended_by_the_query_timeout(request, sample_workspace, open_service):
    """Sleeps are allowed (they hold only Lantide's own session); a cancel ends one
    (tests/query/test_remote_tabs.py) and so does the query timeout, without a cancel. It
    did not: the driver's query timeout left ``pg_sleep`` running (a 2 s limit took 40 s
    for a 20 s sleep: the count, then the fetch); the session now carries the limit."""
    import time

    for name, dialect in (("pg_server", "postgres"), ("maria_server", "mysql")):
        connect_server(sample_workspace, dialect, request.getfixturevalue(name), dialect)
    service = open_service(sample_workspace, timeout_seconds=2)
    for dialect, sql in (
        ("postgres", "SELECT pg_sleep(100000) AS slept"),
        ("mysql", "SELECT sleep(100000) AS slept"),
    ):
        _tab(service, f"sleepy_{dialect}", sql, dialect)
        started = time.monotonic()
        with pytest.raises(Exception) as info:
            service.run_sql_tab(PROJECT, f"sleepy_{dialect}")
        took = time.monotonic() - started
        # the count of the large-result check is stopped by the server at 2 s
        assert took < 15, (dialect, took, info.value)
        assert info.value.code == "QUERY_TIMEOUT", info.value
