"""The DuckDB engine of a workspace: one database, one owner, a cursor per thread.

``.lantide/cache.duckdb`` is opened once per process. Every thread that queries (the UI,
the agent, a Source Run) gets its own cursor, so they read at the same time; writes of
cached tables are transactions of their own. :meth:`Engine.interrupt` cancels whatever
runs now from any thread (for shutting down); a :class:`~lantide.query.cancel.CancelScope`
cancels only what one caller runs. Each statement has the time limit of ``QuerySettings``.

A thread's cursor lives as long as the thread's Python state: it is kept in a
``threading.local`` whose entry is released when that state goes, and a finalizer then
retires the cursor (it is closed by the next thread that asks for a cursor, or at close).
This holds for threads Python did not start, such as Qt's pool threads, which the
``threading`` module does not list; such a thread may get a fresh state (and cursor) per
job, which costs a few microseconds.

The connection is confined before any user SQL runs: it reads only inside the workspace
(``allowed_directories``), the network and every other file is off
(``enable_external_access = false``), no extension is installed or auto-loaded, and
``lock_configuration`` freezes all of it, so a ``SET`` that slipped past the guard fails.
Lantide itself still creates views and tables from Python after the lock.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lantide.query import guard_functions
from lantide.query.cancel import CancelScope, active_scopes
from lantide.query.duckdb_import import duckdb_core
from lantide.query.errors import QueryCancelled, QueryError, QueryTimeout, TableNotFound
from lantide.query.pending_connection import (
    PendingConnection,
    connection_config,
    is_new_database,
)

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

    # A DuckDB cursor (DuckDB's cursors are connections of their own).
    Cursor = DuckDBPyConnection

# One row as DuckDB returns it: the cell values are whatever the column's type maps to.
Row = tuple[Any, ...]

T = TypeVar("T")

# ``LINE 3: select ...`` followed by a caret line marks where DuckDB found the error.
_LINE_RE = re.compile(r"^LINE (\d+): (.*)$", re.MULTILINE)


class Engine:
    """Owns the DuckDB connection of one workspace."""

    def __init__(
        self,
        db_path: Path,
        *,
        allowed_dirs: list[Path],
        search_dir: Path,
        memory_limit: str = "75%",
        threads: int = 0,
        timeout_seconds: float | None = 300.0,
        pending: PendingConnection | None = None,
        keep_parquet_footers: bool = False,
    ) -> None:
        """``pending``: a connection to ``db_path`` already started with these settings,
        taken instead of connecting here (one started with other settings is closed
        first, see :mod:`lantide.query.pending_connection`). ``keep_parquet_footers``:
        for a process that ends with its command (see :meth:`_keep_parquet_footers`)."""
        duckdb = duckdb_core()  # not the whole package: see duckdb_import

        self.db_path = Path(db_path)
        self.timeout_seconds = timeout_seconds
        config = connection_config(memory_limit, threads)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        # A database made by this connect holds only what this engine writes (DuckDB locks
        # the file against other processes): e.g. no row count to forget on a first open.
        connect: Callable[[], DuckDBPyConnection]
        if pending is not None and pending.matches(self.db_path, config):
            self.created = pending.created  # (known before its connect ran)
            connect = pending.take
        else:
            if pending is not None:  # DuckDB refuses a second configuration of one file
                pending.discard(wait=True)
            self.created = is_new_database(self.db_path)
            connect = functools.partial(duckdb.connect, str(self.db_path), config=config)
        try:
            self._con: DuckDBPyConnection = connect()
        except duckdb.Error as exc:
            if "lock" in str(exc).lower():
                raise QueryError(
                    f"{self.db_path}: the cache database is in use by another program "
                    f"({_first_line(exc)})",
                    hint="Close the other program (a DuckDB shell, a notebook) and open the "
                    "workspace again.",
                    code="CACHE_LOCKED",
                ) from None
            raise QueryError(
                f"{self.db_path}: the cache database cannot be opened ({_first_line(exc)})",
                hint="It holds only cached results: set it aside (the desktop app offers to; "
                "it is renamed, not deleted) and Lantide starts a fresh one; Source Run "
                "recomputes the tabs.",
                code="CACHE_UNREADABLE",
            ) from None
        from lantide.query.names import quote_literal

        # DuckDB wants the allowed directories before external access goes off.
        dirs = ", ".join(quote_literal(str(d).rstrip("/") + "/") for d in allowed_dirs)
        self._con.execute(f"SET allowed_directories = [{dirs}]")
        self._con.execute(f"SET file_search_path = {quote_literal(str(search_dir))}")
        self._con.execute("SET enable_external_access = false")
        if keep_parquet_footers:
            self._keep_parquet_footers()
        self._con.execute("SET lock_configuration = true")
        self._lock = threading.RLock()
        self._local = threading.local()  # .holder: this thread's _ThreadCursor
        self._cursors: dict[int, Cursor] = {}  # key -> cursor of a live thread state
        self._retired: deque[Cursor] = deque()  # cursors of ended thread states, to close
        self._keys = itertools.count()
        self._running: dict[int, Cursor] = {}  # id(token) -> cursor running a statement
        self._under_way: dict[int, str] = {}  # id(token) -> its statement, once work began
        self._cancel_hooks: dict[int, Callable[[], None]] = {}
        self._watchdog = _Watchdog()
        self._closed = False
        self._parser: Cursor | None = None
        guard_functions.offer_parser(self)

    # -- cursors -------------------------------------------------------------------
    def cursor(self) -> Cursor:
        """This thread's cursor (created on first use)."""
        if self._closed:
            raise _closed_error()
        holder: _ThreadCursor | None = getattr(self._local, "holder", None)
        if holder is not None:
            return holder.cursor
        with self._lock:
            if self._closed:
                raise _closed_error()
            self._close_retired()
            cur = self._con.cursor()
            key = next(self._keys)
            self._cursors[key] = cur
        holder = _ThreadCursor(cur)
        # No lock and no DuckDB call in the finalizer: it runs while the thread's state is
        # torn down (dict and deque operations are atomic under the GIL).
        weakref.finalize(holder, _retire, weakref.ref(self), key).atexit = False
        self._local.holder = holder
        return cur

    def release_cursor(self) -> None:
        """Close this thread's cursor now (a thread that will not query again may call it;
        otherwise the cursor goes when the thread's state goes)."""
        if getattr(self._local, "holder", None) is not None:
            del self._local.holder  # the last reference: the finalizer retires the cursor
            with self._lock:
                self._close_retired()

    @property
    def open_cursors(self) -> int:
        """Cursors of live thread states (for tests and diagnostics)."""
        return len(self._cursors)

    def _close_retired(self) -> None:
        while True:
            try:
                cur = self._retired.popleft()
            except IndexError:
                return
            with contextlib.suppress(Exception):
                cur.close()

    # -- running -------------------------------------------------------------------
    def run(
        self,
        work: Callable[[Cursor], T],
        *,
        timeout: float | None = -1.0,
        sql: str | None = None,
        statement: str | None = None,
    ) -> T:
        """Run ``work(cursor)`` under the time limit; cancellable by :meth:`interrupt`.

        DuckDB errors become :class:`QueryError` with a code and a hint (positions in
        ``sql``). ``timeout`` -1 means the engine's default; None means no limit.
        ``statement`` (else ``sql``) names what the work runs in
        :meth:`statements_under_way`.
        """
        duckdb = duckdb_core()

        limit = self.timeout_seconds if timeout == -1.0 else timeout
        cur = self.cursor()
        token = _Running(cur)
        key = id(token)
        scopes = active_scopes()
        with self._lock:
            self._running[key] = cur
        entered: list[CancelScope] = []
        try:
            for scope in scopes:
                if not scope.enter_statement(key, cur):
                    raise QueryCancelled()
                entered.append(scope)
            if limit:
                self._watchdog.watch(token, limit)
            with self._lock:
                self._under_way[key] = statement or sql or ""
            return work(cur)
        except duckdb.InterruptException:
            if token.timed_out:
                raise QueryTimeout(_watched(limit)) from None
            raise QueryCancelled() from None
        except duckdb.Error as exc:
            if token.timed_out:
                raise QueryTimeout(_watched(limit)) from None
            if any(scope.cancelled for scope in entered):
                raise QueryCancelled() from None  # e.g. an interrupted ROLLBACK
            raise translate_error(exc, sql) from None
        finally:
            if limit:
                self._watchdog.forget(token)
            for scope in entered:
                scope.leave_statement(key)
            with self._lock:
                self._running.pop(key, None)
                self._under_way.pop(key, None)
            if any(scope.cancelled for scope in entered):
                _end_transaction(cur)

    def execute(
        self, sql: str, params: list[object] | None = None, *, timeout: float | None = -1.0
    ) -> list[Row]:
        """Run one trusted statement (Lantide's own SQL) and return all rows."""
        return self.run(
            lambda cur: cur.execute(sql, params or []).fetchall(), timeout=timeout, sql=sql
        )

    def statements_under_way(self) -> list[str]:
        """The statements whose work has begun and not ended (each caller's ``statement``
        or ``sql``, "" when it gave neither): set right before ``work`` is called, after
        the cancel scopes took the statement and its time limit was armed, so a cancel
        from then on reaches it. For showing long work, and for tests that must act
        while a statement runs instead of sleeping and hoping it started."""
        with self._lock:
            return list(self._under_way.values())

    @contextmanager
    def cancel_hook(self, hook: Callable[[], None]) -> Iterator[None]:
        """Register work outside DuckDB (an ODBC fetch) that :meth:`interrupt` must stop."""
        key = id(hook)
        scopes = active_scopes()
        with self._lock:
            self._cancel_hooks[key] = hook
        entered: list[CancelScope] = []
        try:
            for scope in scopes:
                if scope.add_hook(key, hook):
                    entered.append(scope)
                else:
                    hook()  # cancelled before the work started: stop it at once
            yield
        finally:
            for scope in entered:
                scope.remove_hook(key)
            with self._lock:
                self._cancel_hooks.pop(key, None)

    def interrupt(self) -> int:
        """Cancel every statement running now, from any thread. Returns how many."""
        with self._lock:
            running = list(self._running.values())
            hooks = list(self._cancel_hooks.values())
        for cur in running:
            with contextlib.suppress(Exception):
                cur.interrupt()
        for hook in hooks:
            with contextlib.suppress(Exception):
                hook()
        return len(running) + len(hooks)

    @property
    def busy(self) -> bool:
        with self._lock:
            return bool(self._running or self._cancel_hooks)

    # -- lifecycle -----------------------------------------------------------------
    def _keep_parquet_footers(self) -> None:
        """Read a Parquet file's footer once, not once per statement that binds it (the
        registration's view, a preview's DESCRIBE, the query: 10-20 ms each on a 1 GB
        file; issue 33). Only for a process that ends with its command: DuckDB trusts a
        kept footer while the file's modification time, to the second, is the one it read,
        so a file rewritten in place at the same size with its time set back (``rsync
        --inplace -t`` can) would be read through the old footer, its statistics and
        offsets, silently. A long-lived process (the desktop app, ``lantide mcp``) reads
        each footer afresh; tests/query/test_sources.py holds both."""
        self._con.execute("SET GLOBAL parquet_metadata_cache = true")  # every cursor

    def parser_cursor(self) -> Cursor:
        """A cursor of its own for the guard's calls to DuckDB's parser
        (``json_serialize_sql``: :func:`guard_functions.duckdb_calls`, which calls this under
        its lock), so the process needs no second database to parse with."""
        with self._lock:
            if self._closed:
                raise _closed_error()
            if self._parser is None:
                self._parser = self._con.cursor()
            return self._parser

    def close(self) -> None:
        if self._closed:
            return
        guard_functions.withdraw_parser(self)  # waits for a parse running on it
        self.interrupt()
        self._watchdog.stop()
        with self._lock:
            self._closed = True
            if self._parser is not None:
                self._retired.append(self._parser)
                self._parser = None
            self._retired.extend(self._cursors.values())
            self._cursors.clear()
            self._close_retired()
            with contextlib.suppress(Exception):
                self._con.execute("CHECKPOINT")
            self._con.close()

    @property
    def connection(self) -> DuckDBPyConnection:
        """The owning connection; only for Lantide's own registration code."""
        return self._con


