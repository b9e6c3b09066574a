"""The Source Run benchmark of ``python -m benchmarks query``: a 20-tab DAG on TPC-H.

Lantide (a fresh workspace: Source Run cold, warm, after a leaf change) against the floor:
plain DuckDB in the same process running the same 20 ``CREATE OR REPLACE TABLE AS``
statements in Source Run's own order, into a fresh database file on the same disk, with
the settings Lantide's engine opens DuckDB with, each committed to disk (autocommit: a WAL
fsync or a checkpoint per statement, as Lantide's one transaction per tab); then the
changed chain on the same open connection, as Lantide's service keeps its own. Floor and
Lantide alternate; wall and CPU time are both kept (the machine is shared).

:func:`explain` takes Lantide's per-tab work apart: the same cold run with one guarantee
after another switched off (monkeypatched here, for measurement only), against the floor.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

from benchmarks.bench_query import TABLES, WORK, open_service, tpch_data, workspace_for

# The 20-tab DAG: 8 staging tabs on the raw tables, 7 joins, 4 marts, 1 report.
DAG = {
    "stg_lineitem": "SELECT l_orderkey, l_partkey, l_suppkey, l_quantity, l_extendedprice, "
    "l_discount, l_returnflag, l_shipdate, l_extendedprice * (1 - l_discount) "
    "AS net FROM {lineitem}",
    "stg_orders": "SELECT o_orderkey, o_custkey, o_orderstatus, o_totalprice, o_orderdate, "
    "o_orderpriority FROM {orders}",
    "stg_customer": "SELECT c_custkey, c_name, c_nationkey, c_acctbal, c_mktsegment "
    "FROM {customer}",
    "stg_part": "SELECT p_partkey, p_name, p_brand, p_type, p_size FROM {part}",
    "stg_supplier": "SELECT s_suppkey, s_name, s_nationkey, s_acctbal FROM {supplier}",
    "stg_partsupp": "SELECT ps_partkey, ps_suppkey, ps_availqty, ps_supplycost FROM {partsupp}",
    "stg_nation": "SELECT n_nationkey, n_name, n_regionkey FROM {nation}",
    "stg_region": "SELECT r_regionkey, r_name FROM {region}",
    "nation_region": "SELECT n.n_nationkey, n.n_name, r.r_name FROM {stg_nation} n "
    "JOIN {stg_region} r ON r.r_regionkey = n.n_regionkey",
    "customer_geo": "SELECT c.*, g.n_name, g.r_name FROM {stg_customer} c "
    "JOIN {nation_region} g ON g.n_nationkey = c.c_nationkey",
    "supplier_geo": "SELECT s.*, g.n_name, g.r_name FROM {stg_supplier} s "
    "JOIN {nation_region} g ON g.n_nationkey = s.s_nationkey",
    "order_revenue": "SELECT l_orderkey, sum(net) AS revenue, count(*) AS lines, "
    "sum(l_quantity) AS quantity FROM {stg_lineitem} GROUP BY l_orderkey",
    "orders_enriched": "SELECT o.o_orderkey, o.o_orderdate, o.o_orderstatus, r.revenue, r.lines, "
    "c.c_custkey, c.c_name, c.c_mktsegment, c.n_name, c.r_name "
    "FROM {stg_orders} o JOIN {order_revenue} r ON r.l_orderkey = o.o_orderkey "
    "JOIN {customer_geo} c ON c.c_custkey = o.o_custkey",
    "part_supply": "SELECT ps.*, p.p_brand, p.p_type, s.s_name, s.n_name, s.r_name "
    "FROM {stg_partsupp} ps JOIN {stg_part} p ON p.p_partkey = ps.ps_partkey "
    "JOIN {supplier_geo} s ON s.s_suppkey = ps.ps_suppkey",
    "line_returns": "SELECT l_returnflag, date_trunc('year', l_shipdate) AS year, count(*) AS n, "
    "sum(net) AS net FROM {stg_lineitem} GROUP BY ALL",
    "revenue_by_nation_month": "SELECT n_name, r_name, date_trunc('month', o_orderdate) AS month, "
    "sum(revenue) AS revenue FROM {orders_enriched} GROUP BY ALL",
    "revenue_by_segment": "SELECT c_mktsegment, year(o_orderdate) AS year, "
    "sum(revenue) AS revenue, count(*) AS orders FROM {orders_enriched} GROUP BY ALL",
    "supplier_value": "SELECT s_name, r_name, sum(ps_availqty * ps_supplycost) AS stock_value "
    "FROM {part_supply} GROUP BY ALL",
    "top_customers": "SELECT c_custkey, c_name, sum(revenue) AS revenue FROM {orders_enriched} "
    "GROUP BY ALL ORDER BY revenue DESC LIMIT 100",
    "final_report": "SELECT m.r_name, sum(m.revenue) AS revenue, "
    "(SELECT sum(stock_value) FROM {supplier_value} v WHERE v.r_name = m.r_name) AS stock, "
    "(SELECT count(*) FROM {revenue_by_segment}) AS segments, "
    "(SELECT max(revenue) FROM {top_customers}) AS best_customer, "
    "(SELECT sum(n) FROM {line_returns}) AS lines "
    "FROM {revenue_by_nation_month} m GROUP BY m.r_name",
}
LEAF = "stg_supplier"  # the changed leaf: stg_supplier -> supplier_geo -> part_supply -> ...
LEAF_CHAIN = ["stg_supplier", "supplier_geo", "part_supply", "supplier_value", "final_report"]
LEAF_CHANGE = " WHERE s_acctbal > -100000"


def _names(kind: str, data_dir: Path) -> dict:
    """How tab SQL names its inputs for Lantide (tables), the floor and dbt."""
    out = {}
    for t in TABLES:
        out[t] = t if kind == "lantide" else f"read_parquet('{data_dir / (t + '.parquet')}')"
    for m in DAG:
        out[m] = m if kind != "dbt" else "{{ ref('" + m + "') }}"
    return out


def sql_of(model: str, kind: str, data_dir: Path, changed: bool = False) -> str:
    sql = DAG[model].format(**_names(kind, data_dir))
    return sql + (LEAF_CHANGE if changed and model == LEAF else "")


def dag_order() -> list[str]:
    """The order Source Run itself uses (dependencies first, ties by name), so the floor
    runs the same statements in the same order."""
    import re

    from lantide.query.lineage import upstream_order

    deps = {m: [d for d in re.findall(r"\{(\w+)\}", s) if d in DAG] for m, s in DAG.items()}
    return upstream_order(deps, "final_report")


class Clock:
    """Wall time and this process's CPU time (all threads) of one phase: the machine is
    shared, and CPU time shows the work done apart from waiting for cores or the disk."""

    def __enter__(self) -> Clock:
        self.wall0, self.cpu0 = time.perf_counter(), _cpu()
        return self

    def __exit__(self, *exc) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall0, _cpu() - self.cpu0


def _cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def engine_config() -> dict:
    """The settings Lantide's engine opens DuckDB with (QuerySettings defaults), for the floor."""
    from lantide.workspace.settings import QuerySettings

    settings = QuerySettings()
    config = {
        "memory_limit": settings.memory_limit,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    if settings.threads:
        config["threads"] = int(settings.threads)
    return config


def floor_sequence(sf: float, data_dir: Path) -> dict:
    """The floor: plain DuckDB in this process, a fresh database file on the same disk, the
    engine's settings, the 20 statements in Source Run's order, each ``CREATE OR REPLACE
    TABLE AS`` committed to disk (autocommit: one WAL fsync or checkpoint each, as ours);
    then the changed chain on the same open connection, as Lantide's service keeps its own."""
    import duckdb

    db = WORK / f"floor-sf{sf:g}.duckdb"
    for path in (db, Path(f"{db}.wal")):
        path.unlink(missing_ok=True)
    con = duckdb.connect(str(db), config=engine_config())
    try:
        with Clock() as cold:
            for m in dag_order():
                con.execute(f"CREATE OR REPLACE TABLE {m} AS {sql_of(m, 'floor', data_dir)}")
        with Clock() as chain:
            for m in LEAF_CHAIN:
                con.execute(f"CREATE OR REPLACE TABLE {m} AS {sql_of(m, 'floor', data_dir, True)}")
    finally:
        con.close()
    return {"cold": cold.wall, "chain": chain.wall, "cold_cpu": cold.cpu, "chain_cpu": chain.cpu}


def floor_side_by_side(sf: float, data_dir: Path, workers: int) -> float:
    """A second baseline, since Source Run runs independent tabs side by side: plain DuckDB
    scheduling the same 20 statements the same way (a tab starts once its inputs exist,
    ready tabs in Source Run's order, at most ``workers`` at once, a cursor per thread),
    autocommit, into a fresh database file. Wall time of the cold run."""
    import re
    import threading
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    import duckdb

    deps = {m: [d for d in re.findall(r"\{(\w+)\}", q) if d in DAG] for m, q in DAG.items()}
    db = WORK / f"floor-par-sf{sf:g}.duckdb"
    for path in (db, Path(f"{db}.wal")):
        path.unlink(missing_ok=True)
    con = duckdb.connect(str(db), config=engine_config())
    local = threading.local()

    def create(m: str) -> str:
        cur = getattr(local, "cur", None)
        if cur is None:
            cur = local.cur = con.cursor()
        cur.execute(f"CREATE OR REPLACE TABLE {m} AS {sql_of(m, 'floor', data_dir)}")
        return m

    order = dag_order()
    try:
        with Clock() as cold, ThreadPoolExecutor(workers) as pool:
            done: set[str] = set()
            running: dict = {}
            while len(done) < len(order):
                for m in order:
                    if (
                        m not in done
                        and m not in running.values()
                        and len(running) < workers
                        and all(d in done for d in deps[m])
                    ):
                        running[pool.submit(create, m)] = m
                finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in finished:
                    done.add(future.result())
                    running.pop(future)
    finally:
        con.close()
    return cold.wall


def lantide_sequence(sf: float, data_dir: Path) -> dict:
    """A fresh workspace with the 20 tabs: open, then Source Run cold, warm, after a leaf change."""
    from lantide.query import guard
    from lantide.workspace.model import Workspace

    root = workspace_for(sf, data_dir, "dag")
    Workspace(root, {}).create_project("tpch")
    sql_dir = root / "projects" / "tpch" / "sql"
    for m in DAG:
        (sql_dir / f"{m}.sql").write_text(sql_of(m, "lantide", data_dir) + "\n")
    # A new process parses each statement once; earlier runs here parsed the same texts.
    guard.forget_analyses()
    t0 = time.perf_counter()
    ws, svc = open_service(root)
    out = {"open": time.perf_counter() - t0}
    try:
        for phase in ("cold", "warm", "leaf"):
            if phase == "leaf":
                (sql_dir / f"{LEAF}.sql").write_text(sql_of(LEAF, "lantide", data_dir, True) + "\n")
            with Clock() as clock:
                report = svc.source_run_sql_tab("tpch", "final_report")
            out[phase], out[phase + "_cpu"] = clock.wall, clock.cpu
            assert report["ok"], report
            assert report["ran"] == {"cold": len(DAG), "warm": 0, "leaf": len(LEAF_CHAIN)}[phase]
    finally:
        svc.close()
        ws.close()
    return out


def dbt_python() -> Path | None:
    venv = WORK / "dbt-venv"
    py = venv / "bin" / "python"
    if py.exists() and (venv / "bin" / "dbt").exists():
        return py
    print("installing dbt-core 1.11 + dbt-duckdb into benchmarks/.work/dbt-venv ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "dbt-core==1.11.*", "dbt-duckdb"], check=True
        )
    except subprocess.CalledProcessError as exc:
        print(f"dbt unavailable: {exc}")
        return None
    return py


def dbt_runs(sf: float, data_dir: Path) -> dict | None:
    py = dbt_python()
    if py is None:
        return None
    project = WORK / f"dbt-sf{sf:g}"
    if project.exists():
        shutil.rmtree(project)
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: tpch_dag\nversion: '1.0'\nprofile: tpch_dag\nmodel-paths: ['models']\n"
        "models:\n  tpch_dag:\n    +materialized: table\n"
    )
    (project / "profiles.yml").write_text(
        f"tpch_dag:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
        f"      path: '{project / 'dbt.duckdb'}'\n      threads: 1\n"
    )
    for m in DAG:
        (project / "models" / f"{m}.sql").write_text(sql_of(m, "dbt", data_dir) + "\n")
    dbt = str(py.parent / "dbt")
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1")
    base = ["--profiles-dir", str(project), "--project-dir", str(project)]

    def run(*args) -> float:
        t0 = time.perf_counter()
        subprocess.run(
            [dbt, "run", *base, *args], check=True, env=env, cwd=project, stdout=subprocess.DEVNULL
        )
        return time.perf_counter() - t0

    out = {"cold": run()}
    state = project / "state"
    shutil.copytree(project / "target", state)
    out["warm"] = run("--select", "state:modified+", "--state", str(state))
    (project / "models" / f"{LEAF}.sql").write_text(sql_of(LEAF, "dbt", data_dir, True) + "\n")
    out["leaf"] = run("--select", "state:modified+", "--state", str(state))
    return out


