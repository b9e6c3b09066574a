"""A private MariaDB server for the tests, as ``pg_server`` is for PostgreSQL.

``maria_server`` runs ``mariadb-install-db`` in a temp dir, starts ``mariadbd`` on a free
loopback port (its own socket, no system config read: ``--no-defaults``) once per test
session, creates the user ``lantide`` with a password and the databases ``shop`` and
``sales``, and stops the server at the end. It needs the Debian packages
``mariadb-server`` (server binaries), ``odbc-mariadb`` (the ODBC driver "MariaDB Unicode")
and ``unixodbc``. When run as root, the server runs as the ``mysql`` user.

MariaDB has no schemas: a database is what ODBC calls a catalog, and an analyst writes
``maria.shop.customers`` as for a PostgreSQL schema.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

MARIA_PACKAGES = "mariadb-server odbc-mariadb unixodbc"
MARIA_DRIVER = "MariaDB Unicode"

SEED = """
CREATE DATABASE shop;
CREATE DATABASE sales;
CREATE TABLE shop.customers (customer_id int PRIMARY KEY, name varchar(40) NOT NULL,
                             region varchar(12), credit decimal(12,2), vip boolean, since date);
SET SESSION max_recursive_iterations = 100000;
INSERT INTO shop.customers
  WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 300)
  SELECT n, concat('Customer ', n), elt(1 + n % 3, 'US-CA', 'DE-BY', 'FR-IDF'), n * 10.25,
         n % 7 = 0, DATE '2024-01-01' + INTERVAL n DAY FROM g;
CREATE TABLE sales.invoices (invoice_id bigint, customer_id int, amount double,
                             issued datetime);
INSERT INTO sales.invoices
  WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5000)
  SELECT n, 1 + n % 300, n * 1.5, TIMESTAMP '2025-01-01 00:00:00' + INTERVAL n HOUR FROM g;
"""


def _binary(name: str) -> str:
    for folder in ("/usr/sbin", "/usr/bin"):
        path = Path(folder) / name
        if path.exists():
            return str(path)
    pytest.fail(
        f"MariaDB's {name} not found; install the Debian packages: apt-get install -y "
        f"{MARIA_PACKAGES}",
        pytrace=False,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MariaServer:
    def __init__(self, port: int, socket_path: Path, user: str, password: str):
        self.port, self.socket_path, self.user, self.password = port, socket_path, user, password

    @property
    def connection_string(self) -> str:
        """Without the password: Lantide adds it from the keyring."""
        return f"Driver={{{MARIA_DRIVER}}};Server=127.0.0.1;Port={self.port}"

    def sql(self, statements: str) -> str:
        """Run ``statements`` as the server's root (over its socket); the output as text."""
        out = subprocess.run(
            [_binary("mariadb"), "--no-defaults", "-uroot", "-S", str(self.socket_path), "-N"],
            input=statements,
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout


def _wait_for_socket(path: Path, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return
        time.sleep(0.1)
    pytest.fail(f"mariadbd did not start in {timeout:.0f} s:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="session")
def maria_server():
    odbcinst = Path("/etc/odbcinst.ini")
    if not odbcinst.exists() or MARIA_DRIVER not in odbcinst.read_text(errors="replace"):
        pytest.fail(
            f"the ODBC driver {MARIA_DRIVER!r} is not registered; install the Debian "
            f"packages: apt-get install -y {MARIA_PACKAGES}",
            pytrace=False,
        )
    owner = "mysql" if os.geteuid() == 0 else None
    base = Path(tempfile.mkdtemp(prefix="lantide-maria-"))
    if owner:
        entry = pwd.getpwnam(owner)
        os.chown(base, entry.pw_uid, entry.pw_gid)
    data, sock, log = base / "data", base / "sock", base / "err.log"
    prefix = ["runuser", "-u", owner, "--"] if owner else []
    subprocess.run(
        [
            *prefix,
            _binary("mariadb-install-db"),
            "--no-defaults",
            f"--datadir={data}",
            "--auth-root-authentication-method=normal",  # root over the socket, no password
            "--skip-test-db",
        ],
        check=True,
        capture_output=True,
    )
    port = _free_port()
    server = subprocess.Popen(
        [
            *prefix,
            _binary("mariadbd"),
            "--no-defaults",
            f"--datadir={data}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--socket={sock}",
            f"--pid-file={base / 'pid'}",
            f"--log-error={log}",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=32M",
            "--innodb-log-file-size=8M",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_socket(sock, log)
        password = "s3cret-" + os.urandom(4).hex()
        maria = MariaServer(port, sock, "lantide", password)
        maria.sql(SEED)
        maria.sql(
            f"CREATE USER 'lantide'@'127.0.0.1' IDENTIFIED BY '{password}';\n"
            "GRANT SELECT, SHOW VIEW ON shop.* TO 'lantide'@'127.0.0.1';\n"
            "GRANT SELECT, SHOW VIEW ON sales.* TO 'lantide'@'127.0.0.1';\n"
        )
        yield maria
    finally:
        # its data is thrown away: killed at once (a clean shutdown took 2 s, at the end of
        # every run); the pid file names mariadbd itself, not runuser in front of it
        try:
            os.kill(int((base / "pid").read_text().split()[0]), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
        shutil.rmtree(base, ignore_errors=True)
