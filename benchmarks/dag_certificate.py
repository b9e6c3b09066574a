"""What a tab's certificate costs in DuckDB alone (issue 33): ``python -m benchmarks query
--dag-only --certificate``.

A tab of Source Run is committed together with its bookkeeping row, its columns are read
and its result is checked. Here plain DuckDB does that work, and nothing else, on the 20
statements of the DAG (:mod:`benchmarks.query_dag`), one at a time on one connection, in
Source Run's order, with the engine's settings, each run into a fresh database file. No
Lantide code is on the timed path (the statements and settings come from ``sql_of``,
``dag_order`` and ``engine_config``). Variants, in alternating order within each rep:

- ``floor (autocommit)``: ``CREATE OR REPLACE TABLE AS``, autocommit;
- ``+ transaction``: ``BEGIN``, the same statement, ``COMMIT``;
- ``+ row, first run (INSERT)``: the bookkeeping row inserted in that transaction with
  bound values, into a table made as ``_lantide.cached_tables`` (primary key on
  ``name``), as ``Catalog.record`` writes a table it has no row of;
- ``+ row, re-run (UPDATE)``: an UPDATE of that row instead; the rows are inserted and
  checkpointed before the timing starts, as on a re-run;
- ``+ row (INSERT) + DESCRIBE``: a first run's row, then ``DESCRIBE`` of the new table
  after the commit (how ``read_preview`` reads the columns);
- ``+ row (INSERT) + DESCRIBE + counts``: and the checks' aggregate, ``count("col")`` of
  every column by name (``result_stats.from_table`` for non-float columns);
- ``+ row (UPDATE) + DESCRIBE + counts``: the same with the re-run's UPDATE;
- ``cheapest: + COMMENT + count(COLUMNS(*))``: the least a certificate could be: the
  transaction, ``COMMENT ON TABLE`` with a short literal in place of a row, and
  ``SELECT count(COLUMNS(*))`` in place of both DESCRIBE and the checks' aggregate;
- ``one transaction for all 20 (...)``: group commit, which Lantide does not do: all tabs
  in one transaction, their rows in one multi-row INSERT before the one COMMIT, DESCRIBE
  and counts per tab inside it. A failed or cancelled tab would roll back the tabs before
  it; it is here to show what batching the commits could buy.

Each row of the table: median CPU and wall ms over the reps, per tab over the floor (CPU),
and the ratio to the floor (CPU) against issue 33's target of 1.15 for all of Lantide.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from statistics import median

from benchmarks.bench_query import WORK, tpch_data
from benchmarks.query_dag import Clock, dag_order, engine_config, sql_of

TARGET = 1.15  # issue 33: Source Run cold within 1.15x the floor

# (name, its parts): "txn" a transaction per tab; "insert" / "update" the bookkeeping row;
# "describe" the columns; "counts" the checks' aggregate; "comment" + "columns" the cheapest
VARIANTS: list[tuple[str, frozenset[str]]] = [
    ("floor (autocommit)", frozenset()),
    ("+ transaction", frozenset({"txn"})),
    ("+ row, first run (INSERT)", frozenset({"txn", "insert"})),
    ("+ row, re-run (UPDATE)", frozenset({"txn", "update"})),
    ("+ row (INSERT) + DESCRIBE", frozenset({"txn", "insert", "describe"})),
    ("+ row (INSERT) + DESCRIBE + counts", frozenset({"txn", "insert", "describe", "counts"})),
    ("+ row (UPDATE) + DESCRIBE + counts", frozenset({"txn", "update", "describe", "counts"})),
    ("cheapest: + COMMENT + count(COLUMNS(*))", frozenset({"txn", "comment", "columns"})),
    (
        "one transaction for all 20 (rows in one INSERT, DESCRIBE, counts)",
        frozenset({"batch", "describe", "counts"}),
    ),
]

# The shape of _lantide.cached_tables (lantide/query/catalog.py), in a schema of its own.
BOOKKEEPING_SQL = [
    "CREATE SCHEMA bk",
    """CREATE TABLE bk.cached_tables (
        name VARCHAR PRIMARY KEY, kind VARCHAR, project VARCHAR, tab VARCHAR,
        step_id VARCHAR, sql VARCHAR, fingerprint VARCHAR, row_count BIGINT,
        duration_ms BIGINT, created_at TIMESTAMP)""",
]
INSERT = "INSERT INTO bk.cached_tables VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
UPDATE = (
    "UPDATE bk.cached_tables SET kind = ?, project = ?, tab = ?, step_id = ?, sql = ?, "
    "fingerprint = ?, row_count = ?, duration_ms = ?, created_at = ? WHERE name = ?"
)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def run_variant(parts: frozenset[str], sf: float, data_dir: Path) -> tuple[float, float]:
    """One cold run of the 20 statements with ``parts``: (CPU s, wall s)."""
    import duckdb

    db = WORK / f"certificate-sf{sf:g}.duckdb"
    for path in (db, Path(f"{db}.wal")):
        path.unlink(missing_ok=True)
    order = dag_order()
    bodies = {m: sql_of(m, "floor", data_dir) for m in order}
    # the row's values, made before the timing (Python's share is not measured here)
    created = datetime(2026, 12, 5, 9, 0, 0)
    rows = {
        m: [
            "tab",
            "tpch",
            m,
            hashlib.sha256(m.encode()).hexdigest()[:12],
            bodies[m],
            hashlib.sha256(bodies[m].encode()).hexdigest(),
        ]
        for m in order
    }
    con = duckdb.connect(str(db), config=engine_config())
    try:
        for sql in BOOKKEEPING_SQL:
            con.execute(sql)
        if "update" in parts:  # a re-run: every tab has its row already, on disk
            for m in order:
                con.execute(INSERT, [m, *rows[m], 0, 0, created])
        con.execute("CHECKPOINT")
        with Clock() as clock:
            if "batch" in parts:
                _run_batched(con, order, bodies, rows, created)
            for m in order if "batch" not in parts else ():
                create = f"CREATE OR REPLACE TABLE {_quote(m)} AS {bodies[m]}"
                if "txn" not in parts:
                    con.execute(create).fetchall()
                    continue
                con.execute("BEGIN")
                row_count = con.execute(create).fetchall()[0][0]
                if "insert" in parts:
                    con.execute(INSERT, [m, *rows[m], row_count, 5, created])
                if "update" in parts:
                    con.execute(UPDATE, [*rows[m], row_count, 5, created, m]).fetchall()
                if "comment" in parts:
                    con.execute(f"COMMENT ON TABLE {_quote(m)} IS 'fp=0123456789ab;rows=1'")
                con.execute("COMMIT")
                names: list[str] = []
                if "describe" in parts:
                    names = [r[0] for r in con.execute(f"DESCRIBE {_quote(m)}").fetchall()]
                if "counts" in parts and row_count:
                    counts = ", ".join(f"count({_quote(n)})" for n in names)
                    con.execute(f"SELECT {counts} FROM {_quote(m)}").fetchall()
                if "columns" in parts:
                    con.execute(f"SELECT count(COLUMNS(*)) FROM {_quote(m)}").fetchall()
    finally:
        con.close()
    return clock.cpu, clock.wall


def _run_batched(con, order: list[str], bodies: dict, rows: dict, created: datetime) -> None:
    """Group commit: every tab in one transaction, the rows in one INSERT at its end."""
    con.execute("BEGIN")
    values = []
    for m in order:
        row_count = con.execute(f"CREATE OR REPLACE TABLE {_quote(m)} AS {bodies[m]}").fetchall()[
            0
        ][0]
        names = [r[0] for r in con.execute(f"DESCRIBE {_quote(m)}").fetchall()]
        if row_count:
            counts = ", ".join(f"count({_quote(n)})" for n in names)
            con.execute(f"SELECT {counts} FROM {_quote(m)}").fetchall()
        values.append([m, *rows[m], row_count, 5, created])
    con.executemany(INSERT, values)
    con.execute("COMMIT")


def measure(sf: float, reps: int) -> list[dict]:
    """Each variant's median CPU and wall s over ``reps`` rounds, and, paired with the floor
    of the same round (the machine is shared and drifts between rounds), the median of its
    CPU over the floor's and its ratio to it. Each round runs every variant once, starting
    one variant further each time."""
    data_dir = tpch_data(sf)
    WORK.mkdir(parents=True, exist_ok=True)
    run_variant(frozenset(), sf, data_dir)  # a first run warms the files and DuckDB: untimed
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in VARIANTS}
    for rep in range(reps):
        shift = rep % len(VARIANTS)
        for name, parts in VARIANTS[shift:] + VARIANTS[:shift]:
            runs[name].append(run_variant(parts, sf, data_dir))
    floor = runs[VARIANTS[0][0]]
    return [
        {
            "variant": name,
            "cpu": median(c for c, _ in runs[name]),
            "wall": median(w for _, w in runs[name]),
            "over": median(c - f for (c, _), (f, _) in zip(runs[name], floor, strict=True)),
            "ratios": sorted(c / f for (c, _), (f, _) in zip(runs[name], floor, strict=True)),
        }
        for name, _ in VARIANTS
    ]


def report_certificate(sf: float, reps: int) -> None:
    tabs = len(dag_order())
    print(
        f"\n### The certificate's own DuckDB work, SF {sf:g} (plain DuckDB, {tabs} tabs one "
        f"at a time; medians of {reps} rounds; over the floor and ratio paired with the "
        "floor of the same round)\n",
        flush=True,
    )
    rows = measure(sf, reps)
    floor_cpu = rows[0]["cpu"]
    print(
        "| variant | CPU ms | wall ms | CPU per tab over the floor | CPU / floor (range) | "
        f"within {TARGET}? |\n|---|---|---|---|---|---|"
    )
    for r in rows:
        ratios = r["ratios"]
        ratio = median(ratios)
        print(
            f"| {r['variant']} | {r['cpu'] * 1000:.1f} | {r['wall'] * 1000:.1f} | "
            f"{r['over'] * 1000 / tabs:+.2f} ms | {ratio:.3f} ({ratios[0]:.2f}-{ratios[-1]:.2f}) "
            f"| {'yes' if ratio <= TARGET else 'no'} |"
        )
    print(
        f"\n{TARGET}x the floor leaves {(TARGET - 1) * floor_cpu * 1000 / tabs:.2f} ms of CPU "
        f"per tab (floor {floor_cpu * 1000 / tabs:.2f} ms per tab) for all of Lantide's "
        "work, Python included.\n"
    )
