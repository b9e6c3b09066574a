"""The SQL guard: one read-only statement, decided from the parsed statement (sqlglot).

Every statement from the agent, a SQL tab or the command line passes :func:`check` before
DuckDB sees it. The decision is made on sqlglot's parse tree in the DuckDB dialect, never
by matching text, so a ``;`` or ``DROP`` inside a comment or a string is not a refusal.

| refused                                              | code                              |
| ---------------------------------------------------- | --------------------------------- |
| more than one statement                              | ``QUERY_REFUSED_MULTIPLE_STATEMENTS`` |
| CREATE, DROP, ALTER, TRUNCATE, COMMENT, macros        | ``QUERY_REFUSED_DDL``             |
| INSERT, UPDATE, DELETE, MERGE                        | ``QUERY_REFUSED_DML``             |
| ATTACH, DETACH, USE                                  | ``QUERY_REFUSED_ATTACH``          |
| INSTALL, LOAD                                        | ``QUERY_REFUSED_EXTENSION``       |
| COPY                                                 | ``QUERY_REFUSED_COPY``            |
| EXPORT DATABASE, IMPORT DATABASE                     | ``QUERY_REFUSED_EXPORT_IMPORT``   |
| PRAGMA, SET, RESET                                   | ``QUERY_REFUSED_SETTING``         |
| CALL                                                 | ``QUERY_REFUSED_CALL``            |
| BEGIN, COMMIT, ROLLBACK, CHECKPOINT, VACUUM, EXPLAIN | ``QUERY_REFUSED_NOT_SELECT``      |
| functions that reach outside (1)                     | ``QUERY_REFUSED_FUNCTION``        |
| a table function not on the allow-list (2)           | ``QUERY_REFUSED_FUNCTION``        |
| a file reader whose path is computed, not written     | ``QUERY_REFUSED_FUNCTION``        |
| a file path outside ``data/``, or a URL              | ``..._OUTSIDE_WORKSPACE`` (3)     |
| nested deeper than :data:`MAX_NESTING` parentheses,  | ``SQL_TOO_DEEP``                  |
| or deeper than sqlglot's parser can follow (4)       |                                   |

(1) ``getenv``, ``query``, ``query_table``, scanners of other databases. (2)
``checkpoint()``, logging, ... (3) ``QUERY_REFUSED_OUTSIDE_WORKSPACE``, or
``QUERY_REFUSED_NETWORK`` for a URL. (4) counted on the tokens before parsing; a chain
without parentheses (``NOT NOT …``) is refused when the parser runs out of stack. The
agent's consent check and the result checks parse too, and refuse the same way.

Which functions are allowed lives in :mod:`lantide.query.guard_functions`; calls are
decided on sqlglot's tree and again on DuckDB's own parse of the statement.

A plain statement (one SELECT over at most one table, no join, no file path, every node
and call of a kind listed in :mod:`lantide.query.guard_plain`) is read by DuckDB's parser
alone, and sqlglot is not imported for it; that reading only accepts, every refusal is
this module's. :attr:`ParsedQuery.expression` parses with sqlglot when something asks.

Allowed: SELECT (with CTEs, set operations, DuckDB's ``FROM t`` shorthand), VALUES, PIVOT
/ UNPIVOT, DESCRIBE and SUMMARIZE. A refusal the guard misses still fails at run time:
the connection is confined (see :mod:`lantide.query.engine`).

:func:`check` returns a :class:`ParsedQuery` with the statement's body (the text without
trailing semicolons and comments, safe to wrap), the tables it reads, the files its table
functions read, and its CTE count, for the QEM rules, hints and lineage.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.query.errors import QueryError, QueryRefused

if TYPE_CHECKING:
    from sqlglot import Token, exp
    from sqlglot.tokens import Tokenizer
from lantide.query.guard_functions import (
    FILE_READERS,
    OUTSIDE_FUNCTIONS,
    PATH_HINT,
    READ_ONLY_TABLE_FUNCTIONS,
    REFUSED_TABLE_FUNCTIONS,
    TABLE_FUNCTION_CODE,
    WRITING_OPTION_HINT,
    WRITING_OPTIONS,
    duckdb_calls,
    serialize_ahead,
    table_function_hint,
)

__all__ = [
    "check",
    "check_path",
    "map_position",
    "ParsedQuery",
    "TableRef",
    "FILE_READERS",
    "READ_ONLY_TABLE_FUNCTIONS",
    "REFUSED_TABLE_FUNCTIONS",
]

_ALLOWED_ROOTS = (
    "Select",
    "Union",
    "Intersect",
    "Except",
    "Values",
    "Subquery",
    "Pivot",
    "Unpivot",
    "Describe",
    "Summarize",
)

_REFUSALS: dict[str, tuple[str, str]] = {
    "Create": (
        "QUERY_REFUSED_DDL",
        "Queries only read. To keep a result, pass result_label "
        "to run_query or save the SELECT as a SQL tab: its result becomes a cached table.",
    ),
    "Drop": (
        "QUERY_REFUSED_DDL",
        "Queries never drop tables. Delete a SQL tab to drop its "
        "cached table, or remove a file from data/.",
    ),
    "Alter": (
        "QUERY_REFUSED_DDL",
        "Queries never change tables. Rename a SQL tab to rename its cached table.",
    ),
    "TruncateTable": ("QUERY_REFUSED_DDL", "Queries never change tables."),
    "Comment": ("QUERY_REFUSED_DDL", "Queries never change tables."),
    "Insert": (
        "QUERY_REFUSED_DML",
        "Data is read-only here. Derive the rows you need with a "
        "SELECT and keep them with result_label or a SQL tab.",
    ),
    "Update": (
        "QUERY_REFUSED_DML",
        "Data is read-only here. Compute the corrected values in a "
        "SELECT (CASE WHEN ... / coalesce) and keep it as a SQL tab.",
    ),
    "Delete": (
        "QUERY_REFUSED_DML",
        "Data is read-only here. Filter the rows out with WHERE in a "
        "SELECT and keep it as a SQL tab.",
    ),
    "Merge": ("QUERY_REFUSED_DML", "Data is read-only here. Join and select instead."),
    "Attach": (
        "QUERY_REFUSED_ATTACH",
        "Databases are connected in Settings > Connections, not "
        "by SQL; show_tables lists the connected ones.",
    ),
    "Detach": ("QUERY_REFUSED_ATTACH", "Databases are managed in Settings > Connections."),
    "Use": ("QUERY_REFUSED_ATTACH", 'Qualify the table instead: "book"."Sheet1".'),
    "Install": (
        "QUERY_REFUSED_EXTENSION",
        "Extensions are not installed or loaded from queries; "
        "Parquet, JSON and Excel files in data/ are tables already.",
    ),
    "Copy": (
        "QUERY_REFUSED_COPY",
        "Export a result from the table browser (CSV, Parquet, XLSX); "
        "to read a file, put it in data/ and query it by name.",
    ),
    "Pragma": (
        "QUERY_REFUSED_SETTING",
        "Settings are not changed from queries. For a table's "
        "columns use read_schema(table); limits live in Lantide's settings.",
    ),
    "Set": (
        "QUERY_REFUSED_SETTING",
        "Settings are not changed from queries; memory, threads and "
        "time limit live in Lantide's settings.",
    ),
    "Transaction": (
        "QUERY_REFUSED_NOT_SELECT",
        "Send a single SELECT; Lantide manages transactions.",
    ),
    "Commit": ("QUERY_REFUSED_NOT_SELECT", "Send a single SELECT; Lantide manages transactions."),
    "Rollback": ("QUERY_REFUSED_NOT_SELECT", "Send a single SELECT; Lantide manages transactions."),
}
# Statements sqlglot keeps as a raw Command, by their first keyword.
_COMMANDS: dict[str, tuple[str, str]] = {
    "LOAD": _REFUSALS["Install"],
    "INSTALL": _REFUSALS["Install"],
    "RESET": _REFUSALS["Set"],
    "SET": _REFUSALS["Set"],
    "PRAGMA": _REFUSALS["Pragma"],
    "CALL": (
        "QUERY_REFUSED_CALL",
        "Table functions are called in FROM, e.g. SELECT * FROM range(10); "
        "for a table's columns use read_schema(table).",
    ),
    "EXPORT": (
        "QUERY_REFUSED_EXPORT_IMPORT",
        "Export a table from the table browser (CSV, Parquet, XLSX).",
    ),
    "IMPORT": (
        "QUERY_REFUSED_EXPORT_IMPORT",
        "Put files in data/: each is a table without an import step.",
    ),
    "ATTACH": _REFUSALS["Attach"],
    "DETACH": _REFUSALS["Detach"],
    "COPY": _REFUSALS["Copy"],
    # statements sqlglot does not model (CREATE SECRET, CREATE TYPE, ...) by their verb
    "CREATE": _REFUSALS["Create"],
    "DROP": _REFUSALS["Drop"],
    "ALTER": _REFUSALS["Alter"],
    "TRUNCATE": _REFUSALS["TruncateTable"],
    "COMMENT": _REFUSALS["Comment"],
    "INSERT": _REFUSALS["Insert"],
    "UPDATE": _REFUSALS["Update"],
    "DELETE": _REFUSALS["Delete"],
    "MERGE": _REFUSALS["Merge"],
    "USE": _REFUSALS["Use"],
}
_NOT_SELECT_HINT = "Send one read-only statement: SELECT ... (or WITH ... SELECT ...)."

_DATA_SUFFIX_HINTS = (".csv", ".tsv", ".parquet", ".json", ".ndjson", ".jsonl", ".gz", ".txt")

logging.getLogger("sqlglot").setLevel(logging.ERROR)


@dataclass(frozen=True)
class TableRef:
    """A table the statement reads, as written (CTE names excluded)."""

    name: str
    schema: str | None = None
    catalog: str | None = None

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(p for p in (self.catalog, self.schema, self.name) if p)

    def display(self) -> str:
        """The reference as quoted identifiers: ``"book"."Sheet1"``."""
        return ".".join('"' + p.replace('"', '""') + '"' for p in self.parts)


@dataclass
class ParsedQuery:
    sql: str  # the text as given
    body: str  # the one statement, without trailing ';' and comments
    # the statement as sqlglot parsed it; None until asked for when DuckDB's parser read it
    # alone (lantide.query.guard_plain): :attr:`expression` parses it then
    tree: exp.Expr | None = None
    body_start: int = 0  # where the body starts in ``sql``
    tables: list[TableRef] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # paths read by table functions
    cte_count: int = 0
    join_count: int = 0
    # a remote tab's connection: the statement is in its dialect and runs there as written
    # (lantide.query.remote_tabs); None for a statement DuckDB runs or stages
    remote: str | None = None
    kind_name: str = ""  # sqlglot's name of the statement's kind; "" for the tree's
    # whether a call divides (the result checks read divisions from the tree); None: unknown
    divides: bool | None = None

    @property
    def expression(self) -> exp.Expr:
        """The statement as sqlglot parses it (parsed now if the guard did not need it)."""
        if self.tree is None:
            self.tree = _sqlglot_tree(self.sql)
        return self.tree

    @property
    def kind(self) -> str:
        """The statement's kind by sqlglot's class names: "Select", "Union", "Describe"..."""
        return self.kind_name or type(self.expression).__name__


def _sqlglot_tree(sql: str) -> exp.Expr:
    analysis = _analyse_full(sql)
    if analysis.error is not None:
        err = analysis.error
        raise type(err)(err.message, hint=err.hint, code=err.code, position=err.position)
    assert analysis.root is not None
    return analysis.root


def _syntax_error(exc: Exception, sql: str) -> QueryError:
    errors = getattr(exc, "errors", None) or []
    position = None
    detail = str(exc).splitlines()[0] if str(exc) else "cannot parse the statement"
    if errors:
        first = errors[0]
        if first.get("line"):
            position = (int(first["line"]), int(first.get("col") or 1))
        detail = first.get("description") or detail
    return QueryError(
        f"SQL syntax error: {detail}",
        code="SQL_SYNTAX",
        position=position,
        hint="Fix the statement near the marked position; Lantide speaks DuckDB's SQL.",
    )


def _body_to_text(
    position: tuple[int, int] | None, sql: str, body_start: int
) -> tuple[int, int] | None:
    """A (line, column) in the statement's body as one in the whole text (the body starts
    after leading comments and blank lines)."""
    if position is None:
        return None
    line, column = position
    before = sql[:body_start]
    if line == 1:
        column += body_start - (before.rfind("\n") + 1)
    return line + before.count("\n"), column


def _tokens(sql: str) -> list[Token]:
    from sqlglot.dialects.duckdb import DuckDB

    dialect = DuckDB()
    tokenizer = dialect.tokenizer_class(dialect=dialect)
    try:
        return tokenizer.tokenize(sql)
    except Exception as exc:
        error = _syntax_error(exc, sql)
        if error.position is None:
            error.position = _failed_token_position(tokenizer, sql)
        raise error from None


def _failed_token_position(tokenizer: Tokenizer, sql: str) -> tuple[int, int] | None:
    """Where the token the tokenizer gave up on starts (an unterminated quote or comment).

    sqlglot's TokenError carries no position; its tokenizer still knows the offset. It is
    not public API, so a sqlglot without it just gives no position.
    """
    start = getattr(getattr(tokenizer, "_core", tokenizer), "_start", None)
    if not isinstance(start, int) or not 0 <= start < len(sql):
        return None
    line_start = sql.rfind("\n", 0, start) + 1
    return sql.count("\n", 0, start) + 1, start - line_start + 1


def _statements(tokens: list[Token]) -> list[list[Token]]:
    from sqlglot import TokenType

    out: list[list[Token]] = []
    current: list[Token] = []
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            if current:
                out.append(current)
            current = []
        else:
            current.append(tok)
    if current:
        out.append(current)
    return out


# Levels of parentheses (nested expressions, subqueries, calls, IN lists) a statement may
# have. DuckDB follows 1000; sqlglot's parser recurses about 25 Python frames per level and
# would run out of stack first (issue 28: a RecursionError the agent's tools reported as a
# Lantide bug). No analysis needs more; the refusal says how to write it flatter.
MAX_NESTING = 100


def too_deep(detail: str) -> QueryRefused:
    """The refusal of a statement nested deeper than Lantide reads (``SQL_TOO_DEEP``)."""
    return QueryRefused(
        f"refused: the statement is nested too deeply to read ({detail})",
        code="SQL_TOO_DEEP",
        hint="Write it flatter: move inner queries into CTEs (WITH ...) or SQL tabs, and "
        "replace long chains of NOT, CASE or nested calls with simpler expressions.",
    )


def _nesting(tokens: list[Token]) -> int:
    """The deepest level of parentheses (and brackets) among ``tokens``."""
    from sqlglot import TokenType

    opening = {TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE}
    closing = {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE}
    depth = deepest = 0
    for tok in tokens:
        if tok.token_type in opening:
            depth += 1
            deepest = max(deepest, depth)
        elif tok.token_type in closing:
            depth -= 1
    return deepest


def _refuse(code: str, hint: str, what: str) -> QueryRefused:
    return QueryRefused(
        f"refused: {what} is not allowed; queries are a single read-only SELECT",
        code=code,
        hint=hint,
    )


def _function_name(node: exp.Func) -> str:
    """The function's name as DuckDB knows it (sqlglot renames some: range is
    GenerateSeries). Only calls in FROM pay for rendering SQL."""
    from sqlglot import exp

    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    if _in_from(node):
        rendered: str = node.sql(dialect="duckdb")
        return rendered.split("(", 1)[0].strip().strip('"').lower()
    name: str = node.sql_name()
    return name.lower()


def _in_from(func: exp.Func) -> bool:
    """Whether ``func`` is called as a table function (in FROM, a JOIN or LATERAL)."""
    from sqlglot import exp

    return isinstance(func.parent, (exp.Table, exp.Lateral)) and func.arg_key == "this"


def _path_literals(func: exp.Func, fname: str) -> list[exp.Expr]:
    """The string literals of a file reader's first positional argument (a path or a list
    of paths). A path computed at run time cannot be checked, so it is refused."""
    from sqlglot import exp

    this = func.args.get("this")
    args = ([this] if isinstance(this, exp.Expression) else []) + list(
        func.args.get("expressions") or []
    )
    positional = [a for a in args if not isinstance(a, (exp.EQ, exp.PropertyEQ, exp.Kwarg))]
    if not positional:
        return []
    first = positional[0]
    items = list(first.expressions) if isinstance(first, exp.Array) else [first]
    if all(isinstance(item, exp.Literal) and item.is_string for item in items):
        return items
    raise QueryRefused(
        f"refused: {fname}() reads a path that is not written in the statement",
        code=TABLE_FUNCTION_CODE,
        hint=PATH_HINT,
    )


def _option_names(func: exp.Func) -> set[str]:
    """Names of a call's named arguments (``a = 1``, ``a := 1``), lower case."""
    from sqlglot import exp

    names: set[str] = set()
    for arg in func.args.get("expressions") or []:
        if isinstance(arg, (exp.EQ, exp.PropertyEQ, exp.Kwarg)) and isinstance(
            arg.this, (exp.Column, exp.Identifier)
        ):
            names.add(arg.this.name.lower())
    return names