def bench_dag(sf: float, with_dbt: bool, reps: int) -> dict:
    """``reps`` runs of the floor and of Lantide, alternating which goes first; medians."""
    data_dir = tpch_data(sf)
    WORK.mkdir(parents=True, exist_ok=True)
    from lantide.query.guard import check

    check("SELECT 1")  # a process's first check imports sqlglot (~0.15 s): once, untimed

    from lantide.query.sourcerun import default_workers

    workers = default_workers()  # what a Source Run uses here unless the settings say else
    floors, lantides, parallel = [], [], []
    for rep in range(reps):
        pair = (floor_sequence, lantide_sequence)
        if rep % 2:
            pair = pair[::-1]
        for run in pair:
            (floors if run is floor_sequence else lantides).append(run(sf, data_dir))
        parallel.append(floor_side_by_side(sf, data_dir, workers))
        print(
            f"  SF {sf:g} run {rep + 1}/{reps}: floor {floors[-1]['cold']:.3f} s "
            f"(side by side {parallel[-1]:.3f} s), Lantide {lantides[-1]['cold']:.3f} s "
            f"cold, leaf {lantides[-1]['leaf']:.3f} s vs chain {floors[-1]['chain']:.3f} s",
            flush=True,
        )
    out = {
        "sf": sf,
        "reps": reps,
        "floor": median(f["cold"] for f in floors),
        "chain": median(f["chain"] for f in floors),
        "floor_cpu": median(f["cold_cpu"] for f in floors),
        "chain_cpu": median(f["chain_cpu"] for f in floors),
        "lantide": {
            k: median(r[k] for r in lantides)
            for k in ("open", "cold", "warm", "leaf", "cold_cpu", "leaf_cpu")
        },
        "cold_ratios": sorted(
            lan["cold"] / f["cold"] for f, lan in zip(floors, lantides, strict=True)
        ),
        "workers": workers,
        "floor_side_by_side": median(parallel),
        # paired: each run's Lantide cold against the side-by-side floor of the same run
        "side_ratios": sorted(
            lan["cold"] / par for lan, par in zip(lantides, parallel, strict=True)
        ),
        "dbt": dbt_runs(sf, data_dir) if with_dbt else None,
    }
    return out


