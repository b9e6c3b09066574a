"""One cache database per process: its engine, catalog, data sources and row counts, shared.

DuckDB keeps one database instance per file in a process, and the engine locks that
instance's configuration after confining it; a second ``Engine`` on the same file would
fail with DuckDB's "configuration has been locked". So every :class:`QueryService` opened
on a workspace in this process shares one :class:`Backend`, counted by reference: the
first open creates it, the last close closes it.

Sharing more than the engine is what makes this safe: the catalog's memory copy of
``_lantide.cached_tables`` and the registered data sources are true only if a single
object writes them, so two services see each other's cached tables at once and never
register the same file twice.

The engine's settings (memory limit, threads, time limit) are those of the first service
that opened the database; a service opened meanwhile with other settings gets a warning
in the log, and the new settings apply once every service of the workspace has closed.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lantide.query.catalog import Catalog
from lantide.query.engine import Engine
from lantide.query.read_limits import ReadLimits
from lantide.query.row_counts import RowCounts
from lantide.query.sources import DataSources, file_stamp

if TYPE_CHECKING:
    from lantide.query.checks.facts import RelationFacts
    from lantide.query.pending_connection import PendingConnection
    from lantide.workspace.model import Workspace
    from lantide.workspace.settings import QuerySettings

# The settings an engine was opened with (memory, threads, time limit, the read limits).
SettingsKey = tuple[str, int, float, int | None, int | None, int | None]

log = logging.getLogger(__name__)

_registry: dict[str, Backend] = {}
_registry_lock = threading.Lock()
_path_locks: dict[str, threading.Lock] = {}  # one open or close at a time per database


class Backend:
    """The shared state of one cache database (see the module docstring)."""

    def __init__(
        self,
        key: str,
        engine: Engine,
        catalog: Catalog,
        sources: DataSources,
        row_counts: RowCounts,
        settings_key: SettingsKey,
        check_facts: RelationFacts | None = None,
    ) -> None:
        self.key = key
        self.engine = engine
        self.catalog = catalog
        self.sources = sources
        self.row_counts = row_counts
        self.settings_key = settings_key
        self._check_facts = check_facts
        self._facts_lock = threading.Lock()
        self.refs = 0

    @property
    def check_facts(self) -> RelationFacts:
        """Facts the result checks measured, per table version; made on first use (the
        first query), so opening the database does not import the result checks."""
        with self._facts_lock:
            if self._check_facts is None:
                from lantide.query.checks.facts import RelationFacts

                self._check_facts = RelationFacts(self.engine)
            return self._check_facts

    def close(self) -> None:
        self.row_counts.stop()
        self.engine.close()


def _key(db_path: Path) -> str:
    return os.path.normcase(os.path.realpath(db_path))


def _path_lock(key: str) -> threading.Lock:
    with _registry_lock:
        return _path_locks.setdefault(key, threading.Lock())


def _settings_key(settings: QuerySettings) -> SettingsKey:
    return (
        settings.memory_limit,
        settings.threads,
        settings.timeout_seconds,
        getattr(settings, "max_workbook_mb", None),
        getattr(settings, "max_sheet_cells", None),
        getattr(settings, "max_json_object_mb", None),
    )


def acquire(
    workspace: Workspace,
    settings: QuerySettings,
    *,
    reserved_names: Callable[[], list[str]],
    pending: PendingConnection | None = None,
    short_lived: bool = False,
) -> Backend:
    """The backend of ``workspace``'s cache database, opened on first use (with
    ``pending``'s connection when it fits, see :class:`Engine`; ``short_lived``: the
    process ends with its command, see ``Engine(keep_parquet_footers=...)``); call
    :func:`release` once for every acquire."""
    key = _key(workspace.cache_db_path)
    with _path_lock(key):
        with _registry_lock:
            backend = _registry.get(key)
            if backend is not None:
                backend.refs += 1
        if backend is not None:
            if backend.settings_key != _settings_key(settings):
                log.warning(
                    "%s is already open in this process; its query settings %s stay "
                    "until every service on it has closed",
                    workspace.root,
                    backend.settings_key,
                )
            return backend
        backend = _open(key, workspace, settings, reserved_names, pending, short_lived)
        with _registry_lock:
            backend.refs = 1
            _registry[key] = backend
        return backend


def release(backend: Backend) -> None:
    """One user fewer; the last one closes the engine (before anyone can reopen it)."""
    with _path_lock(backend.key):
        with _registry_lock:
            backend.refs -= 1
            last = backend.refs <= 0
            if last and _registry.get(backend.key) is backend:
                del _registry[backend.key]
        if last:
            backend.close()


def open_count(workspace: Workspace) -> int:
    """How many services share ``workspace``'s database now (0: not open here)."""
    with _registry_lock:
        backend = _registry.get(_key(workspace.cache_db_path))
        return backend.refs if backend is not None else 0


def _open(
    key: str,
    workspace: Workspace,
    settings: QuerySettings,
    reserved_names: Callable[[], list[str]],
    pending: PendingConnection | None,
    short_lived: bool = False,
) -> Backend:
    engine = Engine(
        workspace.cache_db_path,
        allowed_dirs=[workspace.data_dir],
        search_dir=workspace.root,
        memory_limit=settings.memory_limit,
        threads=settings.threads,
        timeout_seconds=settings.timeout_seconds,
        pending=pending,
        keep_parquet_footers=short_lived,
    )
    try:
        catalog = Catalog(engine)
        sources = DataSources(
            engine,
            catalog,
            workspace.data_dir,
            reserved_names=reserved_names,
            limits=ReadLimits.from_settings(settings),
        )
        row_counts = RowCounts(engine, file_stamp)
        sources.on_registered = row_counts.forget
    except BaseException:
        engine.close()
        raise
    return Backend(key, engine, catalog, sources, row_counts, _settings_key(settings))
