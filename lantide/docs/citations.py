"""Step citations in a Report and the numbers they vouch for (docs/citations.md).

A citation is ``[^s:STEP_ID]`` (footnote-like, so it reads as a reference in any Markdown
viewer): ``churn was 4.3% [^s:9f2c41d07a11]``. It cites every number written since the
previous citation in the same paragraph, heading, list item or table cell; citations side
by side (``[^s:a] [^s:b]``) cite those numbers together. A number after the last citation
of its block is uncited.

The Markdown is parsed by markdown-it-py (the one parser of Plans and Reports,
:func:`lantide.docs.markdown_map.markdown_parser`, which gets the inline rule
:func:`step_citation_rule`); numbers are read from the parsed text only, so numbers in code
spans, fenced or indented code, raw HTML and link targets are never numbers of the Report.
What counts as a number in a run of text is :mod:`lantide.docs.report_numbers`; left out
here as well: numbers in link text that points inside the document and everything under a
"Contents" / "Table of contents" heading (a table of contents).

:func:`scan_numbers` returns each number with its 1-based line, its value as written and
how it was rounded (decimals, percent, scale words); :class:`MalformedCitationError` names
the file and the line of every ``[^s:`` that is not a citation.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.docs.report_numbers import FoundNumber, may_hold_numbers, numbers_in
from lantide.errors import LantideError

if TYPE_CHECKING:
    from markdown_it.renderer import RendererHTML
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

CITATION_PREFIX = "[^s:"
_CITATION = re.compile(r"\[\^s:([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\]")
_MALFORMED_END = re.compile(r"\]|\s|$")
TOKEN, BAD_TOKEN = "step_citation", "step_citation_malformed"

_TOC_HEADING = re.compile(r"^\s*(?:table\s+of\s+)?contents\s*$|^\s*toc\s*$", re.I)


class MalformedCitationError(LantideError):
    code = "MALFORMED_CITATION"


def step_citation_rule(state: StateInline, silent: bool) -> bool:
    """markdown-it inline rule: ``[^s:ID]`` is a ``step_citation`` token (content: the
    id); any other ``[^s:…`` a ``step_citation_malformed`` token (content: what was
    written), so a typo is reported, never read as text or as a link."""
    src, pos = state.src, state.pos
    if not src.startswith("[^", pos) or src[pos + 2 : pos + 4].lower() != "s:":
        return False
    match = _CITATION.match(src, pos)
    if match:
        end, kind, content = match.end(), TOKEN, match.group(1)
    else:
        # what was written up to its closing bracket on the line, else up to a space
        close = src.find("]", pos + 4, min(state.posMax, pos + 80))
        if close >= 0 and "\n" not in src[pos:close]:
            end = close + 1
        else:
            found = _MALFORMED_END.search(src, pos + 4)  # always matches: it ends with $
            end = min(found.start() if found else len(src), state.posMax)
        kind, content = BAD_TOKEN, src[pos:end]
    if not silent:
        token = state.push(kind, "", 0)
        token.content = content
        token.markup = src[pos:end]
    state.pos = end
    return True


def cited_step_ids(text: str) -> set[str]:
    """The step ids a Report's text cites (``[^s:STEPID]``), wherever they stand."""
    return set(_CITATION.findall(text))


def citation_html(step_id: str, kind: str | None, note: str = "") -> str:
    """A citation in the preview: a link the app opens in the ledger panel, labelled with
    the step's badge (``formal``, ``exploratory``, ``missing``, ``check_failed``; None: not
    looked up); ``note``: more for its tooltip (the numbers it cites and their cells)."""
    label = kind or "step"
    safe = html_lib.escape(step_id)
    short = html_lib.escape(step_id[:8])
    text = f"{short} · {label.replace('_', ' ')}" if kind else short
    title = html_lib.escape(f"step {step_id} ({label})" + (f"\n{note}" if note else ""))
    return (
        f'<a class="lantide-citation lantide-citation-{label}" href="lantide-step:{safe}" '
        f'data-step="{safe}" title="{title}"><sup>[{text}]</sup></a>'
    )


_RENDERED = re.compile(
    r'<a class="lantide-citation lantide-citation-step" '
    r'href="lantide-step:([^"]+)".*?</a>',
    re.S,
)


def relabel_citations(html: str, kinds: dict[str, str], notes: dict[str, str] | None = None) -> str:
    """Label rendered citations with their badges (ids not in ``kinds`` are missing) and
    give each the tooltip ``notes`` has for its step."""

    def label(m: re.Match[str]) -> str:
        step_id = html_lib.unescape(m.group(1))
        return citation_html(step_id, kinds.get(step_id, "missing"), (notes or {}).get(step_id, ""))

    return _RENDERED.sub(label, html)


def render_citation(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """markdown-it render rule: ``env["lantide_steps"]`` (id -> kind) labels the kinds."""
    steps = (env or {}).get("lantide_steps")
    step_id = tokens[idx].content
    return citation_html(step_id, None if steps is None else steps.get(step_id, "missing"))


def render_malformed(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return (
        f'<span class="lantide-citation-bad" title="not a citation: write [^s:STEP_ID]">'
        f"{html_lib.escape(tokens[idx].content)}</span>"
    )


@dataclass(frozen=True)
class ReportNumber:
    line: int  # 1-based
    text: str  # as written, e.g. "$1,204.50" or "4.3%"
    value: float  # the digits' value (4.3 for "4.3%", 1.2 for "1.2M")
    decimals: int
    percent: bool
    scale: float
    signed: bool
    cited: tuple[str, ...]  # the step ids of its citation group; () when uncited
    nouns: tuple[str, ...] = ()  # the (at most two) words right after it, lower case
    unreadable: bool = False  # digits or number words the reader could not classify


@dataclass(frozen=True)
class Malformed:
    line: int
    text: str


@dataclass
class ReportScan:
    numbers: list[ReportNumber] = field(default_factory=list)
    citations: list[tuple[int, str]] = field(default_factory=list)  # (line, step id)
    malformed: list[Malformed] = field(default_factory=list)


class _Block:
    """Numbers waiting for the next citation group of one inline block."""

    def __init__(self, scan: ReportScan):
        self.scan = scan
        self.pending: list[tuple[int, FoundNumber]] = []
        self.group: list[str] = []

    def number(self, line: int, found: FoundNumber) -> None:
        self.close_group()
        self.pending.append((line, found))

    def cite(self, line: int, step_id: str) -> None:
        self.scan.citations.append((line, step_id))
        self.group.append(step_id)

    def close_group(self) -> None:
        if not self.group:
            return
        for line, found in self.pending:
            self.scan.numbers.append(_report_number(line, found, tuple(self.group)))
        self.pending, self.group = [], []

    def end(self) -> None:
        self.close_group()
        for line, found in self.pending:
            self.scan.numbers.append(_report_number(line, found, ()))
        self.pending = []


def _report_number(line: int, found: FoundNumber, cited: tuple[str, ...]) -> ReportNumber:
    return ReportNumber(
        line, *found.parts, cited=cited, nouns=found.nouns, unreadable=found.unreadable
    )


def scan_numbers(text: str, tokens: list[Token] | None = None) -> ReportScan:
    """Every number of the Report's text with the citation group that cites it;
    ``tokens``: the text already parsed by :func:`markdown_parser` (read, not changed)."""
    from lantide.docs.markdown_map import markdown_parser

    scan = ReportScan()
    if tokens is None:
        tokens = markdown_parser().parse(text)
    heading_level: int | None = None
    toc_level: int | None = None  # inside a table of contents until a heading this high
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            heading_level = int(token.tag[1])
            if toc_level is not None and heading_level <= toc_level:
                toc_level = None
            title = tokens[i + 1].content if i + 1 < len(tokens) else ""
            if _TOC_HEADING.match(title):
                toc_level = heading_level
                continue
        if token.type != "inline" or not token.children:
            if token.type == "heading_close":
                heading_level = None
            continue
        _scan_inline(token, scan, heading_level is not None, toc_level is not None)
    return scan


def _scan_inline(token: Token, scan: ReportScan, heading: bool, in_toc: bool) -> None:

    line = (token.map[0] if token.map else 0) + 1
    block = _Block(scan)
    digits, words = may_hold_numbers(token.content)  # once for the block's text runs
    inner_link = 0  # depth inside links that point into the document
    first_text = True
    for child in token.children or []:  # scan_numbers passes tokens with children
        kind = child.type
        if kind in ("softbreak", "hardbreak"):
            line += 1
        elif kind == TOKEN:
            block.cite(line, child.content)
        elif kind == BAD_TOKEN:
            scan.malformed.append(Malformed(line, child.content))
        elif kind == "link_open":
            inner_link += 1 if str(child.attrGet("href") or "").startswith("#") else 0
        elif kind == "link_close" and inner_link:
            inner_link -= 1
        elif kind == "text":
            if child.content.strip() == "" and block.group:
                continue  # space between citations of one group
            if (digits or words) and not (in_toc or inner_link):
                for found in numbers_in(child.content, heading and first_text, words):
                    block.number(line, found)
            if child.content.strip():
                first_text = False
                block.close_group()
    block.end()


def raise_for_malformed(scan: ReportScan, path: Path | str) -> None:
    """A clear error naming the file and each line with a ``[^s:`` that is not a citation."""
    if not scan.malformed:
        return
    where = "; ".join(f"line {m.line}: {m.text!r}" for m in scan.malformed[:10])
    more = f" (and {len(scan.malformed) - 10} more)" if len(scan.malformed) > 10 else ""
    raise MalformedCitationError(
        f"{path}: malformed step citation(s): {where}{more}",
        hint="Write a citation as [^s:STEP_ID] right after the number, e.g. "
        "'4.3% [^s:9f2c41d07a11]'; step ids are letters, digits, '_', '.' or '-'.",
    )
