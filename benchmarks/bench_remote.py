"""A remote SQL tab against the same statement through pyodbc directly (issue 34).

A private PostgreSQL server is started as the tests start theirs (``pg_server`` in
tests/query/conftest.py: initdb in a temporary folder, a loopback port, psqlODBC), with a
table of ``--rows`` rows (default 200,000) of the usual types: bigint, integer, double,
numeric(12,2), text, date, timestamp, boolean.

- **Lantide**: ``run_sql_tab`` of a tab ``-- lantide: connection=dw`` / ``SELECT * FROM
  bench.wide``, default settings (``query.large_remote_rows`` 1,000,000: the EXPLAIN
  estimate is not 10x under it, so the source also COUNTs, as the QEM says), on a copy of
  the sample workspace: connect, read-only session, EXPLAIN, COUNT, fetch in batches,
  typed columns into the tab's cached table with its bookkeeping row, the result checks,
  the preview.
- **Baseline**: what a script needs to land the same rows as a DuckDB table, fairly:
  ``pyodbc.connect`` with the same connection string, ``execute``, ``fetchall``, then the
  rows into a table of a DuckDB database file as one list parameter per column
  (``INSERT ... SELECT UNNEST(?), ...``, DuckDB's own conversion of Python lists; no
  pandas or Arrow), in one transaction, ``CREATE OR REPLACE``.

Pairs run in the same process, alternating which goes first; reported: the median of
the pairs' ratios and the ratio of the medians. Target (issue 34): at most 1.1x.
``python -m benchmarks remote [--quick] [--pairs=N] [--rows=N] [--profile]``.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TARGET = 1.1
TAB = "-- lantide: connection=dw\nSELECT * FROM bench.wide"
SEED = """
CREATE SCHEMA IF NOT EXISTS bench;
DROP TABLE IF EXISTS bench.wide;
CREATE TABLE bench.wide (id bigint, qty integer, price double precision,
                         amount numeric(12,2), label text, day date, at timestamp,
                         flag boolean);
INSERT INTO bench.wide SELECT g, g % 1000, g * 0.37, (g % 100000) / 7.0,
       'item ' || (g % 5000), DATE '2024-01-01' + g % 700,
       TIMESTAMP '2025-01-01' + g * INTERVAL '1 second', g % 3 = 0
  FROM generate_series(1, {rows}) g;
ANALYZE bench.wide;
"""


def _arg(argv: list[str], name: str, default: int) -> int:
    for a in argv:
        if a.startswith(f"--{name}="):
            return int(a.split("=", 1)[1])
    return default


def _baseline(connection_string: str, db: Path) -> Callable[[], int]:
    import duckdb
    import pyodbc

    def run() -> int:
        con = pyodbc.connect(connection_string, autocommit=True)
        try:
            cur = con.cursor().execute("SELECT * FROM bench.wide")
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
        finally:
            con.close()
        columns = [[r[i] for r in rows] for i in range(len(names))]
        duck = duckdb.connect(str(db))
        try:
            duck.execute("BEGIN")
            duck.execute(
                "CREATE OR REPLACE TABLE wide AS SELECT "
                + ", ".join(f"UNNEST(?) AS {n}" for n in names),
                columns,
            )
            duck.execute("COMMIT")
            return int(duck.execute("SELECT count(*) FROM wide").fetchone()[0])  # type: ignore[index]  # one row: a count
        finally:
            duck.close()

    return run


def main(argv: list[str]) -> int:
    from tests.query import conftest as pg  # the tests' private server, started alike

    quick = "--quick" in argv
    pairs = _arg(argv, "pairs", 3 if quick else 7)
    rows = _arg(argv, "rows", 20_000 if quick else 200_000)
    server_gen = pg.pg_server.__wrapped__()  # the fixture's generator: start, yield, stop
    server = next(server_gen)
    tmp = Path(tempfile.mkdtemp(prefix="lantide-bench-remote-"))
    try:
        return _measure(server, tmp, pairs, rows, "--profile" in argv)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        next(server_gen, None)


def _measure(server, tmp: Path, pairs: int, rows: int, profile: bool) -> int:
    import keyring
    from keyring.backend import KeyringBackend

    from lantide.query import QueryService
    from lantide.query.connections import add_connection
    from lantide.workspace.model import Workspace
    from lantide.workspace.sample import create_sample
    from lantide.workspace.settings import QuerySettings

    class _Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]  # keyring types it as a property
        store: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.store.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.store[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.store.pop((service, username), None)

    keyring.set_keyring(_Memory())
    server.psql(SEED.format(rows=rows))
    root = tmp / "ws"
    create_sample(root)
    ws = Workspace.open(root)
    add_connection(ws, "dw", server.connection_string, user=server.user, password=server.password)
    service = QueryService(ws, QuerySettings())
    service.create_sql_tab("q3-churn", "wide", TAB)
    full = f"{server.connection_string};BoolsAsChar=0;UID={server.user};PWD={server.password}"
    baseline = _baseline(full, tmp / "baseline.duckdb")

    def lantide() -> int:
        out = service.run_sql_tab("q3-churn", "wide")
        assert out["status"] == "ok", out
        return int(out["row_count"])

    assert lantide() == rows and baseline() == rows  # warm both: imports, caches, plans
    if profile:  # where a remote tab's time goes, by function (cumulative)
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.runcall(lantide)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    times: dict[str, list[float]] = {"lantide": [], "baseline": []}
    order = [("lantide", lantide), ("baseline", baseline)]
    for i in range(pairs):
        for name, fn in order if i % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    service.close()
    ws.close()
    ratios = [a / b for a, b in zip(times["lantide"], times["baseline"], strict=True)]
    paired = statistics.median(ratios)
    of_medians = statistics.median(times["lantide"]) / statistics.median(times["baseline"])
    from benchmarks.whole_process import machine, verdict

    print(f"{machine()}; {rows:,} rows x 8 columns from a private PostgreSQL, {pairs} pairs\n")
    print("| what | median s | min s |")
    print("|---|---|---|")
    for name in ("lantide", "baseline"):
        print(f"| {name} | {statistics.median(times[name]):.3f} | {min(times[name]):.3f} |")
    print(
        f"\nremote tab over pyodbc + DuckDB: median of pair ratios {paired:.3f}x "
        f"(pairs {min(ratios):.2f}-{max(ratios):.2f}), ratio of medians {of_medians:.3f}x; "
        f"target at most {TARGET}x: {verdict(paired, TARGET)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
