"""Format SQL with sqlglot's pretty printer, without losing a word the analyst wrote.

:func:`format_sql` is used by the SQL tab's Format action and by the chat's tool cards
(the agent's SQL shown readable). It refuses, leaving the text untouched, rather than
return something that lost part of it:

- ``SQL_FORMAT_UNPARSEABLE``: sqlglot cannot parse the text (the position when known);
- ``SQL_FORMAT_LOSES_COMMENTS``: sqlglot would drop a comment (it does for some places,
  e.g. inside ``BETWEEN`` or ``QUALIFY``); the refusal quotes the comment;
- ``SQL_FORMAT_CHANGES_MEANING``: the printed statement does not parse back to the same
  statement, or drops a name, string or number the text holds;
- ``SQL_FORMAT_EMPTY``: there is no statement, only comments or blanks.

What it keeps: the ``-- lantide:`` header lines at the top (e.g. a remote tab's
``-- lantide: connection=NAME``), verbatim, above the formatted statement; every comment
(sqlglot may move one to the end of the clause it belongs to, and prints comments as
``/* … */``; a ``--`` comment that ends up at the end of a line is written back as
``--``); a trailing ``;``; a final newline; every name, string and number (a print that
drops one, as sqlglot does with what it does not model, is refused).

The dialect is DuckDB's; a remote tab (``-- lantide: connection=NAME``) is formatted in
its connection's dialect when the workspace defines that connection
(:func:`dialect_for`), as its SQL is written for that database.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lantide.query.errors import QueryError

if TYPE_CHECKING:
    from sqlglot import Token, exp

HEADER_PREFIX = "-- lantide:"
DEFAULT_DIALECT = "duckdb"


class FormatRefused(QueryError):
    """The text could not be formatted without changing or losing part of it."""

    code = "SQL_FORMAT_REFUSED"


@dataclass(frozen=True)
class Formatted:
    text: str  # the whole text, header lines included
    changed: bool  # False when the text was already formatted


def split_header(text: str) -> tuple[list[str], str]:
    """The leading ``-- lantide:`` lines (as written, with their line ends) and the rest."""
    lines = text.splitlines(keepends=True)
    header: list[str] = []
    for line in lines:
        if not line.lstrip().lower().startswith(HEADER_PREFIX):
            break
        header.append(line)
    return header, "".join(lines[len(header) :])


def format_sql(text: str, *, dialect: str = DEFAULT_DIALECT) -> Formatted:
    """``text`` pretty-printed (see the module docstring), or :class:`FormatRefused`."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""  # pasted from a Windows file
    newline = "\r\n" if "\r\n" in text else "\n"
    header, body = split_header(text[len(bom) :].replace("\r\n", "\n"))
    if not body.strip():
        raise FormatRefused(
            "there is no SQL statement to format",
            code="SQL_FORMAT_EMPTY",
            hint="Write a statement below the header lines first.",
        )
    try:
        statements, had_semicolon = _parse(body, dialect)
    except FormatRefused as exc:
        if exc.position is not None:  # a line of the body: a line of the whole text
            exc.position = (exc.position[0] + len(header), exc.position[1])
        raise
    try:
        formatted = _print(statements, had_semicolon, dialect)
        _check_comments(body, formatted, dialect)
        _check_same_statements(statements, formatted, dialect)
        _check_words(body, formatted, dialect)
        formatted = _line_comments(body, formatted, dialect)
    except RecursionError:  # the printer recurses deeper than the parser did
        raise _too_deep() from None
    head = "".join(line if line.endswith("\n") else line + "\n" for line in header)
    out = head + formatted + ("\n" if text.endswith("\n") else "")
    out = bom + out.replace("\n", newline)
    return Formatted(out, out != text)


# Longer SQL is shown as written where it is formatted on the UI thread (a tool card):
# sqlglot takes about 0.1 s for 5,000 characters on a busy machine.
READABLE_MAX_CHARS = 8000


