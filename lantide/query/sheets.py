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
from typing import TYPE_CHECKING

from lantide.errors import LantideError
from lantide.query.engine import transaction
from lantide.query.errors import QueryCancelled, QueryError
from lantide.query.file_stamps import stamp
from lantide.query.names import qualified, quote_ident, quote_literal

if TYPE_CHECKING:
    from lantide.query.catalog import Catalog, SourceRow, SourceTuple
    from lantide.query.engine import Cursor, Engine
    from lantide.query.excel import SheetRead
    from lantide.query.read_limits import ReadLimits
    from lantide.query.sources import DataSources, DataTable

INLINE_WORKBOOK_BYTES = 4 << 20


def _notes_json(notes: list[str] | None) -> str | None:
    import json

    return json.dumps(notes) if notes else None


def _is(row: SourceRow, table: DataTable) -> bool:
    return row["table"] == table.name and row["schema"] == table.schema


def _placeholder_sql(schema: str, sheet: str, path: Path) -> str:
    message = (
        f"the sheet {qualified(schema, sheet)} of data/{path.name} is read when a "
        "query through Lantide first names it; name it in the FROM clause"
    )
    return (
        f"CREATE OR REPLACE VIEW {qualified(schema, sheet)} AS "
        f"SELECT error({quote_literal(message)}) AS not_read_yet"
    )


def _sheet_key(table: DataTable) -> tuple[str, str, str]:
    """A sheet in ``_loaded``: (path, workbook schema, sheet), folded. A sheet always has
    its workbook's schema."""
    assert table.schema is not None
    return (str(table.path), table.schema.casefold(), table.name.casefold())


