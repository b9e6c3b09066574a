"""Completion of table and column names in the SQL editor.

:class:`SchemaCatalog` (one per :class:`~lantide.ui.services.AppServices`, found with
:func:`schema_catalog`) fetches the table list from the QEM's ``show_tables`` in a worker
and each table's columns from ``read_schema`` the first time a statement names it; both are
cached until data files change or a run makes a cached table.

:func:`completions` decides what fits at the cursor, from the statement's tokens
(sqlglot's DuckDB tokenizer): after ``alias.`` the columns of that table; after ``FROM`` or
``JOIN`` the tables; elsewhere the columns of the tables the statement reads, then tables
and keywords.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from lantide.query.browse import TableSchema
    from lantide.ui.services import AppServices

from lantide.workspace.watcher import DATA

_WORD_BEFORE = re.compile(r'(?:("?)([A-Za-z_][\w]*|"[^"]*"?)\.)?("?[\w]*)$')
_PLAIN_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# DuckDB's reserved words (duckdb_keywords() where keyword_category = 'reserved'): a name
# spelled like one must be quoted.
_RESERVED = frozenset(
    [
        "all",
        "analyse",
        "analyze",
        "and",
        "any",
        "array",
        "as",
        "asc",
        "asymmetric",
        "both",
        "case",
        "cast",
        "check",
        "collate",
        "column",
        "constraint",
        "create",
        "default",
        "deferrable",
        "desc",
        "describe",
        "distinct",
        "do",
        "else",
        "end",
        "except",
        "false",
        "fetch",
        "for",
        "foreign",
        "from",
        "group",
        "having",
        "in",
        "initially",
        "intersect",
        "into",
        "lambda",
        "lateral",
        "leading",
        "limit",
        "not",
        "null",
        "offset",
        "on",
        "only",
        "or",
        "order",
        "pivot",
        "pivot_longer",
        "pivot_wider",
        "placing",
        "primary",
        "qualify",
        "references",
        "returning",
        "select",
        "show",
        "some",
        "summarize",
        "symmetric",
        "table",
        "then",
        "to",
        "trailing",
        "true",
        "union",
        "unique",
        "unpivot",
        "using",
        "variadic",
        "when",
        "where",
        "window",
        "with",
    ]
)
SQL_KEYWORDS = (
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "HAVING",
    "LIMIT",
    "JOIN",
    "LEFT JOIN",
    "INNER JOIN",
    "ON",
    "USING",
    "AS",
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS NULL",
    "IS NOT NULL",
    "BETWEEN",
    "LIKE",
    "ILIKE",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "DISTINCT",
    "WITH",
    "UNION ALL",
    "EXCEPT",
    "INTERSECT",
    "QUALIFY",
    "OVER",
    "PARTITION BY",
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "CAST",
    "COALESCE",
    "DATE_TRUNC",
    "STRFTIME",
    "EXCLUDE",
    "DESC",
    "ASC",
    "NULLS LAST",
)
_TABLE_KEYWORDS = {"FROM", "JOIN", "INTO", "TABLE", "DESCRIBE", "SUMMARIZE", "UPDATE"}


def quote_if_needed(name: str) -> str:
    """``name`` as it must be written in SQL (quoted unless a plain lower-case word)."""
    if _PLAIN_IDENT.match(name) and name.lower() not in _RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class CompletionRequest:
    prefix: str  # what is typed of the word (without a leading quote)
    qualifier: str | None  # the table or alias before a dot
    start: int  # where the word starts (replace from here to the cursor)
    after_table_keyword: bool  # FROM / JOIN just before: tables fit


def completion_request(text: str, pos: int) -> CompletionRequest:
    before = text[:pos]
    match = _WORD_BEFORE.search(before)
    qualifier = None
    prefix = ""
    start = pos
    if match:
        raw_prefix = match.group(3) or ""
        prefix = raw_prefix.lstrip('"')
        start = pos - len(raw_prefix)
        if match.group(2):
            qualifier = match.group(2).strip('"')
    head = before[: start - (len(qualifier) + 1 if qualifier else 0)].rstrip()
    last_word = re.search(r"([A-Za-z_]+)\s*$", head)
    after_table = bool(last_word and last_word.group(1).upper() in _TABLE_KEYWORDS) or bool(
        re.search(r",\s*$", head) and _last_clause(head) == "FROM"
    )
    return CompletionRequest(prefix, qualifier, start, after_table)


def _last_clause(text: str) -> str | None:
    found = re.findall(r"\b(SELECT|FROM|WHERE|GROUP|ORDER|HAVING|JOIN|ON)\b", text, re.I)
    return found[-1].upper() if found else None


def statement_tables(sql: str) -> dict[str, str]:
    """Tables the statement reads: {alias or name (lower case): table name as written}.

    Read from the tokens after FROM/JOIN (tolerant of half-typed SQL); a two-part name
    ``book.Sheet1`` is kept whole.
    """
    from sqlglot import TokenType  # its public name (sqlglot.tokens only imports it)
    from sqlglot.dialects.duckdb import DuckDB
    from sqlglot.errors import TokenError

    try:
        tokens = DuckDB().tokenize(sql)
    except TokenError:
        cut = max(sql.rfind("'"), 0)  # an unterminated string: read up to it
        try:
            tokens = DuckDB().tokenize(sql[:cut])
        except TokenError:
            return {}
    names = (TokenType.VAR, TokenType.IDENTIFIER)
    out: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        if tokens[i].token_type in (TokenType.FROM, TokenType.JOIN) or (
            tokens[i].token_type == TokenType.COMMA and _in_from(tokens, i)
        ):
            j = i + 1
            parts = []
            while j < len(tokens) and tokens[j].token_type in names:
                parts.append(tokens[j].text)
                if j + 1 < len(tokens) and tokens[j + 1].token_type == TokenType.DOT:
                    j += 2
                    continue
                j += 1
                break
            if parts:
                table = ".".join(parts)
                out.setdefault(table.lower(), table)
                out.setdefault(parts[-1].lower(), table)
                if j < len(tokens) and tokens[j].token_type == TokenType.ALIAS:
                    j += 1
                if j < len(tokens) and tokens[j].token_type in names:
                    out[tokens[j].text.lower()] = table
                    j += 1
            i = j
            continue
        i += 1
    return out


def _in_from(tokens, index: int) -> bool:
    from sqlglot import TokenType  # its public name (sqlglot.tokens only imports it)

    clause_tokens = {
        TokenType.SELECT,
        TokenType.FROM,
        TokenType.WHERE,
        TokenType.GROUP_BY,
        TokenType.ORDER_BY,
        TokenType.HAVING,
        TokenType.ON,
        TokenType.L_PAREN,
    }
    for token in reversed(tokens[:index]):
        if token.token_type in clause_tokens:
            return token.token_type == TokenType.FROM
    return False


def completions(
    text: str, pos: int, tables: list[str], columns_of: Callable[[str], list[str] | None]
) -> tuple[CompletionRequest, list[str]]:
    """What to offer at ``pos``: the request and the candidate words, best first."""
    request = completion_request(text, pos)
    prefix = request.prefix.lower()

    def fits(word: str) -> bool:
        return word.lower().startswith(prefix) and word.lower() != prefix

    referenced = statement_tables(text)
    if request.qualifier is not None:
        table = referenced.get(request.qualifier.lower(), request.qualifier)
        columns = columns_of(table) or []
        if not columns:  # a schema (workbook) before the dot: its tables
            schema = request.qualifier.lower() + "."
            return request, [
                t.split(".", 1)[1]
                for t in tables
                if t.lower().startswith(schema) and fits(t.split(".", 1)[1])
            ]
        return request, [c for c in columns if fits(c)]
    table_words = [t for t in tables if fits(t)]
    if request.after_table_keyword:
        return request, table_words
    column_words: list[str] = []
    for table in dict.fromkeys(referenced.values()):
        for column in columns_of(table) or []:
            if fits(column) and column not in column_words:
                column_words.append(column)
    keywords = [k for k in SQL_KEYWORDS if fits(k)] if prefix else []
    return request, column_words + [t for t in table_words if t not in column_words] + keywords


class SchemaCatalog(QObject):
    """Cached table and column names for completion, fetched off the UI thread."""

    sig_catalog_changed = Signal()

    def __init__(self, services: AppServices) -> None:
        super().__init__(services)
        self.setObjectName("SchemaCatalog")
        self.services = services
        self.tables: list[str] = []
        self._columns: dict[str, list[str]] = {}
        self._asked: set[str] = set()
        self._loading = False
        self._stale = True
        services.sig_files_changed.connect(self._files_changed)
        services.sig_tables_changed.connect(self.refresh)
        services.when_query_ready(lambda _q: self.refresh())

    def refresh(self) -> None:
        """Fetch the table list again (columns are fetched again on demand)."""
        self._stale = True
        self._columns.clear()
        self._asked.clear()
        self._load_tables()

    def _files_changed(self, changes) -> None:
        if any(getattr(c, "kind", None) == DATA for c in changes):
            self.refresh()

    def _load_tables(self) -> None:
        query = self.services.query
        if query is None or self._loading:
            return
        self._loading = True
        self.services.workers.submit(
            lambda ctx: table_names(query.show_tables()),
            on_result=self._tables_arrived,
            on_error=lambda exc: self._tables_arrived(None),
            name="list tables for completion",
        )

    def _tables_arrived(self, names: list[str] | None) -> None:
        self._loading = False
        if names is not None:
            self.tables = names
            self._stale = False
            self.sig_catalog_changed.emit()

    def columns_of(self, table: str) -> list[str] | None:
        """The columns when known; otherwise None, and they are fetched for next time."""
        key = table.lower()
        if key in self._columns:
            return self._columns[key]
        if key not in self._asked and self.services.query is not None:
            self._asked.add(key)
            query = self.services.query
            self.services.workers.submit(
                lambda ctx: column_names(query.read_schema(table)),
                on_result=lambda cols, k=key: self._columns_arrived(k, cols),
                on_error=lambda exc: None,
                name="columns for completion",
            )
        return None

    def _columns_arrived(self, key: str, columns: list[str]) -> None:
        self._columns[key] = columns
        self.sig_catalog_changed.emit()


def table_names(show_tables_result: Mapping) -> list[str]:
    """Table names from ``show_tables()``: ``name`` or ``schema.name`` for two-part ones."""
    names: list[str] = []
    for entry in show_tables_result.get("tables", []):
        if isinstance(entry, str):
            names.append(entry)
            continue
        name = entry.get("name") or entry.get("table")
        schema = entry.get("schema")
        if name:
            names.append(f"{schema}.{name}" if schema and schema not in ("main",) else name)
    return sorted(dict.fromkeys(names), key=str.lower)


def column_names(read_schema_result: TableSchema) -> list[str]:
    return [
        c["name"] if isinstance(c, dict) else str(c) for c in read_schema_result.get("columns", [])
    ]


def schema_catalog(services) -> SchemaCatalog:
    """The services' catalog, created on first use."""
    found = services.findChild(SchemaCatalog, "SchemaCatalog")
    return found if found is not None else SchemaCatalog(services)
