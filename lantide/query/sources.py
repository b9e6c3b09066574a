"""Files in ``data/`` as tables, without an import step.

A file becomes:

- ``sales.csv`` / ``.tsv`` / ``.txt``: view ``"sales"`` over ``read_csv`` (types and header
  sniffed; a bad row fails the query with its line number, never silently dropped; bad rows
  that fooled the sniffer, decimal commas: :mod:`lantide.query.csv_dialect`; encodings:
  :mod:`lantide.query.text_encodings`; what was read differently is noted:
  :mod:`lantide.query.reading_notes`);
- ``x.parquet``: a view over ``read_parquet``;
- ``x.json`` / ``.ndjson`` / ``.jsonl``: a view over ``read_json``;
- ``book.xlsx`` (``.xlsm .xls .ods``): schema ``"book"`` with a table per sheet,
  ``"book"."Sheet1"``, read when first queried, within limits (:mod:`lantide.query.sheets`,
  :mod:`lantide.query.workbook_limits`);
- a folder ``events/`` of one format: one view over all its files (hive partitions too).

Names are the file name without its suffix. When two files would get the same name (case
does not count: ``Sales.csv`` and ``sales.parquet``), or a cached table already has it,
the later one is named by its whole file name (``"sales.parquet"``). A file that cannot be
read is listed with its error and does not stop the others.

:meth:`DataSources.refresh` compares each file's size and mtime with what was registered
and touches only what changed; it is cheap enough to call before every query.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from lantide.query.catalog import Catalog, SourceRow
from lantide.query.engine import Engine, transaction, translate_error
from lantide.query.errors import QueryError
from lantide.query.file_rules import (
    ReadingRule,
    chosen_encodings,
    encoding_of,
    header_row_of,
    load_rules,
    rules_stamp,
    set_chosen_encodings,
)
from lantide.query.file_stamps import changed_ns, stamp
from lantide.query.names import (
    INTERNAL_SCHEMA,
    data_format,
    qualified,
    quote_ident,
    quote_literal,
    same_name,
    table_name_for,
)
from lantide.query.read_limits import ReadLimits
from lantide.query.source_problems import (
    OUTSIDE_LINK,
    UNREADABLE_FOLDER,
    brief,
    check_json_objects,
    folder_format,
    folder_problem,
    is_empty,
    outside_link_problem,
)

if TYPE_CHECKING:
    from lantide.query.csv_dialect import SniffAhead
    from lantide.query.engine import Cursor
    from lantide.query.sheets import LazySheets

_brief = brief  # the name tests and older callers use

# Raised when a reader reads a file's values differently (an encoding refused, decimal commas
# per column, error cells of a sheet): files registered before are read anew, and the tabs
# that read them are stale.
READER_VERSION = 2

_RESERVED_SCHEMAS = {"main", "temp", "system", "information_schema", "pg_catalog", INTERNAL_SCHEMA}


class DataTableDict(TypedDict):
    """A data file's (or sheet's) table as the listing shows it."""

    name: str
    schema: str | None  # the workbook, for a sheet
    qualified_name: str
    kind: Literal["data_file", "excel_sheet"]
    format: str
    source: str  # the file, relative to the workspace
    error: NotRequired[str]  # it failed to register
    notes: NotRequired[list[str]]  # what its reader read differently


@dataclass(frozen=True)
class DataTable:
    """One registered table of a data file (a sheet of a workbook has ``schema``)."""

    schema: str | None
    name: str
    path: Path
    format: str
    error: str | None = None
    notes: tuple[str, ...] = ()  # what the reader skipped or read differently, in words

    @property
    def qualified_name(self) -> str:
        return qualified(self.schema, self.name)

    def to_dict(self, root: Path) -> DataTableDict:
        try:
            rel = self.path.relative_to(root).as_posix()
        except ValueError:
            rel = str(self.path)
        out: DataTableDict = {
            "name": self.name,
            "schema": self.schema,
            "qualified_name": self.qualified_name,
            "kind": "excel_sheet" if self.format == "excel" else "data_file",
            "format": self.format,
            "source": rel,
        }
        if self.error:
            out["error"] = self.error
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _stat(path: Path) -> tuple[int, int]:
    """(size, changed_ns) (:mod:`lantide.query.file_stamps`: the later of the modification
    and status-change times; kept in the ``mtime_ns`` columns); for a folder, the sums over
    its files (any change moves them)."""
    if path.is_dir():
        size = mtime = count = 0
        for p in path.rglob("*"):
            if p.is_file() and not p.name.startswith("."):
                st = p.stat()
                size += st.st_size
                mtime = max(mtime, changed_ns(st))
                count += 1
        return size + count, mtime
    return stamp(path.stat())


def file_stamp(path: Path) -> tuple[int, int] | None:
    """(size, changed_ns) of a data file or folder now; None when it is gone."""
    try:
        return _stat(path)
    except OSError:
        return None


def _reader_sql(path: Path, fmt: str, header_row: int | None = None) -> str:
    if path.is_dir():
        ext = {
            "csv": "csv",
            "tsv": "tsv",
            "parquet": "parquet",
            "json": "json",
            "ndjson": "*json*",
        }[fmt]
        pattern = quote_literal(str(path / "**" / f"*.{ext}"))
        extra = ", hive_partitioning = true"
    else:
        pattern, extra = quote_literal(str(path)), ""
    if fmt in ("csv", "tsv") and not path.is_dir():
        from lantide.query.csv_dialect import encoding_option

        extra = encoding_option(path)  # Latin-1 / UTF-16 files read instead of failing
        extra += _header_options(header_row)
    if fmt == "csv":
        return f"read_csv({pattern}{extra})"
    if fmt == "tsv":
        return f"read_csv({pattern}, delim = '\\t'{extra})"
    if fmt == "parquet":
        return f"read_parquet({pattern}{extra})"
    if fmt == "ndjson":
        return f"read_json({pattern}, format = 'newline_delimited'{extra})"
    return f"read_json({pattern}{extra})"


def _notes_missing(row: SourceRow, fmt: str) -> bool:
    """A text file registered before reading notes existed: registered again once."""
    return (
        fmt in ("csv", "tsv")
        and row["error"] is None
        and row["notes"] is None
        and data_format(Path(row["path"]).name) is not None
    )


def _header_options(header_row: int | None) -> str:
    """``read_csv`` options for the analyst's header row (see :mod:`file_rules`)."""
    if header_row is None:
        return ""
    if header_row == 0:
        return ", skip = 0, header = false"
    return f", skip = {header_row - 1}, header = true"


