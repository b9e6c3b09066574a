"""Markdown syntax colouring for the Plan/Report editor.

Presentation only: headings, emphasis, inline code, fenced code blocks, links, list
markers, block quotes, tables and HTML tags get colours from the theme. Annotation mark
tags (``<mark data-annotation-id="…">``, ``</mark>``) stay in the text exactly as in the
file, but are drawn much smaller, condensed and faint, so the quoted text reads naturally;
being formatting only, they move no position: the cursor, selections and Annotate work on
the file's text as it is. The quoted text's background comes from the editor's mark
highlighting, which follows the docs layer's scan. Fenced blocks carry state from line to
line (``QSyntaxHighlighter`` block state).
"""

from __future__ import annotations

import re

from PySide6.QtGui import QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from lantide.ui.theme import colors
from lantide.ui.themed import tint

_IN_FENCE = 1

_HEADING = re.compile(r"^(#{1,6})\s.*$")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_LIST = re.compile(r"^\s*([-*+]|\d+[.)])\s")
_QUOTE = re.compile(r"^\s{0,3}>")
_TABLE_PIPE = re.compile(r"\|")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC = re.compile(r"(?<![*_\w])([*_])(?=\S)(.+?)(?<=\S)\1(?![*_\w])")
_CODE = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[[^\]]*\]\([^)]*\)")
_MARK_TAG = re.compile(r"</?mark\b[^>]*>", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
MARK_TAG_SCALE = 0.68  # of the editor's font size
MARK_TAG_INK = 0.55  # share of the tag colour against the background: faint, still legible


def _fmt(
    color=None, *, bold=False, italic=False, mono=False, scale=None, background=None
) -> QTextCharFormat:
    f = QTextCharFormat()
    if color is not None:
        f.setForeground(color)
    if background is not None:
        f.setBackground(background)
    if bold:
        f.setFontWeight(QFont.Weight.Bold)
    if italic:
        f.setFontItalic(True)
    if mono:
        f.setFontFixedPitch(True)
        f.setFontFamilies(["monospace"])
    if scale:
        f.setProperty(QTextCharFormat.Property.FontSizeAdjustment, scale)
    return f


class MarkdownHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument):
        super().__init__(document)
        self.refresh_theme(rehighlight=False)

    def refresh_theme(self, rehighlight: bool = True) -> None:
        c = colors()
        self.f_heading = _fmt(c.heading, bold=True)
        self.f_heading_marker = _fmt(c.muted, bold=True)
        self.f_bold = _fmt(bold=True)
        self.f_italic = _fmt(c.emphasis, italic=True)
        self.f_code = _fmt(c.code, mono=True, background=c.code_background)
        self.f_fence = _fmt(c.code, mono=True)
        self.f_link = _fmt(c.link)
        self.f_marker = _fmt(c.heading, bold=True)
        self.f_quote = _fmt(c.muted, italic=True)
        self.f_tag = _fmt(c.tag)
        self.f_mark_tag = self._mark_tag_format(c)
        if rehighlight:
            self.rehighlight()

    def _mark_tag_format(self, c) -> QTextCharFormat:
        f = _fmt(tint(c.tag, MARK_TAG_INK))
        size = self.document().defaultFont().pointSizeF()
        if size > 0:
            f.setFontPointSize(max(5.0, size * MARK_TAG_SCALE))
        f.setFontLetterSpacingType(QFont.SpacingType.PercentageSpacing)
        f.setFontLetterSpacing(92)
        return f

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        previous = self.previousBlockState()
        if _FENCE.match(text):
            self.setFormat(0, len(text), self.f_fence)
            self.setCurrentBlockState(0 if previous == _IN_FENCE else _IN_FENCE)
            return
        if previous == _IN_FENCE:
            self.setFormat(0, len(text), self.f_fence)
            self.setCurrentBlockState(_IN_FENCE)
            return
        self.setCurrentBlockState(0)

        heading = _HEADING.match(text)
        if heading:
            self.setFormat(0, len(text), self.f_heading)
            self.setFormat(0, len(heading.group(1)), self.f_heading_marker)
        elif _RULE.match(text) or _SETEXT.match(text):
            self.setFormat(0, len(text), self.f_heading_marker)
        if _QUOTE.match(text):
            self.setFormat(0, len(text), self.f_quote)
        listed = _LIST.match(text)
        if listed:
            self.setFormat(listed.start(1), len(listed.group(1)), self.f_marker)
        if text.lstrip().startswith("|"):
            for m in _TABLE_PIPE.finditer(text):
                self.setFormat(m.start(), 1, self.f_heading_marker)
        for m in _BOLD.finditer(text):
            self._merge(m.start(), m.end() - m.start(), self.f_bold)
        for m in _ITALIC.finditer(text):
            self._merge(m.start(), m.end() - m.start(), self.f_italic)
        for m in _LINK.finditer(text):
            self.setFormat(m.start(), m.end() - m.start(), self.f_link)
        for m in _HTML_TAG.finditer(text):
            self.setFormat(m.start(), m.end() - m.start(), self.f_tag)
        for m in _MARK_TAG.finditer(text):
            self.setFormat(m.start(), m.end() - m.start(), self.f_mark_tag)
        for m in _CODE.finditer(text):  # last: nothing inside code is Markdown
            self.setFormat(m.start(), m.end() - m.start(), self.f_code)

    def _merge(self, start: int, length: int, extra: QTextCharFormat) -> None:
        for i in range(start, start + length):
            f = self.format(i)
            f.merge(extra)
            self.setFormat(i, 1, f)
