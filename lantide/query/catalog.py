"""Lantide's own bookkeeping inside the cache database (schema ``_lantide``).

```
_lantide.sources        one row per registered data file: its table, format, size,
                        mtime, the error that kept it from registering, if any, what the
                        reader skipped or read differently (``notes``, a JSON list) and
                        the analyst's reading rule it was registered with (``options``)
_lantide.cached_tables  one row per cached table: kind (tab / result / staged), the
                        project and tab or step that made it, its SQL, row count, and
                        for tabs the fingerprint of SQL + inputs that Source Run compares
```

The rows are plain data, written only by Lantide; user SQL cannot write here (the guard
refuses every write). Table names are compared case-insensitively, as DuckDB does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict

from lantide.query import internal_tables
from lantide.query.engine import Engine, transaction
from lantide.query.names import INTERNAL_SCHEMA

if TYPE_CHECKING:
    from lantide.query.engine import Cursor


class SourceRow(TypedDict):
    """A registered table of a data file, as ``_lantide.sources`` keeps it."""

    schema: str | None
    table: str
    path: str
    format: str
    size: int
    mtime_ns: int
    error: str | None
    notes: str | None  # JSON text: a list of reading notes
    options: str | None  # JSON text: the analyst's reading rule


# What replace_sources_of stores: (schema, table, format, size, mtime_ns, error), optionally
# followed by notes and options (JSON text).
SourceTuple = (
    tuple[str | None, str, str, int, int, str | None]
    | tuple[str | None, str, str, int, int, str | None, str | None, str | None]
)

# The columns of _lantide.sources as made now (older caches lack notes and options).
_SOURCE_COLUMNS = (
    "schema_name",
    "table_name",
    "path",
    "format",
    "size",
    "mtime_ns",
    "error",
    "registered_at",
    "notes",
    "options",
)

_SCHEMA_SQL = [
    f'CREATE SCHEMA IF NOT EXISTS "{INTERNAL_SCHEMA}"',
    f"""CREATE TABLE IF NOT EXISTS "{INTERNAL_SCHEMA}".sources (
        schema_name VARCHAR, table_name VARCHAR, path VARCHAR, format VARCHAR,
        size BIGINT, mtime_ns BIGINT, error VARCHAR, registered_at TIMESTAMP,
        notes VARCHAR, options VARCHAR)""",
    f"""CREATE TABLE IF NOT EXISTS "{INTERNAL_SCHEMA}".cached_tables (
        name VARCHAR PRIMARY KEY, kind VARCHAR, project VARCHAR, tab VARCHAR,
        step_id VARCHAR, sql VARCHAR, fingerprint VARCHAR, row_count BIGINT,
        duration_ms BIGINT, created_at TIMESTAMP)""",
]

TAB = "tab"
RESULT = "result"
STAGED = "staged"


class CachedTableDict(TypedDict):
    """A cached table's bookkeeping row as JSON (:meth:`CachedTable.to_dict`)."""

    name: str
    kind: str  # tab, result, staged
    project: str | None
    tab: str | None
    step_id: str | None
    row_count: int | None
    duration_ms: int | None
    created_at: str | None  # ISO 8601


@dataclass
class CachedTable:
    name: str
    kind: str
    project: str | None
    tab: str | None
    step_id: str | None
    sql: str
    fingerprint: str | None
    row_count: int | None
    duration_ms: int | None
    created_at: datetime | None

    def to_dict(self) -> CachedTableDict:
        return {
            "name": self.name,
            "kind": self.kind,
            "project": self.project,
            "tab": self.tab,
            "step_id": self.step_id,
            "row_count": self.row_count,
            "duration_ms": self.duration_ms,
            "created_at": self.created_at.isoformat() if self.created_at else None,
        }


def now_utc() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _create_tables(cur: Cursor) -> None:
    with transaction(cur):
        for sql in _SCHEMA_SQL:
            cur.execute(sql)


