"""Where a cold Source Run's milliseconds go, per tab (issue 33): the 20-tab DAG of
:mod:`benchmarks.query_dag` at SF 0.01 run one tab at a time under ``cProfile``, its
cumulative times gathered into the pieces of a tab's work. ``python -m benchmarks query
--quick --dag-only --profile`` prints the table after the DAG's figures.

cProfile adds its own cost to every Python call (the Python pieces read 1.5-2x their real
time; DuckDB's own work, which makes few calls, much less), so the table says where the
time goes, not what it costs without the profiler: the DAG's figures above are those.
"""

from __future__ import annotations

import cProfile
import pstats
import time

from benchmarks.bench_query import open_service, tpch_data, workspace_for
from benchmarks.query_dag import DAG, floor_sequence, sql_of

# piece -> (module path ending, function name): its cumulative time is the piece's
PIECES = [
    ("lineage: read the tab files, resolve their tables", "query/tab_service.py", "tab_lineage"),
    ("  guard: sqlglot parse and checks (per text)", "query/guard.py", "_analyse_uncached"),
    ("  guard: DuckDB's parse (json_serialize_sql)", "query/guard_functions.py", "duckdb_calls"),
    ("fingerprints (SQL and inputs)", "query/tab_service.py", "tab_fingerprint"),
    ("statement + commit (materialize: the floor's work)", "query/results.py", "materialize"),
    ("  bookkeeping row (catalog, in the transaction)", "query/catalog.py", "record"),
    ("  columns of the step (DESCRIBE)", "query/results.py", "read_preview"),
    ("result checks (statement analysis, one aggregate)", "query/checks/__init__.py", "compute"),
    ("step shaping (the result and ledger step dicts)", "query/runner.py", "step_result"),
]


def _cumulative(stats: pstats.Stats, path_end: str, function: str) -> float:
    total = 0.0
    for (filename, _line, name), row in stats.stats.items():  # type: ignore[attr-defined]
        if name == function and filename.replace("\\", "/").endswith(path_end):
            total += row[3]
    return total


def where_the_time_goes(sf: float = 0.01) -> list[tuple[str, float]]:
    """(piece, ms per tab) of one cold Source Run, one tab at a time, and the total."""
    from lantide.query import guard
    from lantide.workspace.model import Workspace

    data_dir = tpch_data(sf)
    root = workspace_for(sf, data_dir, "profile")
    Workspace(root, {}).create_project("tpch")
    for m in DAG:
        (root / "projects" / "tpch" / "sql" / f"{m}.sql").write_text(
            sql_of(m, "lantide", data_dir) + "\n"
        )
    import sqlglot.dialects.duckdb  # noqa: F401  (the full reading's parser, untimed)

    guard.forget_analyses()  # a new process parses each statement once
    ws, svc = open_service(root, source_run_workers=1)
    profiler = cProfile.Profile()
    try:
        svc.run_query("SELECT 1", purpose_required=False)  # first-query imports, untimed
        started = time.perf_counter()
        profiler.enable()
        report = svc.source_run_sql_tab("tpch", "final_report")
        profiler.disable()
        total = time.perf_counter() - started
        assert report["ok"] and report["ran"] == len(DAG), report
    finally:
        svc.close()
        ws.close()
    stats = pstats.Stats(profiler)
    n = len(DAG)
    rows = [
        (label, _cumulative(stats, path, function) * 1000 / n) for label, path, function in PIECES
    ]
    rows.append(("whole Source Run (under the profiler)", total * 1000 / n))
    floor = floor_sequence(sf, data_dir)
    rows.append(("the floor: the same statement in plain DuckDB", floor["cold"] * 1000 / n))
    return rows


def report_profile(sf: float = 0.01) -> None:
    print(
        f"\n### Where a cold Source Run's time goes, SF {sf:g}, one tab at a time, under "
        "cProfile (ms per tab, cumulative: an indented piece is part of the one above)\n"
    )
    print("| piece | ms per tab |\n|---|---:|")
    for label, ms in where_the_time_goes(sf):
        print(f"| {label} | {ms:.2f} |")
