"""The HTML Report: one self-contained page made from the Markdown Report.

:func:`build_report_html` turns a :class:`ReportSource` into the page's text:

- a ``<header>`` chunk: the project, its status, the Plan approval and the evidence check;
- one ``<section>`` chunk per level-1 or level-2 heading of the Markdown (text before the
  first heading is the ``s-preamble`` chunk), with a stable id from the heading
  (``s-`` + its slug; a repeated heading gets ``-2``, ``-3``...);
- citations ``[^s:ID]`` as numbered links ``[n]`` to the ``appendix`` chunk, which lists
  each cited step's purpose, evidence kind, row count and SQL;
- charts (``![title](charts/NAME.vl.json)``) through the ``chart_html`` hook the caller
  gives; any other image that is not a ``data:`` URL is left out with a note, so the page
  never fetches anything.

Styles are inline; every section's markup passes the sanitizer
(:mod:`lantide.docs.html_sanitize`), and a Content-Security-Policy forbids every script and
every fetch. Chunks carry the fingerprint of what was generated
(:mod:`lantide.docs.html_markup`): :func:`merge_edits` keeps a chunk edited since, when its
Markdown did not change, and names the edited chunks a regeneration would overwrite.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lantide.docs.citations import BAD_TOKEN, TOKEN
from lantide.docs.html_markup import (
    CHUNK_ATTR,
    HASH_ATTR,
    TITLE_ATTR,
    Chunk,
    balance_problems,
    fingerprint,
)
from lantide.docs.html_sanitize import sanitize, sanitize_reporting
from lantide.docs.markdown_map import markdown_parser
from lantide.errors import LantideError

if TYPE_CHECKING:
    from markdown_it.token import Token

    from lantide.workspace.lifecycle import ApprovalState

# No script source at all: charts are inline SVG drawn at export (lantide.charts.render).
# style-src 'unsafe-inline': the page's <style> and the table cells' text-align (the
# sanitizer keeps no other style property).
CSP = (
    "default-src 'none'; script-src 'none'; object-src 'none'; frame-src 'none'; "
    "style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'; "
    "form-action 'none'; base-uri 'none'"
)
REPORT_CSS = """
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5b6475; --line: #d9dde5;
  --bg: #ffffff; --panel: #f5f7fa; --accent: #2c5fb3; --ok: #2f7d32; --warn: #b26a00;
  --bad: #c62828; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e7ee; --muted: #9aa3b5;
  --line: #3a4150; --bg: #1b1f27; --panel: #242a35; --accent: #7eaaf0; --ok: #7cc47f;
  --warn: #f0b45a; --bad: #f07a7a; } }
html { background: var(--bg); color: var(--fg); }
body { font: 16px/1.6 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  max-width: 52rem; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
header.lt-header { border-bottom: 1px solid var(--line); margin-bottom: 1.5rem; }
header.lt-header h1 { margin: 0 0 .25rem; font-size: 1.6rem; }
dl.lt-facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem;
  margin: .5rem 0 1rem; color: var(--muted); font-size: .92rem; }
