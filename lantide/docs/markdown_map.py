"""Where Markdown puts things: a document's inline runs, code and HTML, in source offsets.

markdown-it-py gives block tokens a line map but inline tokens only their *content*: the
text of a paragraph, heading or table cell with container markers (``> ``, list indents),
heading hashes and cell borders taken out. :func:`parse_structure` maps every inline run
back to character offsets of the text as given (Python ``str`` indices, line endings as on
disk), and records the positions markdown-it itself found for raw HTML tags and code spans,
so a ``<mark …>`` inside inline code or a fenced block is never taken for a mark.

Returned shape (:class:`Structure`):

- ``regions``: :class:`InlineRegion` per paragraph / heading / table cell, each a list of
  :class:`Segment` (one per source line) mapping content offsets to source offsets;
- ``blocks``: :class:`Block` for fenced and indented code (``code``) and raw HTML blocks
  (``html``), with source offsets;
- ``html_tags``: every inline HTML tag markdown-it recognised, with its region;
- ``code_spans``: every inline code span, with its region.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.parser_inline import RuleFuncInlineType
    from markdown_it.rules_block import StateBlock
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

_EOL = re.compile(r"\r\n|\r|\n")
_POS_KEY = "lantide_pos"
_REGION_KINDS = {
    "paragraph_open": "paragraph",
    "heading_open": "heading",
    "th_open": "table cell",
    "td_open": "table cell",
}


@dataclass(frozen=True)
class Segment:
    """One source line's share of an inline run."""

    content_start: int
    source_start: int
    length: int
    positions: tuple[int, ...] | None = None  # per character, when not one contiguous slice

    @property
    def source_end(self) -> int:
        if self.positions is not None:
            return (self.positions[-1] + 1) if self.positions else self.source_start
        return self.source_start + self.length

    def to_source(self, offset: int) -> int:
        """Source offset of content offset ``offset`` (``content_start <= offset <= end``)."""
        i = offset - self.content_start
        if self.positions is None:
            return self.source_start + i
        if i >= len(self.positions):
            return self.source_end
        return self.positions[i]


@dataclass
class InlineRegion:
    """A paragraph, heading or table cell: text where a mark may live."""

    index: int
    kind: str
    first_line: int  # 0-based
    content: str
    segments: list[Segment]
    token: Token = field(repr=False)  # markdown-it's inline token

    @property
    def start(self) -> int:
        return self.segments[0].source_start

    @property
    def end(self) -> int:
        return self.segments[-1].source_end

    def to_source(self, offset: int) -> int:
        for seg in self.segments:
            if offset <= seg.content_start + seg.length:
                return seg.to_source(max(offset, seg.content_start))
        return self.end

    def holds_start(self, pos: int) -> bool:
        """Whether a range may start at ``pos`` (inside text, not a line's prefix)."""
        return any(seg.source_start <= pos < seg.source_end for seg in self.segments)

    def holds_end(self, pos: int) -> bool:
        return any(seg.source_start < pos <= seg.source_end for seg in self.segments)


@dataclass(frozen=True)
class Block:
    kind: str  # "code" or "html"
    start: int
    end: int
    first_line: int
    last_line: int  # inclusive, 0-based


@dataclass(frozen=True)
class InlineHtml:
    start: int
    end: int
    text: str
    region: int


@dataclass(frozen=True)
class CodeSpan:
    start: int
    end: int
    region: int


@dataclass
class Structure:
    text: str
    line_starts: list[int]
    regions: list[InlineRegion] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    html_tags: list[InlineHtml] = field(default_factory=list)
    code_spans: list[CodeSpan] = field(default_factory=list)
    tokens: list[Token] = field(default_factory=list, repr=False)
    _starts: list[int] | None = field(default=None, repr=False)

    def line_of(self, pos: int) -> int:
        """0-based line number of source offset ``pos``."""
        return bisect.bisect_right(self.line_starts, pos) - 1

    def region_for_start(self, pos: int) -> InlineRegion | None:
        return next((r for r in self._near(pos) if r.holds_start(pos)), None)

    def region_for_end(self, pos: int) -> InlineRegion | None:
        return next((r for r in self._near(pos) if r.holds_end(pos)), None)

    def block_at(self, pos: int) -> Block | None:
        return next((b for b in self.blocks if b.start <= pos < b.end), None)

    def _near(self, pos: int) -> list[InlineRegion]:
        # regions never overlap and come in source order: the candidates are the last
        # region starting at or before ``pos`` and the one before it (for an end offset)
        if self._starts is None:
            self._starts = [r.start for r in self.regions]
        i = bisect.bisect_right(self._starts, pos)
        return self.regions[max(0, i - 2) : i][::-1]


