"""Drawing N chart files as SVG: ``python -m benchmarks charts [--quick] [--charts=N]``.

A workspace with a 720-row sales table (``data/sales.csv``, cached as ``sales_lines`` by a
query step, as a Report's charts draw SQL tab or step results) and N chart files (default 20,
the HTML Report's case; 12 kinds: bars, stacked and grouped bars, lines, areas, points,
a heat map, a pie, a box plot, a layer with a rule, a histogram, a faceted chart) of
:mod:`lantide.charts`. Measured:

- **first**: the first chart of the process (loading vega + vega-lite into QuickJS, then
  drawing it);
- **after-first**: each chart file drawn again with the SVG cache cleared: median and
  max of :func:`render_svg`, and :func:`load_chart` (schema check + rows from DuckDB);
- **baseline**: ``vl-convert-python`` (the ``bench`` extra) drawing the same specs with the
  same inline data, when it is installed: its first call and its median after.

Target (issue 16): under 100 ms per chart after the first, offline and in-process.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MONTHS = [f"2025-{m:02d}-01" for m in range(1, 13)]
REGIONS = ["North", "South", "East", "West", "Central", "Online"]
CATEGORIES = ["Furniture", "Office", "Tech", "Garden", "Toys", "Books", "Food", "Other", "Misc"]
X_MONTH = {"field": "month", "type": "temporal", "timeUnit": "yearmonth"}
Y_SUM = {"aggregate": "sum", "field": "revenue", "type": "quantitative"}


def chart_specs() -> list[dict[str, Any]]:
    data = {"table": "sales_lines"}
    kinds: list[dict[str, Any]] = [
        {"mark": "bar", "encoding": {"x": {"field": "region", "type": "nominal"}, "y": Y_SUM}},
        {"mark": "bar", "encoding": {"x": X_MONTH, "y": Y_SUM, "color": {"field": "region"}}},
        {
            "mark": "bar",
            "encoding": {
                "x": {"field": "category", "type": "nominal"},
                "xOffset": {"field": "region"},
                "y": Y_SUM,
                "color": {"field": "region"},
            },
        },
        {"mark": "line", "encoding": {"x": X_MONTH, "y": Y_SUM, "color": {"field": "region"}}},
        {"mark": "area", "encoding": {"x": X_MONTH, "y": Y_SUM, "color": {"field": "category"}}},
        {
            "mark": "point",
            "encoding": {
                "x": {"field": "units", "type": "quantitative"},
                "y": {"field": "revenue", "type": "quantitative"},
                "color": {"field": "region"},
            },
        },
        {
            "mark": "rect",
            "encoding": {
                "x": {"field": "region", "type": "nominal"},
                "y": {"field": "category", "type": "nominal"},
                "color": Y_SUM,
            },
        },
        {"mark": "arc", "encoding": {"theta": Y_SUM, "color": {"field": "region"}}},
        {
            "mark": "boxplot",
            "encoding": {
                "x": {"field": "region", "type": "nominal"},
                "y": {"field": "revenue", "type": "quantitative"},
            },
        },
        {
            "layer": [
                {"mark": "bar", "encoding": {"x": X_MONTH, "y": Y_SUM}},
                {
                    "mark": {"type": "rule", "color": "red"},
                    "encoding": {"y": {"aggregate": "mean", "field": "revenue"}},
                },
            ]
        },
        {
            "mark": "bar",
            "encoding": {
                "x": {"field": "revenue", "bin": {"maxbins": 30}},
                "y": {"aggregate": "count"},
            },
        },
        {
            "mark": "line",
            "encoding": {
                "x": X_MONTH,
                "y": Y_SUM,
                "facet": {"field": "region", "columns": 3},
            },
        },
    ]
    return [{"title": f"Chart {i + 1}", "data": data, **kinds[i % len(kinds)]} for i in range(99)]


def build(root: Path, count: int) -> list[Path]:
    from lantide import charts
    from lantide.workspace.model import Workspace

    rng = random.Random(16)
    ws = Workspace.create(root)
    rows = ["month,region,category,revenue,units"]
    for month in MONTHS:
        for region in REGIONS:
            for category in CATEGORIES[: 10 if region != "Online" else 5]:
                units = rng.randint(5, 400)
                rows.append(f"{month},{region},{category},{units * rng.uniform(8, 60):.2f},{units}")
    (ws.data_dir / "sales.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    project = ws.create_project("bench")
    paths = [
        charts.write_chart(project, f"c{i:02d}", s) for i, s in enumerate(chart_specs()[:count])
    ]
    ws.close()
    return paths


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def _baseline(specs: list[dict[str, Any]]) -> tuple[float, list[float]] | None:
    try:
        import vl_convert
    except ImportError:
        return None
    t0 = time.perf_counter()
    vl_convert.vegalite_to_svg(specs[0])
    first = time.perf_counter() - t0
    times = []
    for spec in specs:
        t0 = time.perf_counter()
        vl_convert.vegalite_to_svg(spec)
        times.append(time.perf_counter() - t0)
    return first, times


def main(argv: list[str]) -> int:
    count = 20
    for arg in argv:
        if arg.startswith("--charts="):
            count = int(arg.split("=", 1)[1])
    if "--quick" in argv:
        count = min(count, 6)
    from lantide import charts
    from lantide.charts import render
    from lantide.query import QueryService
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

    with tempfile.TemporaryDirectory() as tmp:
        paths = build(Path(tmp) / "ws", count)
        ws = Workspace.open(Path(tmp) / "ws")
        query = QueryService(ws, QuerySettings())
        try:
            # charts draw cached tables (a SQL tab's or a step's result), as in a Report
            made = query.run_query("SELECT * FROM sales", "sales_lines", "chart data")
            assert made["cached_table_name"] == "sales_lines", made.get("cached_table_name")
            t0 = time.perf_counter()
            loaded = charts.load_chart(paths[0], query)
            charts.render_svg(loaded.spec)
            first = time.perf_counter() - t0
            specs, loads, draws, cpu = [], [], [], []
            for path in paths:
                t0 = time.perf_counter()
                loaded = charts.load_chart(path, query)
                loads.append(time.perf_counter() - t0)
                specs.append(loaded.spec)
                render.clear_cache()
                t0, c0 = time.perf_counter(), time.process_time()
                svg = charts.render_svg(loaded.spec)
                draws.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                assert svg.startswith("<svg"), svg[:80]
            for path in paths:
                charts.render_svg(charts.load_chart(path, query).spec)  # fill the SVG cache
            t0 = time.perf_counter()
            for path in paths:
                charts.render_svg(charts.load_chart(path, query).spec)  # cached SVGs
            cached_total = time.perf_counter() - t0
        finally:
            query.close()
            ws.close()
    baseline = _baseline(specs)
    print(
        f"{count} chart files over a 720-row table; Python {sys.version.split()[0]}; "
        f"QuickJS (quickjs-ng wheel) with vendored vega + vega-lite.\n"
    )
    print("| measure | Lantide (QuickJS) ms | vl-convert-python ms |")
    print("|---|---:|---:|")
    base_first = _ms(baseline[0]) if baseline else "not installed"
    base_median = _ms(statistics.median(baseline[1])) if baseline else "-"
    base_max = _ms(max(baseline[1])) if baseline else "-"
    print(f"| first chart (engine start + load + draw) | {_ms(first)} | {base_first} |")
    print(f"| after-first: draw, median | {_ms(statistics.median(draws))} | {base_median} |")
    print(f"| after-first: draw, max | {_ms(max(draws))} | {base_max} |")
    print(f"| after-first: draw, median CPU time | {_ms(statistics.median(cpu))} | - |")
    print(
        f"| after-first: load_chart (check + rows), median | {_ms(statistics.median(loads))} | - |"
    )
    print(
        f"| all {count}: load + draw | {_ms(sum(loads) + sum(draws))} | "
        f"{_ms(sum(baseline[1])) if baseline else '-'} |"
    )
    print(f"| all {count} again, SVGs cached (load + look-up) | {_ms(cached_total)} | - |")
    met = statistics.median(draws) < 0.1
    print(
        f"\ntarget (under 100 ms per chart after the first, median): {'met' if met else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