def _refuse_writing_options(fname: str, options: AbstractSet[str]) -> None:
    written = sorted(set(options) & WRITING_OPTIONS)
    if written:
        raise QueryRefused(
            f"refused: {fname}({', '.join(written)} = ...) creates tables",
            code=TABLE_FUNCTION_CODE,
            hint=WRITING_OPTION_HINT,
        )


def _refuse_function(fname: str, hint: str, in_from: bool) -> QueryRefused:
    if in_from and fname not in OUTSIDE_FUNCTIONS:
        what = f"{fname}() is not one of Lantide's read-only table functions"
    else:
        what = f"{fname}() reaches outside the workspace or changes state"
    return QueryRefused(f"refused: {what}", code=TABLE_FUNCTION_CODE, hint=hint)


def _absolute_paths(body: str, nodes: list[exp.Expr], workspace_root: Path) -> str:
    """The body with each relative path literal made absolute (DuckDB resolves relative
    paths against the process's working directory, which is not the workspace)."""
    edits = []
    for node in nodes:
        path, meta = node.name if hasattr(node, "quoted") else node.this, node.meta
        if os.path.isabs(path) or "start" not in meta or "end" not in meta:
            continue
        start, end = meta["start"], meta["end"]  # the span includes the quotes
        quote = body[start] if 0 <= start < len(body) else ""
        if (
            quote not in ("'", '"')
            or body[end] != quote
            or body[start + 1 : end] != path.replace(quote, quote * 2)
        ):
            continue  # the span does not hold the plain text; leave the statement as it is
        full = str(workspace_root / path)
        edits.append((start, end, quote + full.replace(quote, quote * 2) + quote))
    for start, end, text in sorted(edits, reverse=True):
        body = body[:start] + text + body[end + 1 :]
    return body


