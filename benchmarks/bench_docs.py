"""Documents benchmark: what annotations cost on a large Plan, against plain baselines.

A generated Plan of SECTIONS sections (heading, paragraph, list, table, code fence each)
with one annotation per section. Each case runs Lantide and a baseline in the same run
and reports medians and the ratio:

- open: ``open_document`` (journal check, Markdown parse, offset map, mark scan,
  reconcile) against markdown-it's parse of the same text;
- render: ``render_html`` (highlights, line map) against markdown-it's ``render``;
- resolve / create / edit: one annotation change saved as a journaled pair (parse to
  check the marks, journal, text, sidecar, each fsynced) against the least a Markdown-aware
  save does: one markdown-it parse and two atomic writes of the pair, without a journal;
- agent_view: the ``read_plan`` payload against reading both files, one markdown-it parse
  and ``json.loads`` of the sidecar.

``python -m benchmarks docs [--quick]``: a 40-section Plan (about 16,000 characters, a
long real Plan) and a 400-section one (about 160,000); --quick runs the first only.
"""

from __future__ import annotations

import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "churn",
    "revenue",
    "customers",
    "active",
    "quarter",
    "region",
    "denominator",
    "net",
    "gross",
    "refunds",
    "accounts",
    "orders",
    "signup",
    "cohort",
]


def _section(i: int) -> tuple[str, str]:
    w = [WORDS[(i * 7 + k) % len(WORDS)] for k in range(12)]
    quote = f"section {i} measures {w[0]} by {w[1]}"
    body = (
        f"## Step {i}: {w[2]} per {w[3]}\n\n"
        f"We count {quote} and compare it with the {w[4]} of {w[5]}, using "
        f"`clean_orders_{i}` and *{w[6]}* {w[7]} as agreed.\n\n"
        f"- {w[8]} first\n- then {w[9]}\n- finally {w[10]} and {w[11]}\n\n"
        f"| metric | value |\n|---|---|\n| {w[0]} | {i} |\n| {w[1]} | {i * 2} |\n\n"
        f"```sql\nSELECT {w[0]}, count(*) FROM t_{i} GROUP BY 1\n```\n\n"
    )
    return body, quote


def build(root: Path, sections: int):
    from lantide.workspace.atomic import atomic_write_json
    from lantide.workspace.model import Workspace

    ws = Workspace.create(root)
    parts, entries = ["# Plan: a long analysis\n\n"], []
    offset = len(parts[0])
    for i in range(sections):
        body, quote = _section(i)
        ann_id = f"{i:06x}"
        opening = f'<mark data-annotation-id="{ann_id}">'
        marked = body.replace(quote, f"{opening}{quote}</mark>", 1)
        start = offset + marked.index(opening) + len(opening)
        entries.append(
            {
                "id": ann_id,
                "status": "open",
                "quote": quote,
                "comment": f"Is {quote} the right measure?",
                "anchor": {"span": [start, start + len(quote)]},
                "history": [
                    {"at": "2026-11-30T10:00:00Z", "by": "lead", "action": "created", "text": "?"}
                ],
            }
        )
        parts.append(marked)
        offset += len(marked)
    project = ws.create_project("big", plan_text="".join(parts))
    atomic_write_json(project.dir / "plan.annotations.json", {"version": 1, "annotations": entries})
    return project


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def run(sections: int, repeat: int) -> list[tuple[str, float, float]]:
    from markdown_it import MarkdownIt

    from lantide.docs import agent_view, open_document, render_html
    from lantide.workspace.atomic import atomic_write_text

    tmp = Path(tempfile.mkdtemp(prefix="lantide-bench-docs-"))
    try:
        project = build(tmp / "ws", sections)
        text = project.plan_path.read_text()
        sidecar_path = project.dir / "plan.annotations.json"
        md = MarkdownIt("commonmark", {"html": True}).enable(["table"])
        rows = []
        doc = open_document(project, "plan")
        rows.append(
            (
                f"open ({len(text):,} chars, {sections} annotations)",
                _median_ms(lambda: open_document(project, "plan"), repeat),
                _median_ms(lambda: md.parse(text), repeat),
            )
        )
        anns = doc.annotations
        rows.append(
            (
                "render_html",
                _median_ms(lambda: render_html(text, anns), repeat),
                _median_ms(lambda: md.render(text), repeat),
            )
        )
        rows.append(
            (
                "agent_view (read_plan payload)",
                _median_ms(lambda: agent_view(project, "plan"), repeat),
                _median_ms(
                    lambda: (
                        md.parse(project.plan_path.read_text()),
                        json.loads(sidecar_path.read_text()),
                    ),
                    repeat,
                ),
            )
        )

        def parse_and_two_writes():
            md.parse(project.plan_path.read_text())
            atomic_write_text(project.plan_path, project.plan_path.read_text())
            atomic_write_text(sidecar_path, sidecar_path.read_text())

        ids = iter([a.id for a in anns])
        state = {"doc": open_document(project, "plan")}

        def resolve_one():
            state["doc"].resolve(next(ids), "B", answer="agreed", by="bench")

        rows.append(
            (
                "resolve one (mode B, journaled pair save)",
                _median_ms(resolve_one, min(repeat, sections)),
                _median_ms(parse_and_two_writes, repeat),
            )
        )

        def create_one():
            d = state["doc"]
            start = d.text.index("compare it with the")
            while d.scan.structure.region_for_start(start) is None or any(
                m.start <= start < m.end for m in d.marks
            ):
                start = d.text.index("compare it with the", start + 1)
            d.create_annotation(start, start + len("compare it"), "why?", by="bench")

        rows.append(
            (
                "create one (journaled pair save)",
                _median_ms(create_one, repeat),
                _median_ms(parse_and_two_writes, repeat),
            )
        )

        def edit_dropping_a_mark():
            d = state["doc"]
            m = d.marks[0]
            d.save_text(d.text[: m.start] + m.inner(d.text) + d.text[m.end :] + "\nMore.\n")

        rows.append(
            (
                "edit that drops a mark (re-anchored, saved)",
                _median_ms(edit_dropping_a_mark, repeat),
                _median_ms(parse_and_two_writes, repeat),
            )
        )
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    sizes = [(40, 15)] if quick else [(40, 15), (400, 7)]
    print(
        f"Python {platform.python_version()}, {platform.machine()}, {platform.system()}; medians\n"
    )
    print("| sections | case | Lantide ms | baseline ms | ratio |")
    print("|---:|---|---:|---:|---:|")
    for sections, repeat in sizes:
        for case, ours, base in run(sections, repeat):
            print(f"| {sections} | {case} | {ours:.1f} | {base:.1f} | {ours / base:.1f}x |")
    print(
        "\nbaselines: markdown-it parse / render of the same text; for agent_view both files "
        "read, parsed and loaded; for saves one parse and two atomic writes of the pair "
        "(no journal)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