class LazySheets:
    """The sheets of one :class:`lantide.query.sources.DataSources` (made with its first
    workbook: its engine, catalog, lock, limits, tables and ``_failed``)."""

    def __init__(self, sources: DataSources) -> None:
        self.sources = sources
        self._loaded: set[tuple[str, str, str]] = set()  # (path, schema, sheet) read, folded
        # (path, size, mtime) -> declared inflated size
        self._inflated: dict[tuple[str, int, int], int] = {}

    @property
    def engine(self) -> Engine:
        return self.sources.engine

    @property
    def catalog(self) -> Catalog:
        return self.sources.catalog

    @property
    def limits(self) -> ReadLimits:
        return self.sources.limits

    @property
    def _lock(self) -> threading.Lock:
        return self.sources._lock

    def register_workbook(self, path: Path, schema: str, stamp: tuple[int, int]) -> list[DataTable]:
        from lantide.query.sources import DataTable
        from lantide.query.typed_columns import create_table
        from lantide.query.workbook_limits import check_container, sheet_names

        key = str(path)
        try:
            check_container(path, self.limits)
            sheets = sheet_names(path, self.limits)
        except BaseException as exc:  # calamine's panics are BaseExceptions (pyo3)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            return [self.sources._failed(path, schema, path.name, "excel", stamp, exc)]
        # A small book is read now, in the same transaction (what it cost before sheets
        # were lazy); a sheet of it that fails keeps its placeholder and its problem.
        read = self._read_small_book(path, sheets) if self._is_small(path) else {}
        errors = {sheet: got for sheet, got in read.items() if isinstance(got, str)}
        notes = {sheet: got.notes for sheet, got in read.items() if not isinstance(got, str)}

        def work(cur: Cursor) -> None:
            with transaction(cur):
                cur.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}")
                for sheet in sheets:
                    if sheet not in read or sheet in errors:
                        cur.execute(_placeholder_sql(schema, sheet, path))
                        continue
                    got = read[sheet]
                    assert not isinstance(got, str)  # a problem (text) is in errors
                    create_table(cur, qualified(schema, sheet), got.columns)
                self.catalog.replace_sources_of(
                    cur,
                    key,
                    [
                        (
                            schema,
                            sheet,
                            "excel",
                            *stamp,
                            errors.get(sheet),
                            _notes_json(notes.get(sheet)),
                            self.sources._options_text(path),
                        )
                        for sheet in sheets
                    ],
                )

        try:
            self.engine.run(work, timeout=None)
        except Exception as exc:
            return [self.sources._failed(path, schema, path.name, "excel", stamp, exc)]
        self.forget_loaded(key)
        self._loaded |= {
            (key, schema.casefold(), sheet.casefold()) for sheet in read if sheet not in errors
        }
        return [
            DataTable(schema, sheet, path, "excel", errors.get(sheet), tuple(notes.get(sheet, ())))
            for sheet in sheets
        ]

    def _is_small(self, path: Path) -> bool:
        from lantide.query.workbook_limits import inflated_size

        try:
            st = path.stat()
            size_key = (str(path), *stamp(st))
            if size_key not in self._inflated:
                self._inflated[size_key] = inflated_size(path)
            return self._inflated[size_key] <= INLINE_WORKBOOK_BYTES
        except OSError:
            return False

    def _read_small_book(self, path: Path, sheets: list[str]) -> dict[str, SheetRead | str]:
        """``{sheet: typed columns and notes, or its problem (text)}``."""
        return {
            sheet: got if not isinstance(got, LantideError) else got.message
            for sheet, got in self._checked_sheets(path, sheets).items()
        }

    def _checked_sheets(self, path: Path, sheets: list[str]) -> dict[str, SheetRead | LantideError]:
        """``{sheet: typed columns and notes, or the QueryError that kept it from being
        read}``: each checked against the limits, then the good ones read with the book
        opened once."""
        from lantide.query.excel import read_sheets
        from lantide.query.workbook_limits import check_sheet

        out: dict[str, SheetRead | LantideError] = {}
        for sheet in sheets:
            try:
                check_sheet(path, sheet, self.limits)
            except LantideError as exc:
                out[sheet] = exc
        good = [sheet for sheet in sheets if sheet not in out]
        read: dict[str, SheetRead | BaseException]
        try:
            read = read_sheets(path, good) if good else {}
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # the book itself would not open
            read = {sheet: exc for sheet in good}
        for sheet, got in read.items():
            out[sheet] = (
                got
                if not isinstance(got, BaseException)
                else QueryError(
                    f"data/{path.name}, sheet {sheet!r}, could not be read: "
                    f"{type(got).__name__}: {got}",
                    code="DATA_FILE_DAMAGED",
                    hint="Open and save the workbook again in Excel or LibreOffice, or export "
                    "the sheet as CSV.",
                )
            )
        return {sheet: out[sheet] for sheet in sheets}

    def forget_loaded(self, path_text: str) -> None:
        self._loaded = {k for k in self._loaded if k[0] != path_text}

    def load_sheet(self, table: DataTable) -> None:
        """Read ``table`` (a sheet) into the database unless it is there already; raises a
        QueryError naming the file (and the limit and its setting) when it cannot."""
        if table.format != "excel" or table.error is not None:
            return
        key = _sheet_key(table)
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
            self._loaded.add(key)

    def read_small_sheets(self) -> None:
        """Read the sheets of small workbooks now (for the listing's row counts); a sheet
        that fails becomes a problem line, never an exception. Registering reads them
        already; this covers sheets whose table went (dropped by hand) or a failed read
        that was stopped."""
        waiting = [
            t
            for t in self.sources.tables()
            if t.format == "excel" and t.error is None and _sheet_key(t) not in self._loaded
        ]
        if not waiting:
            return
        stored = {
            (r[0].casefold(), r[1].casefold())
            for r in self.engine.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() "
                "WHERE database_name = current_database()"
            )
        }
        for table in waiting:
            key = _sheet_key(table)
            if key[1:] in stored:  # read in an earlier launch, file unchanged since
                self._loaded.add(key)
            elif self._is_small(table.path):
                try:
                    self.load_sheet(table)
                except LantideError:
                    continue  # kept as the sheet's problem line

    def _is_table(self, table: DataTable) -> bool:
        rows = self.engine.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
            "AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?)",
            [table.schema, table.name],
        )
        return bool(rows[0][0])

    def _read_into_table(self, table: DataTable) -> None:
        from dataclasses import replace

        from lantide.query.typed_columns import create_table

        got = self._checked_sheets(table.path, [table.name])[table.name]
        if isinstance(got, LantideError):
            raise got
        name = qualified(table.schema, table.name)
        key = str(table.path)
        updated = self._file_rows(table, notes=_notes_json(got.notes))

        def work(cur: Cursor) -> None:
            with transaction(cur):
                cur.execute(f"DROP VIEW IF EXISTS {name}")
                create_table(cur, name, got.columns)
                if got.notes:  # kept with the sheet's registration, for the next launch
                    self.catalog.replace_sources_of(cur, key, updated)

        self.engine.run(work, timeout=None)
        if got.notes:
            self.sources._tables = [
                replace(t, notes=tuple(got.notes)) if t == table else t
                for t in self.sources._tables
            ]

    def _file_rows(
        self, table: DataTable, *, error: str | None = None, notes: str | None = None
    ) -> list[SourceTuple]:
        """The catalog rows of ``table``'s workbook, with ``table``'s error or notes set."""
        key = str(table.path)
        return [
            (
                r["schema"],
                r["table"],
                r["format"],
                r["size"],
                r["mtime_ns"],
                error if error is not None and _is(r, table) else r["error"],
                notes if notes is not None and _is(r, table) else r["notes"],
                r["options"],
            )
            for r in self.catalog.source_rows()
            if r["path"] == key
        ]

    def _sheet_failed(self, table: DataTable, message: str) -> None:
        """Keep the sheet's problem: in the catalog (for the next launch) and the listing."""
        from dataclasses import replace

        key = str(table.path)
        updated = self._file_rows(table, error=message)

        def work(cur: Cursor) -> None:
            with transaction(cur):
                self.catalog.replace_sources_of(cur, key, updated)

        self.engine.run(work, timeout=None)
        self.sources._tables = [
            replace(t, error=message) if t == table else t for t in self.sources._tables
        ]
