"""Reporting an evaluation: a table per case and a summary, JSON, an HTML page with one
chart per measure (inline SVG: no script, no network), and the comparison of two runs."""

from __future__ import annotations

import html
import json
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

if TYPE_CHECKING:
    from lantide.evaluation.runner import CaseResultDict

MEASURES = (
    ("correct", "answer correct", "share"),
    ("evidence", "evidence traced", "share"),
    ("behaviour", "behaviour as expected", "share"),
    ("tool_errors", "tool errors per case", "mean"),
    ("iterations", "iterations per case", "mean"),
    ("tokens", "tokens per case", "mean"),
    ("tokens_outside_cache", "tokens outside the cached prefix per case", "mean"),
    ("seconds", "seconds per case", "mean"),
)


# cases, errors, strict_passed, then each measure (a share also its "_of": how many had it)
Summary = dict[str, float | int | None]


class EvalRun(TypedDict):
    """The JSON of a ``lantide eval`` run."""

    set: str
    model: str
    summary: Summary
    results: list[CaseResultDict]


def summarize(results: list[CaseResultDict]) -> Summary:
    from lantide.evaluation.scoring import strict_pass

    out: Summary = {
        "cases": len(results),
        "errors": sum(1 for r in results if r.get("error")),
        # runs with every score full and no error (scoring.strict_pass; `eval --strict`)
        "strict_passed": sum(1 for r in results if strict_pass(r)),
    }
    for key, _label, how in MEASURES:
        values = [v for r in results if (v := _measure(r, key)) is not None]
        if how == "share":
            out[key] = round(sum(1 for v in values if v) / len(values), 3) if values else None
            out[f"{key}_of"] = len(values)
        else:
            out[key] = round(statistics.fmean(values), 2) if values else None
    return out


def _measure(result: CaseResultDict, key: str) -> float | None:
    """A case's value of the measure ``key`` (a score counts as 1 or 0)."""
    value = result.get(key)
    return float(value) if isinstance(value, (int, float)) else None


def document(set_name: str, model: str, results: list[CaseResultDict]) -> EvalRun:
    return {"set": set_name, "model": model, "summary": summarize(results), "results": results}


def _problems_text(result: CaseResultDict) -> str:
    error = result.get("error")
    return "; ".join(([error] if error else []) + result.get("problems", []))


