"""The command line as a whole process (issue 33): ``lantide sql``, ``lantide tables`` and
``lantide tab source-run`` on the sample workspace, against plain Python doing the same
work with DuckDB directly, each pair run back to back in alternating order.

- **sql**: ``lantide sql WS "select 42"`` against a script that opens a copy of the
  workspace's cache database and prints the same query's rows;
- **tables**: ``lantide tables WS`` (the workspace opened before: its files registered)
  against a script that opens that database copy, makes a view over each data file
  (``read_csv_auto``, ``read_parquet``), counts its rows, reads the workbook's sheets
  with python-calamine and prints the listing;
- **source-run**: ``lantide tab source-run WS q3-churn q3_churn_by_region`` with the
  chain's first tab changed before each run (a comment; so all three tabs run) against a
  script that makes the data files' views and runs the three tabs' SQL as
  ``CREATE OR REPLACE TABLE ... AS`` in the same order, autocommit.

Every process: this checkout on the path, bytecode cached, user directories in a
temporary folder. Target (issue 33): at most 1.5x, the median of 15 pairs' wall-time
ratios. ``python -m benchmarks cli [--quick] [--pairs=N]``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.whole_process import Pairs, Run, environment, machine, paired, run, verdict

TARGET = 1.5
PROJECT = "q3-churn"
CHAIN = ["clean_orders", "customer_quarters", "q3_churn_by_region"]

# The baselines: plain Python and DuckDB, nothing of Lantide imported.
SQL_SCRIPT = """
import sys
import duckdb
con = duckdb.connect(sys.argv[1])
cur = con.execute(sys.argv[2])
print([d[0] for d in cur.description])
for row in cur.fetchmany(200):
    print(row)
con.close()
"""

# The same with the SQL parser Lantide's guard uses (sqlglot, DuckDB dialect): the floor
# of any command that reads a statement, given that parser (its import alone is about
# half of the plain script's whole process).
SQL_PARSED_SCRIPT = (
    """
import sys
import sqlglot
sqlglot.parse_one(sys.argv[2], read="duckdb")
"""
    + SQL_SCRIPT
)

VIEWS = """
import sys
from pathlib import Path
import duckdb
con = duckdb.connect(sys.argv[1])
data = Path(sys.argv[2])
for path in sorted(data.iterdir()):
    name = path.stem
    if path.suffix == ".csv":
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM read_csv_auto('{path}')")
    elif path.suffix == ".parquet":
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM read_parquet('{path}')")
"""

TABLES_SCRIPT = (
    VIEWS
    + """
for path in sorted(data.iterdir()):
    if path.suffix in (".csv", ".parquet"):
        (n,) = con.execute(f"SELECT count(*) FROM {path.stem}").fetchone()
        print(path.stem, "data_file", n, path.name)
    elif path.suffix == ".xlsx":
        import python_calamine
        book = python_calamine.CalamineWorkbook.from_path(str(path))
        for sheet in book.sheet_names:
            rows = book.get_sheet_by_name(sheet).to_python()
            print(path.stem, sheet, "excel_sheet", max(len(rows) - 1, 0), path.name)
con.close()
"""
)

SOURCE_RUN_SCRIPT = (
    VIEWS
    + """
for tab in sys.argv[3:]:
    name = Path(tab).stem
    sql = Path(tab).read_text(encoding="utf-8")
    con.execute(f"CREATE OR REPLACE TABLE {name} AS {sql}")
    (n,) = con.execute(f"SELECT count(*) FROM {name}").fetchone()
    print(name, n)
