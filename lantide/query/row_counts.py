"""Row counts of data files for ``show_tables``, without making it slow.

A count belongs to one version of a file: its path, size and mtime (its *stamp*). Counts
are kept in memory and in ``_lantide.row_counts``, so a file is counted once per change,
not once per listing or per launch.

- Parquet files are counted at once: ``count(*)`` reads only their footers (< 1 ms).
- Small text files (CSV, TSV, JSON) are counted at once too, up to a budget per listing
  (:data:`INLINE_BYTES` per file, :data:`INLINE_BUDGET` in all; compressed bytes count
  :data:`COMPRESSION_FACTOR` times).
- Anything larger is counted by one background thread, one file at a time; until then
  ``show_tables`` answers ``row_count: None`` with ``row_count_pending: True``, and
  :meth:`RowCounts.wait` waits for the counts.
- A file that cannot be counted (a bad row, the time limit) keeps ``None`` until it
  changes; it is not counted again on every listing.
- Workbook sheets are tables in the database; their counts come with the table list.

The background thread runs under its own cancel scope and stops when the workspace's
engine closes; an analyst's Stop never touches it, nor it them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.errors import LantideError
from lantide.query import internal_tables
from lantide.query.cancel import CancelScope
from lantide.query.catalog import now_utc
from lantide.query.errors import QueryCancelled
from lantide.query.names import INTERNAL_SCHEMA

if TYPE_CHECKING:
    from lantide.query.engine import Cursor, Engine
    from lantide.query.sources import DataTable

log = logging.getLogger(__name__)

INLINE_BYTES = 4 << 20  # a text file up to this size is counted while listing
INLINE_BUDGET = 16 << 20  # text bytes counted while listing, in all
COMPRESSION_FACTOR = 8  # a .gz byte is about this many bytes to parse
_PARQUET_FOLDER_FACTOR = 1 / 16  # a folder of Parquet files: footers, a few per MB

_TABLE = f'"{INTERNAL_SCHEMA}".row_counts'
_SCHEMA_SQL = (
    f"CREATE TABLE IF NOT EXISTS {_TABLE} (path VARCHAR PRIMARY KEY, size BIGINT, "
    "mtime_ns BIGINT, row_count BIGINT, error VARCHAR, counted_at TIMESTAMP)"
)


@dataclass(frozen=True)
class Count:
    stamp: tuple[int, int]
    row_count: int | None
    error: str | None = None


def counting_cost(path: Path, fmt: str, size: int, is_dir: bool) -> float:
    """Roughly how many bytes DuckDB parses to count the file's rows."""
    if fmt == "parquet":
        return size * _PARQUET_FOLDER_FACTOR if is_dir else 0.0
    if str(path).lower().endswith(".gz"):
        return size * COMPRESSION_FACTOR
    return float(size)