def readable_sql(
    text: str, *, dialect: str = DEFAULT_DIALECT, max_chars: int = READABLE_MAX_CHARS
) -> str:
    """``text`` formatted for reading (the chat's tool cards), or as it is when it cannot
    be formatted without losing part of it, or is longer than ``max_chars``."""
    if len(text) > max_chars:
        return text
    try:
        return format_sql(text, dialect=dialect).text
    except FormatRefused:
        return text


def _tokens(sql: str, dialect: str) -> list[Token]:
    from sqlglot import Dialect

    return Dialect.get_or_raise(dialect).tokenize(sql)


def _parse(body: str, dialect: str) -> tuple[list[exp.Expr], bool]:
    """The statements of ``body`` (comment-only ones kept: their comments must survive) and
    whether the last statement ends with ``;``."""
    import sqlglot
    from sqlglot import TokenType

    try:
        tokens = _tokens(body, dialect)
        parsed = sqlglot.parse(body, read=dialect)
    except RecursionError:
        raise _too_deep() from None
    except Exception as exc:  # sqlglot's ParseError / TokenError
        raise _unparseable(exc) from None
    statements = [e for e in parsed if e is not None]
    if not statements or not any(t.token_type != TokenType.SEMICOLON for t in tokens):
        raise FormatRefused(
            "there is no SQL statement to format, only comments",
            code="SQL_FORMAT_EMPTY",
            hint="Write a statement first.",
        )
    return statements, tokens[-1].token_type == TokenType.SEMICOLON


def _too_deep() -> FormatRefused:
    return FormatRefused(
        "the statement is nested too deeply to format",
        code="SQL_FORMAT_UNPARSEABLE",
        hint="The text was left as it is.",
    )


def _unparseable(exc: Exception) -> FormatRefused:
    errors = getattr(exc, "errors", None) or []
    position = None
    detail = (str(exc).splitlines() or ["cannot parse the statement"])[0]
    if errors:
        first = errors[0]
        if first.get("line"):
            position = (int(first["line"]), int(first.get("col") or 1))
        detail = first.get("description") or detail
    return FormatRefused(
        f"the SQL cannot be formatted: sqlglot cannot parse it ({detail})",
        code="SQL_FORMAT_UNPARSEABLE",
        position=position,
        hint="The text was left as it is. Fix the statement (Run shows DuckDB's own error), "
        "then format again.",
    )


def _print(statements: list[exp.Expr], had_semicolon: bool, dialect: str) -> str:
    """The statements pretty-printed, ``;`` between them; comments after the last ``;``
    (sqlglot reads them as a statement of their own) on lines of their own at the end."""
    from sqlglot import exp

    printed = [
        e.sql(dialect=dialect, pretty=True) for e in statements if not isinstance(e, exp.Semicolon)
    ]
    text = ";\n\n".join(printed) + (";" if had_semicolon else "")
    trailing = [c for e in statements if isinstance(e, exp.Semicolon) for c in (e.comments or [])]
    for comment in trailing:
        text += f"\n/* {comment.strip()} */"
    return text


def _comments(sql: str, dialect: str) -> Counter[str]:
    return Counter(c.strip() for t in _tokens(sql, dialect) for c in t.comments)


def _check_comments(body: str, formatted: str, dialect: str) -> None:
    lost = _comments(body, dialect) - _comments(formatted, dialect)
    if lost:
        quoted = "; ".join(repr(c) for c in sorted(lost))
        raise FormatRefused(
            f"formatting would lose {sum(lost.values())} comment(s): {quoted}",
            code="SQL_FORMAT_LOSES_COMMENTS",
            hint="The text was left as it is. sqlglot drops comments in some places (inside "
            "BETWEEN, QUALIFY, window clauses); move the comment to the end of a line of "
            "its clause, or format by hand.",
        )


def _check_same_statements(statements: list[exp.Expr], formatted: str, dialect: str) -> None:
    import sqlglot

    def plain(expressions: list[exp.Expr]) -> list[str]:
        from sqlglot import exp

        return [
            e.sql(dialect=dialect, comments=False)
            for e in expressions
            if not isinstance(e, exp.Semicolon)
        ]

    try:
        again = [e for e in sqlglot.parse(formatted, read=dialect) if e is not None]
    except Exception:
        again = []
    if plain(again) != plain(statements):
        raise FormatRefused(
            "formatting would change the statement, so it was not formatted",
            code="SQL_FORMAT_CHANGES_MEANING",
            hint="The text was left as it is. Please report the statement: the SQL printer "
            "read it differently from how it printed it.",
        )