def _recording(rule: RuleFuncInlineType, token_type: str) -> RuleFuncInlineType:
    """Wrap an inline rule so the token it pushes remembers where in ``state.src`` it was."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start = state.pos
        ok = rule(state, silent)
        if ok and not silent and state.tokens and state.tokens[-1].type == token_type:
            token = state.tokens[-1]
            token.meta = dict(token.meta or {})
            token.meta[_POS_KEY] = (start, state.pos, state.src)
        return ok

    return wrapped


DEPTH_LIMIT = 45  # nesting levels (a list counts two: the list and its item)
_CONTAINER_MARKERS = re.compile(r"^[ \t]*(?:(?:>|[-*+]|\d{1,9}[.)])(?=[ \t]|$)[ \t]*)*")


def depth_guard(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """markdown-it block rule: deeper than :data:`DEPTH_LIMIT`, the rest of the block is
    one paragraph of its text (block quote and list markers taken off each line), so its
    numbers are still read and shown; never a recursion past Python's stack."""
    if state.level < DEPTH_LIMIT:
        return False
    if silent:
        return True
    line = start_line  # to where markdown-it's own loop would stop: a line less indented
    while line < end_line and (state.isEmpty(line) or state.sCount[line] >= state.blkIndent):
        line += 1
    end_line = line
    lines = state.getLines(start_line, end_line, state.blkIndent, False).split("\n")
    content = "\n".join(_CONTAINER_MARKERS.sub("", text) for text in lines).strip()
    state.line = end_line
    if not content:
        return True
    token = state.push("paragraph_open", "p", 1)
    token.map = [start_line, end_line]
    token = state.push("inline", "", 0)
    token.content = content
    token.map = [start_line, end_line]
    token.children = []
    state.push("paragraph_close", "p", -1)
    return True


@lru_cache(maxsize=1)
def markdown_parser() -> MarkdownIt:
    """The one Markdown dialect of Plans and Reports: CommonMark, raw HTML, GFM tables,
    step citations ``[^s:ID]``."""
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline.backticks import backtick
    from markdown_it.rules_inline.html_inline import html_inline

    from lantide.docs.citations import (
        BAD_TOKEN,
        TOKEN,
        render_citation,
        render_malformed,
        step_citation_rule,
    )

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    # CommonMark's preset stops at 20 levels of nesting and drops everything deeper, so a
    # number 11 lists deep vanished from the check and the HTML Report; past DEPTH_LIMIT
    # the rest of a block is one plain paragraph instead (nothing is dropped), and
    # markdown-it's own limit, above it, is never reached
    md.options["maxNesting"] = DEPTH_LIMIT + 5
    md.block.ruler.before("table", "lantide_depth_guard", depth_guard)
    md.inline.ruler.at("html_inline", _recording(html_inline, "html_inline"))
    md.inline.ruler.at("backticks", _recording(backtick, "code_inline"))
    # Report step citations [^s:ID] (lantide.docs.citations), before links read the bracket
    md.inline.ruler.before("link", TOKEN, step_citation_rule)
    md.add_render_rule(TOKEN, render_citation)
    md.add_render_rule(BAD_TOKEN, render_malformed)
    md.parse("")  # compile the rule chains now, not concurrently later
    return md


def line_starts_of(text: str) -> list[int]:
    return [0] + [m.end() for m in _EOL.finditer(text)]


def _line_bounds(text: str, starts: list[int], line: int) -> tuple[int, int]:
    """(start, end) of line ``line`` without its line ending."""
    begin = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    while end > begin and text[end - 1] in "\r\n":
        end -= 1
    return begin, end


def _greedy(content_line: str, source: str, base: int, cursor: int) -> tuple[int, ...]:
    """Per-character positions by walking both strings; for rewritten lines (tabs, ``\\|``)."""
    out: list[int] = []
    j = cursor
    last = base + cursor
    for ch in content_line:
        k = source.find(ch, j)
        if k < 0:
            out.append(last)  # a character markdown-it made up (tab expansion): no source
            continue
        out.append(base + k)
        last = base + k
        j = k + 1
    return tuple(out)


def _segment(
    content_line: str,
    content_start: int,
    text: str,
    bounds: tuple[int, int],
    cursor: int,
    suffix_first: bool,
) -> Segment:
    begin, end = bounds
    line = text[begin:end]
    n = len(content_line)
    if suffix_first:
        if line.endswith(content_line):
            return Segment(content_start, end - n, n)
        trimmed = line.rstrip(" \t")
        if trimmed.endswith(content_line):
            return Segment(content_start, begin + len(trimmed) - n, n)
    k = line.find(content_line, cursor)
    if k >= 0:
        return Segment(content_start, begin + k, n)
    positions = _greedy(content_line, line, begin, cursor)
    return Segment(content_start, positions[0] if positions else begin + cursor, n, positions)