def check_path(path: str, data_dir: Path, workspace_root: Path) -> None:
    """Refuse a URL or a path that is not inside ``data/`` (relative paths: workspace root)."""
    if "://" in path or path.startswith(("s3:", "gs:", "gcs:", "az:", "azure:", "hf:", "r2:")):
        raise QueryRefused(
            f"refused: {path!r} is on the network; queries read only workspace files",
            code="QUERY_REFUSED_NETWORK",
            hint="Download the file into data/ first; it becomes a table.",
        )
    candidate = Path(path) if os.path.isabs(path) else workspace_root / path
    real = Path(os.path.realpath(candidate))
    try:
        real.relative_to(os.path.realpath(data_dir))
    except ValueError:
        raise QueryRefused(
            f"refused: {path!r} is outside the workspace's data/ folder",
            code="QUERY_REFUSED_OUTSIDE_WORKSPACE",
            hint="Copy the file into data/: every file there is a table "
            '(data/sales.csv is "sales").',
        ) from None


def _looks_like_path(name: str) -> bool:
    lower = name.lower()
    return "/" in name or "\\" in name or "://" in name or lower.endswith(_DATA_SUFFIX_HINTS)


@dataclass
class _Analysis:
    """What the guard learns from the text alone; cached per statement text."""

    body: str
    body_start: int
    root: exp.Expr | None  # None with an error, or when DuckDB's parser read it alone
    cte_count: int
    join_count: int
    file_literals: list[exp.Expr]  # string literal nodes of file-reading functions
    # tables outside CTE names, with their identifier node (None: read by DuckDB's parser)
    candidates: list[tuple[TableRef, exp.Identifier | None]]
    error: QueryError | None = None
    duckdb_paths: list[str] = field(default_factory=list)  # file readers' paths, by DuckDB's parser
    kind: str = ""
    divides: bool | None = None


