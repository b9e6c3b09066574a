"""Result grid benchmark: paging a cached result of ROWS rows into the desktop grid.

Three measures, each against a baseline in the same run:

- **page fetch**: ``QueryService.fetch_rows`` of one grid page (256 rows) at the start,
  the middle and the end of the cached table, against the same ``SELECT * ... LIMIT 256
  OFFSET k`` on a plain DuckDB connection holding the same table (the floor);
- **jump latency**: the grid (``PagedResultModel`` in a ``ResultGridView``, offscreen
  Qt) scrolled to random rows; the time from the scroll until the rows on screen are
  loaded, with the event loop running, against the page fetch floor at the same offsets;
- **UI-thread stall**: the longest gap between 5 ms heartbeat ticks of the event loop
  during those jumps, against the same jumps in a naive grid that fetches the missing page
  on the UI thread inside ``data()`` (what a plain ``QAbstractTableModel`` over a cursor
  does). The heartbeat of the idle grid is printed as the machine's noise floor.

``python -m benchmarks grid [--quick]``: 2,000,000 rows (``--quick``: 300,000) and 30 jumps.
"""

from __future__ import annotations

import os
import platform
import random
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
    ws.create_project("bench")
    data = ws.data_dir / "events.parquet"
    duckdb.sql(f"""COPY (SELECT i AS id, 'user ' || (i % 9973) AS who, (i % 1000) * 0.5 AS amount,
                        TIMESTAMP '2024-01-01' + INTERVAL (i % 100000) SECOND AS at
                        FROM range({rows}) r(i)) TO '{data}' (FORMAT parquet)""")
    csv_rows = min(rows, 500_000)
    duckdb.sql(
        f"COPY (SELECT * FROM '{data}' LIMIT {csv_rows}) TO "
        f"'{ws.data_dir / 'events_csv.csv'}' (HEADER)"
    )
    (ws.projects_dir / "bench" / "sql" / "all_events.sql").write_text("SELECT * FROM events\n")
    return ws, data


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _fetch_bench(query, data: Path, rows: int, repeats: int) -> list[tuple[str, float, float]]:
    import duckdb

    floor = duckdb.connect()
    floor.execute(f"CREATE TABLE t AS SELECT * FROM '{data}'")
    out = []
    for label, offset in (("start", 0), ("middle", rows // 2), ("end", rows - PAGE)):
        ours, base = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            query.fetch_rows("all_events", offset, PAGE)
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            floor.execute(f"SELECT * FROM t LIMIT {PAGE} OFFSET {offset}").fetchall()
            base.append(time.perf_counter() - t0)
        out.append((label, _median_ms(ours), _median_ms(base)))
    floor.close()
    return out


def _naive_model(columns: list[dict], row_count: int, fetch):
    """A grid model that fetches a missing page synchronously, on the UI thread."""
    from PySide6.QtCore import QAbstractTableModel, Qt

    class NaiveModel(QAbstractTableModel):
        def __init__(self):
            super().__init__()
            self.pages: dict[int, list] = {}
            self.columns = columns

        def rowCount(self, parent=None):  # noqa: N802
            return row_count

        def columnCount(self, parent=None):  # noqa: N802
            return len(columns)

        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            if role != Qt.ItemDataRole.DisplayRole:
                return None
            page = index.row() // PAGE
            if page not in self.pages:
                self.pages[page] = fetch(page * PAGE, PAGE)
            return str(self.pages[page][index.row() % PAGE][index.column()])

        def is_loaded(self, row: int) -> bool:
            return True  # loaded by the time it is painted

    return NaiveModel()


def _heartbeat():
    """A started 5 ms timer on the UI thread and the list of gaps (ms) between its ticks."""
    from PySide6.QtCore import QElapsedTimer, QTimer

    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]

    def beat() -> None:
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e6)
        last[0] = now

    heartbeat = QTimer()
    heartbeat.setInterval(5)
    heartbeat.timeout.connect(beat)
    heartbeat.start()
    return gaps, heartbeat


def _naive_stall(services, relation: str, jumps: int) -> float:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QTableView

    query = services.query
    info = query.relation_info(relation)
    rows = info["row_count"]
    model = _naive_model(
        info["columns"], info["row_count"], lambda o, n: query.fetch_rows(relation, o, n)
    )
    view = QTableView()
    view.resize(1200, 800)
    view.setModel(model)
    view.show()
    gaps, heartbeat = _heartbeat()
    rng = random.Random(7)
    for _ in range(jumps):
        view.scrollTo(model.index(rng.randrange(0, rows - 100), 0))
        loop = QEventLoop()
        QTimer.singleShot(60, loop.quit)  # the paint (and its fetch) happens in here
        loop.exec()
    heartbeat.stop()
    view.close()
    return max(gaps) if gaps else float("nan")


