"""Annotation marks in a document: ``<mark data-annotation-id="ID">…</mark>``.

A mark is an HTML ``mark`` element the Markdown parser sees as raw HTML: an inline tag
of a paragraph, heading or table cell, or a tag inside a raw HTML block. A ``<mark …>``
inside inline code or a fenced block is text, not a mark. Tags are read with the
standard library's HTML parser, and opening and closing tags pair up the way a browser
pairs them (the nearest open ``mark`` of the same paragraph or cell), so an analyst's own
``<mark>highlight</mark>`` never confuses an annotation.

:func:`scan_marks` returns a :class:`MarkScan`:

- ``marks``: :class:`Mark` pairs that carry an annotation id, in text order, with
  ``start``/``end`` (the whole element) and ``inner_start``/``inner_end`` (the quoted
  text; this ``[inner_start, inner_end)`` is what a sidecar's ``anchor.span`` holds);
- ``stray``: opening tags with an id but no closing tag in the same paragraph or cell;
- ``tags``: every ``mark`` tag (opening or closing, with or without id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from lantide.docs.markdown_map import Structure, parse_structure

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
ID_ATTRIBUTE = "data-annotation-id"
MARK_CLOSE = "</mark>"
MAYBE_MARK_TAG = re.compile(r"</?mark[\s/>]", re.IGNORECASE)


def mark_open(annotation_id: str) -> str:
    return f'<mark {ID_ATTRIBUTE}="{annotation_id}">'


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None


@dataclass(frozen=True)
class MarkTag:
    start: int
    end: int
    closing: bool
    annotation_id: str | None
    container: tuple[str, int]  # ("region", index) or ("html", block index)


@dataclass(frozen=True)
class Mark:
    id: str
    open: MarkTag
    close: MarkTag

    @property
    def start(self) -> int:
        return self.open.start

    @property
    def end(self) -> int:
        return self.close.end

    @property
    def inner_start(self) -> int:
        return self.open.end

    @property
    def inner_end(self) -> int:
        return self.close.start

    @property
    def span(self) -> list[int]:
        return [self.inner_start, self.inner_end]

    @property
    def container(self) -> tuple[str, int]:
        return self.open.container

    def inner(self, text: str) -> str:
        return text[self.inner_start : self.inner_end]


@dataclass
class MarkScan:
    text: str
    structure: Structure
    tags: list[MarkTag] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    stray: list[MarkTag] = field(default_factory=list)

    def by_id(self) -> dict[str, list[Mark]]:
        out: dict[str, list[Mark]] = {}
        for m in self.marks:
            out.setdefault(m.id, []).append(m)
        return out

    def mark(self, annotation_id: str) -> Mark | None:
        return next((m for m in self.marks if m.id == annotation_id), None)

    def ids(self) -> set[str]:
        # stray tags always carry an id (scan_marks keeps only those)
        return {m.id for m in self.marks} | {
            t.annotation_id for t in self.stray if t.annotation_id is not None
        }


class _TagReader(HTMLParser):
    """Collects ``mark`` tags with their (line, column) positions."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[bool, str | None, tuple[int, int], str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "mark":
            value = dict(attrs).get(ID_ATTRIBUTE)
            ann_id = value.strip() if isinstance(value, str) else None
            self.found.append(
                (
                    False,
                    ann_id if is_valid_id(ann_id) else None,
                    self.getpos(),
                    self.get_starttag_text(),
                )
            )

    def handle_endtag(self, tag: str) -> None:

        if tag == "mark":
            self.found.append((True, None, self.getpos(), None))


def read_mark_tags(source: str) -> list[tuple[bool, str | None, int, int]]:
    """(closing, id, start, end) of every mark tag in an HTML fragment."""
    reader = _TagReader()
    reader.feed(source)
    reader.close()
    line_starts = [0] + [i + 1 for i, ch in enumerate(source) if ch == "\n"]
    out = []
    for closing, ann_id, (line, col), raw in reader.found:
        start = line_starts[line - 1] + col
        if raw is not None:
            end = start + len(raw)
        else:
            gt = source.find(">", start)
            end = gt + 1 if gt >= 0 else len(source)
        out.append((closing, ann_id, start, end))
    return out


def _tags_of(structure: Structure) -> list[MarkTag]:
    tags = []
    for html in structure.html_tags:
        if not MAYBE_MARK_TAG.match(html.text):
            continue
        for closing, ann_id, start, end in read_mark_tags(html.text):
            tags.append(
                MarkTag(
                    html.start + start, html.start + end, closing, ann_id, ("region", html.region)
                )
            )
    text = structure.text
    for index, block in enumerate(structure.blocks):
        source = text[block.start : block.end]
        if block.kind != "html" or not MAYBE_MARK_TAG.search(source):
            continue
        for closing, ann_id, start, end in read_mark_tags(source):
            tags.append(
                MarkTag(block.start + start, block.start + end, closing, ann_id, ("html", index))
            )
    tags.sort(key=lambda t: t.start)
    return tags


def scan_marks(text: str, structure: Structure | None = None) -> MarkScan:
    structure = structure or parse_structure(text)
    out = MarkScan(text, structure, tags=_tags_of(structure))
    stacks: dict[tuple[str, int], list[MarkTag]] = {}
    for tag in out.tags:
        stack = stacks.setdefault(tag.container, [])
        if not tag.closing:
            stack.append(tag)
        elif stack:
            opened = stack.pop()
            if opened.annotation_id is not None:
                out.marks.append(Mark(opened.annotation_id, opened, tag))
        # a closing tag with nothing open is ignored, as a browser ignores it
    for stack in stacks.values():
        out.stray.extend(t for t in stack if t.annotation_id is not None)
    out.marks.sort(key=lambda m: m.start)
    out.stray.sort(key=lambda t: t.start)
    return out


# -- editing the text around marks ----------------------------------------------------------


def wrap(text: str, start: int, end: int, annotation_id: str) -> str:
    return text[:start] + mark_open(annotation_id) + text[start:end] + MARK_CLOSE + text[end:]


def unwrap(text: str, mark: Mark) -> str:
    """The text without the mark's two tags; what they enclosed stays."""
    return text[: mark.open.start] + text[mark.open.end : mark.close.start] + text[mark.close.end :]


def replace_mark(text: str, mark: Mark, replacement: str) -> str:
    """The whole element (tags and quoted text) replaced by ``replacement``."""
    return text[: mark.start] + replacement + text[mark.end :]


def remove_tags(text: str, tags: list[MarkTag]) -> str:
    for tag in sorted(tags, key=lambda t: t.start, reverse=True):
        text = text[: tag.start] + text[tag.end :]
    return text


def contains_mark_tag(fragment: str) -> bool:
    """Whether ``fragment`` holds anything a parser could take for a mark tag."""
    return MAYBE_MARK_TAG.search(fragment) is not None