dl.lt-facts dt { font-weight: 600; } dl.lt-facts dd { margin: 0; }
.lt-ok { color: var(--ok); } .lt-warn { color: var(--warn); } .lt-bad { color: var(--bad); }
h1, h2, h3 { line-height: 1.25; }
h2 { border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
table { border-collapse: collapse; margin: 1rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: .3rem .6rem; text-align: left; }
th { background: var(--panel); }
pre { background: var(--panel); padding: .75rem; overflow-x: auto; border-radius: 4px; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .88em; }
a { color: var(--accent); }
a.lt-cite { text-decoration: none; font-size: .75em; vertical-align: super; }
a.lt-cite-exploratory { color: var(--warn); } a.lt-cite-missing { color: var(--bad); }
a.lt-cite-check_failed { color: var(--bad); font-weight: 600; }
.lt-check-mark { color: var(--bad); font-weight: 600; } .lt-waiver { color: var(--warn); }
figure.lt-chart { margin: 1.25rem 0; } figure.lt-chart figcaption { color: var(--muted);
  font-size: .9rem; } .lt-chart-view { max-width: 100%; overflow-x: auto; }
.lt-chart-view svg { max-width: 100%; height: auto; }
.lt-missing-image, .lt-refused { color: var(--muted); font-style: italic; }
section.lt-appendix ol { padding-left: 1.4rem; } section.lt-appendix li { margin-bottom: 1rem; }
.lt-kind { font-size: .8rem; border: 1px solid currentColor; border-radius: 3px;
  padding: 0 .3rem; }
footer.lt-footer { color: var(--muted); font-size: .85rem; border-top: 1px solid var(--line);
  margin-top: 2rem; padding-top: .5rem; }
@media print { a.lt-cite { color: inherit; } }
""".strip()

_MARK_TAG = re.compile(r"</?mark\b[^>]*>", re.I)
ChartHook = Callable[[str, str], str | None]  # (src, title) -> the chart's HTML, or None


@dataclass
class ReportSource:
    project: str
    report_name: str  # the Markdown file's name, e.g. report.md
    markdown: str
    status: str
    approval: ApprovalState
    check: dict[str, Any]  # CheckResult.to_dict()
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)  # step id -> ledger line
    kinds: dict[str, str] = field(default_factory=dict)  # step id -> evidence kind
    generated_at: str = ""
    tokens: list[Token] | None = None  # the Markdown already parsed (the check's parse)
    chart_html: ChartHook | None = None


@dataclass
class BuiltReport:
    text: str
    chunks: dict[str, str]  # chunk id -> generated content, in page order


class HtmlEditConflict(LantideError):
    code = "HTML_EDITS_WOULD_BE_LOST"


def _slug(text: str) -> str:
    slug = re.sub(r"[^\w]+", "-", text.lower(), flags=re.UNICODE).strip("-_")
    return slug[:60].strip("-_")


def _esc(value: Any) -> str:
    return html_lib.escape(str(value), quote=True)


def _sections(tokens: list[Token]) -> list[tuple[str, int, int]]:
    """(heading text, first token, end token) per section; before any heading: ''."""
    bounds: list[tuple[str, int]] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in ("h1", "h2") and token.level == 0:
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            title = (
                "".join(
                    c.content for c in (inline.children or []) if c.type in ("text", "code_inline")
                )
                if inline is not None
                else ""
            )
            bounds.append((title.strip(), i))
    out = []
    if not bounds or bounds[0][1] > 0:
        out.append(("", 0, bounds[0][1] if bounds else len(tokens)))
    for n, (title, start) in enumerate(bounds):
        end = bounds[n + 1][1] if n + 1 < len(bounds) else len(tokens)
        out.append((title, start, end))
    return [s for s in out if s[2] > s[1]]


class _Citations:
    """Numbers the cited steps in order of first citation."""

    def __init__(self, kinds: dict[str, str]):
        self.kinds = kinds
        self.order: list[str] = []

    def link(self, step_id: str) -> str:
        if step_id not in self.order:
            self.order.append(step_id)
        n = self.order.index(step_id) + 1
        kind = self.kinds.get(step_id, "missing")
        return (
            f'<a class="lt-cite lt-cite-{kind}" href="#step-{_esc(step_id)}" '
            f'title="step {_esc(step_id)} ({kind})">[{n}]</a>'
        )


def _rewrite_inline(
    tokens: list[Token], citations: _Citations, chart_html: ChartHook | None
) -> None:
    for token in tokens:
        # raw HTML of the Report is made safe with the whole section (_safe_section)
        if token.type == "html_block":
            token.content = _MARK_TAG.sub("", token.content)
        if token.type != "inline" or not token.children:
            continue
        for child in token.children:
            if child.type == "html_inline":
                if _MARK_TAG.fullmatch(child.content.strip()):
                    child.content = ""  # annotation marks are for review, not the page
            elif child.type == TOKEN:
                child.type, child.content = "html_inline", citations.link(child.content)
            elif child.type == BAD_TOKEN:
                child.type = "text"
            elif child.type == "image":
                src = str(child.attrGet("src") or "")
                title = "".join(c.content for c in child.children or []) or src
                if src.lower().startswith("data:image/"):
                    continue
                chart = chart_html(src, title) if chart_html else None
                child.type = "html_inline"
                child.content = chart or (
                    f'<span class="lt-missing-image">[image not embedded: {_esc(src)}]</span>'
                )


def _header(source: ReportSource) -> str:
    approval = source.approval
    if not approval.get("approved"):
        plan = '<span class="lt-warn">not approved</span>'
    else:
        who = approval.get("user") or approval.get("by") or "analyst"
        plan = f"approved by {_esc(who)} on {_esc(approval.get('at') or '?')}"
        if approval.get("changed_since_approval"):
            plan += ' <span class="lt-warn">(the Plan changed since approval)</span>'
    check = source.check
    if check.get("ok"):
        evidence = (
            f'<span class="lt-ok">clean</span>: all {check.get("numbers", 0)} numbers cited '
            f"and matching ({check.get('citations', 0)} citations)"
        )
    else:
        counts = check.get("counts", {})
        problems = ", ".join(
            f"{n} {k.replace('_', ' ')}" for k, n in counts.items() if n and k != "matching"
        )
        evidence = (
            f'<span class="lt-bad">{len(check.get("problems", []))} problem(s)</span>: '
            f"{_esc(problems)} of {check.get('numbers', 0)} numbers"
        )
        failed = {
            (c.get("step"), c.get("code")): c.get("message")
            for p in check.get("problems", [])
            for c in p.get("checks") or []
        }
        if failed:
            evidence += "; unresolved checks: " + "; ".join(
                f'<span class="lt-check-mark">{_esc(code)}</span> on step {_esc(step)} '
                f"({_esc(message)})"
                for (step, code), message in failed.items()
            )
    waivers = {
        (w.get("step_id"), w.get("check")): w
        for r in check.get("results", [])
        for w in r.get("waivers") or []
    }
    if waivers:
        evidence += "; " + "; ".join(
            f'<span class="lt-waiver">{_esc(w.get("check"))} of step {_esc(w.get("step_id"))} '
            f"waived by {_esc(w.get('by'))} at {_esc(w.get('at'))}</span>: {_esc(w.get('reason'))}"
            for w in waivers.values()
        )
    return (
        f"<h1>{_esc(source.project)}</h1>\n"
        f'<dl class="lt-facts"><dt>Project</dt><dd>{_esc(source.project)} '
        f"({_esc(source.status.replace('_', ' '))})</dd>\n"
        f"<dt>Plan</dt><dd>{plan}</dd>\n"
        f"<dt>Evidence check</dt><dd>{evidence}</dd>\n"
        f"<dt>Source</dt><dd>{_esc(source.report_name)}</dd></dl>\n"
    )


def _step_checks(step: dict[str, Any]) -> str:
    """The step's error checks in the appendix: each unresolved one marked, each waived one
    with its waiver (who, when, why)."""
    waivers = {w.get("check"): w for w in step.get("waivers") or [] if isinstance(w, dict)}
    lines = []
    for c in step.get("checks") or []:
        if not isinstance(c, dict) or str(c.get("severity", "")).lower() != "error":
            continue
        code, message = _esc(c.get("code")), _esc(c.get("message") or "")
        w = waivers.get(c.get("code"))
        if w is None:
            lines.append(f'<span class="lt-check-mark">check failed: {code}</span>: {message}')
        else:
            lines.append(
                f'<span class="lt-waiver">{code} waived by {_esc(w.get("by"))} at '
                f"{_esc(w.get('at'))}</span>: {_esc(w.get('reason'))} (check: {message})"
            )
    return "".join(f"<p>{line}</p>\n" for line in lines)


def _appendix(order: list[str], source: ReportSource) -> str:
    items = []
    for n, step_id in enumerate(order, 1):
        step = source.steps.get(step_id)
        kind = source.kinds.get(step_id, "missing")
        if step is None:
            items.append(
                f'<li id="step-{_esc(step_id)}"><p><code>{_esc(step_id)}</code> '
                f'<span class="lt-kind lt-bad">missing</span>: no ledger holds this step.</p></li>'
            )
            continue
        purpose = step.get("purpose") or step.get("result_label") or "(no purpose recorded)"
        rows = step.get("row_count")
        facts = [f"{rows:,} row{'s' if rows != 1 else ''}" if isinstance(rows, int) else "rows ?"]
        if step.get("cached_table_name"):
            facts.append(f"table <code>{_esc(step['cached_table_name'])}</code>")
        if step.get("at"):
            facts.append(_esc(step["at"]))
        css = {"formal": "lt-ok", "check_failed": "lt-bad"}.get(kind, "lt-warn")
        items.append(
            f'<li id="step-{_esc(step_id)}" value="{n}"><p><strong>{_esc(purpose)}</strong> '
            f'<span class="lt-kind {css}">{_esc(kind.replace("_", " "))}</span> '
            f"<code>{_esc(step_id)}</code></p>\n<p>{' · '.join(facts)}</p>\n"
            f"{_step_checks(step)}"
            f"<pre><code>{_esc(step.get('sql') or '')}</code></pre></li>"
        )
    body = "\n".join(items) if items else "<li>The Report cites no step.</li>"
    return f"<h2>Evidence</h2>\n<ol>\n{body}\n</ol>\n"


def _chunk(tag: str, chunk_id: str, title: str, content: str, css: str, recorded: str) -> str:
    return (
        f'<{tag} id="lt-{_esc(chunk_id)}" class="{css}" {CHUNK_ATTR}="{_esc(chunk_id)}" '
        f'{TITLE_ATTR}="{_esc(title)}" {HASH_ATTR}="{recorded}">{content}</{tag}>\n'
    )


def _safe_section(html: str) -> str:
    """The section as the sanitizer keeps it (:mod:`lantide.docs.html_sanitize`: browsers'
    parsing, an allow-list), and a note of what it left out, so the reader knows."""
    safe, left_out = sanitize_reporting(html)
    if not left_out:
        return safe
    shown = "; ".join(left_out[:5]) + (
        f" (and {len(left_out) - 5} more)" if len(left_out) > 5 else ""
    )
    return safe + f'<p class="lt-refused">[raw HTML left out: {_esc(shown)}]</p>\n'


def build_chunks(source: ReportSource) -> list[tuple[str, str, str, str]]:
    """(chunk id, tag, title, generated content) in page order."""
    md = markdown_parser()
    tokens = source.tokens if source.tokens is not None else md.parse(source.markdown)
    source.tokens = None  # rewritten below: not to be used twice
    citations = _Citations(source.kinds)
    _rewrite_inline(tokens, citations, source.chart_html)
    sections: list[tuple[str, str, str, str]] = []
    used: set[str] = set()
    for title, start, end in _sections(tokens):
        base = "s-" + (_slug(title) or ("preamble" if not title else "section"))
        chunk_id, n = base, 2
        while chunk_id in used:
            chunk_id, n = f"{base}-{n}", n + 1
        used.add(chunk_id)
        html = md.renderer.render(tokens[start:end], md.options, {})
        problems = balance_problems(html)
        if problems:  # raw HTML of the Markdown left open: the page would not parse again
            first = (tokens[start].map or [0])[0] + 1
            raise HtmlEditConflict(
                f"{source.report_name}: the raw HTML of the section starting on line {first} "
                f"is not balanced ({problems[0][1]})",
                hint="Close every HTML element of the Markdown Report within its section; "
                "nothing was written.",
                code="REPORT_HTML_UNBALANCED",
            )
        sections.append(
            (chunk_id, "section", title or "(before the first heading)", _safe_section(html))
        )
    appendix = _appendix(citations.order, source)
    return (
        [("header", "header", "Header", _header(source))]
        + sections
        + [("appendix", "section", "Evidence", appendix)]
    )


def assemble(source: ReportSource, chunks: list[tuple[str, str, str, str, str]]) -> str:
    """The page from (id, tag, title, content, recorded fingerprint) chunks."""
    css = {"header": "lt-header", "appendix": "lt-appendix"}
    body = []
    main_open = False
    for chunk_id, tag, title, content, recorded in chunks:
        if chunk_id not in css and not main_open:
            body.append("<main>\n")
            main_open = True
        if chunk_id == "appendix" and main_open:
            body.append("</main>\n")
            main_open = False
        body.append(
            _chunk(tag, chunk_id, title, content, css.get(chunk_id, "lt-section"), recorded)
        )
    if main_open:
        body.append("</main>\n")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="Lantide">\n'
        f"<title>{_esc(source.project)}: Report</title>\n"
        f"<style>\n{REPORT_CSS}\n</style>\n</head>\n<body>\n"
        + "".join(body)
        + f'<footer class="lt-footer">Generated by Lantide from {_esc(source.report_name)}'
        + (f" at {_esc(source.generated_at)}" if source.generated_at else "")
        + ". Each [n] links to the query step behind the number.</footer>\n"
        "</body>\n</html>\n"
    )


def build_report_html(source: ReportSource) -> BuiltReport:
    chunks = build_chunks(source)
    text = assemble(source, [(i, t, ti, c, fingerprint(c)) for i, t, ti, c in chunks])
    return BuiltReport(text, {i: c for i, _t, _ti, c in chunks})


@dataclass
class Merged:
    text: str
    kept: list[str]  # edited chunks kept as edited
    overwritten: list[str]  # edited chunks regenerated (with overwrite)
    chunks: int = 0


def merge_edits(
    source: ReportSource, old: list[Chunk], path: str, overwrite: bool = False
) -> Merged:
    """The new page, keeping each edited chunk of ``old`` whose generated content is
    unchanged. Edited chunks whose Markdown changed (or that are gone) are a
    :class:`HtmlEditConflict` naming them, unless ``overwrite``."""
    chunks = build_chunks(source)
    new_hash = {cid: fingerprint(content) for cid, _t, _ti, content in chunks}
    edited = {c.id: c for c in old if c.edited}
    keep = {cid: c for cid, c in edited.items() if new_hash.get(cid) == c.recorded_hash}
    lost = [c for cid, c in edited.items() if cid not in keep]
    if lost and not overwrite:
        names = ", ".join(
            f"{c.id} (line {c.line}: "
            + ("its Markdown section changed" if c.id in new_hash else "gone from the Markdown")
            + ")"
            for c in lost
        )
        raise HtmlEditConflict(
            f"{path}: regenerating would overwrite edited chunk(s): {names}",
            hint="The file was left as it is. Carry the edits into the Markdown Report, or "
            "publish with overwrite (lantide report html --overwrite-edits) to drop them.",
        )
    out = []
    for cid, tag, title, content in chunks:
        if cid in keep:
            # kept as edited, through the same rule: a chunk patched before the sanitizer
            # (issue 28) or edited by hand holds no script on the regenerated page
            kept = sanitize(keep[cid].content)
            out.append((cid, tag, title, kept, keep[cid].recorded_hash or ""))
        else:
            out.append((cid, tag, title, content, new_hash[cid]))
    return Merged(assemble(source, out), sorted(keep), [c.id for c in lost], len(out))