def _ui_bench(services, relation: str, jumps: int) -> dict:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from lantide.ui.sql.result_grid import ResultGridView
    from lantide.ui.sql.result_model import PagedResultModel

    app = QApplication.instance()
    query = services.query
    info = query.relation_info(relation)
    rows = info["row_count"]
    model = PagedResultModel(
        info["columns"],
        info["row_count"],
        lambda o, n: query.fetch_rows(relation, o, n),
        services.workers,
    )
    view = ResultGridView(services.workers)
    view.resize(1200, 800)
    view.set_result_model(model)
    view.show()

    gaps, heartbeat = _heartbeat()

    def pump(seconds: float, until=None) -> bool:
        """Run the event loop (idle in Qt, as the app does) until ``until()`` or timeout."""
        loop = QEventLoop()
        done = [until is None]

        def check(*_):
            if until is not None and until():
                done[0] = True
                loop.quit()

        if until is not None:
            model.sig_block_loaded.connect(check)
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        QTimer.singleShot(0, check)
        loop.exec()
        if until is not None:
            model.sig_block_loaded.disconnect(check)
        return done[0]

    pump(0.5)
    idle_gaps = list(gaps)
    gaps.clear()
    rng = random.Random(7)
    targets = [rng.randrange(0, rows - 100) for _ in range(jumps)]
    latencies = []
    for target in targets:
        t0 = time.perf_counter()
        view.scrollTo(model.index(target, 0))
        app.processEvents()  # the scroll lands and the rows on screen ask for their pages
        ok = pump(
            10.0,
            until=lambda: (
                model.is_loaded(view.rowAt(0))
                and model.is_loaded(max(view.rowAt(view.viewport().height() - 1), view.rowAt(0)))
            ),
        )
        latencies.append(time.perf_counter() - t0 if ok else float("nan"))
        pump(0.05)
    heartbeat.stop()
    view.close()
    floor = []  # one page fetch at each target, measured after the heartbeat stopped
    for target in targets:
        t0 = time.perf_counter()
        query.fetch_rows(relation, (target // PAGE) * PAGE, PAGE)
        floor.append(time.perf_counter() - t0)
    return {
        "latency_p50": _median_ms(latencies),
        "latency_p95": sorted(latencies)[int(len(latencies) * 0.95) - 1] * 1000,
        "floor_p50": _median_ms(floor),
        "stall_max": max(gaps) if gaps else float("nan"),
        "stall_idle_max": max(idle_gaps) if idle_gaps else float("nan"),
        "blocks_held": len(model.loaded_blocks),
    }


def main(argv: list[str]) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    quick = "--quick" in argv
    rows = 300_000 if quick else 2_000_000
    jumps = 30
    from PySide6.QtWidgets import QApplication

    from lantide.ui.services import AppServices
    from lantide.workspace.settings import Settings

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory(prefix="lantide-bench-grid-") as tmp:
        t0 = time.perf_counter()
        ws, data = _build(Path(tmp), rows)
        services = AppServices(ws, Settings())
        services.start(watcher=False)
        while services.query is None and services.query_error is None:
            app.processEvents()
            time.sleep(0.01)
        if services.query_error is not None:
            raise services.query_error
        run = services.query.run_sql_tab("bench", "all_events")
        setup = time.perf_counter() - t0
        fetches = _fetch_bench(services.query, data, rows, repeats=15)
        uis = {}
        for relation in ("all_events", "events_csv"):
            uis[relation] = _ui_bench(services, relation, jumps)
            uis[relation]["naive_stall_max"] = _naive_stall(services, relation, jumps)
            uis[relation]["rows"] = services.query.relation_info(relation)["row_count"]
        services.close()
        ws.close()

    print(
        f"{rows:,} rows cached by run_sql_tab in {run['duration_ms']:,} ms "
        f"(setup {setup:.1f} s); {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}\n"
    )
    print("| measure | Lantide | baseline | ratio |")
    print("|---|---:|---:|---:|")
    for label, ours, base in fetches:
        print(
            f"| page of {PAGE} rows at the {label} (fetch_rows vs plain DuckDB) | "
            f"{ours:.2f} ms | {base:.2f} ms | {ours / base:.2f}x |"
        )
    for relation, ui in uis.items():
        what = (
            f"cached table, {ui['rows']:,} rows"
            if relation == "all_events"
            else f"CSV data file, {ui['rows']:,} rows (table browser)"
        )
        print(
            f"| {what}: jump to a random row until the screen is loaded, p50 "
            f"(vs one page fetch) | {ui['latency_p50']:.1f} ms | {ui['floor_p50']:.1f} ms | "
            f"{ui['latency_p50'] / ui['floor_p50']:.2f}x |"
        )
        print(f"| {what}: same, p95 | {ui['latency_p95']:.1f} ms | | |")
        print(
            f"| {what}: longest event-loop gap while jumping (vs a grid fetching on the UI "
            f"thread) | {ui['stall_max']:.1f} ms | {ui['naive_stall_max']:.1f} ms | "
            f"{ui['stall_max'] / ui['naive_stall_max']:.2f}x |"
        )
    idle = min(ui["stall_idle_max"] for ui in uis.values())
    print(
        f"| longest heartbeat gap with the grid idle (the machine's noise floor) | "
        f"{idle:.1f} ms | | |"
    )
    ui = uis["all_events"]
    print(
        f"\nrow blocks held after {jumps} jumps: {ui['blocks_held']} "
        f"(of at most 96, {PAGE} rows each)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
