"""Remote SQL tabs: a tab whose first line is ``-- lantide: connection=NAME`` runs wholly on
that connection, in its dialect, and its result lands as the tab's cached table (DESIGN.md
section 9).

The statement is checked here, in the connection's dialect, as the DuckDB guard checks a
local one: exactly one statement, a query (no DDL, DML, SET, locks, ``INTO``), and none of
the functions that read the server's files, write, sleep on locks or reach other servers.
The source also runs it in a read-only session (:meth:`ExternalSources.connect`), so a
function the list does not know still cannot write. The text runs as written: sqlglot only
reads it (for the check and the tables it names), it never rewrites the analyst's SQL.
"""

from __future__ import annotations

import re

from lantide.errors import LantideError
from lantide.query import lineage as lin
from lantide.query.errors import ConnectionProblem, QueryError, QueryRefused, error_fields
from lantide.query.guard import ParsedQuery, TableRef

HEADER = re.compile(r"^[ \t]*--[ \t]*lantide:(?P<options>[^\r\n]*)")
_OPTION = re.compile(r"(?P<key>[A-Za-z_]+)[ \t]*=[ \t]*(?P<value>[^\s,;]+)")

# Functions a remote query may not call, by dialect family (lower case, as sqlglot names
# an unknown function). Reading the server's files, writing, taking locks, reaching other
# servers, or stopping other sessions: none of it belongs in an analyst's query.
_REFUSED_FUNCTIONS = {
    "postgres": {
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "pg_stat_file",
        "lo_import",
        "lo_export",
        "lo_from_bytea",
        "lo_put",
        "dblink",
        "dblink_exec",
        "dblink_connect",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "set_config",
        "nextval",
        "setval",
        "pg_advisory_lock",
        "pg_advisory_xact_lock",
        "pg_try_advisory_lock",
    },
    "mysql": {"load_file", "get_lock", "release_lock", "release_all_locks", "benchmark"},
    "tsql": {"openrowset", "opendatasource", "openquery", "xp_cmdshell"},
}
_NOT_QUERY_HINT = (
    "A remote tab is one SELECT in the connection's own SQL; it only reads. Its result "
    "lands as the tab's cached table."
)


def header_options(sql: str) -> dict[str, str]:
    """The ``key=value`` options of the tab's first line, if it is a Lantide header."""
    first = sql.split("\n", 1)[0]
    match = HEADER.match(first)
    if not match:
        return {}
    return {m["key"].lower(): m["value"] for m in _OPTION.finditer(match["options"])}


def tab_connection(sql: str) -> str | None:
    """The connection a tab's header binds it to, or None for a local tab."""
    return header_options(sql).get("connection") or None