# Texts analysed in this process (most still in _analyse's cache): analyse_ahead asks
# DuckDB about these no more. Bounded; a text whose analysis left the cache is asked alone.
_analysed: set[str] = set()


@lru_cache(maxsize=512)
def _analyse(sql: str) -> _Analysis:
    if len(_analysed) > 2048:
        _analysed.clear()
    _analysed.add(sql)
    from lantide.query.guard_plain import read_plain  # (imports this module's names)

    plain = read_plain(sql, MAX_NESTING) if sql.strip() else None
    if plain is not None:
        tables: list[tuple[TableRef, exp.Identifier | None]] = [
            (TableRef(name, schema, catalog), None) for catalog, schema, name in plain.tables
        ]
        return _Analysis(
            plain.body,
            plain.body_start,
            None,
            plain.cte_count,
            0,
            [],
            tables,
            kind=plain.kind,
            divides=plain.divides,
        )
    return _analyse_full(sql)


@lru_cache(maxsize=512)
def _analyse_full(sql: str) -> _Analysis:
    """The full reading: sqlglot's tree, checked again on DuckDB's."""
    try:
        return _analyse_uncached(sql)
    except QueryError as exc:
        return _Analysis("", 0, None, 0, 0, [], [], error=exc)
    except RecursionError:  # a chain without parentheses (NOT NOT …, CASE in CASE …)
        error = too_deep("more levels of expressions than the SQL reader follows")
        return _Analysis("", 0, None, 0, 0, [], [], error=error)


