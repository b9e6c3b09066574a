"""Markdown to HTML for the desktop preview, with annotation marks as highlights.

:func:`render_html` ``(text, annotations) -> RenderedDocument``:

- ``html``: the body fragment. Each annotation mark becomes
  ``<mark class="lantide-annotation lantide-open" data-annotation-id="ID" data-status="open"
  title="COMMENT">`` (status ``open``, ``resolved`` or ``unknown`` for a mark without an
  entry); a ``<mark …>`` inside code stays text. Block elements carry
  ``id="lt-bN"`` and ``data-source-line="L"`` (0-based first source line).
- ``line_map``: :class:`SourceBlock` per block, ``(element_id, tag, start_line, end_line)``
  with 0-based lines, end exclusive, in document order: a click in the preview finds its
  text in the editor with :meth:`RenderedDocument.block_for_element`, and the editor's
  cursor line finds its element with :meth:`RenderedDocument.block_at_line`.
- ``marks``: :class:`RenderedMark` ``(id, status, line)`` in text order.
- :meth:`RenderedDocument.page` wraps the fragment with :data:`PREVIEW_CSS`.

Raw HTML written in the document is passed through as the analyst wrote it.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lantide.docs.markdown_map import markdown_parser
from lantide.docs.marks import ID_ATTRIBUTE, MAYBE_MARK_TAG, read_mark_tags, scan_marks

if TYPE_CHECKING:
    from lantide.docs.document import Document

PREVIEW_CSS = """
mark.lantide-annotation { background: #fff1a8; border-bottom: 2px solid #e0b400; }
mark.lantide-annotation.lantide-resolved { background: #e3f4e1; border-bottom-color: #5aa05a; }
mark.lantide-annotation.lantide-unknown { background: #fde2e2; border-bottom-color: #d05050; }
a.lantide-citation { text-decoration: none; font-size: 85%; }
a.lantide-citation-formal { color: #2f7d32; }
a.lantide-citation-exploratory { color: #b26a00; }
a.lantide-citation-missing { color: #c62828; }
span.lantide-citation-bad { color: #c62828; text-decoration: underline wavy #c62828; }
""".strip()

_BLOCK_TOKENS = {
    "paragraph_open",
    "heading_open",
    "blockquote_open",
    "bullet_list_open",
    "ordered_list_open",
    "list_item_open",
    "table_open",
    "tr_open",
    "fence",
    "code_block",
    "hr",
    "html_block",
}
_TITLE_LIMIT = 300


@dataclass(frozen=True)
class SourceBlock:
    element_id: str
    tag: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class RenderedMark:
    id: str
    status: str
    line: int


@dataclass
class RenderedDocument:
    html: str
    line_map: list[SourceBlock] = field(default_factory=list)
    marks: list[RenderedMark] = field(default_factory=list)

    def block_for_element(self, element_id: str) -> SourceBlock | None:
        return next((b for b in self.line_map if b.element_id == element_id), None)

    def block_at_line(self, line: int) -> SourceBlock | None:
        """The innermost block holding 0-based source line ``line``."""
        found = None
        for block in self.line_map:
            if block.start_line <= line < block.end_line:
                found = block  # later blocks are nested deeper or come after
        return found

    def page(self, css: str = PREVIEW_CSS) -> str:
        return (
            f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{css}</style>'
            f"</head><body>{self.html}</body></html>"
        )


def _annotation_info(annotations: Iterable[Any]) -> dict[str, tuple[str, str]]:
    out = {}
    for ann in annotations or []:
        if isinstance(ann, dict):
            out[ann["id"]] = (ann.get("status", "open"), ann.get("comment", ""))
        else:
            out[ann.id] = (ann.status, ann.comment)
    return out


def _open_tag(ann_id: str, info: dict[str, tuple[str, str]]) -> tuple[str, str]:
    status, comment = info.get(ann_id, ("unknown", ""))
    title = comment if len(comment) <= _TITLE_LIMIT else comment[:_TITLE_LIMIT] + "…"
    tag = (
        f'<mark class="lantide-annotation lantide-{status}" '
        f'{ID_ATTRIBUTE}="{html_lib.escape(ann_id)}" data-status="{status}"'
        + (f' title="{html_lib.escape(title)}"' if title else "")
        + ">"
    )
    return tag, status


def _rewrite_tags(
    source: str, info: dict[str, tuple[str, str]], line: int, marks: list[RenderedMark]
) -> str:
    """Replace annotated opening mark tags in an HTML fragment."""
    if not MAYBE_MARK_TAG.search(source):
        return source
    out, last = [], 0
    for closing, ann_id, start, end in read_mark_tags(source):
        if closing or ann_id is None:
            continue
        tag, status = _open_tag(ann_id, info)
        out += [source[last:start], tag]
        last = end
        marks.append(RenderedMark(ann_id, status, line + source.count("\n", 0, start)))
    out.append(source[last:])
    return "".join(out)


def render_html(
    text: str, annotations: Iterable[Any] = (), steps: dict[str, str] | None = None
) -> RenderedDocument:
    """``annotations``: :class:`lantide.docs.document.Annotation` objects or sidecar dicts.
    ``steps``: step id -> evidence kind, to label the Report's citations
    (:mod:`lantide.docs.citations`); a cited id not in it is labelled missing."""
    md = markdown_parser()
    info = _annotation_info(annotations)
    scan = scan_marks(text)  # one parse: its tokens are rendered below
    tokens = scan.structure.tokens
    paired = {m.id for m in scan.marks}
    line_map: list[SourceBlock] = []
    marks: list[RenderedMark] = []
    for token in tokens:
        if token.type in _BLOCK_TOKENS and token.map and not token.hidden:
            element_id = f"lt-b{len(line_map)}"
            line_map.append(
                SourceBlock(element_id, token.tag or token.type, token.map[0], token.map[1])
            )
            if token.type != "html_block":
                token.attrSet("id", element_id)
                token.attrSet("data-source-line", str(token.map[0]))
        if token.type == "html_block":
            token.content = _rewrite_tags(
                token.content, info, token.map[0] if token.map else 0, marks
            )
        elif token.type == "inline" and token.children:
            line = token.map[0] if token.map else 0
            for child in token.children:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                elif child.type == "html_inline" and MAYBE_MARK_TAG.match(child.content):
                    found = read_mark_tags(child.content)
                    if found and not found[0][0] and found[0][1] in paired:
                        child.content, status = _open_tag(found[0][1], info)
                        marks.append(RenderedMark(found[0][1], status, line))
    env = {"lantide_steps": steps} if steps is not None else {}
    return RenderedDocument(md.renderer.render(tokens, md.options, env), line_map, marks)


def render_document(doc: Document) -> RenderedDocument:
    """The preview of an open :class:`lantide.docs.document.Document`."""
    return render_html(doc.text, doc.annotations)


def mark_chart_images(html: str, notes: dict[str, str]) -> str:
    """Put ``notes[src]`` (a chart's failed checks, from the engine) right under each
    rendered chart image ``<img src="SRC">`` of the preview."""
    if not notes:
        return html

    def mark(m: re.Match[str]) -> str:
        note = notes.get(html_lib.unescape(m.group(2)))
        if not note:
            return m.group(0)
        return (
            f'{m.group(0)}<br/><span class="lantide-chart-check" '
            f'title="{html_lib.escape(note)}">⚠ {html_lib.escape(note)}</span>'
        )

    return _IMG.sub(mark, html)


_IMG = re.compile(r'(<img\b[^>]*\bsrc=")([^"]+\.vl\.json)("[^>]*>)')