class Catalog:
    def __init__(self, engine: Engine):
        self.engine = engine
        # This process owns the workspace (lock), so a copy of the small cached_tables table
        # in memory stays true. Writers patch it after their commit (:meth:`committed`) or
        # drop it (:meth:`invalidate`); ``_generation`` keeps a reload that read the table
        # before such a change from installing its stale copy afterwards.
        self._cache: dict[str, CachedTable] | None = None
        self._generation = 0
        self._cache_lock = threading.Lock()
        # A database this engine created (a first open): its tables are made in one
        # transaction, have every column and no row, so there is nothing to read, add or
        # forget; ``sources`` stays known empty until a row is written.
        self._no_sources = bool(getattr(engine, "created", False))
        if self._no_sources:
            engine.run(_create_tables)
            internal_tables.made(engine, "sources", set(_SOURCE_COLUMNS))
            internal_tables.made(engine, "cached_tables")
            self._cache = {}
            return
        have = internal_tables.existing(engine)  # one look instead of a CREATE per table
        if "sources" not in have or "cached_tables" not in have:
            for sql in _SCHEMA_SQL:
                engine.execute(sql)
            internal_tables.made(engine, "sources", set(_SOURCE_COLUMNS))
            internal_tables.made(engine, "cached_tables")
        self._add_new_columns(have["sources"])
        self._forget_dropped()

    def _add_new_columns(self, have: set[str]) -> None:
        """Caches made before ``sources`` had ``notes`` and ``options`` get them."""
        for column in ("notes", "options"):
            if column not in have:
                self.engine.execute(
                    f'ALTER TABLE "{INTERNAL_SCHEMA}".sources ADD COLUMN {column} VARCHAR'
                )
                have.add(column)

    def _forget_dropped(self) -> None:
        """Rows of cached tables someone dropped by hand (say, in the DuckDB CLI) go. Read
        first: a DELETE is a write transaction on every open, and there rarely is one.
        (``NOT IN`` a list of the tables, not a correlated ``NOT EXISTS``: the same rows,
        1-2 ms instead of 7-8 on every open; issue 33.)"""
        where = f"""FROM "{INTERNAL_SCHEMA}".cached_tables c WHERE lower(c.name) NOT IN (
                SELECT lower(t.table_name) FROM duckdb_tables() t
                WHERE t.database_name = current_database() AND t.schema_name = 'main')"""
        if self.engine.execute(f"SELECT 1 {where} LIMIT 1"):
            self.engine.execute(f"DELETE {where}")

    # -- cached tables ------------------------------------------------------------
    def _rows(self) -> dict[str, CachedTable]:
        with self._cache_lock:
            if self._cache is not None:
                return self._cache
            generation = self._generation
        rows = self.engine.execute(
            f"SELECT name, kind, project, tab, step_id, sql, fingerprint, row_count, duration_ms, "
            f'created_at FROM "{INTERNAL_SCHEMA}".cached_tables ORDER BY lower(name)'
        )
        cache = {r[0].casefold(): CachedTable(*r) for r in rows}
        with self._cache_lock:
            if self._generation == generation:
                self._cache = cache
        return cache

    def invalidate(self) -> None:
        with self._cache_lock:
            self._cache = None
            self._generation += 1

    def committed(self, table: CachedTable) -> None:
        """The row of ``table`` was committed by :meth:`record`: patch the memory copy."""
        with self._cache_lock:
            self._generation += 1
            if self._cache is not None:
                key = table.name.casefold()
                cache = dict(self._cache)  # readers keep the dict they hold
                known = key in cache
                cache[key] = replace(table)
                self._cache = cache if known else dict(sorted(cache.items()))  # name order

    def cached(self, name: str) -> CachedTable | None:
        row = self._rows().get(name.casefold())
        return replace(row) if row is not None else None

    def all_cached(self) -> list[CachedTable]:
        return [replace(r) for r in self._rows().values()]

    def record(self, cur: Cursor, table: CachedTable) -> None:
        """Upsert the row of a cached table, on the cursor that created the table.

        Inside the writer's transaction; the memory copy still shows what is committed
        until the writer calls :meth:`committed` (or :meth:`invalidate`) afterwards.
        A row already there under the same name is updated in place and a new name is
        just inserted: one statement instead of a delete and an insert (this runs once
        per tab of a Source Run).
        """
        if table.created_at is None:
            table.created_at = now_utc()
        values = [
            table.kind,
            table.project,
            table.tab,
            table.step_id,
            table.sql,
            table.fingerprint,
            table.row_count,
            table.duration_ms,
            table.created_at,
        ]
        stored = self._stored_name(cur, table.name)
        if stored == table.name:
            updated = cur.execute(
                f'UPDATE "{INTERNAL_SCHEMA}".cached_tables SET kind = ?, project = ?, tab = ?, '
                f"step_id = ?, sql = ?, fingerprint = ?, row_count = ?, duration_ms = ?, "
                f"created_at = ? WHERE name = ?",
                values + [table.name],
            ).fetchall()
            if updated and updated[0][0] == 1:
                return
            stored = ""  # the memory copy was behind: delete whatever is there, insert
        if stored is not None:  # another spelling of the name (or unknown): replace it
            cur.execute(
                f'DELETE FROM "{INTERNAL_SCHEMA}".cached_tables WHERE lower(name) = lower(?)',
                [table.name],
            )
        cur.execute(
            f'INSERT INTO "{INTERNAL_SCHEMA}".cached_tables VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
            [table.name, *values],
        )

    def _stored_name(self, cur: Cursor, name: str) -> str | None:
        """How the committed row spells ``name`` (None: no row), from memory if loaded."""
        with self._cache_lock:
            cache = self._cache
        if cache is not None:
            row = cache.get(name.casefold())
            return row.name if row is not None else None
        rows = cur.execute(
            f'SELECT name FROM "{INTERNAL_SCHEMA}".cached_tables WHERE lower(name) = lower(?)',
            [name],
        ).fetchall()
        return rows[0][0] if len(rows) == 1 else ("" if rows else None)

    def forget(self, cur: Cursor, name: str) -> None:
        """Delete the row of a cached table; the writer invalidates after its commit."""
        cur.execute(
            f'DELETE FROM "{INTERNAL_SCHEMA}".cached_tables WHERE lower(name) = lower(?)', [name]
        )

    # -- data sources --------------------------------------------------------------
    def source_rows(self) -> list[SourceRow]:
        if self._no_sources:
            return []
        rows = self.engine.execute(
            f"SELECT schema_name, table_name, path, format, size, mtime_ns, error, notes, "
            f'options FROM "{INTERNAL_SCHEMA}".sources ORDER BY path, table_name'
        )
        return [
            SourceRow(
                schema=r[0],
                table=r[1],
                path=r[2],
                format=r[3],
                size=r[4],
                mtime_ns=r[5],
                error=r[6],
                notes=r[7],
                options=r[8],
            )
            for r in rows
        ]

    def replace_sources_of(
        self, cur: Cursor, path: str, rows: Sequence[SourceTuple], *, known: bool = True
    ) -> None:
        """Replace the rows of one data file: (schema, table, format, size, mtime_ns, error)
        and optionally notes (JSON text) and options (JSON text). ``known``: False when the
        catalog has no row of it (nothing to delete)."""
        self._no_sources = False  # (from here on read, even if this transaction rolls back)
        if known:
            cur.execute(f'DELETE FROM "{INTERNAL_SCHEMA}".sources WHERE path = ?', [path])
        for row in rows:
            schema, table, fmt, size, mtime_ns, error, notes, options = (*row, None, None)[:8]
            cur.execute(
                f'INSERT INTO "{INTERNAL_SCHEMA}".sources (schema_name, table_name, '
                f"path, format, size, mtime_ns, error, registered_at, notes, options) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [schema, table, path, fmt, size, mtime_ns, error, now_utc(), notes, options],
            )