con.close()
"""
)


def _setup(base: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """The sample workspace, opened and Source Run once (files registered, tabs cached),
    and a copy of its cache database for the baselines."""
    ws = base / "sample"
    py = sys.executable
    run([py, "-m", "lantide", "init", str(ws), "--sample"], env=env)
    run([py, "-m", "lantide", "tab", "source-run", str(ws), PROJECT, CHAIN[-1]], env=env)
    run([py, "-m", "lantide", "tables", str(ws)], env=env)
    db = base / "baseline.duckdb"
    shutil.copy(ws / ".lantide" / "cache.duckdb", db)
    for name, text in (
        ("sql", SQL_SCRIPT),
        ("sql_parsed", SQL_PARSED_SCRIPT),
        ("tables", TABLES_SCRIPT),
        ("source_run", SOURCE_RUN_SCRIPT),
    ):
        (base / f"baseline_{name}.py").write_text(text, encoding="utf-8")
    return ws, db


def _runner(argv: list[str], env: dict[str, str]) -> Callable[[int], Run]:
    return lambda i: run(argv, env=env)


def bench(pairs: int) -> dict[str, Pairs]:
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="lantide-bench-cli-") as tmp:
        base = Path(tmp)
        env = environment(base)
        ws, db = _setup(base, env)
        tab_dir = ws / "projects" / PROJECT / "sql"
        leaf = tab_dir / f"{CHAIN[0]}.sql"
        leaf_sql = leaf.read_text(encoding="utf-8")
        tabs = [str(tab_dir / f"{t}.sql") for t in CHAIN]

        def change_leaf(i: int) -> None:
            leaf.write_text(f"{leaf_sql.rstrip()}\n-- run {i}\n", encoding="utf-8")

        cases = {
            "sql": (
                [py, "-m", "lantide", "sql", str(ws), "select 42"],
                [py, str(base / "baseline_sql.py"), str(db), "select 42"],
                None,
            ),
            "sql (against DuckDB + sqlglot's parse)": (
                [py, "-m", "lantide", "sql", str(ws), "select 42"],
                [py, str(base / "baseline_sql_parsed.py"), str(db), "select 42"],
                None,
            ),
            "tables": (
                [py, "-m", "lantide", "tables", str(ws)],
                [py, str(base / "baseline_tables.py"), str(db), str(ws / "data")],
                None,
            ),
            "source-run": (
                [py, "-m", "lantide", "tab", "source-run", str(ws), PROJECT, CHAIN[-1]],
                [py, str(base / "baseline_source_run.py"), str(db), str(ws / "data"), *tabs],
                change_leaf,
            ),
        }
        out: dict[str, Pairs] = {}
        for case, (ours, theirs, prepare) in cases.items():
            if prepare is not None:
                prepare(-1)
            run(ours, env=env)  # warm-up: bytecode, the files in the page cache
            run(theirs, env=env)
            result = paired(_runner(ours, env), _runner(theirs, env), pairs, before_ours=prepare)
            if case == "source-run":
                ran = result.ours[-1].stdout
                if "3 ran" not in ran:
                    raise RuntimeError(f"Source Run did not run the chain:\n{ran}")
            out[case] = result
        return out


def report(results: dict[str, Pairs], pairs: int) -> int:
    print(
        f"{machine()}; whole processes, {pairs} pairs per case (back to back, alternating "
        f"order), the sample workspace.\n"
    )
    print(
        "| command | Lantide s | plain Python + DuckDB s | wall ratio (median of pairs) "
        "| pairs min-max | CPU ratio | peak RSS MiB (Lantide / plain) | target | met |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    status = 0
    for case, res in results.items():
        ratio = res.ratio("wall")
        low, high = res.spread("wall")
        if "against" not in case:  # the extra floor is for reading, not a target
            status |= int(ratio > TARGET)
        target = f"<= {TARGET}x" if "against" not in case else "(floor)"
        print(
            f"| {case} | {res.median('ours'):.3f} | {res.median('base'):.3f} | "
            f"**{ratio:.2f}x** | {low:.2f}-{high:.2f} | {res.ratio('cpu'):.2f}x | "
            f"{res.median('ours', 'maxrss_mb'):.0f} / {res.median('base', 'maxrss_mb'):.0f} | "
            f"{target} | {verdict(ratio, TARGET) if 'against' not in case else ''} |"
        )
    return status


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    pairs = next((int(a.split("=", 1)[1]) for a in argv if a.startswith("--pairs=")), 0)
    pairs = pairs or (5 if quick else 15)
    return report(bench(pairs), pairs)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
