"""Fixtures of the query layer's tests: open services on real workspaces, a real PostgreSQL.

``pg_server`` starts a private PostgreSQL cluster (initdb in a temp dir, a free loopback
port, password authentication) once per test session and stops it at the end. It needs
the Debian packages ``postgresql`` (server binaries under /usr/lib/postgresql/N/bin),
``odbc-postgresql`` (the ODBC driver "PostgreSQL Unicode") and ``unixodbc``. When run as
root, the cluster runs as the ``postgres`` user (initdb refuses root).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHDATA = REPO / "benchmarks" / "queries"  # vendored copy of the shared query sets


@pytest.fixture
def open_service():
    """``open_service(root, **query_settings)`` -> QueryService; all closed at the end."""
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    opened = []

    def _open(root: Path, **settings):
        ws = Workspace.open(root)
        svc = QueryService(ws, QuerySettings(**settings))
        opened.append((svc, ws))
        return svc

    yield _open
    for svc, ws in reversed(opened):
        svc.close()
        ws.close()


@pytest.fixture
def sample_service(sample_workspace, open_service):
    return open_service(sample_workspace)


@pytest.fixture
def empty_service(empty_workspace, open_service):
    return open_service(empty_workspace)


# -- PostgreSQL -----------------------------------------------------------------------

PG_PACKAGES = "postgresql odbc-postgresql unixodbc"
PG_DRIVER = "PostgreSQL Unicode"


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.fail(
            f"PostgreSQL server binaries not found; install the Debian packages: "
            f"apt-get install -y {PG_PACKAGES}",
            pytrace=False,
        )
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_owner(cmd: list[str], owner: str | None, **kw):
    if owner:
        cmd = ["runuser", "-u", owner, "--"] + cmd
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


class PgServer:
    def __init__(self, port: int, user: str, password: str, database: str, bindir: Path):
        self.port, self.user, self.password, self.database = port, user, password, database
        self.bindir = bindir

    @property
    def connection_string(self) -> str:
        """Without the password: Lantide adds it from the keyring."""
        return f"Driver={{{PG_DRIVER}}};Server=127.0.0.1;Port={self.port};Database={self.database}"

    def psql(self, sql: str) -> str:
        env = dict(os.environ, PGPASSWORD=self.password)
        out = subprocess.run(
            [
                str(self.bindir / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                self.database,
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-At",
                "-c",
                sql,
            ],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
        return out.stdout


@pytest.fixture(scope="session")
def pg_server():
    if not any(Path(p).exists() for p in ("/etc/odbcinst.ini",)) or PG_DRIVER not in Path(
        "/etc/odbcinst.ini"
    ).read_text(errors="replace"):
        pytest.fail(
            f"the ODBC driver {PG_DRIVER!r} is not registered; install the Debian "
            f"packages: apt-get install -y {PG_PACKAGES}",
            pytrace=False,
        )
    bindir = _pg_bin()
    owner = "postgres" if os.geteuid() == 0 else None
    base = Path(tempfile.mkdtemp(prefix="lantide-pg-"))
    if owner:
        shutil.chown(base, owner, owner)
    data, sockets, pwfile = base / "data", base / "sock", base / "pw"
    password = "s3cret-" + os.urandom(4).hex()
    pwfile.write_text(password + "\n")
    sockets.mkdir()
    if owner:
        for p in (pwfile, sockets):
            shutil.chown(p, owner, owner)
    _as_owner(
        [
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "lantide",
            "--auth=scram-sha-256",
            f"--pwfile={pwfile}",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ],
        owner,
    )
    # a free port can be taken by another process between our look and the server's bind
    # (seen with concurrent test sessions): try another one
    for attempt in range(3):
        port = _free_port()
        try:
            _as_owner(
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(base / "log"),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off",
                    "start",
                ],
                owner,
            )
            break
        except subprocess.CalledProcessError:
            if attempt == 2:
                raise
    server = PgServer(port, "lantide", password, "shop", bindir)
    try:
        env = dict(os.environ, PGPASSWORD=password)
        subprocess.run(
            [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "lantide", "shop"],
            check=True,
            capture_output=True,
            env=env,
        )
        server.psql("""
            CREATE TABLE customers (customer_id integer PRIMARY KEY, name text NOT NULL,
                                    region varchar(12), credit numeric(12,2), vip boolean,
                                    since date);
            INSERT INTO customers SELECT g, 'Customer ' || g,
                   (ARRAY['US-CA','DE-BY','FR-IDF'])[1 + g % 3], g * 10.25, g % 7 = 0,
                   DATE '2024-01-01' + g FROM generate_series(1, 300) g;
            CREATE SCHEMA sales;
            CREATE TABLE sales.invoices (invoice_id bigint, customer_id integer,
                                         amount double precision, issued timestamp);
            INSERT INTO sales.invoices SELECT g, 1 + g % 300, g * 1.5,
                   TIMESTAMP '2025-01-01 00:00' + g * INTERVAL '1 hour'
              FROM generate_series(1, 5000) g;
        """)
        yield server
    finally:
        try:
            _as_owner(
                [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], owner
            )
        finally:
            time.sleep(0.1)
            shutil.rmtree(base, ignore_errors=True)


def connect_server(ws_root: Path, name: str, server, dialect: str, **changes) -> None:
    """Connection ``name`` of the workspace at ``ws_root`` to a private test server (its
    password to the keyring); ``changes``: another ``connection_string`` or ``password``."""
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


def make_remote_tab(
    service, name: str, sql: str, connection: str | None = None, project: str = "q3-churn"
) -> None:
    """A SQL tab of ``project``, bound to ``connection`` by its header line when given."""
    header = f"-- lantide: connection={connection}\n" if connection else ""
    service.create_sql_tab(project, name, header + sql)