# -- why: the per-tab work, piece by piece ----------------------------------------------------

EXPLAIN_STEPS = [
    "Lantide",
    "- bookkeeping row",
    "- columns of the step",
    "- transaction",
    "- SQL parse (guard, lineage)",
]


def explain(sf: float, reps: int) -> list[tuple[str, float, float]]:
    """Cold Source Run with one piece of per-tab work removed after another (cumulative),
    against the floor: (step, median wall s, median CPU s). Measurement only: the pieces
    removed are what keeps a failed re-run's old table and what Source Run's skip and the
    ledger rely on."""
    from lantide.query import catalog, guard, results
    from lantide.workspace.model import Workspace

    data_dir = tpch_data(sf)
    import sqlglot.dialects.duckdb  # noqa: F401  (the full reading's parser, untimed)

    saved = (catalog.Catalog.record, results.read_preview, results.materialize)

    def no_record(self, cur, table):
        return None

    def no_columns(cur, table, preview_rows, row_count=None, cell_chars=None):
        return results.Preview([], [], row_count or 0)

    def autocommit(cur, body, kind, table, preview_rows, before_commit=None, cell_chars=None):
        sql = results.materialize_prefix(table) + results.select_body(body, kind)
        return results.Preview([], [], int(cur.execute(sql).fetchall()[0][0]))

    patches = [
        (catalog.Catalog, "record", no_record),
        (results, "read_preview", no_columns),
        (results, "materialize", autocommit),
    ]
    wall: dict[str, list] = {k: [] for k in ["floor", *EXPLAIN_STEPS]}
    cpu: dict[str, list] = {k: [] for k in wall}
    try:
        for _ in range(reps):
            floor = floor_sequence(sf, data_dir)
            wall["floor"].append(floor["cold"])
            cpu["floor"].append(floor["cold_cpu"])
            for step, name in enumerate(EXPLAIN_STEPS):
                catalog.Catalog.record, results.read_preview, results.materialize = saved
                for owner, attr, patch in patches[:step]:
                    setattr(owner, attr, patch)
                root = workspace_for(sf, data_dir, "explain")
                Workspace(root, {}).create_project("tpch")
                for m in DAG:
                    text = sql_of(m, "lantide", data_dir) + "\n"
                    (root / "projects" / "tpch" / "sql" / f"{m}.sql").write_text(text)
                    if step == 4:
                        guard._analyse(text)  # parsed before: none parsed during the run
                if step < 4:
                    guard.forget_analyses()
                ws, svc = open_service(root, source_run_workers=1)  # per-tab work: one at a time
                try:
                    with Clock() as clock:
                        assert svc.source_run_sql_tab("tpch", "final_report")["ok"]
                finally:
                    svc.close()
                    ws.close()
                wall[name].append(clock.wall)
                cpu[name].append(clock.cpu)
    finally:
        catalog.Catalog.record, results.read_preview, results.materialize = saved
    return [(k, median(wall[k]), median(cpu[k])) for k in wall]