class _ThreadCursor:
    """Held in a thread-local: when the thread's state goes, so does this, and its
    finalizer retires the cursor."""

    __slots__ = ("cursor", "__weakref__")

    def __init__(self, cursor: Cursor) -> None:
        self.cursor = cursor


def _watched(limit: float | None) -> float:
    """The time limit of a statement that timed out: only a watched one (a limit set) can."""
    assert limit is not None
    return limit


def _retire(engine_ref: weakref.ref[Engine], key: int) -> None:
    engine = engine_ref()
    if engine is None:
        return
    cur = engine._cursors.pop(key, None)
    if cur is not None:
        engine._retired.append(cur)


def _closed_error() -> QueryError:
    return QueryError(
        "the query engine is closed", code="ENGINE_CLOSED", hint="Open the workspace again."
    )


@contextmanager
def transaction(cur: Cursor) -> Iterator[None]:
    """``BEGIN`` … ``COMMIT`` on ``cur``; on any error (a cancel included) ``ROLLBACK`` and
    re-raise the error, not a failure of the rollback itself."""
    cur.execute("BEGIN")
    try:
        yield
        cur.execute("COMMIT")
    except BaseException:
        _end_transaction(cur)
        raise


def set_aside_cache(db_path: Path) -> Path:
    """Rename an unreadable cache database (and its WAL) out of the way, never deleting it,
    so the next open starts a fresh one. Returns the name it was given."""
    import os
    from datetime import datetime

    db_path = Path(db_path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = db_path.with_name(f"{db_path.name}.unreadable-{stamp}")
    os.replace(db_path, target)
    wal = Path(f"{db_path}.wal")
    if wal.exists():
        os.replace(wal, Path(f"{target}.wal"))
    return target


def _end_transaction(cur: Cursor) -> None:
    """After a cancel, make sure the cursor is not left inside a transaction (an interrupt
    may have hit the work's own ROLLBACK); without one, DuckDB just says so."""
    with contextlib.suppress(Exception):
        cur.execute("ROLLBACK")


class _Running:
    """One statement under way: its cursor, and whether its time limit struck."""

    __slots__ = ("cursor", "timed_out", "deadline")

    def __init__(self, cursor: Cursor) -> None:
        self.cursor = cursor
        self.timed_out = False
        self.deadline = 0.0


class _Watchdog:
    """One thread that interrupts statements past their deadline (a Timer per statement
    would cost a thread start, about a millisecond, on every query)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._watched: dict[int, _Running] = {}
        self._thread: threading.Thread | None = None
        self._stopped = False

    def watch(self, running: _Running, seconds: float) -> None:
        running.deadline = time.monotonic() + seconds
        with self._cond:
            self._watched[id(running)] = running
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="lantide-query-watchdog", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def forget(self, running: _Running) -> None:
        with self._cond:
            self._watched.pop(id(running), None)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _loop(self) -> None:
        with self._cond:
            while not self._stopped:
                now = time.monotonic()
                for key, running in list(self._watched.items()):
                    if running.deadline <= now:
                        running.timed_out = True
                        del self._watched[key]
                        with contextlib.suppress(Exception):
                            running.cursor.interrupt()
                nearest = min((r.deadline for r in self._watched.values()), default=None)
                self._cond.wait(timeout=None if nearest is None else max(0.0, nearest - now))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def error_position(message: str, sql: str | None = None) -> tuple[int, int] | None:
    """(line, column), both 1-based, from DuckDB's ``LINE n:`` marker and its caret.

    DuckDB echoes a window of long lines; the column is exact for lines it shows whole.
    """
    match = _LINE_RE.search(message)
    if not match:
        return None
    line = int(match.group(1))
    rest = message[match.end() :].lstrip("\n").splitlines()
    column = 1
    if rest and "^" in rest[0]:
        column = rest[0].index("^") - len(f"LINE {line}: ") + 1
    return line, max(column, 1)


_ECHO_CHARS = 240  # of a file's line quoted in an error (a 30 MB line once was, whole)


def _reader_brief(message: str) -> str:
    """A reader's error without DuckDB's list of options, its lines cut to a readable
    length, with the file it names."""
    kept: list[str] = []
    for line in message.splitlines():
        if not line.strip() or line.startswith("Possible"):
            break
        kept.append(line if len(line) <= _ECHO_CHARS else line[:_ECHO_CHARS] + "…")
    file = re.search(r"^\s*file = (.+)$", message, re.MULTILINE)
    return "\n".join(kept) + (f" (file {file.group(1).strip()})" if file else "")


# A binder error about types, not names ("Cannot compare values of type DATE and INTEGER",
# "No function matches the given name and argument types"): a column hint would mislead.
_TYPE_MISMATCH = re.compile(r"\btypes?\b|\bcast\b|\bconvert", re.IGNORECASE)
_NOT_FOUND = re.compile(r"not found|does not have a column|Referenced column", re.IGNORECASE)


def translate_error(exc: BaseException, sql: str | None = None) -> QueryError:
    """A DuckDB exception as a QueryError with a stable code and a hint."""
    duckdb = duckdb_core()

    message = str(exc).strip()
    headline = message.split("\n\nLINE")[0].strip()
    position = error_position(message, sql)
    if isinstance(exc, duckdb.CatalogException):
        return TableNotFound(
            headline,
            position=position,
            hint='show_tables lists the tables; quote odd names: "my file".',
        )
    if isinstance(exc, duckdb.BinderException):
        if _TYPE_MISMATCH.search(headline) and not _NOT_FOUND.search(headline):
            return QueryError(
                headline,
                code="BIND_ERROR",
                position=position,
                hint="The values' types do not fit together: cast one of them "
                "(CAST(x AS DATE), x::INTEGER) or compare like with like.",
            )
        return QueryError(
            headline,
            code="BIND_ERROR",
            position=position,
            hint="Check the column names with read_schema(table).",
        )
    if isinstance(exc, duckdb.ParserException):
        return QueryError(
            headline,
            code="SQL_SYNTAX",
            position=position,
            hint="Fix the SQL syntax near the marked position.",
        )
    if isinstance(exc, duckdb.PermissionException):
        return QueryError(
            headline,
            code="QUERY_REFUSED_OUTSIDE_WORKSPACE",
            position=position,
            hint="Queries read only the workspace's data/ files and cached "
            "tables; put the file in data/ and query it by name.",
        )
    if isinstance(exc, duckdb.OutOfMemoryException):
        return QueryError(
            headline,
            code="OUT_OF_MEMORY",
            hint="Aggregate or filter earlier, persist an upstream step as a "
            "SQL tab, or raise query.memory_limit in settings.",
        )
    if "Maximum line size" in message or "maximum_object_size" in message:
        return QueryError(
            _reader_brief(message),
            code="DATA_ERROR",
            hint="A line (or JSON object) of the file is longer than the reader "
            "takes: the file is probably not what its name says, or one "
            "field holds a huge value. Split or remove that value, or "
            "save the data as Parquet.",
        )
    if isinstance(exc, duckdb.InvalidInputException) and "Expected Number of Columns" in message:
        # DuckDB appends every reader option; the line, its text and the counts are the news
        return QueryError(
            _reader_brief(message),
            code="DATA_ERROR",
            hint="That line of the file has a different number of fields than "
            "the header: fix or quote it in the file (a field holding the "
            "delimiter needs quotes), then run the query again.",
        )
    if isinstance(exc, (duckdb.ConversionException, duckdb.InvalidInputException)):
        if "CSV Error" in message:
            headline = _reader_brief(message)
        return QueryError(
            headline,
            code="DATA_ERROR",
            position=position,
            hint="A value does not fit its column's type; the message names "
            "the file line or value. Fix the data or cast explicitly.",
        )
    if re.search(r"corrupt|failed to read file|decompress", message, re.IGNORECASE):
        return QueryError(
            headline,
            code="DATA_ERROR",
            position=position,
            hint="A data file the query reads is damaged: replace it with a "
            "good copy (Lantide never changes it); the other tables work.",
        )
    return QueryError(
        headline, code="SQL_ERROR", position=position, hint="Fix the statement and run it again."
    )