# Token kinds whose text the analyst wrote and a printer must not drop: names, strings,
# numbers. A name right before "(" is a function, which sqlglot may spell another way.
_WORD_KINDS = ("VAR", "IDENTIFIER", "STRING", "NUMBER")


def _words(sql: str, dialect: str) -> Counter[str]:
    from sqlglot import TokenType

    kinds = {TokenType[k] for k in _WORD_KINDS}
    tokens = _tokens(sql, dialect)
    out: Counter[str] = Counter()
    for i, tok in enumerate(tokens):
        if tok.token_type not in kinds:
            continue
        following = tokens[i + 1].token_type if i + 1 < len(tokens) else None
        if tok.token_type == TokenType.VAR and following == TokenType.L_PAREN:
            continue
        out[tok.text.casefold()] += 1
    return out


def _check_words(body: str, formatted: str, dialect: str) -> None:
    """Refuse a print that drops a name, string or number the text holds (sqlglot drops
    what it does not model, e.g. T-SQL's ``WITH (NOLOCK)`` read as DuckDB)."""
    dropped = _words(body, dialect) - _words(formatted, dialect)
    if dropped:
        quoted = ", ".join(repr(w) for w in sorted(dropped))
        raise FormatRefused(
            f"formatting would drop or rewrite part of the statement: {quoted}",
            code="SQL_FORMAT_CHANGES_MEANING",
            hint="The text was left as it is. The SQL printer does not keep that part as "
            "written (e.g. a length in ::varchar(10), or a construct of another dialect).",
        )


def header_connection(text: str) -> str | None:
    """The connection a ``-- lantide: connection=NAME`` header line names, if any (the
    rule is :func:`lantide.query.remote_tabs.tab_connection`'s)."""
    from lantide.query.remote_tabs import tab_connection

    return tab_connection(text)


def dialect_for(text: str, connections: Iterable[Mapping[str, object]]) -> str:
    """The dialect to format ``text`` in: a remote tab's connection's (``connections`` as in
    workspace.json: ``name``, ``dialect``), else DuckDB's (an unclear header too: the
    run refuses it, formatting leaves the header as written); a remote tab written in
    another dialect (``from=DIALECT`` in its header) in that one."""
    from lantide.errors import LantideError
    from lantide.query.remote_tabs import tab_source_dialect

    try:
        name = header_connection(text)
    except LantideError:
        name = None
    if name:
        try:
            source = tab_source_dialect(text)
        except LantideError:  # an unknown from=: the connection's, as a run would say why
            source = None
        if source:
            return source
        for entry in connections:
            if str(entry.get("name", "")).casefold() == name.casefold() and entry.get("dialect"):
                return str(entry["dialect"])
    return DEFAULT_DIALECT


def _line_comments(body: str, formatted: str, dialect: str) -> str:
    """``/* x */`` at the end of a line back to ``-- x`` where the analyst wrote ``-- x``;
    kept only if the text still reads as the same tokens and comments."""
    out_lines = []
    for line in formatted.split("\n"):
        stripped = line.rstrip()
        start = stripped.rfind("/*")
        if stripped.endswith("*/") and start >= 0:
            inner = stripped[start + 2 : -2]
            if "*/" not in inner and "\n" not in inner and "--" + inner.rstrip() in body:
                line = stripped[:start] + "--" + inner.rstrip()
        out_lines.append(line)
    converted = "\n".join(out_lines)

    def shape(sql: str) -> list[tuple[object, str, list[str]]]:
        return [
            (t.token_type, t.text, [c.strip() for c in t.comments]) for t in _tokens(sql, dialect)
        ]

    try:
        if shape(converted) == shape(formatted):
            return converted
    except Exception:  # the converted text does not even tokenize: keep the printer's
        pass
    return formatted
