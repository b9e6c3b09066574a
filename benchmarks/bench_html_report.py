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
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


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
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