def _mark(value: object) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def table(doc: EvalRun) -> str:
    lines = [
        "| case | correct | evidence | behaviour | tool errors | iterations | tokens | s | "
        "problems |",
        "|---|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in doc["results"]:
        problems = _problems_text(r)
        lines.append(
            f"| {r['case']} | {_mark(r['correct'])} | {_mark(r['evidence'])} | "
            f"{_mark(r['behaviour'])} | {r['tool_errors']} | {r['iterations']} | "
            f"{r['tokens']:,} | {r['seconds']:.1f} | {problems} |"
        )
    s = doc["summary"]
    lines.append("")
    for key, label, how in MEASURES:
        value = s.get(key)
        shown = (
            "-"
            if value is None
            else (f"{value:.0%} of {s[key + '_of']}" if how == "share" else f"{value:,}")
        )
        lines.append(f"- {label}: {shown}")
    return "\n".join(lines)


def strict_line(doc: EvalRun) -> str:
    """The ``--strict`` summary line: runs that passed with every score full, no error."""
    from lantide.evaluation.scoring import strict_pass

    results = doc["results"]
    passed = sum(1 for r in results if strict_pass(r))
    failed = sorted({r["case"] for r in results if not strict_pass(r)})
    share = f" ({passed / len(results):.0%})" if results else ""
    line = f"- strict (every score full, no error): {passed} of {len(results)} runs{share}"
    return line + (f"; not passed: {', '.join(failed)}" if failed else "")


def compare(a: EvalRun, b: EvalRun) -> str:
    """The measures of run A against run B, and the cases whose correctness changed."""
    sa, sb = a["summary"], b["summary"]
    lines = [f"| measure | A: {a['model']} | B: {b['model']} | B - A |", "|---|---:|---:|---:|"]
    for key, label, _how in MEASURES:
        va, vb = sa.get(key), sb.get(key)
        delta = "-" if va is None or vb is None else f"{vb - va:+.3g}"
        lines.append(
            f"| {label} | {va if va is not None else '-'} | "
            f"{vb if vb is not None else '-'} | {delta} |"
        )
    before = {r["case"]: r["correct"] for r in a["results"] if r.get("repeat", 1) == 1}
    changed = [
        f"- {r['case']}: {_mark(before[r['case']])} -> {_mark(r['correct'])}"
        for r in b["results"]
        if r.get("repeat", 1) == 1 and r["case"] in before and before[r["case"]] != r["correct"]
    ]
    return "\n".join(lines + ([""] + changed if changed else []))


def _bar_chart(title: str, bars: list[tuple[str, float]], share: bool) -> str:
    width, row, left = 560, 18, 190
    top = max([v for _, v in bars] + [1.0 if share else 1e-9])
    parts = [
        f'<svg role="img" aria-label="{html.escape(title)}" width="{width}" '
        f'height="{row * len(bars) + 30}">',
        f'<text x="0" y="14" class="t">{html.escape(title)}</text>',
    ]
    for i, (name, value) in enumerate(bars):
        y = 24 + i * row
        w = 0 if top <= 0 else (width - left - 70) * value / top
        label = f"{value:.0%}" if share else f"{value:,.1f}"
        parts.append(
            f'<text x="0" y="{y + 12}">{html.escape(name[:28])}</text>'
            f'<rect x="{left}" y="{y + 2}" width="{w:.1f}" height="{row - 5}">'
            f"<title>{html.escape(name)}: {label}</title></rect>"
            f'<text x="{left + w + 4:.1f}" y="{y + 12}">{label}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def html_page(doc: EvalRun) -> str:
    """One self-contained page: the summary, a chart per measure (by case kind), the table."""
    by_kind: dict[str, list[CaseResultDict]] = {}
    for r in doc["results"]:
        by_kind.setdefault(r.get("kind") or "other", []).append(r)
    charts = []
    for key, label, how in MEASURES:
        bars = []
        for kind, rows in sorted(by_kind.items()):
            value = summarize(rows).get(key)
            if value is not None:
                bars.append((kind, float(value)))
        if bars:
            charts.append(_bar_chart(label, bars, how == "share"))
    table_rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{html.escape(str(c))}</td>"
            for c in (
                r["case"],
                _mark(r["correct"]),
                _mark(r["evidence"]),
                _mark(r["behaviour"]),
                r["tool_errors"],
                r["iterations"],
                f"{r['tokens']:,}",
                r["seconds"],
                _problems_text(r),
            )
        )
        + "</tr>"
        for r in doc["results"]
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>Lantide eval: {html.escape(doc['set'])}</title><style>"
        "body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
        "rect{fill:#3b6ea8}.t{font-weight:600}svg{display:block;margin:12px 0}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px}"
        "</style></head><body>"
        f"<h1>{html.escape(doc['set'])} · {html.escape(doc['model'])}</h1>"
        f"<pre>{html.escape(json.dumps(doc['summary'], indent=1))}</pre>"
        + "".join(charts)
        + "<table><tr><th>case</th><th>correct</th><th>evidence</th><th>behaviour</th>"
        "<th>tool errors</th><th>iterations</th><th>tokens</th><th>s</th><th>problems"
        "</th></tr>" + table_rows + "</table></body></html>"
    )


def load(path: Path) -> EvalRun:
    from lantide.errors import LantideError

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        doc["summary"], doc["results"], doc["model"]
        return cast(EvalRun, doc)  # a run's JSON, as `lantide eval --json` wrote it
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LantideError(
            f"{path}: not the JSON of a `lantide eval` run ({exc})",
            hint="Pass files written by `lantide eval SET --json > FILE`.",
            code="EVAL_RUN_INVALID",
        ) from exc
