"""The HTML Report's markup: its addressable chunks, and what a chunk may hold.

``report.html`` (:mod:`lantide.docs.html_report`) is cut into chunks: elements carrying
``data-lantide-chunk="ID"`` (the header, one ``<section>`` per heading of the Markdown, the
evidence appendix) with ``data-lantide-hash``, a fingerprint of the content the generator
wrote. A chunk whose content no longer has that fingerprint was edited since (by the
analyst, or by the agent's ``patch_html_chunk``); regenerating keeps such edits.

:func:`parse_report_html` reads a whole file strictly with the standard library's
:class:`html.parser.HTMLParser`: every element is closed in order (void elements aside), no
chunk sits inside another, chunk ids are unique. Invalid markup is a
:class:`HtmlMarkupError` naming the file and the line; callers never rewrite such a file.

:func:`check_fragment` is the rule for a chunk's new content: balanced markup (read here),
and nothing the sanitizer (:mod:`lantide.docs.html_sanitize`, nh3 on an allow-list) would
leave out; what is written is the sanitizer's own serialization. Whether markup is safe is
never decided by this module's parser: the standard library's parser and a browser end
some comments at different places (issue 28).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser

from lantide.docs.html_sanitize import sanitize_reporting
from lantide.errors import LantideError

CHUNK_ATTR, HASH_ATTR, TITLE_ATTR = "data-lantide-chunk", "data-lantide-hash", "data-lantide-title"
VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
# elements of SVG and MathML, where <x/> closes the element as in XML
_FOREIGN_ROOTS = frozenset({"svg", "math"})


class HtmlMarkupError(LantideError):
    code = "HTML_INVALID"


class UnsafeHtmlError(LantideError):
    code = "HTML_REFUSED"


def fingerprint(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Chunk:
    id: str
    tag: str
    title: str
    line: int  # 1-based line of the chunk's start tag
    start: int  # offset of the content (after the start tag)
    end: int  # offset of the end tag
    content: str
    recorded_hash: str | None

    @property
    def edited(self) -> bool:
        """Changed since the generator wrote it (no fingerprint: treated as edited)."""
        return self.recorded_hash != fingerprint(self.content)


@dataclass
class _Open:
    tag: str
    line: int
    content_start: int
    chunk: dict[str, str] | None


class _Scanner(HTMLParser):
    """Balanced-markup reader that records chunk offsets and, for fragments, refusals."""

    def __init__(self, text: str, fragment: bool):
        super().__init__(convert_charrefs=True)
        self.text = text
        self.fragment = fragment
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        self.stack: list[_Open] = []
        self.chunks: list[Chunk] = []
        self.errors: list[tuple[int, str]] = []

    def text_offset(self) -> int:
        line, col = self.getpos()
        return self.starts[line - 1] + col

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def _foreign(self) -> bool:
        return any(o.tag in _FOREIGN_ROOTS for o in self.stack)

    # -- events
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        start = self.text_offset()
        raw = self.get_starttag_text() or ""
        if tag in VOID:
            return
        named = dict(attrs)
        chunk = None
        if CHUNK_ATTR in named and not self.fragment:
            if any(o.chunk for o in self.stack):
                self.errors.append((line, f"chunk {named[CHUNK_ATTR]!r} is inside another chunk"))
            chunk = {k: v or "" for k, v in named.items()}
        self.stack.append(_Open(tag, line, start + len(raw), chunk))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        if self.fragment and tag not in VOID and not self._foreign() and tag not in _FOREIGN_ROOTS:
            self.errors.append(
                (line, f"<{tag}/> does not close a {tag} element; write <{tag}></{tag}>")
            )

    def handle_endtag(self, tag: str) -> None:
        line = self.getpos()[0]
        if tag in VOID:
            return
        if not self.stack:
            self.errors.append((line, f"</{tag}> closes nothing"))
            return
        top = self.stack[-1]
        if top.tag != tag:
            self.errors.append(
                (line, f"</{tag}> where </{top.tag}> (opened on line {top.line}) was expected")
            )
            # recover as a browser would when the tag is open further down
            if any(o.tag == tag for o in self.stack):
                while self.stack and self.stack[-1].tag != tag:
                    self.stack.pop()
            else:
                return
        opened = self.stack.pop()
        if opened.chunk is not None:
            end = self.text_offset()
            chunk_id = opened.chunk.get(CHUNK_ATTR, "")
            if any(c.id == chunk_id for c in self.chunks):
                self.errors.append((opened.line, f"chunk id {chunk_id!r} is used twice"))
            self.chunks.append(
                Chunk(
                    chunk_id,
                    tag,
                    opened.chunk.get(TITLE_ATTR, ""),
                    opened.line,
                    opened.content_start,
                    end,
                    self.text[opened.content_start : end],
                    opened.chunk.get(HASH_ATTR),
                )
            )

    def finish(self) -> None:
        self.close()
        for opened in reversed(self.stack):
            self.errors.append((opened.line, f"<{opened.tag}> is never closed"))
        self.stack = []


def _describe(problems: list[tuple[int, str]], limit: int = 5) -> str:
    shown = "; ".join(f"line {line}: {what}" for line, what in problems[:limit])
    more = len(problems) - limit
    return shown + (f" (and {more} more)" if more > 0 else "")


def parse_report_html(text: str, path: str = "report.html") -> list[Chunk]:
    """The chunks of a whole HTML Report, in document order; invalid markup raises
    :class:`HtmlMarkupError` naming ``path`` and the line."""
    scanner = _Scanner(text, fragment=False)
    scanner.feed(text)
    scanner.finish()
    if scanner.errors:
        problems = sorted(scanner.errors)
        raise HtmlMarkupError(
            f"{path}: invalid HTML: {_describe(problems)}",
            hint="The file was left as it is. Fix the markup at that line (every element "
            "closed, in order), or move the file aside and publish the HTML Report again.",
        )
    return sorted(scanner.chunks, key=lambda c: c.start)


def balance_problems(fragment: str) -> list[tuple[int, str]]:
    """(line, problem) for each unbalanced element of ``fragment``."""
    scanner = _Scanner(fragment, fragment=True)
    scanner.feed(fragment)
    scanner.finish()
    return sorted(scanner.errors)


def check_fragment(content: str, where: str = "the new content") -> str:
    """A chunk's new content as it may be written: refused when unbalanced
    (:class:`HtmlMarkupError`) or when the sanitizer would leave anything out
    (:class:`UnsafeHtmlError`, naming what); otherwise the sanitizer's serialization of it,
    which is what the page holds."""
    problems = balance_problems(content)
    if problems:
        raise HtmlMarkupError(
            f"{where} is not balanced markup: {_describe(problems)}",
            hint="Close every element you open, in order; the chunk was not changed.",
        )
    safe, left_out = sanitize_reporting(content)
    if left_out:
        more = f" (and {len(left_out) - 5} more)" if len(left_out) > 5 else ""
        raise UnsafeHtmlError(
            f"{where} was refused: the sanitizer would leave out " + "; ".join(left_out[:5]) + more,
            hint="A chunk holds text and markup only: no scripts, styles, frames, forms or "
            "comments, no on*= attributes, no URL but '#anchor' and http(s)/mailto links "
            "(and data: images), no lt- ids or data-lantide-* attributes; the chunk was not "
            "changed. A chunk published before charts became plain SVG may hold a chart "
            "script: publish the HTML Report again first.",
        )
    return safe


def replace_chunk(text: str, chunk: Chunk, content: str) -> str:
    return text[: chunk.start] + content + text[chunk.end :]


class _ElementSpans(HTMLParser):
    def __init__(self, text: str, tags: frozenset[str]):
        super().__init__(convert_charrefs=True)
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        self.spans: list[tuple[int, int]] = []
        self.tags = tags
        self._open: tuple[str, int] | None = None

    def _at(self) -> int:
        line, col = self.getpos()
        return self.starts[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.tags and self._open is None:
            self._open = (tag, self._at())

    def handle_endtag(self, tag: str) -> None:
        if self._open is not None and tag == self._open[0]:
            close = self.text.find(">", self._at())
            self.spans.append((self._open[1], close + 1 if close >= 0 else len(self.text)))
            self._open = None


CHART_NOTE = "<p><i>[chart: shown in the browser, Open in browser]</i></p>"


def _preview_spans(text: str) -> list[tuple[int, int]]:
    scanner = _ElementSpans(text, frozenset({"script", "style", "svg"}))
    scanner.feed(text)
    scanner.close()
    return list(scanner.spans)


def chart_svgs(text: str) -> list[str]:
    """The page's inline ``<svg>`` elements (its charts' drawings), in page order."""
    return [text[s:e] for s, e in _preview_spans(text) if text.startswith("<svg", s)]


def without_scripts(text: str, chart: Callable[[int], str] | None = None) -> str:
    """The page without its ``<script>`` and ``<style>`` elements, for Qt's rich-text
    preview (it runs no script, and the app's own style sheet themes it); an inline
    ``<svg>`` (a chart, which Qt's rich text cannot draw) becomes ``chart(n)`` (its image,
    the n-th of :func:`chart_svgs`) or else a short note."""
    out, last, n = [], 0, 0
    for start, end in _preview_spans(text):
        out.append(text[last:start])
        if text.startswith("<svg", start):
            out.append(chart(n) if chart is not None else CHART_NOTE)
            n += 1
        last = end
    out.append(text[last:])
    return "".join(out)
