"""Workbook sheets as lazy tables: listed at once, read when a query first names them.

Registering ``book.xlsx`` costs its listing only: the container checks of
:mod:`lantide.query.workbook_limits` and the sheet names. Each sheet becomes a placeholder
view ``"book"."Sheet1"`` (so the two-part name exists and says what it is if DuckDB meets
it unread). The query layer calls :meth:`LazySheets.load_sheet` for every sheet a
statement reads, before running it: the sheet is checked against the limits, read with
calamine and stored as a table in place of its placeholder, once per version of the file
(the table stays in the cache database across launches).

A small workbook (inflating to at most :data:`INLINE_WORKBOOK_BYTES`) is read when the
tables are listed, as small text files are counted then, so the listing shows its row
counts; a larger one only when queried (its counts are unknown until then).

A sheet that cannot be read (over a limit, damaged) becomes a problem line of its own; the
workbook's other sheets and every other table keep working. Failed files are tried again
when the workspace is next opened (a raised limit applies then).
"""

from __future__ import annotations

import threading
from pathlib import Path

from lantide.errors import LantideError
from lantide.query.engine import transaction
from lantide.query.errors import QueryCancelled, QueryError
from lantide.query.names import qualified, quote_ident, quote_literal


INLINE_WORKBOOK_BYTES = 4 << 20


def _placeholder_sql(schema: str, sheet: str, path: Path) -> str:
    message = (f"the sheet {qualified(schema, sheet)} of data/{path.name} is read when a "
               "query through Lantide first names it; name it in the FROM clause")
    return (f"CREATE OR REPLACE VIEW {qualified(schema, sheet)} AS "
            f"SELECT error({quote_literal(message)}) AS not_read_yet")


class LazySheets:
    """Mixed into :class:`lantide.query.sources.DataSources` (its engine, catalog, lock,
    limits, ``_tables`` and ``_failed``)."""

    def _register_workbook(self, path: Path, schema: str, stamp) -> list:
        from lantide.query.sources import DataTable
        from lantide.query.workbook_limits import check_container, sheet_names

        key = str(path)
        try:
            check_container(path, self.limits)
            sheets = sheet_names(path)
        except BaseException as exc:  # calamine's panics are BaseExceptions (pyo3)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            return [self._failed(path, schema, path.name, "excel", stamp, exc)]

        def work(cur):
            with transaction(cur):
                cur.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}")
                for sheet in sheets:
                    cur.execute(_placeholder_sql(schema, sheet, path))
                self.catalog.replace_sources_of(
                    cur, key, [(schema, sheet, "excel", *stamp, None) for sheet in sheets])

        try:
            self.engine.run(work, timeout=None)
        except Exception as exc:
            return [self._failed(path, schema, path.name, "excel", stamp, exc)]
        self._forget_loaded(key)
        return [DataTable(schema, sheet, path, "excel") for sheet in sheets]

    def _forget_loaded(self, path_text: str) -> None:
        self._loaded = {k for k in self._loaded if k[0] != path_text}

    def load_sheet(self, table) -> None:
        """Read ``table`` (a sheet) into the database unless it is there already; raises a
        QueryError naming the file (and the limit and its setting) when it cannot."""
        if table.format != "excel" or table.error is not None:
            return
        key = (str(table.path), table.schema.casefold(), table.name.casefold())
        if key in self._loaded:
            return
        with self._lock:
            if key in self._loaded:
                return
            if self._is_table(table):  # read in an earlier launch, file unchanged since
                self._loaded.add(key)
                return
            try:
                self._read_into_table(table)
            except QueryCancelled:
                raise  # stopped, not broken: read again on the next query
            except LantideError as exc:
                if exc.code == "ENGINE_CLOSED":
                    raise
                self._sheet_failed(table, exc.message)
                raise
            except BaseException as exc:  # calamine's panics are BaseExceptions (pyo3)
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                problem = QueryError(
                    f"data/{table.path.name}, sheet {table.name!r}, could not be read: "
                    f"{type(exc).__name__}: {exc}", code="DATA_FILE_DAMAGED",
                    hint="Open and save the workbook again in Excel or LibreOffice, or export "
                         "the sheet as CSV.")
                self._sheet_failed(table, problem.message)
                raise problem from None
            self._loaded.add(key)

    def read_small_sheets(self) -> None:
        """Read the sheets of small workbooks now (for the listing's row counts); a sheet
        that fails becomes a problem line, never an exception."""
        from lantide.query.workbook_limits import inflated_size

        for table in self.tables():
            if table.format != "excel" or table.error is not None:
                continue
            key = (str(table.path), table.schema.casefold(), table.name.casefold())
            if key in self._loaded:
                continue
            try:
                stamp = table.path.stat()
                size_key = (str(table.path), stamp.st_size, stamp.st_mtime_ns)
                size = self._inflated.get(size_key)
                if size is None:
                    size = self._inflated[size_key] = inflated_size(table.path)
                if size <= INLINE_WORKBOOK_BYTES:
                    self.load_sheet(table)
            except (LantideError, OSError):
                continue  # kept as the sheet's problem line (or the file is gone)

    def _is_table(self, table) -> bool:
        rows = self.engine.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
            "AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?)",
            [table.schema, table.name])
        return bool(rows[0][0])

    def _read_into_table(self, table) -> None:
        from lantide.query.excel import read_sheet
        from lantide.query.workbook_limits import check_sheet

        check_sheet(table.path, table.name, self.limits)
        arrow = read_sheet(table.path, table.name)
        name = qualified(table.schema, table.name)

        def work(cur):
            alias = f"__lantide_sheet_{threading.get_ident()}"
            with transaction(cur):
                cur.execute(f"DROP VIEW IF EXISTS {name}")
                cur.register(alias, arrow)
                try:
                    cur.execute(f"CREATE TABLE {name} AS SELECT * FROM {quote_ident(alias)}")
                finally:
                    cur.unregister(alias)

        self.engine.run(work, timeout=None)

    def _sheet_failed(self, table, message: str) -> None:
        """Keep the sheet's problem: in the catalog (for the next launch) and the listing."""
        from dataclasses import replace

        key = str(table.path)
        rows = [r for r in self.catalog.source_rows() if r["path"] == key]
        updated = [(r["schema"], r["table"], r["format"], r["size"], r["mtime_ns"],
                    message if r["table"] == table.name and r["schema"] == table.schema
                    else r["error"]) for r in rows]

        def work(cur):
            with transaction(cur):
                self.catalog.replace_sources_of(cur, key, updated)

        self.engine.run(work, timeout=None)
        self._tables = [replace(t, error=message) if t == table else t for t in self._tables]
