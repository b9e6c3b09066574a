"""Big files (issue 33): a 1 GB CSV and a 1 GB Parquet file, Lantide against DuckDB's own
Python API reading the same file with its defaults, whole processes side by side.

The files are TPC-H ``lineitem`` made by ``tpchgen-cli`` (the development environment's
copy, beside this Python): CSV at scale factor 1.34 (1.03 GB, 8.0 million rows), Parquet
at 5 (snappy, its default: 1.24 GB, 30 million rows). They are generated once into
``$XDG_CACHE_HOME/lantide-bench`` (default ``~/.cache/lantide-bench``) and reused; never
into the repository.

For each file and each pair (back to back, the order alternating between pairs):

- **first query**: ``lantide sql WS "SELECT count(*) ..."`` on a workspace just made
  (``lantide init``, untimed) holding the file in ``data/`` (a hard link: no copy), so
  the process opens the workspace, registers the file (sniffing, reading notes) and runs
  the query; against a fresh Python process that connects to a new DuckDB file, makes a
  view over ``read_csv_auto`` / ``read_parquet`` and runs the same query;
- **second query**: a grouped aggregate (TPC-H Q1's shape) in a new process of each: the
  workspace now registered, the DuckDB script as before (DuckDB keeps no registration).

Whole-process wall time (median of the pairs' ratios) and peak resident memory of each
process (``maxrss`` of that child, by ``os.wait4``). Targets: first query at most 1.2x,
second at most 1.05x, peak memory at most 1.2x. ``python -m benchmarks big_files
[--pairs=N] [--only=csv|parquet]``; expensive (4 passes over 1 GB per pair and file): 5
pairs by default.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.whole_process import Pairs, environment, machine, run, verdict

FIRST = "SELECT count(*) AS n FROM lineitem"
SECOND = (
    "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS qty, "
    "avg(l_extendedprice) AS price, count(*) AS n FROM lineitem GROUP BY ALL ORDER BY ALL"
)
TARGETS = {"first": 1.2, "second": 1.05, "memory": 1.2}
# format -> (scale factor giving about 1 GB, file name)
FILES = {"csv": (1.34, "lineitem.csv"), "parquet": (5, "lineitem.parquet")}

BASELINE = """
import sys
import duckdb
path, db, query = sys.argv[1:4]
reader = "read_csv_auto" if path.endswith(".csv") else "read_parquet"
con = duckdb.connect(db)
con.execute(f"CREATE TEMP VIEW lineitem AS SELECT * FROM {reader}('{path}')")
cur = con.execute(query)
print([d[0] for d in cur.description])
for row in cur.fetchmany(200):
    print(row)
con.close()
"""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lantide-bench"


def data_file(fmt: str) -> Path:
    """The cached file, generated first when it is not there."""
    sf, name = FILES[fmt]
    folder = cache_dir() / f"lineitem-{fmt}-sf{sf:g}"
    path = folder / name
    if path.is_file():
        return path
    tool = Path(sys.executable).parent / "tpchgen-cli"
    if not tool.exists():
        tool = Path(shutil.which("tpchgen-cli") or "tpchgen-cli")
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    print(f"generating {path} with {tool} (once) ...", flush=True)
    subprocess.run(
        [str(tool), fmt, "-s", f"{sf:g}", "-T", "lineitem", "-o", str(partial), "-q"], check=True
    )
    partial.rename(folder)
    return path


def bench(fmt: str, pairs: int) -> dict[str, Pairs]:
    source = data_file(fmt)
    py = sys.executable
    work = cache_dir() / "work"  # beside the data: a hard link needs the same file system
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = environment(work)
    script = work / "baseline.py"
    script.write_text(BASELINE, encoding="utf-8")
    out = {"first": Pairs(), "second": Pairs()}
    try:
        for i in range(-1, pairs):  # -1: a warm-up pair (bytecode, the page cache), not kept
            ws = work / f"ws{i}"
            run([py, "-m", "lantide", "init", str(ws)], env=env)
            os.link(source, ws / "data" / source.name)
            db = work / f"duck{i}.duckdb"
            ours = {q: [py, "-m", "lantide", "sql", str(ws), sql] for q, sql in _queries()}
            base = {q: [py, str(script), str(source), str(db), sql] for q, sql in _queries()}
            for q in ("first", "second"):
                if (i % 2 == 0) or i < 0:
                    a = run(ours[q], env=env)
                    b = run(base[q], env=env)
                else:
                    b = run(base[q], env=env)
                    a = run(ours[q], env=env)
                if q == "first":
                    _same_count(a.stdout, b.stdout)
                if i >= 0:
                    out[q].ours.append(a)
                    out[q].base.append(b)
            shutil.rmtree(ws)
            for leftover in work.glob(f"duck{i}.duckdb*"):
                leftover.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def _same_count(ours: str, theirs: str) -> None:
    """Both read every row: the baseline's count (its row ``(N,)``) is in Lantide's output."""
    count = theirs.strip().splitlines()[-1].strip("(),")
    if not count.isdigit() or count not in ours.replace(",", ""):
        raise RuntimeError(f"the counts differ: Lantide {ours!r}, DuckDB {theirs!r}")


def _queries() -> list[tuple[str, str]]:
    return [("first", FIRST), ("second", SECOND)]


def report(results: dict[str, dict[str, Pairs]], pairs: int) -> int:
    print(
        f"{machine()}; whole processes, {pairs} pairs per file (back to back, alternating "
        "order); DuckDB's Python API with its defaults as the baseline.\n"
    )
    print(
        "| file | query | Lantide s | DuckDB s | wall ratio (median of pairs) | pairs min-max "
        "| target | met | peak RSS MiB Lantide / DuckDB | memory ratio | target | met |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
    status = 0
    for fmt, by_query in results.items():
        size = data_file(fmt).stat().st_size / 1e9
        for q, res in by_query.items():
            ratio, (low, high) = res.ratio("wall"), res.spread("wall")
            mem = res.ratio("maxrss_mb")
            status |= int(ratio > TARGETS[q]) | int(mem > TARGETS["memory"])
            print(
                f"| {fmt} {size:.2f} GB | {q} | {res.median('ours'):.2f} | "
                f"{res.median('base'):.2f} | **{ratio:.2f}x** | {low:.2f}-{high:.2f} | "
                f"<= {TARGETS[q]}x | {verdict(ratio, TARGETS[q])} | "
                f"{res.median('ours', 'maxrss_mb'):.0f} / {res.median('base', 'maxrss_mb'):.0f} | "
                f"**{mem:.2f}x** | <= {TARGETS['memory']}x | {verdict(mem, TARGETS['memory'])} |"
            )
    print("\nCPU time (user + system) ratios, median of pairs: ", end="")
    print(
        ", ".join(
            f"{fmt} {q} {res.ratio('cpu'):.2f}x"
            for fmt, by_query in results.items()
            for q, res in by_query.items()
        )
    )
    return status


def main(argv: list[str]) -> int:
    pairs = next((int(a.split("=", 1)[1]) for a in argv if a.startswith("--pairs=")), 0)
    pairs = pairs or (3 if "--quick" in argv else 5)
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), None)
    formats = [only] if only else list(FILES)
    results = {fmt: bench(fmt, pairs) for fmt in formats}
    return report(results, pairs)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