def check_remote(sql: str, connection: str, dialect: str) -> ParsedQuery:
    """The remote tab's statement, checked in ``dialect``; its tables carry the connection
    as their catalog (as ``NAME.schema.table`` would in a local statement)."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    body = sql.strip().rstrip(";").strip()
    if not _without_comments(body):
        raise QueryError(
            "the remote tab has no statement, only its header",
            code="QUERY_EMPTY",
            hint=f"Write one SELECT for {connection!r} below the header line.",
        )
    try:
        statements = [s for s in sqlglot.parse(body, read=dialect) if s is not None]
    except (ParseError, TokenError) as exc:
        raise QueryError(
            f"the remote tab's SQL is not {dialect} SQL sqlglot can read: {_first_line(exc)}",
            code="SQL_SYNTAX",
            hint=f"Check the statement; it runs on {connection!r} in its own dialect ({dialect}).",
        ) from None
    except RecursionError:
        raise QueryRefused(
            "refused: the remote tab's SQL nests deeper than the SQL reader follows",
            code="SQL_TOO_DEEP",
            hint="Split the statement into tabs.",
        ) from None
    if len(statements) != 1:
        raise QueryRefused(
            f"refused: {len(statements)} statements; a remote tab is exactly one statement",
            code="QUERY_REFUSED_MULTIPLE_STATEMENTS",
            hint=_NOT_QUERY_HINT,
        )
    root = statements[0]
    if not isinstance(root, exp.Query):
        raise QueryRefused(
            f"refused: {type(root).__name__.upper()} on {connection!r}; a remote tab only reads",
            code="QUERY_REFUSED_NOT_SELECT",
            hint=_NOT_QUERY_HINT,
        )
    refused = _REFUSED_FUNCTIONS.get(_family(dialect), set())
    ctes: set[str] = set()
    tables: list[TableRef] = []
    for node in root.walk():
        if isinstance(node, (exp.DDL, exp.DML, exp.Command, exp.Into, exp.Lock, exp.Set)):
            raise QueryRefused(
                f"refused: {type(node).__name__.upper()} inside the remote tab's query",
                code="QUERY_REFUSED_NOT_SELECT",
                hint=_NOT_QUERY_HINT,
            )
        if isinstance(node, exp.Func):
            name = (node.sql_name() if not isinstance(node, exp.Anonymous) else node.name).lower()
            if name in refused:
                raise QueryRefused(
                    f"refused: {name}() on {connection!r}",
                    code="QUERY_REFUSED_FUNCTION",
                    hint="A remote tab only reads tables: no server files, locks, sequences "
                    "or other servers.",
                )
        if isinstance(node, exp.CTE):
            ctes.add(str(node.alias).casefold())
        elif isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            if not node.db and node.name.casefold() in ctes:
                continue
            ref = TableRef(node.name, node.db or None, connection)
            if ref not in tables:
                tables.append(ref)
    return ParsedQuery(
        sql=sql,
        body=body,
        expression=root,
        body_start=0,
        tables=tables,
        cte_count=len(ctes),
        join_count=len(list(root.find_all(exp.Join))),
        remote=connection,
    )


def analyse_remote_tab(tab: str, sql: str, connection: str, dialect: str) -> lin.TabLineage:
    """The lineage of a remote tab: the connection's tables it reads (never a local one)."""
    lineage = lin.TabLineage(tab=tab, sql=sql, sql_hash=lin.sql_hash(sql))
    try:
        parsed = check_remote_tab(sql, connection, dialect)
    except LantideError as exc:
        lineage.error = error_fields(exc)
        return lineage
    lineage.parsed = parsed
    lineage.inputs = [
        lin.Input(lin.EXTERNAL, ref.display(), connection, ref) for ref in parsed.tables
    ]
    return lineage


def _family(dialect: str) -> str:
    return {"redshift": "postgres"}.get(dialect, dialect)


def _without_comments(body: str) -> str:
    lines = [line for line in body.splitlines() if not line.strip().startswith("--")]
    return "\n".join(lines).strip()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# -- the header written by the tab's connection picker, and from=DIALECT ------------------------
HEADER_LINE = "-- lantide:"
_HEADER_VALUE = re.compile(r"[^\s,;]+")  # what an option's value can hold (``_OPTION``)
_SEPARATOR_AFTER = re.compile(r"^[ \t]*[,;]?[ \t]*")
_SEPARATOR_BEFORE = re.compile(r"[ \t]*[,;]?[ \t]*$")


def check_connection_name(name: str) -> str:
    """``name`` when a header can hold it (read back as written), else CONNECTION_NAME_UNSUITED."""
    if not _HEADER_VALUE.fullmatch(name) or not name.isprintable():
        raise ConnectionProblem(
            f"the connection name {name!r} cannot be written in a tab's header line "
            f"({HEADER_LINE} connection=NAME)",
            code="CONNECTION_NAME_UNSUITED",
            hint="A header names a connection without spaces, commas, semicolons or line "
            "breaks: rename the connection in Settings > Connections (e.g. "
            f"{_suggested_name(name)!r}), then pick it again.",
        )
    return name


def set_tab_connection(sql: str, name: str | None) -> str:
    """The tab's text bound to connection ``name`` (None: a local tab again).

    Only the header line changes: its ``connection=`` value is replaced, added (a header
    line is put first when the text has none) or removed (with the line, when nothing else
    is left on it). The header's other options and every other character of the text are
    kept as they are."""
    if name is not None:
        check_connection_name(name)
    first, newline, rest = sql.partition("\n")
    header = HEADER.match(first)
    if header is None:
        if name is None:
            return sql
        end = "\r\n" if first.endswith("\r") else "\n"
        return f"{HEADER_LINE} connection={name}{end}{sql}"
    options = header["options"]
    found = [m for m in _OPTION.finditer(options) if m["key"].lower() == "connection"]
    if name is not None and found:  # each connection= is rewritten (the last one counts)
        for match in reversed(found):
            options = options[: match.start("value")] + name + options[match.end("value") :]
    elif name is not None:
        spacer = "" if not options or options[0] in " \t" else " "
        options = f" connection={name}{spacer}{options}"
    else:
        for match in reversed(found):  # the option goes with one separator beside it
            before, after = options[: match.start()], options[match.end() :]
            if before.strip(" \t,;"):
                before = _SEPARATOR_BEFORE.sub("", before)
            else:
                after = _SEPARATOR_AFTER.sub("", after, count=1)
            options = before + after
        if not options.strip(" \t,;"):
            return rest  # the header said nothing else: the line goes
    return (
        first[: header.start("options")] + options + first[header.end("options") :] + newline + rest
    )