def _analyse_uncached(sql: str) -> _Analysis:
    from sqlglot import exp
    from sqlglot.dialects.duckdb import DuckDB

    if not sql or not sql.strip():
        raise QueryError("the query is empty", code="QUERY_EMPTY", hint="Write a SELECT statement.")
    statements = _statements(_tokens(sql))
    if not statements:
        raise QueryError(
            "the query has no statement, only comments",
            code="QUERY_EMPTY",
            hint="Write a SELECT statement.",
        )
    if len(statements) > 1:
        raise QueryRefused(
            f"refused: {len(statements)} statements; a query is exactly one statement",
            code="QUERY_REFUSED_MULTIPLE_STATEMENTS",
            hint="Send one SELECT at a time; chain steps with CTEs or SQL tabs.",
        )
    tokens = statements[0]
    depth = _nesting(tokens)
    if depth > MAX_NESTING:
        raise too_deep(f"{depth} levels of parentheses; at most {MAX_NESTING}")
    first_word = tokens[0].text.upper()
    body_start = tokens[0].start
    body = sql[body_start : tokens[-1].end + 1]
    if first_word in ("EXPORT", "IMPORT"):
        code, hint = _COMMANDS[first_word]
        raise _refuse(code, hint, f"{first_word} DATABASE")
    try:
        # parse the tokens we already have (offsets relative to the body)
        body_tokens = DuckDB().tokenize(body)
        parsed = [e for e in DuckDB().parser().parse(body_tokens, body) if e is not None]
    except RecursionError:
        raise  # too deep, not a syntax error: _analyse says so
    except Exception as exc:
        if first_word in _COMMANDS:
            code, hint = _COMMANDS[first_word]
            raise _refuse(code, hint, first_word) from None
        error = _syntax_error(exc, body)
        error.position = _body_to_text(error.position, sql, body_start)
        raise error from None
    if len(parsed) != 1:
        raise QueryRefused(
            "refused: more than one statement",
            code="QUERY_REFUSED_MULTIPLE_STATEMENTS",
            hint="Send one SELECT at a time.",
        )
    root = parsed[0]
    kind = type(root).__name__
    if isinstance(root, exp.Command):
        word = str(root.this).upper()
        code, hint = _COMMANDS.get(word, ("QUERY_REFUSED_NOT_SELECT", _NOT_SELECT_HINT))
        raise _refuse(code, hint, word)
    if kind not in _ALLOWED_ROOTS:
        code, hint = _REFUSALS.get(kind, ("QUERY_REFUSED_NOT_SELECT", _NOT_SELECT_HINT))
        raise _refuse(code, hint, kind.upper() if kind in _REFUSALS else first_word)
    ctes, joins, funcs, tables = [], 0, [], []
    for node in root.walk():
        name = type(node).__name__
        if name in _REFUSALS or isinstance(node, exp.Command):
            code, hint = _REFUSALS.get(name, ("QUERY_REFUSED_NOT_SELECT", _NOT_SELECT_HINT))
            raise _refuse(code, hint, f"{name.upper()} inside the query")
        if isinstance(node, exp.CTE):
            ctes.append(str(node.alias).casefold())
        elif isinstance(node, exp.Join):
            joins += 1
        elif isinstance(node, exp.Table):
            tables.append(node)
        if isinstance(node, exp.Func):
            funcs.append(node)
    file_literals = []
    for func in funcs:
        fname = _function_name(func)
        in_from = _in_from(func)
        if fname in OUTSIDE_FUNCTIONS:
            raise _refuse_function(fname, OUTSIDE_FUNCTIONS[fname], in_from)
        if in_from:
            refusal_hint = table_function_hint(fname)
            if refusal_hint is not None:
                raise _refuse_function(fname, refusal_hint, True)
            _refuse_writing_options(fname, _option_names(func))
            if fname in FILE_READERS:
                file_literals.extend(_path_literals(func, fname))
    if (
        isinstance(root, (exp.Summarize, exp.Describe))
        and isinstance(root.this, exp.Literal)
        and root.this.is_string
    ):
        file_literals.append(root.this)  # SUMMARIZE 'file.csv' reads the file
    duckdb_paths = _duckdb_paths(body)
    cte_names = set(ctes)
    candidates: list[tuple[TableRef, exp.Identifier | None]] = []
    seen = set()
    for table in tables:
        if not isinstance(table.this, exp.Identifier):
            continue  # a table function, checked above
        ref = TableRef(name=table.name, schema=table.db or None, catalog=table.catalog or None)
        if ref.schema is None and ref.catalog is None and ref.name.casefold() in cte_names:
            continue
        key = tuple(p.casefold() for p in ref.parts)
        if key not in seen:
            seen.add(key)
            candidates.append((ref, table.this))
    return _Analysis(
        body,
        body_start,
        root,
        len(ctes),
        joins,
        file_literals,
        candidates,
        duckdb_paths=duckdb_paths,
        kind=type(root).__name__,
    )


