"""Query layer benchmark: ``python -m benchmarks query [--quick] [--no-dbt] [--dag-only] ...``.

Measured side by side in one run, with ratios:

1. ``run_query`` on the 22 TPC-H queries against plain ``duckdb`` running the same SQL
   (best of 3 each; target: total within 10%).
2. Peak Python memory (tracemalloc) of a preview of a 10-million-row result against a
   200-row one (target: within 10%).
3. Source Run of a 20-tab DAG on TPC-H at SF 0.01 and SF 1: cold, warm (nothing
   changed), and after one leaf tab changed (``--reps=N``), against the floor: plain DuckDB running the
   same 20 statements in the same order in this process, into a fresh database file with
   the engine's settings, each committed to disk; then the changed chain on the same
   connection. Floor and Lantide alternate, ``N`` runs each (default 11 at SF 0.01, 5 at
   SF 1), and the medians are compared. ``dbt run`` / ``dbt run --select
   state:modified+`` of the same 20 models with dbt-duckdb run once, for reference.

TPC-H Parquet is generated offline by ``tpchgen-cli`` into ``benchmarks/.data/``. dbt
(dbt-core 1.11 + dbt-duckdb) is installed by this script into its own virtual environment,
``benchmarks/.work/dbt-venv``, because it pins a DuckDB of its own. ``--quick`` runs SF 0.01
only; ``--no-dbt`` skips dbt; ``--dag-only`` skips parts 1 and 2; ``--sf=1`` (or
``--sf=0.01,1``) picks the DAG's scale factors.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
WORK = HERE / ".work"
QUERIES = HERE.parent.parent / "shared" / "benchdata" / "tpch"
TABLES = ["lineitem", "orders", "customer", "part", "supplier", "partsupp", "nation", "region"]

# The 20-tab DAG: 8 staging tabs on the raw tables, 7 joins, 4 marts, 1 report.
DAG = {
    "stg_lineitem": "SELECT l_orderkey, l_partkey, l_suppkey, l_quantity, l_extendedprice, "
                    "l_discount, l_returnflag, l_shipdate, l_extendedprice * (1 - l_discount) "
                    "AS net FROM {lineitem}",
    "stg_orders": "SELECT o_orderkey, o_custkey, o_orderstatus, o_totalprice, o_orderdate, "
                  "o_orderpriority FROM {orders}",
    "stg_customer": "SELECT c_custkey, c_name, c_nationkey, c_acctbal, c_mktsegment FROM {customer}",
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
    "revenue_by_segment": "SELECT c_mktsegment, year(o_orderdate) AS year, sum(revenue) AS revenue, "
                          "count(*) AS orders FROM {orders_enriched} GROUP BY ALL",
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


# -- data ----------------------------------------------------------------------------

def tpch_data(sf: float) -> Path:
    target = DATA / f"tpch-sf{sf:g}"
    if all((target / f"{t}.parquet").exists() for t in TABLES):
        return target
    target.mkdir(parents=True, exist_ok=True)
    exe = shutil.which("tpchgen-cli") or str(Path(sys.executable).parent / "tpchgen-cli")
    print(f"generating TPC-H SF {sf:g} into {target} ...", flush=True)
    subprocess.run([exe, "parquet", "-s", f"{sf:g}", f"--output-dir={target}"], check=True)
    return target


def workspace_for(sf: float, data_dir: Path, name: str) -> Path:
    """A fresh Lantide workspace whose data/ holds the TPC-H files (hard links)."""
    from lantide.workspace.model import Workspace

    root = WORK / f"{name}-sf{sf:g}"
    if root.exists():
        shutil.rmtree(root)
    Workspace.create(root)
    for t in TABLES:
        src, dst = data_dir / f"{t}.parquet", root / "data" / f"{t}.parquet"
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    return root


def open_service(root: Path):
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    ws = Workspace.open(root)
    return ws, QueryService(ws, QuerySettings())


# -- 1. TPC-H queries -------------------------------------------------------------------

def bench_tpch(sf: float, reps: int = 3) -> list[tuple]:
    import duckdb

    data_dir = tpch_data(sf)
    root = workspace_for(sf, data_dir, "tpch")
    ws, svc = open_service(root)
    plain = duckdb.connect()
    for t in TABLES:
        plain.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{data_dir / (t + '.parquet')}')")
    rows = []
    try:
        for path in sorted(QUERIES.glob("q*.sql")):
            sql = path.read_text()
            best_plain = best_lantide = float("inf")
            for _ in range(reps):
                t0 = time.perf_counter()
                plain.execute(sql).fetchall()
                best_plain = min(best_plain, time.perf_counter() - t0)
                t0 = time.perf_counter()
                result = svc.run_query(sql, allow_complex=True)
                best_lantide = min(best_lantide, time.perf_counter() - t0)
            rows.append((path.stem, best_plain, best_lantide, result["reason_code"]))
    finally:
        svc.close()
        ws.close()
        plain.close()
    return rows


# -- 2. preview memory -------------------------------------------------------------------

def bench_memory() -> tuple[int, int]:
    root = WORK / "memory"
    if root.exists():
        shutil.rmtree(root)
    from lantide.workspace.model import Workspace

    Workspace.create(root)
    ws, svc = open_service(root)
    peaks = []
    try:
        for n in (200, 10_000_000, 200, 10_000_000):
            tracemalloc.start()
            result = svc.run_query(f"SELECT range AS id, range * 3 AS value, 'row ' || range AS label "
                                   f"FROM range({n})")
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert result["row_count"] == n
            peaks.append(peak)
    finally:
        svc.close()
        ws.close()
    return min(peaks[0], peaks[2]), min(peaks[1], peaks[3])


# -- 3. Source Run of a 20-tab DAG -------------------------------------------------------------

class Clock:
    """Wall time and this process's CPU time (all threads) of one phase: the machine is
    shared, and CPU time shows the work done apart from waiting for cores or the disk."""

    def __enter__(self) -> "Clock":
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
    config = {"memory_limit": settings.memory_limit, "autoinstall_known_extensions": False,
              "autoload_known_extensions": False}
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
    guard._analyse.cache_clear()
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
        subprocess.run([str(py), "-m", "pip", "install", "-q", "dbt-core==1.11.*", "dbt-duckdb"],
                       check=True)
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
        "models:\n  tpch_dag:\n    +materialized: table\n")
    (project / "profiles.yml").write_text(
        f"tpch_dag:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
        f"      path: '{project / 'dbt.duckdb'}'\n      threads: 1\n")
    for m in DAG:
        (project / "models" / f"{m}.sql").write_text(sql_of(m, "dbt", data_dir) + "\n")
    dbt = str(py.parent / "dbt")
    env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1")
    base = ["--profiles-dir", str(project), "--project-dir", str(project)]

    def run(*args) -> float:
        t0 = time.perf_counter()
        subprocess.run([dbt, "run", *base, *args], check=True, env=env, cwd=project,
                       stdout=subprocess.DEVNULL)
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
    from statistics import median

    data_dir = tpch_data(sf)
    WORK.mkdir(parents=True, exist_ok=True)
    import lantide.query.service  # noqa: F401  (imports and sqlglot's load: not the run's cost)

    floors, lantides = [], []
    for rep in range(reps):
        pair = (floor_sequence, lantide_sequence) if rep % 2 == 0 else (lantide_sequence, floor_sequence)
        for run in pair:
            (floors if run is floor_sequence else lantides).append(run(sf, data_dir))
        print(f"  SF {sf:g} run {rep + 1}/{reps}: floor {floors[-1]['cold']:.3f} s, Lantide "
              f"{lantides[-1]['cold']:.3f} s cold, leaf {lantides[-1]['leaf']:.3f} s vs chain "
              f"{floors[-1]['chain']:.3f} s", flush=True)
    out = {"sf": sf, "reps": reps,
           "floor": median(f["cold"] for f in floors), "chain": median(f["chain"] for f in floors),
           "floor_cpu": median(f["cold_cpu"] for f in floors),
           "chain_cpu": median(f["chain_cpu"] for f in floors),
           "lantide": {k: median(r[k] for r in lantides)
                       for k in ("open", "cold", "warm", "leaf", "cold_cpu", "leaf_cpu")},
           "cold_ratios": sorted(l["cold"] / f["cold"] for f, l in zip(floors, lantides)),
           "dbt": dbt_runs(sf, data_dir) if with_dbt else None}
    return out


# -- report ------------------------------------------------------------------------------------

def _flag(argv: list[str], name: str, default: int | None) -> int | None:
    for arg in argv:
        if arg.startswith(name + "="):
            return int(arg.split("=", 1)[1])
    return default


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    with_dbt = "--no-dbt" not in argv
    reps = _flag(argv, "--reps", None)
    WORK.mkdir(parents=True, exist_ok=True)
    if "--dag-only" not in argv:
        report_queries(0.01 if quick else 1)
    print("### Source Run of a 20-tab DAG (seconds; medians of alternating runs)\n", flush=True)
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--sf=")), None)
    scales = [float(x) for x in only.split(",")] if only else ([0.01] if quick else [0.01, 1])
    rows = [bench_dag(sf, with_dbt, reps or (11 if sf < 0.1 else 5)) for sf in scales]
    print("\n| SF | runs | floor cold | Lantide cold | cold / floor (range) | Lantide warm | "
          "floor chain | Lantide leaf | leaf - chain | open service |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lt, ratios = r["lantide"], r["cold_ratios"]
        print(f"| {r['sf']:g} | {r['reps']} | {r['floor']:.3f} | {lt['cold']:.3f} | "
              f"**{lt['cold'] / r['floor']:.3f}** ({ratios[0]:.2f}-{ratios[-1]:.2f}) | "
              f"{lt['warm'] * 1000:.1f} ms | {r['chain']:.3f} | {lt['leaf']:.3f} | "
              f"**{(lt['leaf'] - r['chain']) * 1000:+.0f} ms** | {lt['open'] * 1000:.0f} ms |")
    print("\nCPU time of this process (all threads), same runs, medians:\n")
    print("| SF | floor cold CPU | Lantide cold CPU | ratio | floor chain CPU | Lantide leaf CPU "
          "| leaf - chain |\n|---|---|---|---|---|---|---|")
    for r in rows:
        lt = r["lantide"]
        print(f"| {r['sf']:g} | {r['floor_cpu']:.3f} | {lt['cold_cpu']:.3f} | "
              f"{lt['cold_cpu'] / r['floor_cpu']:.3f} | {r['chain_cpu']:.3f} | {lt['leaf_cpu']:.3f} | "
              f"{(lt['leaf_cpu'] - r['chain_cpu']) * 1000:+.0f} ms |")
    print("\ntargets: cold / floor <= 1.05; warm < 100 ms; leaf - chain < 100 ms\n")
    for r in rows:
        d = r["dbt"]
        if d:
            print(f"dbt run, SF {r['sf']:g} (one run): cold {d['cold']:.3f} s "
                  f"({d['cold'] / r['floor']:.2f}x the floor), warm {d['warm']:.3f} s, "
                  f"leaf {d['leaf']:.3f} s")
    return 0


def report_queries(sf_queries: float) -> None:
    print(f"### run_query on TPC-H SF {sf_queries:g} vs plain duckdb (best of 3)\n")
    rows = bench_tpch(sf_queries)
    print("| query | duckdb s | run_query s | ratio | reason_code |\n|---|---|---|---|---|")
    for name, p, l, reason in rows:
        print(f"| {name} | {p:.3f} | {l:.3f} | {l / p:.2f} | {reason} |")
    total_p, total_l = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| total | {total_p:.3f} | {total_l:.3f} | **{total_l / total_p:.3f}** | |\n", flush=True)

    small, large = bench_memory()
    print("### Peak Python memory of a preview (tracemalloc)\n")
    print(f"| result rows | peak bytes |\n|---|---|\n| 200 | {small:,} |\n| 10,000,000 | {large:,} |")
    print(f"\nratio 10M / 200: **{large / small:.3f}**\n", flush=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
