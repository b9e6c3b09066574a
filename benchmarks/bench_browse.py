"""Browsing benchmark: row counts in ``show_tables`` and sorted pages for the grid.

A workspace with a 2,000,000-row CSV (about 87 MB) and the same rows as Parquet.

- **show_tables, CSV just changed**: the listing right after the CSV's mtime moved (its
  count unknown: it is queued for the background counter) against the same listing with
  row counting switched off (the baseline: what ``show_tables`` did before it had
  counts), in alternating pairs; then the time the background count takes, and what a
  listing that counted the CSV itself would have cost (a ``count(*)`` of the file).
- **show_tables, counts known**: the steady state, against the same baseline.
- **sorted page**: ``fetch_rows(..., order_by=[("grp", "desc")])`` of a 256-row page at
  the start and the middle, of the cached table (row id breaks ties) and of the Parquet
  view (the other columns break ties), against the bare ``ORDER BY grp DESC LIMIT 256
  OFFSET k`` on the engine's own cursor (no name check, no tie-breaker).

``python -m benchmarks browse [--quick]`` (``--quick``: 300,000 rows, fewer repeats).
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

PAGE = 256


def _build(root: Path, rows: int):
    import duckdb

    from lantide.workspace.model import Workspace

    ws = Workspace.create(root / "ws")
    data = ws.data_dir
    duckdb.sql(f"""COPY (SELECT range AS id, range % 97 AS grp, 'name ' || range AS name,
                        range * 1.5 AS amount, DATE '2020-01-01' + (range % 1000)::INT AS day
                        FROM range({rows})) TO '{data / "big.csv"}' (HEADER)""")
    duckdb.sql(
        f"COPY (SELECT * FROM '{data / 'big.csv'}') TO '{data / 'bigp.parquet'}' (FORMAT parquet)"
    )
    return ws


def _touch(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _listing_bench(query, csv: Path, repeats: int) -> dict:
    from lantide.query.row_counts import RowCounts

    real_lookup = RowCounts.lookup
    ours_cold, base_cold, ours_warm, base_warm, background = [], [], [], [], []

    def timed_listing(counts_on: bool) -> float:
        RowCounts.lookup = real_lookup if counts_on else (lambda self, tables: {})
        try:
            t0 = time.perf_counter()
            query.show_tables()
            return time.perf_counter() - t0
        finally:
            RowCounts.lookup = real_lookup

    for _ in range(repeats):
        _touch(csv)
        base_cold.append(timed_listing(False))  # re-registers the changed file, no counting
        _touch(csv)
        ours_cold.append(timed_listing(True))
        t0 = time.perf_counter()
        assert query.wait_for_row_counts(600)
        background.append(time.perf_counter() - t0)
    for i in range(repeats * 3):  # alternating which goes first
        pair = [(ours_warm, True), (base_warm, False)]
        for samples, counts_on in pair if i % 2 else pair[::-1]:
            samples.append(timed_listing(counts_on))
    counts = []
    for _ in range(max(3, repeats // 2)):
        t0 = time.perf_counter()
        query.engine.execute("SELECT count(*) FROM big")
        counts.append(time.perf_counter() - t0)
    entry = next(t for t in query.show_tables()["tables"] if t["name"] == "big")
    return {
        "cold": (_ms(ours_cold), _ms(base_cold)),
        "warm": (_ms(ours_warm), _ms(base_warm)),
        "background": _ms(background),
        "count": _ms(counts),
        "row_count": entry["row_count"],
    }


def _sort_bench(query, rows: int, repeats: int) -> list[tuple[str, float, float]]:
    cached = query.run_query("SELECT * FROM big", result_label="big_cached")["cached_table_name"]
    out = []
    for label, relation in (("cached table", cached), ("Parquet view", "bigp")):
        for where, offset in (("start", 0), ("middle", rows // 2)):
            ours, floor = [], []
            bare = (
                f'SELECT * FROM "{relation}" ORDER BY grp DESC NULLS LAST '
                f"LIMIT {PAGE} OFFSET {offset}"
            )
            for _ in range(repeats):
                t0 = time.perf_counter()
                query.fetch_rows(relation, offset, PAGE, order_by=[("grp", "desc")])
                ours.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                query.engine.execute(bare)
                floor.append(time.perf_counter() - t0)
            out.append((f"{label}, {where}", _ms(ours), _ms(floor)))
    return out


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    rows = 300_000 if quick else 2_000_000
    repeats = 3 if quick else 7
    from lantide.query import QueryService
    from lantide.workspace.settings import QuerySettings

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="lantide-bench-browse-") as tmp:
        t0 = time.perf_counter()
        ws = _build(Path(tmp), rows)
        size_mb = (ws.data_dir / "big.csv").stat().st_size / 1e6
        print(
            f"{rows:,} rows; CSV {size_mb:.0f} MB; built in {time.perf_counter() - t0:.1f} s",
            flush=True,
        )
        query = QueryService(ws, QuerySettings())
        try:
            query.show_tables()
            query.wait_for_row_counts(600)
            listing = _listing_bench(query, ws.data_dir / "big.csv", repeats)
            sorts = _sort_bench(query, rows, repeats)
        finally:
            query.close()
    print("\n| measure | Lantide | baseline | ratio |\n| --- | --- | --- | --- |")
    ours, base = listing["cold"]
    print(
        f"| show_tables, CSV just changed (count queued) | {ours:.1f} ms | "
        f"{base:.1f} ms without counts | {ours / base:.2f} |"
    )
    ours, base = listing["warm"]
    print(
        f"| show_tables, counts known | {ours:.2f} ms | {base:.2f} ms without counts | "
        f"{ours / base:.2f} |"
    )
    print(
        f"| background count until ready ({listing['row_count']:,} rows) | "
        f"{listing['background']:.0f} ms | | |"
    )
    print(f"| a listing that counted the CSV itself would add | {listing['count']:.0f} ms | | |")
    for label, ours, floor in sorts:
        print(
            f"| sorted page of 256, {label} | {ours:.1f} ms | {floor:.1f} ms bare ORDER BY | "
            f"{ours / floor:.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