def _duckdb_paths(body: str) -> list[str]:
    """Decide the calls again as DuckDB's parser reads the statement (a statement sqlglot
    reads differently is decided on what DuckDB will run); the paths its file readers get."""
    try:
        calls = duckdb_calls(body)
    except ValueError:
        raise QueryRefused(
            "refused: DuckDB reads more than one statement here",
            code="QUERY_REFUSED_MULTIPLE_STATEMENTS",
            hint="Send one SELECT at a time; check the quotes of its strings.",
        ) from None
    paths: list[str] = []
    for call in calls or ():
        if call.name in OUTSIDE_FUNCTIONS:
            raise _refuse_function(call.name, OUTSIDE_FUNCTIONS[call.name], call.in_from)
        if not call.in_from:
            continue
        hint = table_function_hint(call.name)
        if hint is not None:
            raise _refuse_function(call.name, hint, True)
        _refuse_writing_options(call.name, call.options)
        if call.name in FILE_READERS:
            if call.paths is None:
                raise QueryRefused(
                    f"refused: {call.name}() reads a path that is not written in the statement",
                    code=TABLE_FUNCTION_CODE,
                    hint=PATH_HINT,
                )
            paths.extend(call.paths)
    return paths


def forget_analyses() -> None:
    """Forget every statement read so far (benchmarks: a new process reads each once)."""
    _analyse.cache_clear()
    _analyse_full.cache_clear()
    _analysed.clear()