def _map_inline(
    token: Token, kind: str, text: str, starts: list[int], cursors: dict[int, int]
) -> list[Segment]:
    assert token.map is not None  # parse_structure passes only tokens with a line map
    first_line = token.map[0]
    segments = []
    offset = 0
    for i, content_line in enumerate(token.content.split("\n")):
        line = min(first_line + i, len(starts) - 1)
        bounds = _line_bounds(text, starts, line)
        cursor = cursors.get(line, 0)
        seg = _segment(
            content_line, offset, text, bounds, cursor, suffix_first=kind != "table cell"
        )
        cursors[line] = seg.source_end - bounds[0]
        segments.append(seg)
        offset += len(content_line) + 1
    return segments


def _block(token: Token, kind: str, text: str, starts: list[int]) -> Block:
    assert token.map is not None  # parse_structure passes only tokens with a line map
    first, last = token.map[0], max(token.map[0], token.map[1] - 1)
    last = min(last, len(starts) - 1)
    return Block(kind, starts[first], _line_bounds(text, starts, last)[1], first, last)


def parse_structure(text: str) -> Structure:
    # A byte-order mark (Windows editors) would hide a heading on line 1; a space in its
    # place keeps every offset and line and is ignored as indentation. The text (and so
    # the file) keeps its BOM.
    tokens = markdown_parser().parse(" " + text[1:] if text.startswith("\ufeff") else text)
    starts = line_starts_of(text)
    out = Structure(text, starts, tokens=tokens)
    cursors: dict[int, int] = {}
    opener = "paragraph_open"
    for token in tokens:
        if token.type in _REGION_KINDS:
            opener = token.type
        elif token.type in ("fence", "code_block") and token.map:
            out.blocks.append(_block(token, "code", text, starts))
        elif token.type == "html_block" and token.map:
            out.blocks.append(_block(token, "html", text, starts))
        elif token.type == "inline" and token.map:
            kind = _REGION_KINDS.get(opener, "paragraph")
            region = InlineRegion(
                len(out.regions),
                kind,
                token.map[0],
                token.content,
                _map_inline(token, kind, text, starts, cursors),
                token,
            )
            out.regions.append(region)
            _collect_inline(token, region, out)
    return out


def _collect_inline(token: Token, region: InlineRegion, out: Structure) -> None:
    for child in _walk(token.children or []):
        where = (child.meta or {}).get(_POS_KEY)
        if where is None or where[2] is not token.content:
            continue  # found by a nested parse (image alt text): not at a known offset
        start, end = region.to_source(where[0]), region.to_source(where[1])
        if child.type == "html_inline":
            out.html_tags.append(InlineHtml(start, end, out.text[start:end], region.index))
        elif child.type == "code_inline":
            out.code_spans.append(CodeSpan(start, end, region.index))


def inline_signature(region: InlineRegion, skip: frozenset[int] = frozenset()) -> list[str]:
    """The inline syntax of a region (links, emphasis, code, HTML), without its plain text.

    ``skip`` holds source offsets of raw HTML tags to leave out (a mark being added).
    """
    out: list[str] = []
    for child in _walk(region.token.children or []):
        if child.type == "text":
            continue
        if child.type == "html_inline":
            where = (child.meta or {}).get(_POS_KEY)
            if where is not None and region.to_source(where[0]) in skip:
                continue
            out.append(child.content)
        else:
            out.append(child.type)
    return out


def _walk(tokens: Iterable[Token]) -> Iterator[Token]:
    for t in tokens:
        yield t
        if t.children:
            yield from _walk(t.children)


def _tag_offsets(region: InlineRegion) -> Iterator[tuple[int, int]]:
    """(token index, source offset) of the region's raw HTML tags."""
    for i, child in enumerate(region.token.children or []):
        if child.type == "html_inline":
            where = (child.meta or {}).get(_POS_KEY)
            if where is not None:
                yield i, region.to_source(where[0])


def nested_between(region: InlineRegion, open_at: int, close_at: int) -> bool:
    """Whether the raw HTML tags at source offsets ``open_at`` and ``close_at`` enclose
    whole inline elements only: every emphasis, link or strikethrough opened between them
    closes between them, and none closes there that opened before (the HTML element they
    make is properly nested)."""
    found = dict((pos, i) for i, pos in _tag_offsets(region))
    if open_at not in found or close_at not in found:
        return False
    children = region.token.children or []
    depth = 0
    for child in children[found[open_at] + 1 : found[close_at]]:
        depth += child.nesting
        if depth < 0:
            return False
    return depth == 0


def render_inline(region: InlineRegion, skip: frozenset[int] = frozenset()) -> str:
    """The region's HTML as markdown-it renders it, without the raw HTML tags at source
    offsets ``skip`` (a mark being added)."""
    from markdown_it.renderer import RendererHTML

    md = markdown_parser()
    renderer = md.renderer
    # markdown_parser() keeps markdown-it's default renderer, the only one with renderInline
    assert isinstance(renderer, RendererHTML)
    dropped = {i for i, pos in _tag_offsets(region) if pos in skip}
    children = [c for i, c in enumerate(region.token.children or []) if i not in dropped]
    return renderer.renderInline(children, md.options, {})