class RowCounts:
    """The counts of one workspace's data files (shared like its engine)."""

    def __init__(self, engine: Engine, stamp_of: Callable[[Path], tuple[int, int] | None]) -> None:
        """``stamp_of(path)``: the file's (size, mtime_ns) now, or None when it is gone."""
        self.engine = engine
        self._stamp_of = stamp_of
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        # None until read from disk. A database this engine created holds no count yet:
        # nothing to read, and nothing to forget on disk but the paths stored since.
        fresh = bool(getattr(engine, "created", False))
        self._known: dict[str, Count] | None = {} if fresh else None
        self._stored: set[str] | None = set() if fresh else None
        self._queue: dict[str, tuple[DataTable, tuple[int, int]]] = {}  # path -> (table, stamp)
        self._thread: threading.Thread | None = None
        self._scope = CancelScope("row counts")
        self._stopped = False
        if internal_tables.ensure(engine, "row_counts", _SCHEMA_SQL):
            self._known, self._stored = {}, set()  # made now: no count to read

    # -- show_tables ---------------------------------------------------------------------
    def lookup(self, tables: Iterable[DataTable]) -> dict[str, tuple[int | None, bool]]:
        """``qualified_name -> (row_count, pending)`` for registered data files and folders
        (not workbook sheets). Counts small files now and queues the large ones."""
        files = [t for t in tables if t.error is None and t.format != "excel"]
        known = self._load({str(t.path) for t in files})
        out: dict[str, tuple[int | None, bool]] = {}
        budget: float = INLINE_BUDGET
        queue: list[tuple[DataTable, tuple[int, int]]] = []
        counted: list[tuple[str, Count]] = []
        for table in files:
            key = str(table.path)
            stamp = known[key].stamp if key in known else None
            current = self._stamp_of(table.path)
            if current is None:
                out[table.qualified_name] = (None, False)
                continue
            if stamp == current:
                out[table.qualified_name] = (known[key].row_count, False)
                continue
            cost = counting_cost(table.path, table.format, current[0], table.path.is_dir())
            if cost <= min(INLINE_BYTES, budget):
                budget -= cost
                count = self._counted(table, current)  # on the caller's thread and scope
                out[table.qualified_name] = (count.row_count if count else None, False)
                if count is not None:
                    counted.append((key, count))
            else:
                queue.append((table, current))
                out[table.qualified_name] = (None, True)
        if counted:  # one commit for all (a database's first listing counts every file)
            self._store_many(counted)
        if queue:
            self._enqueue(queue)
        return out

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no count is queued or running; False when ``timeout`` ran out."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._queue and self._thread is None, timeout)

    def stop(self) -> None:
        """Stop the background counting (the engine is about to close)."""
        with self._lock:
            self._stopped = True
            self._queue.clear()
            thread = self._thread
        self._scope.cancel()
        if thread is not None and thread is not threading.current_thread():
            thread.join(5)

    # -- counting --------------------------------------------------------------------------
    def _count(self, table: DataTable, stamp: tuple[int, int]) -> Count:
        """Count one file now and keep the count (raises only QueryCancelled)."""
        count = self._counted(table, stamp)
        if count is None:
            return Count(stamp, None)  # changed while counting: the next listing recounts
        self._store_many([(str(table.path), count)])
        return count

    def _counted(self, table: DataTable, stamp: tuple[int, int]) -> Count | None:
        """Count one file now (raises only QueryCancelled); None if it changed meanwhile."""
        try:
            rows = self.engine.execute(f"SELECT count(*) FROM {table.qualified_name}")
            count = Count(stamp, int(rows[0][0]))
        except QueryCancelled:
            raise
        except LantideError as exc:
            if exc.code == "ENGINE_CLOSED":
                raise QueryCancelled("counting the rows of " + str(table.path)) from None
            count = Count(stamp, None, exc.message)
        if self._stamp_of(table.path) != stamp:
            return None
        return count

    def _enqueue(self, items: list[tuple[DataTable, tuple[int, int]]]) -> None:
        with self._lock:
            if self._stopped:
                return
            for table, stamp in items:
                self._queue[str(table.path)] = (table, stamp)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="lantide-row-counts", daemon=True
                )
                self._thread.start()

    def _work(self) -> None:
        try:
            while True:
                with self._lock:
                    if self._stopped or not self._queue:
                        return
                    key, (table, stamp) = next(iter(self._queue.items()))
                try:
                    with self._scope:
                        self._count(table, stamp)
                except QueryCancelled:
                    return
                except Exception:  # never let a count kill the thread silently
                    log.exception("counting the rows of %s failed", table.path)
                with self._lock:
                    if self._queue.get(key, (None, None))[1] == stamp:
                        del self._queue[key]
                    self._changed.notify_all()
        finally:
            with self._lock:
                self._thread = None
                if self._stopped:
                    self._queue.clear()
                self._changed.notify_all()

    def forget(self, path: str) -> None:
        """The file was registered anew (changed, or read by a new rule): count it again."""
        with self._lock:
            if self._known is not None:
                self._known.pop(path, None)
            if self._stored is not None and path not in self._stored:
                return  # never stored in this new database: no row to delete
        try:
            self.engine.execute(f"DELETE FROM {_TABLE} WHERE path = ?", [path])
        except LantideError as exc:
            log.debug("row count of %s not forgotten: %s", path, exc.message)

    # -- memory and disk -------------------------------------------------------------------
    def _load(self, current_paths: set[str]) -> dict[str, Count]:
        with self._lock:
            if self._known is not None:
                return dict(self._known)
        rows = self.engine.execute(f"SELECT path, size, mtime_ns, row_count, error FROM {_TABLE}")
        known = {r[0]: Count((r[1], r[2]), r[3], r[4]) for r in rows}
        for gone in sorted(set(known) - current_paths):  # files removed meanwhile
            self.engine.execute(f"DELETE FROM {_TABLE} WHERE path = ?", [gone])
            del known[gone]
        with self._lock:
            if self._known is None:
                self._known = known
            return dict(self._known)

    def _store_many(self, counts: list[tuple[str, Count]]) -> None:
        """Keep ``counts`` in memory and on disk, in one transaction."""
        from lantide.query.engine import transaction

        with self._lock:
            if self._known is not None:
                self._known.update(counts)
            if self._stored is not None:
                self._stored.update(path for path, _ in counts)
        at = now_utc()
        rows = [[path, c.stamp[0], c.stamp[1], c.row_count, c.error, at] for path, c in counts]

        # One DELETE and one multi-row INSERT: DuckDB's executemany of an upsert took
        # 20-35 ms for the three files of a first open, this a few.
        paths = [row[0] for row in rows]
        values = ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(rows))

        def work(cur: Cursor) -> None:
            with transaction(cur):
                cur.execute(f"DELETE FROM {_TABLE} WHERE list_contains(?, path)", [paths])
                cur.execute(f"INSERT INTO {_TABLE} VALUES {values}", [v for r in rows for v in r])

        try:
            self.engine.run(work)
        except QueryCancelled:
            raise
        except LantideError as exc:  # another writer of the same row won: the memory copy holds
            log.debug("row counts of %s not stored: %s", [p for p, _ in counts], exc.message)
