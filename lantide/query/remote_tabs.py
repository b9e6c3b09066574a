"""Remote SQL tabs: a tab whose first line is ``-- lantide: connection=NAME`` runs wholly on
that connection, in its dialect, and its result lands as the tab's cached table (DESIGN.md
section 9).

The statement is checked here, in the connection's dialect, as the DuckDB guard checks a
local one: exactly one statement, a query (no DDL, DML, SET, locks, ``INTO``), and none of
the functions that read the server's files, write, sleep on locks or reach other servers.
The source also runs it in a read-only session (:meth:`ExternalSources.connect`), so a
function the list does not know still cannot write. The text runs as written: sqlglot only
reads it (for the check and the tables it names), it never rewrites the analyst's SQL; what
is sent is the statement's span of tokens (no header, no comment after it, no ``;``).

The one-statement check is the barrier against a second statement: psqlODBC runs every
statement of a text, and PostgreSQL lets a second one lift the read-only session
(``SET TRANSACTION READ WRITE``); MariaDB's driver refuses a second statement.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lantide.errors import LantideError
from lantide.query import lineage as lin
from lantide.query.errors import ConnectionProblem, QueryError, QueryRefused, error_fields
from lantide.query.guard import ParsedQuery, TableRef

if TYPE_CHECKING:
    from sqlglot import exp

HEADER = re.compile(r"^[ \t]*--[ \t]*lantide:(?P<options>[^\r\n]*)")
_OPTION = re.compile(r"(?P<key>[A-Za-z_]+)[ \t]*=[ \t]*(?P<value>[A-Za-z0-9_.\-]+)(?=[\s,]|$)")

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
        # they run SQL given as text, which this check never sees (query_to_xml can read
        # any table; ts_stat and ts_rewrite take a query too), or name a table as text
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "table_to_xml",
        "table_to_xmlschema",
        "table_to_xml_and_xmlschema",
        "schema_to_xml",
        "schema_to_xmlschema",
        "schema_to_xml_and_xmlschema",
        "database_to_xml",
        "database_to_xmlschema",
        "database_to_xml_and_xmlschema",
        "ts_stat",
        "ts_rewrite",
        "loread",
        "lowrite",
        "pg_notify",  # a message to other sessions
        "pg_switch_wal",
        "pg_promote",
        "pg_create_restore_point",
        "pg_log_backend_memory_contexts",
        "pg_import_system_collations",
        "txid_current",  # takes a transaction id: a write in a read-only session
        "pg_current_xact_id",
    },
    "mysql": {
        "load_file",
        "get_lock",
        "release_lock",
        "release_all_locks",
        "benchmark",
        # user-defined functions of lib_mysqludf_sys: a shell on the server
        "sys_exec",
        "sys_eval",
        "sys_get",
        "sys_set",
        # waits on replication, not on the data
        "master_pos_wait",
        "source_pos_wait",
        "master_gtid_wait",
        "wait_for_executed_gtid_set",
        "wait_until_sql_thread_after_gtids",
    },
    "tsql": {"openrowset", "opendatasource", "openquery", "xp_cmdshell"},
}
# ... and every function whose name starts so: whole families of server files (pg_read_*,
# pg_ls_*, pg_file_* of adminpack), large objects (lo_*: files inside the database),
# other servers (dblink*), locks other sessions wait on, replication, WAL and backups.
#
# The rule: refused is what escapes this check (SQL given as text, another server), what
# reads or writes outside the tables (server files, large objects, settings), what acts on
# other sessions (locks, signals, notifications) and what writes (sequences, WAL, xids;
# the read-only session refuses these too). A sleep (pg_sleep*, MySQL's sleep) is allowed:
# it only holds Lantide's own session, which a cancel (SQLCancel) and the query timeout
# end; a statement that is merely slow is no different. MySQL's executable comments
# (``/*! ... */``, MariaDB's ``/*M! ... */``) run on the server but are comments to the
# SQL reader, so they are refused whole (QUERY_REFUSED_EXECUTABLE_COMMENT).
_REFUSED_PREFIXES: dict[str, tuple[str, ...]] = {
    "postgres": (
        "pg_read_",
        "pg_ls_",
        "pg_file_",
        "lo_",
        "dblink",
        "pg_advisory",
        "pg_try_advisory",
        "pg_create_",
        "pg_drop_",
        "pg_replication_",
        "pg_logical_",
        "pg_wal_",
        "pg_backup_",
        "pg_start_backup",
        "pg_stop_backup",
        "pg_stat_reset",
    ),
}
_NOT_QUERY_HINT = (
    "A remote tab is one SELECT in the connection's own SQL; it only reads. Its result "
    "lands as the tab's cached table."
)


def header_options(sql: str) -> dict[str, str]:
    """The ``key=value`` options of the tab's first line, if it is a Lantide header.

    The one reader of the header (the runner, lineage, the format action, explain, and a
    rename's rewrite of readers all ask it), and a strict one: a first line that looks like
    a header but is not exactly one (``-- Lantide:``, ``-- lantide :``, a full-width colon,
    a Cyrillic letter, an option given twice, a value with ``;`` or quotes, an option
    nobody knows) is refused with ``REMOTE_HEADER_UNCLEAR``, never read as a local tab or
    as another connection than the one written."""
    lines = sql.removeprefix("\ufeff").split("\n")
    first = lines[0].rstrip("\r")
    for line in lines[1:]:  # the comments and blank lines above the statement
        line = line.rstrip("\r")
        if line.strip() and not line.lstrip().startswith("--"):
            break
        later = HEADER.match(line)
        if (later and "connection" in (m["key"].lower() for m in _OPTION.finditer(later[1]))) or (
            not later and _looks_like_header(line)
        ):
            raise _unclear(line, "only the tab's first line can be its header")
    match = HEADER.match(first)
    if not match:
        if _looks_like_header(first):
            raise _unclear(first, "it is not written as ``-- lantide: connection=NAME``")
        return {}
    options: dict[str, str] = {}
    rest = match["options"]
    for m in _OPTION.finditer(rest):
        key = m["key"].lower()
        if key in options:
            raise _unclear(first, f"{key}= is given twice")
        if key not in _KNOWN_OPTIONS:
            raise _unclear(first, f"{m['key']}= is not an option of the header")
        options[key] = m["value"]
    leftover = _OPTION.sub("", rest).replace(",", " ").strip()
    if leftover or not rest.isascii():
        raise _unclear(first, f"{(leftover or rest.strip())[:40]!r} is not a key=value option")
    return options


def tab_connection(sql: str) -> str | None:
    """The connection a tab's header binds it to, or None for a local tab."""
    return header_options(sql).get("connection") or None


# connection=: where the tab runs; from=: the dialect its SQL is written in, when sqlglot
# transpiles it (the option u34a's branch adds)
_KNOWN_OPTIONS = {"connection", "from"}


def _looks_like_header(line: str) -> bool:
    """A ``--`` comment that, folded (NFKC, case, lookalikes read as Latin, no spaces),
    starts ``--lantide:`` or holds ``connection=``: the analyst meant a header (a comment
    that merely mentions Lantide is not one)."""
    import unicodedata

    text = unicodedata.normalize("NFKC", line).casefold()
    text = "".join(_LOOKALIKES.get(c, c) for c in text if not c.isspace())
    return text.startswith("--") and (text.startswith("--lantide:") or "connection=" in text)


# Cyrillic and Greek letters drawn like the Latin ones of "lantide" and "connection"
_LOOKALIKES = {
    "\u0430": "a",
    "\u0435": "e",
    "\u043e": "o",
    "\u0441": "c",
    "\u0456": "i",
    "\u0442": "t",
    "\u043d": "n",
    "\u03bf": "o",
    "\u03b1": "a",
    "\u03b9": "i",
    "\u03c4": "t",
    "\u03b5": "e",
    "\u0501": "d",
}


def _unclear(line: str, why: str) -> QueryError:
    return QueryError(
        f"the tab's line {line[:80]!r} looks like a Lantide header but {why}; the tab "
        "would not run where it says",
        code="REMOTE_HEADER_UNCLEAR",
        hint="Write the first line exactly as `-- lantide: connection=NAME` (once, plain "
        "ASCII), or remove it for a local tab.",
    )


def check_remote(sql: str, connection: str, dialect: str) -> ParsedQuery:
    """The remote tab's statement, checked in ``dialect``; its tables carry the connection
    as their catalog (as ``NAME.schema.table`` would in a local statement)."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    body, body_start = _statement_text(sql, dialect, connection)
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
        raise _too_deep() from None
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
    _check_output_names(root, connection)
    family = _family(dialect)
    refused = _REFUSED_FUNCTIONS.get(family, set())
    refused_prefixes = _REFUSED_PREFIXES.get(family, ())
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
            if name in refused or name.startswith(refused_prefixes):
                raise QueryRefused(
                    f"refused: {name}() on {connection!r}",
                    code="QUERY_REFUSED_FUNCTION",
                    hint="A remote tab only reads tables: no server files, locks, sequences "
                    "or other servers.",
                )
        if isinstance(node, exp.PropertyEQ) and isinstance(node.this, exp.Parameter):
            raise QueryRefused(  # MySQL's ``@v := ...``: writes the session, reads nothing
                f"refused: an assignment to {node.this.sql(dialect=dialect)} on {connection!r}",
                code="QUERY_REFUSED_ASSIGNMENT",
                hint="A remote tab only reads: number rows with ROW_NUMBER() OVER (...) "
                "instead of a user variable.",
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
        tree=root,
        kind_name=type(root).__name__,
        body_start=body_start,
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
    """``postgres`` or ``mysql`` for those engines and the dialects built on them (sqlglot's
    Redshift, Materialize, RisingWave; Doris, StarRocks, SingleStore), else ``dialect``."""
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.dialects.mysql import MySQL
    from sqlglot.dialects.postgres import Postgres

    try:
        found = Dialect.get_or_raise(dialect)
    except ValueError:
        return dialect
    if isinstance(found, Postgres):
        return "postgres"
    if isinstance(found, MySQL):
        return "mysql"
    return {"redshift": "postgres"}.get(dialect, dialect)


def _statement_text(sql: str, dialect: str, connection: str) -> tuple[str, int]:
    """The statement as the server gets it, and where it starts in ``sql``: from its first
    token to its last, found by the dialect's own tokenizer (as the DuckDB guard does). So
    the header and every comment before or after the statement, and the trailing ``;``,
    stay out of it: a trailing ``-- comment`` can no longer swallow the ``)`` of the COUNT
    and digest wrappers. An executable comment (MySQL's ``/*! */``, MariaDB's ``/*M! */``)
    anywhere is refused: the server runs it, the reader does not see it."""
    from sqlglot import TokenType
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.errors import TokenError

    try:
        # a byte-order mark (a file saved on Windows) read as a space: offsets stay the same
        text = " " + sql[1:] if sql.startswith("\ufeff") else sql
        tokens = Dialect.get_or_raise(dialect).tokenize(text)
    except TokenError as exc:
        raise QueryError(
            f"the remote tab's SQL is not {dialect} SQL sqlglot can read: {_first_line(exc)}",
            code="SQL_SYNTAX",
            hint=f"Check the statement; it runs on {connection!r} in its own dialect ({dialect}).",
        ) from None
    if _family(dialect) == "mysql":
        for token in tokens:
            for comment in token.comments:
                if comment.startswith(("!", "M!")):
                    raise QueryRefused(
                        f"refused: the executable comment /*{comment[:40]}*/ on "
                        f"{connection!r}; the server would run what it holds",
                        code="QUERY_REFUSED_EXECUTABLE_COMMENT",
                        hint="Write the SQL without /*! ... */ (or /*M! ... */): as plain SQL "
                        "it is checked, as a comment it is not.",
                    )
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if not tokens:
        return "", 0
    return sql[tokens[0].start : tokens[-1].end + 1], tokens[0].start


def _check_output_names(root: exp.Query, connection: str) -> None:
    """Two result columns named alike (``SELECT a, a``, ``x AS n, y AS N``) cannot both be
    columns of the cached table; refused by name here, and by the names the server gives
    (``external._schema``) for what only it names (``SELECT *`` of a join)."""
    seen: set[str] = set()
    for name in root.named_selects:
        if not name or name == "*":
            continue
        if name.casefold() in seen:
            raise duplicate_column(name, connection)
        seen.add(name.casefold())


def duplicate_column(name: str, connection: str) -> QueryError:
    return QueryError(
        f"the result on {connection!r} has two columns named {name!r}; a cached table "
        "holds one column of a name (names are compared ignoring case)",
        code="REMOTE_DUPLICATE_COLUMN",
        hint="Give each column its own name with AS.",
    )


def _without_comments(body: str) -> str:
    lines = [line for line in body.splitlines() if not line.strip().startswith("--")]
    return "\n".join(lines).strip()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# -- the header written by the tab's connection picker, and from=DIALECT ------------------------
HEADER_LINE = "-- lantide:"
_HEADER_VALUE = re.compile(r"[A-Za-z0-9_.\-]+")  # what an option's value can hold (``_OPTION``)
_SEPARATOR_AFTER = re.compile(r"^[ \t]*[,;]?[ \t]*")
_SEPARATOR_BEFORE = re.compile(r"[ \t]*[,;]?[ \t]*$")


def check_connection_name(name: str) -> str:
    """``name`` when a header can hold it (read back as written), else CONNECTION_NAME_UNSUITED."""
    if not _HEADER_VALUE.fullmatch(name) or not name.isprintable():
        raise ConnectionProblem(
            f"the connection name {name!r} cannot be written in a tab's header line "
            f"({HEADER_LINE} connection=NAME)",
            code="CONNECTION_NAME_UNSUITED",
            hint="A header names a connection in plain letters, digits, '_', '.' and '-' "
            "(no spaces, commas, semicolons or line breaks): rename the connection in "
            "Settings > Connections (e.g. "
            f"{_suggested_name(name)!r}), then pick it again.",
        )
    return name


def set_tab_connection(sql: str, name: str | None) -> str:
    """The tab's text bound to connection ``name`` (None: a local tab again).

    Only the header line changes: its ``connection=`` value is replaced, added (a header
    line is put first when the text has none) or removed (with the line, when nothing else
    is left on it). The header's other options and every other character of the text are
    kept as they are. A header the runner would refuse (REMOTE_HEADER_UNCLEAR) is refused
    here too: the picker never rewrites a line whose meaning is unclear."""
    if name is not None:
        check_connection_name(name)
    header_options(sql)  # the strict reader: an unclear header stays as the analyst wrote it
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
        raise _too_deep() from None


def _too_deep() -> QueryRefused:
    return QueryRefused(
        "refused: the remote tab's SQL nests deeper than the SQL reader follows",
        code="SQL_TOO_DEEP",
        hint="Split the statement into tabs.",
    )


def _same_dialect(a: str, b: str) -> bool:
    from sqlglot.dialects.dialect import Dialect

    return Dialect.get_or_raise(a) == Dialect.get_or_raise(b)


def _error_position(exc: Exception) -> tuple[int, int] | None:
    errors = getattr(exc, "errors", None) or []
    if errors and errors[0].get("line"):
        return int(errors[0]["line"]), int(errors[0].get("col") or 1)
    return None


def _suggested_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "dw"