def analyse_ahead(texts: Iterable[str]) -> None:
    """Ask DuckDB's parser about several statements at once before :func:`check` analyses
    them one by one (Source Run's graph: every tab of a project before the first one runs):
    one query instead of one each (:func:`guard_functions.serialize_ahead`). A text that is
    not one statement is left to :func:`check`, which says why."""
    from lantide.query.guard_plain import statement_span

    bodies = []
    for sql in texts:
        sql = sql[1:] if sql.startswith("\ufeff") else sql
        if sql in _analysed:
            continue  # analysed before: its analysis is cached, nothing will ask
        span = statement_span(sql, MAX_NESTING)  # DuckDB's tokens: sqlglot stays unimported
        if span is not None:
            bodies.append(span[0])
    serialize_ahead(bodies)


def check(
    sql: str,
    *,
    data_dir: Path | None = None,
    workspace_root: Path | None = None,
    known_table: Callable[[TableRef], bool] = lambda ref: True,
) -> ParsedQuery:
    """Parse ``sql`` and refuse anything but one read-only statement.

    ``known_table(ref)`` says whether a table reference names a registered table; an
    unknown name that looks like a file path is checked as a path (DuckDB would read it).
    The text-only part of the work is cached per statement text.
    """
    if sql.startswith("\ufeff"):  # a byte-order mark pasted from a Windows file
        sql = sql[1:]
    analysis = _analyse(sql)
    if analysis.error is not None:
        err = analysis.error
        raise type(err)(err.message, hint=err.hint, code=err.code, position=err.position)
    # (data_dir, workspace_root) when paths are checked against them
    confined = (data_dir, workspace_root) if data_dir and workspace_root else None
    parsed = ParsedQuery(
        sql=sql,
        body=analysis.body,
        tree=analysis.root,
        body_start=analysis.body_start,
        cte_count=analysis.cte_count,
        join_count=analysis.join_count,
        kind_name=analysis.kind,
        divides=analysis.divides,
    )
    path_nodes: list[exp.Expr] = []  # (a plain reading has none: it leaves paths to the full)
    for literal in analysis.file_literals:
        if confined:
            check_path(literal.this, *confined)
        parsed.files.append(literal.this)
        path_nodes.append(literal)
    if confined:
        for path in analysis.duckdb_paths:
            check_path(path, *confined)
    for ref, node in analysis.candidates:
        if ref.schema is None and _looks_like_path(ref.name) and not known_table(ref):
            if confined:
                check_path(ref.name, *confined)
            parsed.files.append(ref.name)
            if node is not None:
                path_nodes.append(node)
        else:
            parsed.tables.append(ref)
    if workspace_root is not None and path_nodes:
        parsed.body = _absolute_paths(analysis.body, path_nodes, workspace_root)
    return parsed


def map_position(
    parsed: ParsedQuery, position: tuple[int, int] | None, prefix_len: int
) -> tuple[int, int] | None:
    """A (line, column) in Lantide's wrapped statement as a position in the user's text."""
    if position is None:
        return None
    line, column = position
    if line == 1:
        column = max(1, column - prefix_len)
    before = parsed.sql[: parsed.body_start]
    if line == 1:
        column += parsed.body_start - (before.rfind("\n") + 1)
    return line + before.count("\n"), column
