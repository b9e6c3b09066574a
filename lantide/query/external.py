"""External databases through ODBC (SQL Server, PostgreSQL, ...), staged locally.

A connection is an entry of ``.lantide/workspace.json`` ``"connections"``, without secrets::

    {"name": "warehouse", "type": "odbc", "dialect": "postgres",
     "connection_string": "Driver={PostgreSQL Unicode};Server=db;Port=5432;Database=shop",
     "user": "analyst"}

The password, and any other secret of its string (``"secret_keys"``), comes from the keyring
(:mod:`lantide.query.connection_secrets`). Its tables
are named with the connection first: ``"warehouse"."public"."orders"`` (or
``warehouse.orders`` for the default schema). SQL never ATTACHes them. A statement that
reads one connection only runs there, transpiled by sqlglot to ``dialect``, and its result
is streamed in batches into a local cached table; joins then happen locally.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime
from datetime import time as dtime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from lantide.query.connection_names import ConnectionNames
from lantide.query.connection_secrets import (
    get_connection_password,
    get_connection_secret,
    is_password_key,
    join_secrets,
    split_secrets,
)
from lantide.query.errors import ConnectionProblem, QueryCancelled, QueryError, QueryTimeout
from lantide.query.names import quote_ident, same_name
from lantide.query.typed_columns import ColumnBatch, ColumnTypeError, conform

if TYPE_CHECKING:
    import pyodbc

    from lantide.query.guard import ParsedQuery, TableRef
    from lantide.query.results import SchemaColumn
    from lantide.workspace.model import Workspace

# (name, DuckDB type) per column of a remote result
RemoteSchema = list[tuple[str, str]]

BATCH_ROWS = 50_000
_SYSTEM_SCHEMAS = {
    "information_schema",
    "pg_catalog",
    "pg_toast",
    "sys",
    "guest",
    "db_owner",
    "db_accessadmin",
    "db_securityadmin",
    "db_ddladmin",
    "db_backupoperator",
    "db_datareader",
    "db_datawriter",
    "db_denydatareader",
    "db_denydatawriter",
    "mysql",
    "performance_schema",
}
# ODBC SQL type codes -> ANSI type names for read_schema.
_ODBC_TYPES = {
    -7: "BOOLEAN",
    16: "BOOLEAN",
    -6: "TINYINT",
    5: "SMALLINT",
    4: "INTEGER",
    -5: "BIGINT",
    6: "DOUBLE",
    7: "REAL",
    8: "DOUBLE",
    1: "CHAR",
    12: "VARCHAR",
    -1: "VARCHAR",
    -8: "CHAR",
    -9: "VARCHAR",
    -10: "VARCHAR",
    91: "DATE",
    9: "DATE",
    92: "TIME",
    10: "TIME",
    93: "TIMESTAMP",
    11: "TIMESTAMP",
    -2: "BLOB",
    -3: "BLOB",
    -4: "BLOB",
    -11: "UUID",
}


@dataclass(frozen=True)
class ConnectionConfig:
    name: str
    connection_string: str
    dialect: str = "postgres"
    user: str | None = None
    login_timeout: int = 10
    secret_keys: tuple[str, ...] = ()  # secrets of the connection string kept in the keyring
    # secrets still written in workspace.json (an old file, no keyring to move them to):
    # used to connect, never written anew (see connections.migrate_connection_secrets)
    inline_secrets: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConnectionConfig:
        name = str(data.get("name") or "").strip()
        cs = str(data.get("connection_string") or "").strip()
        if not name or not cs:
            raise ConnectionProblem(
                f"connection entry {data!r} needs a name and a connection_string",
                code="CONNECTION_INVALID",
                hint="Fix the entry in .lantide/workspace.json or in Settings > Connections.",
            )
        clean, inline = split_secrets(cs)
        keys = data.get("secret_keys") or []
        return cls(
            name=name,
            connection_string=clean,
            dialect=str(data.get("dialect") or "postgres"),
            user=data.get("user") or None,
            login_timeout=int(data.get("login_timeout") or 10),
            secret_keys=tuple(str(k) for k in keys if isinstance(k, str)),
            inline_secrets=tuple(inline.items()),
        )

    def full_connection_string(self) -> tuple[str, list[str]]:
        """The string to connect with (secrets put back, UID and PWD added) and the secret
        values in it, to mask in error messages."""
        found = {key: get_connection_secret(self.name, key) for key in self.secret_keys}
        inline = dict(self.inline_secrets)
        password = get_connection_password(self.name)
        for key in [k for k in inline if is_password_key(k)]:
            password = password or inline[key]
            del inline[key]
        found.update({k: v for k, v in inline.items() if not found.get(k)})
        parts = [join_secrets(self.connection_string, found).rstrip(";")]
        if self.dialect == "postgres" and "boolsaschar" not in self.connection_string.lower():
            parts.append("BoolsAsChar=0")  # psqlODBC reports booleans as text unless told
        if self.user:
            parts.append(f"UID={odbc_braced(self.user)}")
        if password:
            parts.append(f"PWD={odbc_braced(password)}")
        hidden = [v for v in list(found.values()) + [password] if v]
        return ";".join(parts), hidden


def odbc_braced(value: str) -> str:
    """A connection-string value; braced only when it must be (some drivers keep braces)."""
    if any(c in value for c in ";{}=") or value != value.strip():
        return "{" + value.replace("}", "}}") + "}"
    return value


class ExternalTable(TypedDict):
    """A table of a connection as the listing shows it (:meth:`ExternalSources.list_tables`)."""

    name: str
    schema: str | None
    connection: str
    kind: Literal["external"]
    remote_kind: str  # table, view
    qualified_name: str  # "connection"."schema"."table"


class ExternalSources(ConnectionNames):
    """The workspace's connections reached: tables listed, statements run and streamed
    (its names and :meth:`match`: :class:`ConnectionNames`)."""

    def __init__(self, workspace: Workspace, *, timeout_seconds: float | None = 300.0) -> None:
        super().__init__(workspace)
        self.timeout_seconds = timeout_seconds
        # (name, connection string, user) -> its tables
        self._tables_cache: dict[tuple[str, str, str | None], list[ExternalTable]] = {}
        self._lock = threading.Lock()

    # -- configuration ------------------------------------------------------------
    def configs(self) -> list[ConnectionConfig]:
        out = []
        for entry in self.workspace.connections:
            if isinstance(entry, dict) and entry.get("type", "odbc") == "odbc":
                out.append(ConnectionConfig.from_dict(entry))
        return out

    def config(self, name: str) -> ConnectionConfig:
        for config in self.configs():
            if same_name(config.name, name):
                return config
        raise ConnectionProblem(
            f"no connection named {name!r}",
            code="CONNECTION_NOT_FOUND",
            hint=f"Connections: {', '.join(self.names()) or 'none'}.",
        )

    # -- connecting ----------------------------------------------------------------
    def connect(self, name: str) -> pyodbc.Connection:
        import pyodbc

        config = self.config(name)
        text, hidden = config.full_connection_string()
        try:
            con = pyodbc.connect(text, timeout=config.login_timeout, autocommit=True)
        except pyodbc.Error as exc:
            raise ConnectionProblem(
                f"connection {config.name!r}: cannot connect ({_clean(exc, hidden)})",
                hint="Check the server, database and user in Settings > Connections and the "
                "password in the keyring; is the ODBC driver installed?",
            ) from None
        if self.timeout_seconds:
            # the driver may have no query timeout; the fetch loop still checks the clock
            with contextlib.suppress(pyodbc.Error):
                con.timeout = int(self.timeout_seconds)
        read_only = _READ_ONLY_SESSION.get(config.dialect)
        if read_only:  # what the guard's lists do not know still cannot write
            try:
                con.cursor().execute(read_only)
            except pyodbc.Error as exc:
                con.close()
                raise ConnectionProblem(
                    f"connection {config.name!r}: cannot make the session read-only "
                    f"({_clean(exc, hidden)})",
                    hint="Lantide only reads; check the user's rights on the server.",
                ) from None
        if self.timeout_seconds:  # the server stops a statement (a sleep) past the limit
            for statement in _SESSION_TIMEOUT.get(config.dialect, ()):
                try:
                    con.cursor().execute(statement.format(seconds=int(self.timeout_seconds)))
                    break
                except pyodbc.Error:
                    continue  # MySQL's name for it, not MariaDB's; the fetch clock remains
        return con

    # -- catalog -------------------------------------------------------------------
    def list_tables(self, name: str, *, refresh: bool = False) -> list[ExternalTable]:
        config = self.config(name)
        key = (config.name, config.connection_string, config.user)  # an edit is a new key
        with self._lock:
            if not refresh and key in self._tables_cache:
                return self._tables_cache[key]
        con = self.connect(name)
        try:
            rows = con.cursor().tables().fetchall()
        finally:
            con.close()
        tables: list[ExternalTable] = []
        for row in rows:
            # MySQL and MariaDB have no schemas: their databases are ODBC catalogs, shown
            # in the schema's place (``conn.shop.customers``), as analysts write them.
            schema = row.table_schem or (row.table_cat if _databases_are_catalogs(config) else None)
            table, kind = row.table_name, (row.table_type or "").upper()
            if kind not in ("TABLE", "VIEW") or (schema or "").lower() in _SYSTEM_SCHEMAS:
                continue
            parts = [name] + ([schema] if schema else []) + [table]
            tables.append(
                {
                    "name": table,
                    "schema": schema,
                    "connection": name,
                    "kind": "external",
                    "remote_kind": kind.lower(),
                    "qualified_name": ".".join(quote_ident(p) for p in parts),
                }
            )
        with self._lock:
            self._tables_cache[key] = tables
        return tables

    def describe(self, name: str, ref: TableRef) -> list[SchemaColumn]:
        remote = self.remote_ref(name, ref)
        where = (
            {"catalog": remote.schema}
            if _databases_are_catalogs(self.config(name))
            else {"schema": remote.schema}
        )
        con = self.connect(name)
        try:
            rows = con.cursor().columns(table=remote.name, **where).fetchall()
        finally:
            con.close()
        columns: list[SchemaColumn] = []
        for row in rows:
            base = _ODBC_TYPES.get(row.data_type, (row.type_name or "VARCHAR").upper())
            if (row.type_name or "").lower() in ("bool", "boolean"):
                base = "BOOLEAN"
            elif row.data_type in (2, 3):
                base = f"DECIMAL({row.column_size},{row.decimal_digits or 0})"
            elif row.data_type in (1, 12, -8, -9) and row.column_size and row.column_size < 65535:
                base = f"{base}({row.column_size})"
            columns.append({"name": row.column_name, "type": base, "nullable": bool(row.nullable)})
        return columns

    # -- statements ----------------------------------------------------------------
    def remote_ref(self, name: str, ref: TableRef) -> TableRef:
        from lantide.query.guard import TableRef  # the guard loads with the first query

        if ref.catalog and same_name(ref.catalog, name):
            return TableRef(ref.name, ref.schema)
        return TableRef(ref.name)

    def remote_sql(self, name: str, parsed: ParsedQuery) -> str:
        """The statement in the connection's dialect, with the connection part removed; a
        remote tab's as written (it is in that dialect already)."""
        from sqlglot import exp

        if parsed.remote is not None:
            return parsed.body

        config = self.config(name)
        tree = parsed.expression.copy()
        for table in tree.find_all(exp.Table):
            if table.args.get("catalog") is not None and same_name(table.catalog, name):
                table.set("catalog", None)
            elif (
                table.args.get("catalog") is None
                and table.args.get("db") is not None
                and same_name(table.db, name)
            ):
                table.set("db", None)
        remote: str = tree.sql(dialect=config.dialect)
        return remote

    def count_rows(
        self,
        name: str,
        remote_sql: str,
        *,
        register_cancel: Callable[[Callable[[], None]], AbstractContextManager[None]],
    ) -> int:
        """The remote result's row count, counted on the source; a cancel stops it there
        (the count runs the whole statement: a slow one is slow here first)."""
        with self._statement(name, register_cancel, "counting on connection") as (cursor, _):
            row = cursor.execute(f"SELECT COUNT(*) FROM ({remote_sql}) lantide_q").fetchone()
            return int(row[0])

    def explain_rows(
        self,
        name: str,
        remote_sql: str,
        *,
        register_cancel: Callable[[Callable[[], None]], AbstractContextManager[None]],
    ) -> int | None:
        """The engine's own estimate of the remote result's rows, from its EXPLAIN (nothing
        runs); None where the engine has none Lantide reads or the EXPLAIN failed (then
        :meth:`count_rows` decides). See :mod:`lantide.query.row_estimate`."""
        from lantide.query.row_estimate import explain_sql, read_estimate

        explain = explain_sql(self.config(name).dialect, remote_sql)
        if explain is None:
            return None
        try:
            with self._statement(name, register_cancel, "estimating on connection") as (
                cursor,
                _,
            ):
                return read_estimate(self.config(name).dialect, cursor.execute(explain).fetchall())
        except ConnectionProblem as exc:
            if exc.code == "REMOTE_QUERY_ERROR":  # the COUNT says what is wrong, if anything
                return None
            raise

    def result_checksum(
        self,
        name: str,
        remote_sql: str,
        *,
        register_cancel: Callable[[Callable[[], None]], AbstractContextManager[None]],
    ) -> str | None:
        """A digest of the remote result's rows, computed on the source (the rows are not
        fetched); None where the dialect has no way to digest rows here. Equal digests: the
        same rows, in any order; Source Run skips a remote tab whose digest is unchanged."""
        dialect = self.config(name).dialect
        if dialect not in ("postgres", "redshift", "mysql"):
            return None
        with self._statement(name, register_cancel, "checking on connection") as (cursor, _):
            if dialect == "mysql":
                cursor.execute(f"SELECT * FROM ({remote_sql}) lantide_q LIMIT 0")
                # each cell hashed on its own: a separator inside a value cannot make two
                # rows' texts alike (('a<31>vb', 'c') and ('a', 'b<31>vc') did)
                cells = ", ".join(
                    f"IFNULL(MD5(CONCAT('v', {_mysql_ident(d[0])})), 'n')"
                    for d in cursor.description
                )
                digest = (
                    "SELECT count(*), BIT_XOR(CAST(CONV(LEFT(MD5(r), 16), 16, 10) AS UNSIGNED)), "
                    f"SUM(CRC32(r)) FROM (SELECT CONCAT_WS(CHAR(31), {cells}) AS r "
                    f"FROM ({remote_sql}) lantide_q) lantide_d"
                )
            else:
                # the whole row: ``lantide_q.*`` is the table's; a bare ``lantide_q`` is a
                # result column of that name when there is one (only it was hashed)
                rows = f"SELECT md5(ROW(lantide_q.*)::text) AS h FROM ({remote_sql}) lantide_q"
                digest = (
                    "SELECT count(*), md5(coalesce(string_agg(h, '' ORDER BY h), '')) "
                    f"FROM ({rows}) lantide_d"
                )
            row = cursor.execute(digest).fetchone()
        return ":".join(str(v) for v in row)

    def stream_batches(
        self,
        name: str,
        remote_sql: str,
        *,
        register_cancel: Callable[[Callable[[], None]], AbstractContextManager[None]],
        batch_rows: int | None = None,
    ) -> Generator[tuple[RemoteSchema, ColumnBatch | None], None, None]:
        """Yield ``(schema, batch)``: first the schema with no batch, then the remote rows as
        typed columns (:class:`ColumnBatch`), at most one batch in Python."""
        started = time.monotonic()
        with self._statement(name, register_cancel, "staging from connection") as (
            cursor,
            cancelled,
        ):
            cursor.execute(remote_sql)
            schema = _schema(cursor.description)
            yield schema, None
            while True:
                if cancelled.is_set():
                    raise QueryCancelled("staging from connection " + repr(name))
                if self.timeout_seconds and time.monotonic() - started > self.timeout_seconds:
                    raise QueryTimeout(self.timeout_seconds)
                rows = cursor.fetchmany(batch_rows or BATCH_ROWS)
                if not rows:
                    break
                yield schema, _to_batch(schema, rows)

    @contextlib.contextmanager
    def _statement(
        self,
        name: str,
        register_cancel: Callable[[Callable[[], None]], AbstractContextManager[None]],
        doing: str,
    ) -> Generator[tuple[pyodbc.Cursor, threading.Event], None, None]:
        """A cursor on ``name`` whose statement a cancel stops on the server (the driver's
        SQLCancel); a driver error becomes ``REMOTE_QUERY_ERROR``, one after a cancel
        ``QUERY_CANCELLED``."""
        con = self.connect(name)
        cancelled = threading.Event()
        cursor = con.cursor()
        # A cancel comes from another thread and may arrive as the statement ends: the
        # driver's SQLCancel on a closed connection's handle crashed the process (a
        # segfault in pyodbc), so cancelling and closing take turns and a cancel after
        # the close does nothing.
        handle_lock = threading.Lock()
        open_handle = [True]

        def cancel() -> None:
            cancelled.set()
            with handle_lock:
                if open_handle[0]:
                    with contextlib.suppress(Exception):
                        cursor.cancel()

        try:
            with register_cancel(cancel):
                yield cursor, cancelled
        except Exception as exc:
            import pyodbc

            if cancelled.is_set():
                raise QueryCancelled(f"{doing} {name!r}") from None
            if isinstance(exc, pyodbc.Error) and exc.args and exc.args[0] in _TIMED_OUT:
                raise QueryTimeout(self.timeout_seconds or 0) from None
            if isinstance(exc, pyodbc.Error) and exc.args and exc.args[0] == "42S21":
                raise QueryError(  # MySQL's "Duplicate column name" in a derived table
                    f"connection {name!r}: the result has two columns of one name "
                    f"({_clean(exc, [])})",
                    code="REMOTE_DUPLICATE_COLUMN",
                    hint="Give each column its own name with AS.",
                ) from None
            if isinstance(exc, pyodbc.Error):
                raise ConnectionProblem(
                    f"connection {name!r}: the remote query failed ({_clean(exc, [])})",
                    code="REMOTE_QUERY_ERROR",
                    hint="Check the SQL against the remote tables (read_schema) and try again.",
                ) from None
            raise
        finally:
            with handle_lock:
                open_handle[0] = False
                con.close()