def tab_source_dialect(sql: str) -> str | None:
    """The dialect the header's ``from=`` says the tab is written in (None: the
    connection's own, run as written); an unknown one is DIALECT_UNKNOWN."""
    value = header_options(sql).get("from")
    if value is None:
        return None
    known = sqlglot_dialects()
    if value.lower() not in known:
        raise QueryError(
            f"unknown SQL dialect {value!r} in the tab's header (from={value})",
            code="DIALECT_UNKNOWN",
            hint=f"Write from= with one of sqlglot's dialects: {', '.join(known)}; or leave "
            "from= out to run the text as written in the connection's dialect.",
        )
    return value.lower()


def sqlglot_dialects() -> list[str]:
    """The dialect names sqlglot reads and writes, sorted."""
    from sqlglot.dialects.dialect import Dialects

    return sorted(d.value for d in Dialects if d.value)


def check_remote_tab(sql: str, connection: str, dialect: str) -> ParsedQuery:
    """A remote tab's statement as it will run: with ``from=DIALECT`` in its header,
    transpiled by sqlglot from DIALECT to the connection's ``dialect`` first; then checked
    in ``dialect`` (:func:`check_remote`). The parse keeps the tab's text as ``sql`` and the
    statement sent to the source as ``body``."""
    source = tab_source_dialect(sql)
    if source is None or _same_dialect(source, dialect):
        return check_remote(sql, connection, dialect)
    parsed = check_remote(transpile_tab(sql, source, dialect), connection, dialect)
    parsed.sql = sql
    return parsed


def transpile_tab(sql: str, source: str, dialect: str) -> str:
    """The tab's statement (its header left out) written by sqlglot in ``dialect``, read
    in ``source``; what it cannot write in ``dialect`` is TRANSPILE_UNSUPPORTED."""
    import sqlglot
    from sqlglot.errors import ErrorLevel, ParseError, TokenError, UnsupportedError

    first, newline, rest = sql.partition("\n")
    # the header stays an empty line, so the reader's line numbers are the tab's
    text = newline + rest if HEADER.match(first) else sql
    try:
        statements = [s for s in sqlglot.parse(text, read=source) if s is not None]
        if not statements:
            return text  # only comments: check_remote says so
        return ";\n".join(
            s.sql(dialect=dialect, unsupported_level=ErrorLevel.RAISE) for s in statements
        )
    except (ParseError, TokenError) as exc:
        raise QueryError(
            f"the remote tab's SQL is not {source} SQL sqlglot can read: {_first_line(exc)}",
            code="SQL_SYNTAX",
            position=_error_position(exc),
            hint=f"The header's from={source} says the tab is written in {source}; fix the "
            "statement, or change from= to the dialect it is written in.",
        ) from None
    except UnsupportedError as exc:
        raise QueryError(
            f"sqlglot cannot write this {source} SQL in {dialect}: {_first_line(exc)}",
            code="TRANSPILE_UNSUPPORTED",
            hint=f"Write that part in {dialect} (and take from={source} out of the header, "
            "so the text runs as written), or use what both dialects have.",
        ) from None
    except RecursionError:
        raise QueryRefused(
            "refused: the remote tab's SQL nests deeper than the SQL reader follows",
            code="SQL_TOO_DEEP",
            hint="Split the statement into tabs.",
        ) from None


def _same_dialect(a: str, b: str) -> bool:
    from sqlglot.dialects.dialect import Dialect

    return Dialect.get_or_raise(a) == Dialect.get_or_raise(b)


def _error_position(exc: Exception) -> tuple[int, int] | None:
    errors = getattr(exc, "errors", None) or []
    if errors and errors[0].get("line"):
        return int(errors[0]["line"]), int(errors[0].get("col") or 1)
    return None


def _suggested_name(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("_") or "dw"
