"""SQL syntax colouring: the editor's highlighter and the HTML of SQL in chat cards.

Tokens come from Pygments' PostgreSQL lexer (close to DuckDB's syntax, tolerant of
half-typed SQL); words it leaves as plain names but DuckDB treats as keywords (QUALIFY,
PIVOT, ...) are taken from sqlglot's DuckDB tokenizer. The highlighter lexes the whole
document once per edit and colours each block from that token list, so a comment or a
string spanning lines is coloured correctly. Colours follow the palette: a light and a
dark set, picked from the window colour's lightness.
"""

from __future__ import annotations

import bisect
import html
from collections.abc import Iterator
from functools import lru_cache

from PySide6.QtGui import QColor, QFont, QPalette, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import QApplication

# role -> (light colour, dark colour, bold, italic)
_STYLES: dict[str, tuple[str, str, bool, bool]] = {
    "keyword": ("#0b57d0", "#7aa2f7", True, False),
    "function": ("#8430ce", "#bb9af7", False, False),
    "type": ("#00796b", "#2ac3de", False, False),
    "string": ("#b3261e", "#9ece6a", False, False),
    "identifier": ("#7a4a00", "#e0af68", False, False),
    "number": ("#0a7d33", "#ff9e64", False, False),
    "comment": ("#6b7280", "#737aa2", False, True),
    "operator": ("#44474e", "#a9b1d6", False, False),
    "parameter": ("#c2410c", "#f7768e", False, False),
}


def is_dark(palette: QPalette | None = None) -> bool:
    """True when the window background is dark (the system's dark mode)."""
    if palette is None:
        app = QApplication.instance()
        palette = app.palette() if isinstance(app, QApplication) else QPalette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def style_color(role: str, dark: bool) -> str:
    light_color, dark_color, _, _ = _STYLES[role]
    return dark_color if dark else light_color


@lru_cache(maxsize=1)
def _lexer():
    from pygments.lexers.sql import PostgresLexer

    return PostgresLexer(stripnl=False, ensurenl=False)


@lru_cache(maxsize=1)
def _plain_lexer():
    from pygments.lexers.sql import SqlLexer

    return SqlLexer(stripnl=False, ensurenl=False)


@lru_cache(maxsize=1)
def duckdb_keywords() -> frozenset[str]:
    from sqlglot.dialects.duckdb import DuckDB

    return frozenset(k for k in DuckDB.Tokenizer.KEYWORDS if k.isidentifier())


def _role(token_type, value: str, next_char: str) -> str | None:
    from pygments import token

    if token_type in token.Comment:
        return "comment"
    if token_type in token.String.Name or token_type in token.String.Symbol:
        return "identifier"  # "quoted identifier"
    if token_type in token.String:
        return "string"
    if token_type in token.Number:
        return "number"
    if token_type in token.Keyword:
        return "type" if token_type in token.Keyword.Type else "keyword"
    if token_type in token.Name.Builtin:
        return "type"
    if token_type in token.Name.Variable:
        return "parameter"
    if token_type in token.Operator:
        return "operator"
    if token_type in token.Name:
        if next_char == "(":
            return "function"
        if value.upper() in duckdb_keywords():
            return "keyword"
    return None


def sql_tokens(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, length, role) for every coloured token of ``text``."""
    try:
        tokens = list(_lexer().get_tokens_unprocessed(text))
    except ImportError:
        # A $$ body's LANGUAGE asks for a lexer the installed build does not ship (it keeps
        # pygments' SQL lexers only): the plain SQL lexer colours the text without it.
        tokens = list(_plain_lexer().get_tokens_unprocessed(text))
    for i, (start, token_type, value) in enumerate(tokens):
        nxt = ""
        for _, _follow_type, follow_value in tokens[i + 1 : i + 3]:
            if follow_value.strip():
                nxt = follow_value[0]
                break
        role = _role(token_type, value, nxt)
        if role is not None and value:
            yield start, len(value), role


def sql_to_html(sql: str, *, dark: bool | None = None) -> str:
    """``sql`` as an HTML ``<pre>`` with inline colours (for QTextBrowser)."""
    dark = is_dark() if dark is None else dark
    out: list[str] = []
    pos = 0
    for start, length, role in sql_tokens(sql):
        if start > pos:
            out.append(html.escape(sql[pos:start]))
        light_color, dark_color, bold, italic = _STYLES[role]
        style = f"color:{dark_color if dark else light_color};"
        if bold:
            style += "font-weight:600;"
        if italic:
            style += "font-style:italic;"
        out.append(f'<span style="{style}">{html.escape(sql[start : start + length])}</span>')
        pos = start + length
    out.append(html.escape(sql[pos:]))
    return (
        '<pre style="margin:0; white-space:pre-wrap; font-family:monospace;">'
        + "".join(out)
        + "</pre>"
    )


class SqlHighlighter(QSyntaxHighlighter):
    """Colours a QTextDocument holding SQL."""

    def __init__(self, document, *, dark: bool | None = None):
        super().__init__(document)
        self._dark = is_dark() if dark is None else dark
        self._formats = self._make_formats()
        self._key: tuple[int, int] | None = None
        self._starts: list[int] = []
        self._spans: list[tuple[int, int, str]] = []

    def set_dark(self, dark: bool) -> None:
        if dark != self._dark:
            self._dark = dark
            self._formats = self._make_formats()
            self.rehighlight()

    def _make_formats(self) -> dict[str, QTextCharFormat]:
        formats = {}
        for role, (light_color, dark_color, bold, italic) in _STYLES.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(dark_color if self._dark else light_color))
            if bold:
                fmt.setFontWeight(QFont.Weight.DemiBold)
            fmt.setFontItalic(italic)
            formats[role] = fmt
        return formats

    def _lex_if_changed(self) -> None:
        doc = self.document()
        key = (doc.revision(), doc.characterCount())
        if key == self._key:
            return
        self._key = key
        self._spans = list(sql_tokens(doc.toPlainText()))
        self._starts = [s for s, _, _ in self._spans]

    def rehighlight(self) -> None:
        self._key = None
        super().rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt API)
        self._lex_if_changed()
        block_start = self.currentBlock().position()
        block_end = block_start + len(text)
        # the first token that could overlap this block: one starting before it may span in
        i = max(0, bisect.bisect_right(self._starts, block_start) - 1)
        inside_multiline = 0
        while i < len(self._spans):
            start, length, role = self._spans[i]
            if start >= block_end:
                break
            end = start + length
            if end > block_start:
                lo, hi = max(start, block_start), min(end, block_end)
                self.setFormat(lo - block_start, hi - lo, self._formats[role])
                if end > block_end + 1:
                    inside_multiline = 1
            i += 1
        # A changed state makes Qt re-colour the next block, so an opened or closed
        # block comment re-colours the lines after it.
        self.setCurrentBlockState(inside_multiline)