# Every statement Lantide sends only reads; the server holds it to that.
_READ_ONLY_SESSION = {
    "postgres": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    "redshift": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    "mysql": "SET SESSION TRANSACTION READ ONLY",
}


# The statement time limit, set on the server for the session: the driver's query timeout
# (``con.timeout``) did not stop a PostgreSQL ``pg_sleep(100000)``, and the fetch loop's
# clock only looks between batches. The first statement the server knows is kept
# (MariaDB's max_statement_time, else MySQL's max_execution_time, in ms, SELECT only).
_SESSION_TIMEOUT = {
    "postgres": ("SET statement_timeout = '{seconds}s'",),
    "redshift": ("SET statement_timeout = '{seconds}s'",),
    "mysql": (
        "SET SESSION max_statement_time = {seconds}",
        "SET SESSION max_execution_time = {seconds}000",
    ),
}
# SQLSTATEs of a statement the server stopped at its time limit (PostgreSQL's
# query_canceled; MariaDB's max_statement_time, error 1969, which its driver reports as
# HY018 or 70100); a cancel is told apart before
_TIMED_OUT = {"57014", "70100", "HY018"}


def _mysql_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _databases_are_catalogs(config: ConnectionConfig) -> bool:
    """MySQL and MariaDB: a database is what ODBC calls a catalog (their drivers refuse a
    schema: "Schemas are not supported. Use CatalogName parameter instead")."""
    return config.dialect == "mysql"