class DataSources:
    def __init__(
        self,
        engine: Engine,
        catalog: Catalog,
        data_dir: Path,
        *,
        reserved_names: Callable[[], Iterable[str]] = lambda: set(),
        limits: ReadLimits | None = None,
    ) -> None:
        self.engine = engine
        self.limits = limits or ReadLimits()
        # the workbooks' sheets, read when queried (lantide.query.sheets): made with the
        # first workbook, so a workspace without one never imports the workbook readers
        self._sheets: LazySheets | None = None
        self._sheets_lock = threading.Lock()
        self._retry_failed = True  # files that failed are tried again once per open
        # the analyst's reading rules as the file holds them (file_rules)
        self._rules: dict[str, dict[str, object]] = {}
        self._rules_stamp: tuple[int, int] | None = None
        self.on_registered: Callable[[str], None] = lambda path_text: None  # e.g. forget the
        # file's row count
        self.catalog = catalog
        self.data_dir = Path(data_dir)
        self.root = self.data_dir.parent
        self._reserved_names = reserved_names  # schema names taken by connections
        self._lock = threading.Lock()
        self._tables: list[DataTable] = []
        self._stamps: dict[str, tuple[int, int]] = {}

    # -- workbooks (lantide.query.sheets) ---------------------------------------------
    @property
    def sheets(self) -> LazySheets:
        """What reads the workbooks' sheets into tables, made on first use."""
        if self._sheets is None:
            with self._sheets_lock:
                if self._sheets is None:
                    from lantide.query.sheets import LazySheets

                    self._sheets = LazySheets(self)
        return self._sheets

    def load_sheet(self, table: DataTable) -> None:
        """Read ``table`` (a sheet) into the database unless it is there already
        (:meth:`lantide.query.sheets.LazySheets.load_sheet`); nothing for another table."""
        if table.format != "excel" or table.error is not None:
            return
        self.sheets.load_sheet(table)

    def read_small_sheets(self) -> None:
        """Read the sheets of small workbooks now, for the listing's row counts
        (:meth:`lantide.query.sheets.LazySheets.read_small_sheets`)."""
        if any(t.format == "excel" and t.error is None for t in self._tables):
            self.sheets.read_small_sheets()

    def _forget_loaded(self, path_text: str) -> None:
        if self._sheets is not None:  # none made: no sheet was read
            self._sheets.forget_loaded(path_text)

    # -- reading -------------------------------------------------------------------
    def tables(self) -> list[DataTable]:
        return list(self._tables)

    def resolve(self, schema: str | None, name: str) -> DataTable | None:
        for t in self._tables:
            if (
                t.error is None
                and same_name(t.name, name)
                and (
                    (schema is None and t.schema is None)
                    or (schema is not None and t.schema is not None and same_name(t.schema, schema))
                )
            ):
                return t
        return None

    def failed(self, schema: str | None, name: str) -> DataTable | None:
        """The failed file (or sheet) a query naming ``schema.name`` meant, if any: a flat
        file by its table name, a sheet by its own row or its workbook's."""
        for t in self._tables:
            if t.error is None:
                continue
            if schema is None and same_name(t.schema or t.name, name):
                return t  # a flat file, or a workbook named without a sheet
            if (
                schema is not None
                and t.schema is not None
                and same_name(t.schema, schema)
                and (same_name(t.name, name) or t.name == t.path.name)
            ):
                return t
        return None

    def sheets_of(self, name: str) -> list[DataTable]:
        """The readable sheets of the workbook whose schema is ``name``."""
        return [
            t
            for t in self._tables
            if t.format == "excel"
            and t.error is None
            and t.schema is not None
            and same_name(t.schema, name)
        ]

    def fingerprint(self, table: DataTable) -> str:
        """What changes when the file changes: its path, size and change time."""
        try:
            size, mtime = self._stamp(table.path, table.format)
        except OSError:
            size, mtime = -1, -1
        # a rule chosen, or a reader that reads values differently, reads it anew
        rule = self._options_text(table.path)
        text = f"{table.path}|{size}|{mtime}|{rule}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    # -- registering ---------------------------------------------------------------
    def _scan(self) -> list[tuple[Path, str]]:
        if not self.data_dir.is_dir():
            return []
        found = []
        for entry in sorted(self.data_dir.iterdir(), key=lambda p: p.name.casefold()):
            if entry.name.startswith((".", "~$")) or entry.name.endswith("~"):
                continue
            if entry.is_symlink() and not file_is_inside(entry, self.data_dir):
                # Refused, so not walked either (a link to /usr cost seconds per command).
                if entry.is_dir() or data_format(entry.name):
                    found.append((entry, OUTSIDE_LINK))
                continue
            if entry.is_dir():
                fmt = folder_format(entry)
            elif entry.is_file():
                fmt = data_format(entry.name)
            else:
                fmt = None
            if fmt:
                found.append((entry, fmt))
        return found

    def refresh(self) -> dict[str, list[str]]:
        """Register new and changed files, drop removed ones. Returns what changed."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> dict[str, list[str]]:
        report: dict[str, list[str]] = {"added": [], "changed": [], "removed": [], "failed": []}
        self._load_rules()
        files = self._scan()
        rows = self.catalog.source_rows()
        known = {row["path"]: row for row in rows}
        retry = {row["path"] for row in rows if row["error"]} if self._retry_failed else set()
        self._retry_failed = False
        current = {str(p) for p, _ in files}
        for path_text in sorted(set(known) - current):
            self._drop(path_text)
            self._stamps.pop(path_text, None)
            report["removed"].append(path_text)
        cached = {c.name.casefold() for c in self.catalog.all_cached()}
        taken_flat: set[str] = set(cached)
        taken_schemas: set[str] = {
            s.casefold() for s in _RESERVED_SCHEMAS | set(self._reserved_names())
        }
        found: list[list[DataTable]] = []  # per file, in the order of the files
        todo: list[tuple[int, Path, str, str, tuple[int, int], SourceRow | None]] = []
        for path, fmt in files:
            key = str(path)
            try:
                stamp = self._stamp(path, fmt)
            except OSError:
                continue
            base = table_name_for(path.name) if not path.is_dir() else path.name
            taken = taken_schemas if fmt == "excel" else taken_flat
            name = base if base.casefold() not in taken else path.name
            taken.add(name.casefold())
            previous = known.get(key)
            unchanged = (
                previous is not None
                and (previous["size"], previous["mtime_ns"]) == stamp
                and self._names_of(key, known) == {name.casefold()}
                and previous["options"] == self._options_text(path)
                and not _notes_missing(previous, fmt)
                and key not in retry
            )
            if unchanged:
                found.append(self._from_rows(key, rows))
                self._stamps[key] = stamp
                continue
            found.append([])
            todo.append((len(found) - 1, path, fmt, name, stamp, previous))
        ahead = self._sniff_ahead(todo)
        # The files whose sniff runs ahead are registered last, the others meanwhile.
        for index, path, fmt, name, stamp, previous in sorted(
            todo, key=lambda t: ahead is not None and ahead.has(t[1])
        ):
            found[index] = self._register(
                path, fmt, name, stamp, known=previous is not None, ahead=ahead
            )
            self.on_registered(str(path))
            self._stamps[str(path)] = stamp
        for index, path, _fmt, _name, _stamp, previous in todo:
            key, registered = str(path), found[index]
            if key in retry and [t.error for t in registered] == [
                r["error"] for r in rows if r["path"] == key
            ]:
                continue  # tried again, failed the same way: nothing changed
            (report["changed"] if previous else report["added"]).append(key)
            if any(t.error for t in registered):
                report["failed"].append(key)
        self._tables = [t for tables in found for t in tables]
        return report

    def _sniff_ahead(
        self, todo: list[tuple[int, Path, str, str, tuple[int, int], SourceRow | None]]
    ) -> SniffAhead | None:
        """The text files to register sniffed on a thread of their own, when there are other
        files to register meanwhile (a first open); None when there are none (the CSV
        readers then stay unimported unless a text file is registered)."""
        text = [
            (path, fmt)
            for _i, path, fmt, _n, stamp, _p in todo
            if fmt in ("csv", "tsv")
            and not path.is_dir()
            and header_row_of(self._rule_of(path)) is None
            and not is_empty(path, stamp[0])
        ]
        if len(text) == len(todo):  # nothing to overlap with but one another
            text = []
        if not text:
            return None
        from lantide.query.csv_dialect import SniffAhead

        return SniffAhead(self.engine, text)

    def needs_refresh(self) -> bool:
        """True when a file in data/ was added, removed or changed since the last refresh."""
        try:
            if rules_stamp(self.root) != self._rules_stamp:
                return True
            files = self._scan()
            if {str(p) for p, _ in files} != set(self._stamps):
                return True
            return any(self._stamp(p, fmt) != self._stamps.get(str(p)) for p, fmt in files)
        except OSError:
            return True

    @staticmethod
    def _stamp(path: Path, fmt: str) -> tuple[int, int]:
        if fmt == OUTSIDE_LINK:  # the link itself: what it points to is not looked at
            return stamp(os.lstat(path))
        return _stat(path)

    def _load_rules(self) -> None:
        """The analyst's reading rules; a broken rules file counts as none (it is kept, and
        ``lantide file header`` says what is wrong with it)."""
        from lantide.errors import LantideError

        self._rules_stamp = rules_stamp(self.root)
        try:
            self._rules = load_rules(self.root)
        except LantideError:
            self._rules = {}
        set_chosen_encodings(chosen_encodings(self.root, self._rules), self.data_dir)

    def _rule_of(self, path: Path) -> ReadingRule | None:
        try:
            rel = path.relative_to(self.root).as_posix()
        except ValueError:
            return None
        rule = self._rules.get(rel)
        checked: ReadingRule = {}
        if (header_row := header_row_of(rule)) is not None:
            checked["header_row"] = header_row
        if (encoding := encoding_of(rule)) is not None:
            checked["encoding"] = encoding
        return checked or None

    def _options_text(self, path: Path) -> str:
        """What a registration is stored with and compared by: the analyst's rule and the
        version of the readers (so a file is read anew when either changes)."""
        return json.dumps({**(self._rule_of(path) or {}), "reader": READER_VERSION}, sort_keys=True)

    def _names_of(self, path_text: str, known: dict[str, SourceRow]) -> set[str]:
        row = known[path_text]
        return {(row["schema"] or row["table"]).casefold()}

    def _from_rows(self, path_text: str, rows: list[SourceRow]) -> list[DataTable]:
        """The registered tables of an unchanged file, from the catalog's ``rows`` (read
        once per refresh, not once per file)."""
        return [
            DataTable(
                r["schema"],
                r["table"],
                Path(r["path"]),
                r["format"],
                r["error"],
                tuple(json.loads(r["notes"])) if r["notes"] else (),
            )
            for r in rows
            if r["path"] == path_text
        ]

    def _drop(self, path_text: str) -> None:
        rows = [r for r in self.catalog.source_rows() if r["path"] == path_text]
        self._forget_loaded(path_text)

        def work(cur: Cursor) -> None:
            with transaction(cur):
                for r in rows:
                    if r["format"] == "excel":
                        if r["schema"]:
                            cur.execute(f"DROP SCHEMA IF EXISTS {quote_ident(r['schema'])} CASCADE")
                    elif r["error"] is None:
                        cur.execute(f"DROP VIEW IF EXISTS {quote_ident(r['table'])}")
                self.catalog.replace_sources_of(cur, path_text, [])

        self.engine.run(work, timeout=None)

    def _register(
        self,
        path: Path,
        fmt: str,
        name: str,
        stamp: tuple[int, int],
        *,
        known: bool = True,
        ahead: SniffAhead | None = None,
    ) -> list[DataTable]:
        """Register ``path`` anew; ``known``: the catalog has rows for it (to drop first);
        ``ahead``: where its sniff may already be running."""
        key = str(path)
        if known:
            self._drop(key)
        else:  # nothing of it in the database (e.g. every file on its first open)
            self._forget_loaded(key)
        if fmt == "excel":
            return self.sheets.register_workbook(path, name, stamp)
        if fmt == UNREADABLE_FOLDER:
            return [self._failed(path, None, name, fmt, stamp, folder_problem(path))]
        if fmt == OUTSIDE_LINK:
            return [self._failed(path, None, name, fmt, stamp, outside_link_problem(path))]
        if not path.is_dir() and is_empty(path, stamp[0]):
            return [
                self._failed(
                    path,
                    None,
                    name,
                    fmt,
                    stamp,
                    QueryError(
                        "the file is empty: there is nothing to read",
                        code="DATA_FILE_EMPTY",
                        hint="Put the data in it (or remove it from data/).",
                    ),
                )
            ]

        rule = self._rule_of(path)
        header_row = header_row_of(rule)
        notes: list[str] = []
        text_file = fmt in ("csv", "tsv") and not path.is_dir()
        sniffed_ahead = ahead is not None and ahead.has(path)
        pinned_ahead = ahead.take(path) if ahead is not None and sniffed_ahead else None

        options = self._options_text(path)
        if text_file:  # the CSV readers, loaded with the first text file
            from lantide.query import csv_dialect, lost_records, text_encodings
            from lantide.query.reading_notes import csv_notes

        def work(cur: Cursor) -> None:
            if fmt in ("json", "ndjson") and not path.is_dir():
                check_json_objects(cur, path, fmt, self.limits.max_json_object_mb)
            # Sniffed once, here or ahead (before the transaction: a failed sniff would end
            # it); the view reads with what was sniffed, so neither counting its rows nor a
            # query sniffs the file again. A file whose sniff fails keeps the auto reader's
            # error.
            if sniffed_ahead:
                pinned = pinned_ahead
            elif text_file and header_row is None:
                pinned = csv_dialect.sniffed_reader(cur, path, fmt)
            else:
                pinned = None
            with transaction(cur):
                reader = pinned[0] if pinned else _reader_sql(path, fmt, header_row)
                cur.execute(f"CREATE OR REPLACE VIEW {quote_ident(name)} AS SELECT * FROM {reader}")
                if text_file:
                    encoding_note = text_encodings.choice(path).note
                    notes.extend([encoding_note] if encoding_note else [])
                    sniffed = pinned[1] if pinned else None
                    changed: list[str] = []
                    if header_row is None:  # bad rows, decimal commas
                        sniffed_as, changed = csv_dialect.improve_view(
                            cur, path, name, fmt, sniffed, reader
                        )
                        if sniffed_as != csv_dialect.fixed_options(fmt):
                            sniffed = None  # read another way than the first sniff
                    else:  # the analyst's rule stands
                        sniffed_as = csv_dialect.fixed_options(fmt) + _header_options(header_row)
                    notes.extend(csv_notes(cur, path, sniffed_as, header_row, name, sniffed))
                    notes.extend(changed)
                    if header_row is not None:
                        reading["prelude"] = header_row
                    elif sniffed is not None:
                        reading["prelude"] = int(sniffed[1]) + bool(sniffed[3])
                    reading["options"] = sniffed_as
                self.catalog.replace_sources_of(
                    cur,
                    key,
                    [(None, name, fmt, *stamp, None, json.dumps(notes), options)],
                    known=known,
                )

        reading: dict[str, Any] = {}  # how the view reads the file: prelude, options

        def records(cur: Cursor) -> None:
            """Lines of data the view reads into no row: a note, or no rows at all: refused
            (:mod:`lantide.query.lost_records`); after the registration's transaction, as a
            read that fails must not end it."""
            prelude = reading.get("prelude")
            if prelude is None:
                prelude = csv_dialect.prelude_lines(cur, path, reading["options"])
            if prelude is None:
                return
            try:
                note = lost_records.check(cur, path, name, prelude)
            except QueryError:
                cur.execute(f"DROP VIEW IF EXISTS {quote_ident(name)}")
                raise
            if note is not None:
                notes.append(note)
                with transaction(cur):
                    row = (None, name, fmt, *stamp, None, json.dumps(notes), options)
                    self.catalog.replace_sources_of(cur, key, [row])

        try:
            self.engine.run(work, timeout=None)
            # only quotes lose lines: the usual file costs no read (nor a cursor) here
            if text_file and lost_records.first_odd_quote_line(path) is not None:
                self.engine.run(records, timeout=None)
            return [DataTable(None, name, path, fmt, None, tuple(notes))]
        except Exception as exc:
            return [self._failed(path, None, name, fmt, stamp, exc)]

    def _failed(
        self,
        path: Path,
        schema: str | None,
        name: str,
        fmt: str,
        stamp: tuple[int, int],
        exc: BaseException,
    ) -> DataTable:
        from lantide.errors import LantideError

        if isinstance(exc, LantideError):
            message = exc.message
        else:
            message = translate_error(exc).message if _is_duckdb_error(exc) else str(exc)
        message = brief(message) if message else type(exc).__name__
        if "is not latin-1 encoded" in message:  # what our fallback tried, not the cause
            message = (
                "the file is neither UTF-8 nor Latin-1 text (a binary file, or a damaged one?)"
            )

        options = self._options_text(path)

        def work(cur: Cursor) -> None:
            self.catalog.replace_sources_of(
                cur, str(path), [(schema, name, fmt, *stamp, message, None, options)]
            )

        self.engine.run(work, timeout=None)
        return DataTable(schema, name, path, fmt, message)


def _is_duckdb_error(exc: BaseException) -> bool:
    from lantide.query.duckdb_import import duckdb_core

    return isinstance(exc, duckdb_core().Error)


def file_is_inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
        return True
    except ValueError:
        return False
