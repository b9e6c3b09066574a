"""``lantide report html`` on a large Report: ``python -m benchmarks html_report [--quick]``.

The 400-section Report with 2,000 citations of the evidence benchmark (a table, a code
fence, dates in every section) against a real ledger of 200 formal steps. Measured, median
of the runs:

- **parse**: markdown-it-py parsing the same Markdown, the baseline;
- **report html**: :func:`lantide.agent.report_html.publish_html` as the command runs it
  (read the Report and every ledger, the evidence check, build 400 section chunks, header
  and appendix, write atomically), with no ``report.html`` yet;
- **regenerate, edits kept**: the same over an existing ``report.html`` in which 5 chunks
  were edited (read and parse the old page, keep the edits);
- **patch one chunk**: ``patch_html_chunk``'s work (parse the page, check the fragment,
  re-parse, write).

And ``report html`` for a Report of 20 sections with 20 charts (bar, line, point, area of a
2,000-row data file, grouped by region): the first publish of the process (the chart
renderer starts: QuickJS loads vega), then publishes with the SVG cache emptied before
each (every chart filled from DuckDB and drawn again), and with it warm; against the same
Report with its chart images taken out.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_evidence import _median

CHARTS = 20
_MARKS = ("bar", "line", "point", "area")


def build_charts(root: Path) -> None:
    """A workspace with a 2,000-row data file and a Report of 20 sections, one chart each."""
    import random

    from lantide.charts import write_chart
    from lantide.workspace.model import Workspace

    rng = random.Random(20)
    ws = Workspace.create(root)
    rows = ["day,region,product,amount"]
    for i in range(2000):
        rows.append(
            f"2026-{1 + i % 12:02d}-{1 + i % 28:02d},{rng.choice('NESW')},"
            f"p{rng.randrange(12)},{rng.uniform(5, 500):.2f}"
        )
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "sales.csv").write_text("\n".join(rows) + "\n")
    project = ws.create_project("bench")
    parts = ["# Report: charts\n"]
    for n in range(CHARTS):
        mark = _MARKS[n % len(_MARKS)]
        x = (
            {"field": "day", "type": "temporal", "timeUnit": "yearmonth"}
            if mark in ("line", "area")
            else {"field": "region" if n % 2 else "product", "type": "nominal"}
        )
        spec = {
            "title": f"Chart {n + 1}",
            "data": {"table": "sales"},
            "mark": mark,
            "encoding": {
                "x": x,
                "y": {"aggregate": "sum", "field": "amount", "type": "quantitative"},
                "color": {"field": "region", "type": "nominal"},
            },
        }
        write_chart(project, f"chart_{n + 1}", spec, by="agent")
        parts.append(
            f"\n## {n + 1}. Section {n + 1}\n\nWhat chart {n + 1} shows.\n\n"
            f"![Chart {n + 1}](charts/chart_{n + 1}.vl.json)\n"
        )
    project.report_path.write_text("".join(parts), encoding="utf-8")
    ws.close()


def main(argv: list[str]) -> int:
    from benchmarks.bench_evidence import SECTIONS, build
    from lantide.agent.report_html import html_path, patch_chunk, publish_html
    from lantide.docs.markdown_map import markdown_parser
    from lantide.workspace.model import Workspace

    runs = 3 if "--quick" in argv else 5
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        text, citations = build(root)
        ws = Workspace.open(root, lock=False)
        project = ws.project("bench")
        path = html_path(project)
        md = markdown_parser()
        publish_html(ws, project)  # warm: imports, compiled patterns

        def fresh():
            path.unlink(missing_ok=True)
            return publish_html(ws, project)

        parse = _median(lambda: md.parse(text), runs)
        first = _median(fresh, runs)
        result = fresh()
        size = path.stat().st_size
        for n in range(1, 6):
            patch_chunk(project, f"s-{n}-section-{n}", f"<h2>Section {n}</h2><p>Edited.</p>")
        kept = publish_html(ws, project)
        assert len(kept.kept_edits) == 5, kept.to_dict()
        again = _median(lambda: publish_html(ws, project), runs)
        patch = _median(
            lambda: patch_chunk(project, "s-200-section-200", "<p>Edited again.</p>"), runs
        )
        ws.close()
    print(
        f"Report: {len(text):,} characters, {SECTIONS} sections, {citations:,} citations; "
        f"report.html: {size:,} bytes, {result.chunks} chunks. Median of {runs} runs; "
        f"Python {sys.version.split()[0]}.\n"
    )
    print("| measure | ms | x parse |")
    print("|---|---:|---:|")
    print(f"| parse (markdown-it-py, the baseline) | {parse * 1000:.1f} | 1.00 |")
    for label, seconds in (
        ("report html (no report.html yet)", first),
        ("regenerate over report.html, 5 edited chunks kept", again),
        ("patch one chunk", patch),
    ):
        print(f"| {label} | {seconds * 1000:.1f} | {seconds / parse:.2f} |")
    _charts(runs)
    return 0


def _charts(runs: int) -> None:
    from lantide.agent.report_html import html_path, publish_html
    from lantide.charts import render
    from lantide.workspace.model import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        build_charts(root)
        ws = Workspace.open(root, lock=False)
        project = ws.project("bench")
        t0 = time.perf_counter()
        publish_html(ws, project)
        first = time.perf_counter() - t0
        size = html_path(project).stat().st_size

        def cold():
            render._cache.clear()  # every chart drawn again
            publish_html(ws, project)

        uncached = _median(cold, runs)
        warm = _median(lambda: publish_html(ws, project), runs)
        text = project.report_path.read_text(encoding="utf-8")
        project.report_path.write_text(
            "\n".join(line for line in text.splitlines() if not line.startswith("![")) + "\n"
        )
        plain = _median(lambda: publish_html(ws, project, overwrite=True), runs)
        ws.close()
    print(
        f"\n20 charts: report.html {size:,} bytes (inline SVG, sanitized; no script). "
        f"Median of {runs} runs.\n"
    )
    print("| report html, 20 sections | ms | ms per chart |")
    print("|---|---:|---:|")
    print(f"| without the charts (baseline) | {plain * 1000:.1f} | |")
    for label, seconds in (
        ("20 charts, first publish of the process (renderer starts)", first),
        ("20 charts, each filled and drawn again", uncached),
        ("20 charts, SVG cache warm", warm),
    ):
        print(f"| {label} | {seconds * 1000:.1f} | {(seconds - plain) * 1000 / CHARTS:.1f} |")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