def _clean(exc: Exception, hidden: list[str]) -> str:
    text = " ".join(str(a) for a in getattr(exc, "args", [])[1:] or [exc])
    text = re.sub(r"\s+", " ", text).strip()
    for secret in hidden:
        text = text.replace(secret, "***")
    return text[:400]


def _column_type(entry: Sequence[Any]) -> str:
    """The DuckDB type of a pyodbc ``cursor.description`` entry."""
    py_type, precision, scale = entry[1], entry[4], entry[5]
    if py_type is bool:
        return "BOOLEAN"
    if py_type is int:
        return "BIGINT"
    if py_type is float:
        return "DOUBLE"
    if py_type is Decimal:
        if precision and 0 < precision <= 38 and scale is not None and 0 <= scale <= precision:
            return f"DECIMAL({precision},{scale})"
        return "DOUBLE"
    if py_type is datetime:
        return "TIMESTAMP"
    if py_type is date:
        return "DATE"
    if py_type is dtime:
        return "TIME"
    if py_type in (bytes, bytearray):
        return "BLOB"
    return "VARCHAR"


def _schema(description: Sequence[Sequence[Any]]) -> RemoteSchema:
    """``(name, DuckDB type)`` per column of the remote result. Two columns named alike
    (ignoring case, as DuckDB does) are refused: a suffix made one of them a column the
    analyst never named, and ``SELECT count(*), count(x)`` on PostgreSQL names both ``count``."""
    names: list[str] = []
    seen: set[str] = set()
    for entry in description:
        name = entry[0]
        if name.casefold() in seen:
            raise QueryError(
                f"the remote result has two columns named {name!r}; a cached table holds "
                "one column of a name (names are compared ignoring case)",
                code="REMOTE_DUPLICATE_COLUMN",
                hint="Give each column its own name with AS.",
            )
        seen.add(name.casefold())
        names.append(name)
    return [(n, _column_type(e)) for n, e in zip(names, description, strict=True)]


def _to_batch(schema: RemoteSchema, rows: Sequence[Sequence[Any]]) -> ColumnBatch:
    """One fetch of remote rows as typed columns; a value the driver hands over as its
    own object (a UUID, an interval) goes through its text form."""
    names = [name for name, _ in schema]
    types = [type_name for _, type_name in schema]
    columns = [[row[i] for row in rows] for i in range(len(schema))]
    try:
        return conform(ColumnBatch(names, types, columns))
    except ColumnTypeError as exc:
        raise ConnectionProblem(
            f"column {exc.column!r}: a remote value does not fit {exc.type_name} ({exc.detail})",
            code="REMOTE_TYPE_ERROR",
            hint="CAST the column to text or a wider type in the query.",
        ) from None
